/* memctl — the operator CLI. Each subcommand lives in its own memctl_*.c file. */
#ifndef MEMD_CLIENT_MEMCTL_H
#define MEMD_CLIENT_MEMCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "memd/types.h"

/* Options every subcommand may need, parsed by memctl.c before or after the subcommand. */
typedef struct memctl_globals {
    const char *socket_path; /* --socket, or NULL: $MEMD_SOCKET, then the default */
    bool all;                /* --all: memctl's own short sessions and their events too */
} memctl_globals;

/* A subcommand gets its own argv (argv[0] is the subcommand name) and returns the
 * process exit code: 0 success, 1 operation failed, 2 usage error. */
typedef int (*memctl_cmd_fn)(const memctl_globals *g, int argc, char **argv);

int memctl_cmd_plan(const memctl_globals *g, int argc, char **argv);

/* Prints prefix, the error as memd_error_format gives it ("file:line:col: msg") and a
 * newline to stderr: how the offline commands report a file they cannot use. */
void memctl_print_error(const char *prefix, const memd_error *e);

/* One plan as `plan`, `plan-submit` and `model load` report it (memctl_plan_summary.c):
 *   plan 5f0c2e9a1b7d4c38: 3 buffers, arena 300 bytes, lower bound 300 bytes, gap 0.00%,
 *   strategy S (optimal), planned now in 0.1 ms | cached | validated in T ms
 * or with as_json one object with the same fields (plan_id a hex string or null,
 * first_ms null when unknown). */
typedef struct memctl_plan_summary {
    uint64_t plan_id;      /* the daemon's cache key; 0: planned offline, none */
    uint64_t buffers, arena, lower_bound;
    const char *strategy;
    bool optimal;
    bool cached;           /* the daemon answered from its cache */
    bool validated;        /* a given plan checked, not planned */
    double plan_ms;        /* time spent planning or validating (for a cached plan: when
                              it was planned); < 0: unknown */
    double first_ms;       /* to the first valid plan; < 0: unknown */
    bool cancelled;        /* memctl plan stopped by Ctrl-C: the best plan found so far */
} memctl_plan_summary;
void memctl_plan_print(FILE *f, const memctl_plan_summary *p, bool as_json);
/* Service subcommands (memctl_service.h; exit codes 3 connect, 4 permission, 5 memory). */
int memctl_cmd_dump(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_alloc(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_free(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_lowest(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_region(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_subdev(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_limit(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_peaks(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_devices(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_sessions(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_metrics(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_events(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_history(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_postmortem(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_status(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_top(const memctl_globals *g, int argc, char **argv);
/* Models and plans in the daemon (memctl_model*.c). */
int memctl_cmd_model(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_plan_submit(const memctl_globals *g, int argc, char **argv);

/* A bank mode in memctl's text output: "range", "per-bank", "range-lockstep". */
const char *memctl_mode_text(memd_bank_mode m);

#endif
