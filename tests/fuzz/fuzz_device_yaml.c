/* Fuzz target: the device descriptor loaders memd.yaml's entries use. The input is tried
 * as memd's own device YAML, then as a tt-metal SoC descriptor and as a tt-metal core
 * descriptor, each paired with a small valid counterpart and built by memd_ttmetal_device
 * (the daemon's one tt-metal path) so the derivation of bank groups runs too. Whatever
 * loads is built into a device that places a few buffers. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config.h"
#include "ttmetal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char SOC[] =
    "dram: [[0-0], [1-0]]\n"
    "dram_address_offsets: [0, 4096]\n"
    "dram_bank_size: 4096\n"
    "worker_l1_size: 2048\n"
    "arch_name: FUZZ\n";

static const char CORE[] =
    "P:\n"
    "  1:\n"
    "    l1_bank_size: 512\n"
    "    compute_with_storage_grid_range: {start: [0, 0], end: [1, 2]}\n"
    "    storage_cores: [[2, -1]]\n";

static void exercise(const memd_device_spec *spec)
{
    memd_device *d = NULL;
    memd_error err = {0};
    if (memd_device_create(spec, &d, &err))
        return;
    for (int c = 0; c < MEMD_CLASS_COUNT; c++)
        for (int sc = 0; sc < MEMD_SCOPE_COUNT; sc++) {
            memd_alloc_req r;
            memset(&r, 0, sizeof(r));
            r.cls = (memd_class)c;
            r.scope = (memd_scope)sc;
            if (sc == MEMD_SCOPE_DRAM_TEXTURE) {
                r.dtype = MEMD_DTYPE_F16;
                r.ndim = 2;
                r.shape[0] = 3;
                r.shape[1] = 5;
            } else {
                r.bytes = 100;
                r.page_size = 32;
            }
            memd_placement p;
            if (memd_device_alloc(d, &r, &p) == 0) {
                uint64_t abs;
                memd_device_bank_address(d, p.kind, 0, p.address, &abs);
                memd_device_free(d, p.kind, p.region, p.address);
            }
        }
    memd_device_destroy(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    memd_device_spec spec;
    memd_error err;
    if (memd_soc_load_memd_device("fuzz.yaml", buf, size, &spec, &err) == 0) {
        exercise(&spec);
        memd_device_spec_free(&spec);
    }
    const memd_ttmetal_opts o = {.product = "P", .hw_cqs = 1, .sram_reserved = 64};
    if (memd_ttmetal_device("fuzz-soc.yaml", buf, size, "core.yaml", CORE, sizeof(CORE) - 1, &o, &spec,
                            &err) == 0) {
        exercise(&spec);
        memd_device_spec_free(&spec);
    }
    if (memd_ttmetal_device("soc.yaml", SOC, sizeof(SOC) - 1, "fuzz-core.yaml", buf, size, &o, &spec,
                            &err) == 0) {
        exercise(&spec);
        memd_device_spec_free(&spec);
    }
    return 0;
}
