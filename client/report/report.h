/* memd — reports of the daemon's state built from a libmemclient snapshot: the JSON
 * document of `memctl dump --json` (schema_version 1) and the derived figures every
 * report prints. One library, so memctl and the Python package (memd.Client.dump) emit
 * the same document. */
#ifndef MEMD_TOOLS_REPORT_H
#define MEMD_TOOLS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "memd/client.h"

/* The whole snapshot as one JSON document: "schema_version", "server", "devices",
 * "allocations", "sessions", "pools", "models", "plans", "instances" (blocks per region when
 * detailed). Sizes are exact bytes per bank; names are escaped (they come from other
 * processes). Keys only ever get added. */
void memd_report_json(FILE *f, const memclient_snapshot *s, bool detailed);

/* The plans, models and instances of a snapshot dumped with MEMCLIENT_DUMP_MODELS:
 * `,\n  "models": [...],\n  "plans": [...],\n  "instances": [...]` (no newline after), to
 * go right before a document's closing brace (memctl model list --json). */
void memd_report_models_json(FILE *f, const memclient_snapshot *s);

/* The client pools of a snapshot dumped with MEMCLIENT_DUMP_POOLS (sub-allocations with
 * MEMCLIENT_DUMP_SUBALLOCS): `,\n  "pools": [...]` (no newline after). */
void memd_report_pools_json(FILE *f, const memclient_snapshot *s);

/* Fragmentation of free space in percent: 1 - largest_free / free (0 when nothing free).
 * For one region: a group's stats mix its regions (free bytes summed, the largest block
 * of the largest region), so use memd_report_group_fragmentation for a group. */
double memd_report_fragmentation(const memclient_stats *st);

/* A bank group's fragmentation in percent: 1 - (sum of each allocatable region's largest
 * free block) / (sum of their free bytes). A buffer never spans regions, so an idle group
 * of several regions is 0 %, like each of its regions. */
double memd_report_group_fragmentation(const memclient_snapshot *s, const memclient_group *g);

/* 100 * (arena - lower_bound) / lower_bound; 0 when the lower bound is 0. */
double memd_report_gap_pct(uint64_t arena, uint64_t lower_bound);

/* Region name of an allocation or block, from the snapshot ("#3" if unknown). */
const char *memd_report_region_name(const memclient_snapshot *s, uint32_t device,
                                    memd_kind kind, uint32_t region, char *buf, size_t len);

/* Sub-device i of s (0-based) is on a device the snapshot shows: a dump of one device
 * carries every sub-device (sessions name theirs by position), the views show its own. */
bool memd_report_subdev_shown(const memclient_snapshot *s, size_t i);
/* How many of s's sub-devices memd_report_subdev_shown shows. */
size_t memd_report_subdevs_shown(const memclient_snapshot *s);
/* Sub-device d's banks as ranges ("0-31,40"): the whole list when the dump carried it
 * (bank_ids), else the record's string (cut with "..." on big grids). malloc'd; NULL
 * when out of memory. */
char *memd_report_subdev_banks(const memclient_subdev_rec *d);

/* ---- bank_use.c: use per bank once bank subsets make banks differ ---- */
/* A bank group's allocated bytes summed over its banks (used, of total), and those of
 * its fullest and emptiest bank (of total_per_bank). From the snapshot's per-bank
 * records when it was dumped with MEMCLIENT_DUMP_BANKS; else every bank holds the
 * group's lockstep map (exact while no buffer uses a bank set). */
typedef struct memd_report_group_bytes {
    uint64_t used, total, used_max_bank, used_min_bank, total_per_bank;
} memd_report_group_bytes;
void memd_report_group_use(const memclient_snapshot *s, const memclient_group *g,
                           memd_report_group_bytes *out);
/* The least and the most a bank of region r has allocated (its BANK records, when the
 * snapshot has them and the region's banks differ; else its lockstep figure). */
void memd_report_region_bank_range(const memclient_snapshot *s, const memclient_region *r,
                                   uint64_t *min, uint64_t *max);
/* The bank groups of one device in turn: the first at or after *i (which then points
 * past it), with its use in *u; NULL once there is none. Start with *i = 0. */
const memclient_group *memd_report_device_group(const memclient_snapshot *s, uint32_t device,
                                                size_t *i, memd_report_group_bytes *u);
/* Bytes allocated in one bank of the group (all its regions), the same way. */
uint64_t memd_report_bank_allocated(const memclient_snapshot *s, const memclient_group *g,
                                    uint32_t bank);
/* Device bytes of an allocation: size per bank x the banks it reserves (its bank set, or
 * every bank of its group). */
uint64_t memd_report_alloc_bytes(const memclient_snapshot *s, const memclient_alloc_info *a);

/* ---- alloc_role.c ----
 * a's name; for an unnamed model buffer (snapshot with MEMCLIENT_DUMP_MODELS) what it is
 * for, written to buf: "MODEL/code", "MODEL/constants", "MODEL/instance N/arena",
 * "MODEL/instance N/placeholder I"; else "". */
const char *memd_report_alloc_role(const memclient_snapshot *s, const memclient_alloc_info *a,
                                   char *buf, size_t len);

/* ---- usage.c: bytes held, from a snapshot dumped with MEMCLIENT_DUMP_USAGE ----
 * Bytes are device bytes (size per bank x the banks a buffer reserves); a shared buffer
 * counts in full for each holder and also in shared_bytes. */
typedef struct memd_report_use {
    uint64_t bytes, shared_bytes, allocations;
} memd_report_use;

/* What one session holds over every device. */
void memd_report_session_total(const memclient_snapshot *s, uint32_t session_id,
                               memd_report_use *out);

/* Sessions grouped by process (pid, uid, comm), largest holder first. */
typedef struct memd_report_proc {
    uint32_t pid, uid;
    char comm[16];
    char client[32];              /* the first client name its sessions gave; "" none */
    uint32_t sessions;
    uint64_t allocations, bytes, shared_bytes;
    size_t slot;                  /* row of dev_bytes */
} memd_report_proc;

typedef struct memd_report_procs {
    size_t n;
    memd_report_proc *procs;
    size_t ndevices;              /* the snapshot's */
    uint64_t *dev_bytes;          /* per process slot, per snapshot device index */
} memd_report_procs;

int memd_report_processes(const memclient_snapshot *s, memd_report_procs *out);
/* Bytes p holds on the snapshot's device_index-th device. */
uint64_t memd_report_proc_device_bytes(const memd_report_procs *ps, const memd_report_proc *p,
                                       size_t device_index);
void memd_report_processes_free(memd_report_procs *ps);
/* The peak of process pid on device (UINT32_MAX: every device), from a snapshot dumped
 * with MEMCLIENT_DUMP_PEAKS: its sessions' bank group peaks summed (an upper bound of the
 * process's own when its sessions peaked at different times). */
uint64_t memd_report_proc_peak(const memclient_snapshot *s, uint32_t pid, uint32_t device);
/* The peak record of a device's bank group or region (region ignored for a group), or
 * NULL (a snapshot without MEMCLIENT_DUMP_PEAKS). */
const memclient_peak *memd_report_peak(const memclient_snapshot *s, unsigned what,
                                       uint32_t device, memd_kind kind, uint32_t region);
/* The sessions as a JSON array (with "bytes", "shared_bytes" and "use" per bank group
 * when the snapshot has MEMCLIENT_DUMP_USAGE). */
void memd_report_sessions_json(FILE *f, const memclient_snapshot *s);
/* The processes as a JSON array (ind: the elements' indent). */
void memd_report_processes_json(FILE *f, const memclient_snapshot *s, const char *ind);

#endif
