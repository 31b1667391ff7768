/* memd daemon — the parts of an allocation record kept out of line (see alloc.h): its
 * own file, so that the books beside core's allocations (pool_books.c, subdev.c) reach
 * them without depending on alloc.c, which calls them. */
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

memd_alloc_ext *memd_alloc_ext_make(const char *name)
{
    size_t n = name ? strnlen(name, MEMD_NAME_MAX - 1) : 0;
    memd_alloc_ext *e = malloc(sizeof *e + n + 1);
    if (!e)
        return NULL;
    *e = (memd_alloc_ext){0};
    if (n)
        memcpy(e->name, name, n);
    e->name[n] = '\0';
    return e;
}

memd_alloc_ext *memd_alloc_ext_get(memd_alloc *a)
{
    if (!a->ext)
        a->ext = memd_alloc_ext_make(NULL);
    return a->ext;
}

void memd_alloc_placement(const memd_alloc *a, memd_placement *out)
{
    *out = (memd_placement){.kind = (memd_kind)a->pl.kind, .region = a->pl.region,
                            .address = a->pl.address, .size_per_bank = a->pl.size_per_bank,
                            .banks = a->pl.banks, .page_size = a->pl.page_size,
                            .pitch = memd_alloc_pitch(a), .mode = (memd_bank_mode)a->pl.mode};
    if (a->ext) {
        out->nset = a->ext->nset;
        out->set = a->ext->set;
        out->addrs = a->ext->addrs;
        out->sizes = a->ext->sizes;
    }
}
