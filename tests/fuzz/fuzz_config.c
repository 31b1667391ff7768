/* Fuzz target: memd.yaml, through the loader memd_config_load ends in. The descriptor
 * files it names are served from memory by their last path component (tiny.yaml,
 * soc.yaml, core.yaml; anything else cannot be read), so every device entry runs the
 * daemon's whole path (memd's own descriptors, tt-metal pairs through
 * memd_ttmetal_device, overrides, validation, duplicate checks) while an input can never
 * make the loader touch the file system. Whatever loads is built into devices. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const files[] = {
    "tiny.yaml",
    "name: tiny\n"
    "dram: {banks: 2, bank_size: 1MiB, offsets: [0, 1MiB],\n"
    "       regions: [{name: code, size: 64KiB}, {name: data}, {name: logging, size: 4KiB}]}\n"
    "sram: {banks: 4, bank_size: 64KiB, regions: [{name: reserved, size: 8KiB}, {name: buffers}]}\n",
    "soc.yaml",
    "dram: [[0-0], [1-0], [2-0]]\n"
    "dram_address_offsets: [0, 0, 1073741824]\n"
    "dram_bank_size: 1073741824\n"
    "worker_l1_size: 1048576\n"
    "arch_name: FUZZ\n",
    "core.yaml",
    "E150:\n"
    "  1:\n"
    "    l1_bank_size: 524288\n"
    "    compute_with_storage_grid_range: {start: [0, 0], end: [3, 2]}\n"
    "    storage_cores: [[0, -1], [1, -1]]\n"
    "  2: {compute_with_storage_grid_range: {start: [0, 0], end: [1, 1]}}\n"
    "P:\n"
    "  1: {compute_with_storage_grid_range: {start: [0, 0], end: [0, 0]}}\n",
    NULL,
};

static int serve(void *ctx, const char *path, char **buf, size_t *len, char *msg, size_t cap)
{
    (void)ctx;
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    for (const char *const *f = files; *f; f += 2) {
        if (strcmp(base, f[0]) == 0) {
            *len = strlen(f[1]);
            if (!(*buf = malloc(*len + 1)))
                return -ENOMEM;
            memcpy(*buf, f[1], *len + 1);
            return 0;
        }
    }
    snprintf(msg, cap, "not served by the fuzz target");
    return -ENOENT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const memd_config_files fz = {.base_dir = "fuzz", .read = serve};
    memd_config cfg;
    memd_error err;
    if (memd_config_load_buffer("fuzz.yaml", (const char *)data, size, &fz, &cfg, &err) == 0) {
        for (uint32_t i = 0; i < cfg.ndevices; i++) {
            memd_device *d = NULL;
            int rc = memd_device_create(&cfg.devices[i], &d, &err);
            if (rc && rc != -ENOMEM)
                abort(); /* the loader validated it: the engine must take it */
            memd_device_destroy(d);
        }
        memd_config_free(&cfg);
    } else {
        char line[sizeof(err.file) + sizeof(err.msg) + 32];
        memd_error_format(&err, line, sizeof(line));
    }
    return 0;
}
