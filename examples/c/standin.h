/* EXAMPLE ONLY: a stand-in for the device driver, so the examples run on any host.
 *
 * A real runtime opens its accelerator through the driver (tt-kmd's /dev/tenstorrent/N,
 * ...) and writes device memory with it; memd only says where. Here the "device" is one
 * memfd per DRAM bank, created by the standin-device program, which hands them to every
 * process that connects to its Unix socket (SCM_RIGHTS). The memfds outlive any loader,
 * as device memory outlives the processes that write it. Byte A of bank B of the device
 * is byte A of the bank's memfd (bank-local addresses, as memclient_locate gives them).
 *
 * The wire: on connect the device sends one message, the text
 * "memd-standin banks=N bank_size=BYTES\n" with the N memfds (bank 0 first) attached,
 * and closes the connection. */
#ifndef MEMD_EXAMPLE_STANDIN_H
#define MEMD_EXAMPLE_STANDIN_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>

#define STANDIN_MAX_BANKS 64
/* The one message's text, as a printf and as a sscanf format (a uint64_t converts
 * alike in both). */
#define STANDIN_HELLO "memd-standin banks=%u bank_size=%" SCNu64 "\n"

typedef struct standin_device {
    int fd[STANDIN_MAX_BANKS];   /* one memfd per bank, indexed by bank id */
    uint32_t banks;
    uint64_t bank_size;
} standin_device;

/* Connects to the stand-in device on socket path and receives its banks. 0, or a
 * negative errno after printing why on stderr. */
int standin_open(const char *path, standin_device *dev);
void standin_close(standin_device *dev);

#endif
