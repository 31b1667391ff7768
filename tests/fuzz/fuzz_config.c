/* Fuzz target: memd.yaml. Descriptor files are not opened (base_dir NULL), so an input
 * can never make the loader read the file system; everything up to that point runs. */
#include <stddef.h>
#include <stdint.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    memd_config cfg;
    memd_error err;
    if (memd_config_load_buffer("fuzz.yaml", (const char *)data, size, NULL, &cfg, &err) == 0)
        memd_config_free(&cfg);
    else {
        char line[sizeof(err.file) + sizeof(err.msg) + 32];
        memd_error_format(&err, line, sizeof(line));
    }
    return 0;
}
