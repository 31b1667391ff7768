/* Fuzz target: libmemclient's DUMP decoder (memclient_snapshot_parse), which reads what
 * the daemon sent. Whatever it accepts must keep what its record checks promise: each
 * sub-device's bank list, when sent, is its nbanks ids strictly increasing inside the
 * snapshot's storage, and the lists fill that storage exactly; every array is read
 * through its count (ASan sees an overrun). Refused input leaves no snapshot. */
#include <stdint.h>
#include <stdlib.h>

#include "memclient_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    memclient_snapshot *s = NULL;
    if (memclient_snapshot_parse(data, size, &s) < 0) {
        if (s)
            abort();
        return 0;
    }
    size_t ids = 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < s->nsubdevs; i++) {
        const memclient_subdev_rec *d = &s->subdevs[i];
        if (!d->bank_ids)
            continue;
        if (d->bank_ids != s->subdev_bank_ids + ids || ids + d->nbanks > s->nsubdev_bank_ids)
            abort();
        for (uint32_t k = 1; k < d->nbanks; k++)
            if (d->bank_ids[k] <= d->bank_ids[k - 1])
                abort();
        ids += d->nbanks;
    }
    if (ids != s->nsubdev_bank_ids)
        abort();
    for (size_t i = 0; i < s->ngroups; i++)
        sum += s->groups[i].banks;
    for (size_t i = 0; i < s->nbank_use; i++)
        sum += s->bank_use[i].bank;
    for (size_t i = 0; i < s->nalloc_banks; i++)
        sum += s->alloc_banks[i].bank.bank;
    for (size_t i = 0; i < s->nsuballocs; i++)
        sum += s->suballocs[i].size;
    for (size_t i = 0; i < s->nsessions; i++)
        sum += s->sessions[i].subdev;
    memclient_snapshot_free(s);
    sink = sum; /* keeps the reads */
    return 0;
}
