/* Fuzz target: the model description parser (client/parsers/model_yaml.c) and the lifetime
 * derivation it runs. Whatever it accepts must be self-consistent: every activation
 * that holds data has lower < upper within the run, every alias names a tensor that
 * holds data and is not larger than it, and an error always carries a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    memd_model_yaml y;
    memd_error err = {0};
    int rc = memd_model_yaml_parse("fuzz.yaml", (const char *)data, size, &y, &err);
    if (rc < 0) {
        if (rc != -12 /* ENOMEM */ && err.msg[0] == '\0')
            abort();
        return 0;
    }
    const memclient_model_desc *d = &y.desc;
    uint64_t end = d->nops ? d->nops : 1;
    for (size_t i = 0; i < d->ntensors; i++) {
        const memclient_tensor_life *l = &y.life[i];
        if (l->size == 0 || l->lower >= l->upper || l->upper > end)
            abort();
        if (l->alias_of != MEMCLIENT_NO_TENSOR) {
            if (l->alias_of >= d->ntensors || y.life[l->alias_of].alias_of != MEMCLIENT_NO_TENSOR ||
                l->size > y.life[l->alias_of].size)
                abort();
        }
    }
    memd_model_yaml_free(&y);
    return 0;
}
