/* memd daemon — the out-of-memory refusal of an allocation, said so a person can act on
 * it: human sizes, per bank and total kept apart, the region's state per bank, and who
 * holds the region. A request larger than its region is out of memory too (-ENOMEM,
 * "larger than the region"), with what would make it fit. Every message fits the
 * wire's MEMD_ERROR_REPLY_MSG: the holders, last, are cut first. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "alloc_oom.h"
#include "holders.h"
#include "units.h"

#define HB(v) memd_human_bytes((v), (char[24]){0}, 24)

/* err's message: what (already formatted in msg), then "; held by ..." as room allows. */
static int finish(const memd_state *st, uint32_t dev, const memd_placement *fp,
                  const char *msg, memd_error *err)
{
    char holders[MEMD_ERROR_REPLY_MSG];
    size_t used = strlen(msg) + strlen("; held by ");
    holders[0] = '\0';
    if (used + 16 < MEMD_ERROR_REPLY_MSG)
        memd_region_holders_text(st, dev, fp->kind, fp->region, holders,
                                 MEMD_ERROR_REPLY_MSG - used);
    return memd_error_set(err, -ENOMEM, "%s%s%s", msg, holders[0] ? "; held by " : "",
                          holders);
}

/* What would make a request larger than its region fit. */
static void fit_hint(const memd_device_spec *spec, const memd_placement *fp, uint64_t requested,
                     char *buf, size_t len)
{
    uint32_t all = spec->groups[fp->kind].banks;
    if (fp->banks > 1 && fp->size_per_bank >= requested)
        snprintf(buf, len, "page size 0: all of it in each of %u banks; a page size "
                 "interleaves it", fp->banks);
    else if (fp->banks < all)
        snprintf(buf, len, "spread it over more banks (%u of %u)", fp->banks, all);
    else
        snprintf(buf, len, "it does not fit even spread over all %u banks", all);
}

int memd_alloc_oom_error(const memd_state *st, uint32_t dev, const memd_alloc_req *r,
                         const memd_placement *fp, uint32_t bank, memd_error *err)
{
    const memd_device_spec *spec = st->devs[dev].spec;
    const char *where = spec->groups[fp->kind].regions[fp->region].name;
    const char *cls = memd_class_name(r->cls), *kind = memd_kind_name(fp->kind);
    const memd_error_room *rm = &err->room;
    uint64_t total = fp->size_per_bank * fp->banks;
    /* the wire keeps MEMD_ERROR_REPLY_MSG of it: the messages below are cut on purpose
     * ((void)! tells the compiler the cut is seen) */
    char msg[sizeof err->msg / 2];
    err->detail = MEMD_ERR_DETAIL_NOMEM;
    if (fp->size_per_bank > spec->groups[fp->kind].regions[fp->region].size) {
        char hint[128];
        fit_hint(spec, fp, rm->requested, hint, sizeof hint);
        (void)!snprintf(msg, sizeof msg, "device %u %s/%s: %s %s is larger than the region (%s per "
                 "bank x %u banks, region %s per bank); %s", spec->id, kind, where,
                 HB(rm->requested), cls, HB(fp->size_per_bank), fp->banks,
                 HB(spec->groups[fp->kind].regions[fp->region].size), hint);
        return memd_error_set(err, -ENOMEM, "%s", msg);
    }
    uint64_t al = spec->groups[fp->kind].alignment > r->alignment
                      ? spec->groups[fp->kind].alignment : r->alignment;
    if (bank != UINT32_MAX && !r->per_bank && rm->largest_free >= fp->size_per_bank + al - 1)
        /* That bank alone had room: one address is what the banks lack together. */
        (void)!snprintf(msg, sizeof msg, "device %u %s/%s: no address free in all %u banks for %s per "
                 "bank: their free blocks do not line up (bank %u: largest %s)", spec->id, kind,
                 where, r->nbank_set ? r->nbank_set : fp->banks, HB(fp->size_per_bank), bank,
                 HB(rm->largest_free));
    else if (bank != UINT32_MAX) {
        /* The bank's core, where the descriptor names one (tt-metal's L1 banks). */
        const memd_bank_core *c = spec->groups[fp->kind].cores;
        char core[48] = "";
        if (c)
            snprintf(core, sizeof core, " (core %u,%u, noc %u,%u)", c[bank].logical_x,
                     c[bank].logical_y, c[bank].noc_x, c[bank].noc_y);
        (void)!snprintf(msg, sizeof msg, "device %u %s/%s: bank %u%s ran out: no room for %s per bank "
                 "of class %s; in that bank %s free, largest %s", spec->id, kind, where, bank,
                 core, HB(fp->size_per_bank), cls, HB(rm->free), HB(rm->largest_free));
    }
    else
        /* (The class is in the reply's figures: the room is the holders'.) */
        (void)!snprintf(msg, sizeof msg, "device %u %s/%s: no room for %s (%s per bank x %u banks = "
                 "%s total); per bank %s free, largest %s", spec->id, kind, where,
                 HB(rm->requested), HB(fp->size_per_bank), fp->banks, HB(total),
                 HB(rm->free), HB(rm->largest_free));
    return finish(st, dev, fp, msg, err);
}
