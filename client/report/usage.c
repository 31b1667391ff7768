/* memd reports: bytes held per session and per process, from a snapshot dumped with
 * MEMCLIENT_DUMP_USAGE (see report.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static size_t dev_index(const memclient_snapshot *s, uint32_t device)
{
    for (size_t d = 0; d < s->ndevices; d++)
        if (s->devices[d].id == device)
            return d;
    return SIZE_MAX;
}

void memd_report_session_total(const memclient_snapshot *s, uint32_t session_id,
                               memd_report_use *out)
{
    *out = (memd_report_use){0};
    for (size_t i = 0; i < s->nusage; i++) {
        const memclient_session_use *u = &s->usage[i];
        if (u->session_id != session_id)
            continue;
        out->bytes += u->bytes;
        out->shared_bytes += u->shared_bytes;
        out->allocations += u->allocations;
    }
}

static int cmp_bytes(const void *a, const void *b)
{
    const memd_report_proc *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int memd_report_processes(const memclient_snapshot *s, memd_report_procs *out)
{
    *out = (memd_report_procs){0};
    size_t nd = s->ndevices ? s->ndevices : 1;
    out->ndevices = s->ndevices;
    out->procs = calloc(s->nsessions ? s->nsessions : 1, sizeof *out->procs);
    out->dev_bytes = calloc((s->nsessions ? s->nsessions : 1) * nd, sizeof *out->dev_bytes);
    if (!out->procs || !out->dev_bytes) {
        memd_report_processes_free(out);
        return -ENOMEM;
    }
    /* Few sessions (at most max_sessions): a scan per session is fine. */
    for (size_t i = 0; i < s->nsessions; i++) {
        const memclient_session_rec *x = &s->sessions[i];
        size_t p = 0;
        while (p < out->n && !(out->procs[p].pid == x->pid && out->procs[p].uid == x->uid &&
                               !strcmp(out->procs[p].comm, x->comm)))
            p++;
        memd_report_proc *pr = &out->procs[p];
        if (p == out->n) {
            out->n++;
            pr->pid = x->pid;
            pr->uid = x->uid;
            memcpy(pr->comm, x->comm, sizeof pr->comm);
            pr->comm[sizeof pr->comm - 1] = '\0';
            pr->slot = p;
        }
        if (!pr->client[0])
            memcpy(pr->client, x->client_name, sizeof pr->client);
        pr->client[sizeof pr->client - 1] = '\0';
        pr->sessions++;
        for (size_t k = 0; k < s->nusage; k++) {
            const memclient_session_use *u = &s->usage[k];
            if (u->session_id != x->id)
                continue;
            pr->bytes += u->bytes;
            pr->shared_bytes += u->shared_bytes;
            pr->allocations += u->allocations;
            size_t d = dev_index(s, u->device);
            if (d != SIZE_MAX)
                out->dev_bytes[pr->slot * nd + d] += u->bytes;
        }
    }
    qsort(out->procs, out->n, sizeof *out->procs, cmp_bytes);
    return 0;
}

uint64_t memd_report_proc_device_bytes(const memd_report_procs *ps, const memd_report_proc *p,
                                       size_t device_index)
{
    size_t nd = ps->ndevices ? ps->ndevices : 1;
    return device_index < ps->ndevices ? ps->dev_bytes[p->slot * nd + device_index] : 0;
}

uint64_t memd_report_proc_peak(const memclient_snapshot *s, uint32_t pid, uint32_t device)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < s->npeaks; i++) {
        const memclient_peak *p = &s->peaks[i];
        if (p->what == MEMCLIENT_PEAK_SESSION && p->pid == pid &&
            (device == UINT32_MAX || p->device == device))
            sum += p->peak;
    }
    return sum;
}

const memclient_peak *memd_report_peak(const memclient_snapshot *s, unsigned what,
                                       uint32_t device, memd_kind kind, uint32_t region)
{
    for (size_t i = 0; i < s->npeaks; i++) {
        const memclient_peak *p = &s->peaks[i];
        if (p->what == what && p->device == device && p->kind == kind &&
            (what != MEMCLIENT_PEAK_REGION || p->region == region))
            return p;
    }
    return NULL;
}

void memd_report_processes_free(memd_report_procs *ps)
{
    free(ps->procs);
    free(ps->dev_bytes);
    *ps = (memd_report_procs){0};
}
