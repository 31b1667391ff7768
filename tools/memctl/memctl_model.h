/* memctl — model and plan subcommands (memctl_model*.c). */
#ifndef MEMD_CLIENT_MEMCTL_MODEL_H
#define MEMD_CLIENT_MEMCTL_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "memctl_service.h"

/* Plans, models and instances of a snapshot dumped with MEMCLIENT_DUMP_MODELS. */
void memctl_models_table(FILE *f, const memclient_snapshot *s);
/* JSON: `,\n  "models": [...],\n  "plans": [...],\n  "instances": [...]` (no newline
 * after), to go right before the document's closing brace. */
void memctl_models_json(FILE *f, const memclient_snapshot *s);
/* 100 * (arena - lower_bound) / lower_bound; 0 when the lower bound is 0. */
double memctl_plan_gap_pct(uint64_t arena, uint64_t lower_bound);

#endif
