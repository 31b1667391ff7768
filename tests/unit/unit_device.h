/* The device most unit suites run against. */
#ifndef MEMD_TEST_UNIT_DEVICE_H
#define MEMD_TEST_UNIT_DEVICE_H

#include <stdint.h>

#include "device.h"

/* DRAM 4 banks x 1 MiB with code [0, 64K), data [64K, 64K + data_kib K), logging
 * [960K, 1M); SRAM 8 x 256K with reserved [0, 16K) (not allocatable) and buffers
 * [16K, 256K). Named "dev<id>". */
void unit_device_spec(memd_device_spec *spec, uint32_t id, uint64_t data_kib);

/* Device 0 of that spec (data 512K) with SRAM constants bottom-up (placeholders stay
 * top-down): the range-cut and window suites' device. */
memd_device *unit_device_bottom_up(void);

#endif
