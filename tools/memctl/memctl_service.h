/* memctl — helpers shared by the service subcommands (dump, alloc, free, devices,
 * sessions, metrics): connecting, strict flag parsing, error reporting, output escaping. */
#ifndef MEMD_CLIENT_MEMCTL_SERVICE_H
#define MEMD_CLIENT_MEMCTL_SERVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "report.h"
#include "memd/client.h"
#include "memctl.h"

/* Exit codes beyond memctl.h's 0/1/2, so scripts can tell the common failures apart. */
enum {
    MEMCTL_EXIT_OK = 0,
    MEMCTL_EXIT_FAIL = 1,    /* anything else */
    MEMCTL_EXIT_USAGE = 2,
    MEMCTL_EXIT_CONNECT = 3, /* cannot connect to the daemon */
    MEMCTL_EXIT_PERM = 4,    /* permission denied */
    MEMCTL_EXIT_NOMEM = 5,   /* out of device memory or over quota */
};

/* Connects (--socket, else $MEMD_SOCKET, else the default); on failure prints which
 * path and why and returns MEMCTL_EXIT_PERM when the socket is not this user's to use,
 * else MEMCTL_EXIT_CONNECT. */
int memctl_connect(const memctl_globals *g, memclient **out);

/* Once connected: prints "memctl CMD: what: <meaning of err>" and the last error detail, with
 * the out-of-memory record when there is one (c, if not NULL, is used to name the
 * region), and returns the exit code for err. */
int memctl_fail(memclient *c, const char *cmd, const char *what, int err);

/* Strict numbers: the whole string, no sign, no overflow; decimal or 0x hex. Sizes use
 * the same syntax as the config file (engine/units.h: B, K/KiB, M/MiB, G/GiB, T/TiB,
 * powers of 1024). Return 0 or -EINVAL / -ERANGE. */
int memctl_parse_u64(const char *s, uint64_t *out);
int memctl_parse_u32(const char *s, uint32_t *out);
int memctl_parse_size(const char *s, uint64_t *out);
/* --budget-ms for the daemon's planner: milliseconds, at most MEMD_PLAN_BUDGET_MAX_MS
 * (the longest the daemon plans). A larger budget is refused with a message rather than
 * cut short by the daemon without a word. 0, or -EINVAL after the message. */
int memctl_parse_budget(const char *cmd, const char *opt, const char *v, uint32_t *ms);
/* Seconds with up to millisecond precision ("2", "0.5"), > 0 and at most a day. */
int memctl_parse_seconds(const char *s, uint64_t *ms);

/* A subcommand without options that prints one view of the daemon's state: handles
 * --help, connects, dumps every device, prints with fn, returns the exit code. */
typedef void (*memctl_snapshot_fn)(FILE *f, const memclient_snapshot *s);
int memctl_show_snapshot(const memctl_globals *g, int argc, char **argv, const char *help,
                         memctl_snapshot_fn fn);

/* Fetches the value of option argv[*i] (advancing *i); prints a usage error if absent. */
const char *memctl_optarg(const char *cmd, int argc, char **argv, int *i);
/* Prints "memctl CMD: bad value for OPT: 'v' (why)" and returns MEMCTL_EXIT_USAGE. */
int memctl_bad_value(const char *cmd, const char *opt, const char *v, const char *why);

/* "1.5 GiB", "512 B": for tables only (JSON, CSV and metrics print exact bytes). */
const char *memctl_human_bytes(uint64_t v, char *buf, size_t len);
/* "3d04h", "2h05m", "4m10s", "12s" */
const char *memctl_human_age(uint64_t ns, char *buf, size_t len);

/* Output escaping. */
void memctl_csv_str(FILE *f, const char *s);      /* quoted only when needed */
void memctl_prom_label(FILE *f, const char *s);   /* Prometheus label value, quoted */

/* dump's output formats (memctl_dump_*.c; JSON: memd_report_json in tools/report). */
void memctl_dump_table(FILE *f, const memclient_snapshot *s, bool detailed);
/* The device and session parts of the table (memctl devices, memctl sessions). */
void memctl_devices_table(FILE *f, const memclient_snapshot *s);
/* Per-bank use of split regions and the banks of bank-set buffers (memctl_dump_banks.c);
 * the snapshot must come from a dump with MEMCLIENT_DUMP_BANKS. */
void memctl_banks_table(FILE *f, const memclient_snapshot *s);
/* Sub-devices with their use and bound sessions (memctl_dump_banks.c). */
void memctl_subdevs_table(FILE *f, const memclient_snapshot *s);
void memctl_sessions_table(FILE *f, const memclient_snapshot *s);
/* report: "memory_usage_summary", "l1_usage_summary", "detailed_memory_usage";
 * returns -EINVAL for another name. */
int memctl_dump_csv(FILE *f, const memclient_snapshot *s, const char *report);
bool memctl_csv_report_valid(const char *report);
bool memctl_csv_report_needs_blocks(const char *report);

#endif
