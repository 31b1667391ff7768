/* The unit tests' device (unit_device.h). */
#include "unit_device.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#define KIB 1024ull

void unit_device_spec(memd_device_spec *spec, uint32_t id, uint64_t data_kib)
{
    memset(spec, 0, sizeof *spec);
    spec->id = id;
    snprintf(spec->name, sizeof spec->name, "dev%u", id);
    strcpy(spec->arch, "unit");
    memd_bank_group_spec *d = &spec->groups[MEMD_KIND_DRAM];
    d->banks = 4;
    d->bank_size = 1024 * KIB;
    d->alignment = 32;
    d->nregions = 3;
    d->regions[0] = (memd_region_spec){"code", 0, 64 * KIB, true};
    d->regions[1] = (memd_region_spec){"data", 64 * KIB, data_kib * KIB, true};
    d->regions[2] = (memd_region_spec){"logging", 960 * KIB, 64 * KIB, true};
    memd_bank_group_spec *s = &spec->groups[MEMD_KIND_SRAM];
    s->banks = 8;
    s->bank_size = 256 * KIB;
    s->alignment = 16;
    s->nregions = 2;
    s->regions[0] = (memd_region_spec){"reserved", 0, 16 * KIB, false};
    s->regions[1] = (memd_region_spec){"buffers", 16 * KIB, 240 * KIB, true};
    memd_device_spec_default_policy(spec);
}

memd_device *unit_device_bottom_up(void)
{
    memd_device_spec s;
    unit_device_spec(&s, 0, 512);
    s.policy[MEMD_KIND_SRAM][MEMD_CLASS_CONSTANT].dir = MEMD_DIR_BOTTOM_UP;
    memd_device *d = NULL;
    memd_error err = {0};
    ck_assert_msg(memd_device_create(&s, &d, &err) == 0, "%s", err.msg);
    memd_device_spec_free(&s);
    return d;
}
