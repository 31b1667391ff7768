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
 * "allocations", "sessions", "models", "plans", "instances" (blocks per region when
 * detailed). Sizes are exact bytes per bank; names are escaped (they come from other
 * processes). Keys only ever get added. */
void memd_report_json(FILE *f, const memclient_snapshot *s, bool detailed);

/* The plans, models and instances of a snapshot dumped with MEMCLIENT_DUMP_MODELS:
 * `,\n  "models": [...],\n  "plans": [...],\n  "instances": [...]` (no newline after), to
 * go right before a document's closing brace (memctl model list --json). */
void memd_report_models_json(FILE *f, const memclient_snapshot *s);

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

#endif
