/* memctl — helpers shared by the service subcommands (dump, alloc, free, devices,
 * sessions, metrics): connecting, strict flag parsing, error reporting, output escaping. */
#ifndef MEMD_CLIENT_MEMCTL_SERVICE_H
#define MEMD_CLIENT_MEMCTL_SERVICE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "text.h"
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
/* The same with MEMCLIENT_CONNECT_* flags (--hold: MEMCLIENT_CONNECT_RECONNECT). */
int memctl_connect_flags(const memctl_globals *g, unsigned flags, memclient **out);
/* A command's options then its connection: parsed is its parse() result (0: go on, < 0:
 * help was printed, > 0: an exit code). *out connected (and 0), or NULL and the exit
 * code: 0 after help, else parsed's or memctl_connect's. */
int memctl_parsed_connect(const memctl_globals *g, int parsed, memclient **out);

/* --hold: waits for a signal of set (blocked by the caller) and returns it. Meanwhile,
 * when memd restarts, reclaims the session within the daemon's grace period (checked 5
 * times a second), so what is held stays held. A negative errno when the hold is lost
 * (the session could not be reclaimed; printed). */
int memctl_hold(memclient *c, const sigset_t *set, const char *cmd);

/* Once connected: prints "memctl CMD: what: <meaning of err>" and the last error detail, with
 * the out-of-memory record when there is one (c, if not NULL, is used to name the
 * region), and returns the exit code for err. */
int memctl_fail(memclient *c, const char *cmd, const char *what, int err);

/* A flight recorder record as memctl history prints it (memctl_history.c): one JSON
 * object and a newline, or one table line under memctl_hist_print_header's. */
void memctl_history_json(FILE *f, const memclient_hist_event *e);
void memctl_hist_print_header(FILE *f);
void memctl_hist_print_text(FILE *f, const memclient_hist_event *e);

/* Strict numbers: the whole string, no sign, no overflow; decimal or 0x hex. Sizes use
 * the same syntax as the config file (common/units.h: B, K/KiB, M/MiB, G/GiB, T/TiB,
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
/* A duration > 0: a whole number with a unit s, m, h or d (none: seconds). */
int memctl_parse_duration(const char *s, uint64_t *ms);
/* The options the log commands (events, history) share: --follow (-f) sets *follow,
 * --json *json. true when a was one of them. */
bool memctl_log_option(const char *a, bool *follow, bool *json);
/* --follow: SIGINT and SIGTERM end the process successfully, SIGPIPE is ignored. */
void memctl_follow_signals(void);
/* After a page of output: flushes stdout. false when it no longer takes output, with
 * *exit_code set (0 when the reader went away, as after head). */
bool memctl_flush_page(int *exit_code);

/* One dump of every device with MEMCLIENT_DUMP_* flags over a connection of its own. 0,
 * or the exit code after saying what failed ("memctl CMD: cannot read the daemon's
 * state: ..."). */
int memctl_fetch(const memctl_globals *g, const char *cmd, uint32_t flags,
                 memclient_snapshot **out);

/* memctl connects under this client name, so its own short sessions can be told apart. */
#define MEMCTL_CLIENT_NAME "memctl"
/* A session of a memctl run that holds nothing (not `alloc --hold`): the looking, not a user. */
bool memctl_own_session(const memclient_session_rec *x);
/* Without --all, takes memctl's own sessions out of s (its sessions and the server's
 * session count), so views count only the sessions that use memory. memctl_fetch does it. */
void memctl_hide_own_sessions(const memctl_globals *g, memclient_snapshot *s);

/* A subcommand without options that prints one view of the daemon's state: handles
 * --help, connects, dumps every device, prints with fn, returns the exit code. */
typedef void (*memctl_snapshot_fn)(FILE *f, const memclient_snapshot *s);
int memctl_show_snapshot(const memctl_globals *g, int argc, char **argv, const char *help,
                         memctl_snapshot_fn fn);

/* Fetches the value of option argv[*i] (advancing *i); prints a usage error if absent. */
const char *memctl_optarg(const char *cmd, int argc, char **argv, int *i);
/* A bank list (--bank-set, --banks: "0-3,8") into ids (MEMD_BANKSET_MAX entries); 0, or
 * MEMCTL_EXIT_USAGE after a message naming the offending character. */
int memctl_parse_banks(const char *cmd, const char *opt, const char *v, uint32_t *ids, uint32_t *n);
/* Prints "memctl CMD: bad value for OPT: 'v' (why)" and returns MEMCTL_EXIT_USAGE. */
int memctl_bad_value(const char *cmd, const char *opt, const char *v, const char *why);

/* "3d04h", "2h05m", "4m10s", "12s" */
const char *memctl_human_age(uint64_t ns, char *buf, size_t len);
/* A wall-clock time in ns as "2026-11-28 15:05:31", local time ("?" if not representable). */
const char *memctl_local_time(uint64_t ns, char *buf, size_t len);

/* Output escaping. */
/* Names come from other processes (a process name is whatever a client set): every
 * output escapes them (text.h) before quoting, so none can break a row or send a
 * terminal escape sequence. TX(s): s escaped, in a buffer that lives for the statement. */
#define TX(s) memd_text_escape((s), (char[192]){0}, 192)
void memctl_csv_str(FILE *f, const char *s);      /* escaped; quoted only when needed */
void memctl_prom_label(FILE *f, const char *s);   /* Prometheus label value, escaped, quoted */

/* dump's output formats (memctl_dump_*.c; JSON: memd_report_json in client/report). */
void memctl_dump_table(FILE *f, const memclient_snapshot *s, bool detailed);
/* The device part of the table (memctl devices). */
void memctl_devices_table(FILE *f, const memclient_snapshot *s);
/* Sessions and processes with the bytes they hold (a snapshot with MEMCLIENT_DUMP_USAGE). */
void memctl_sessions_usage_table(FILE *f, const memclient_snapshot *s);
/* The processes holding memory, largest first, with a column per device (skip_self: not
 * this memctl's own session when it holds nothing). */
void memctl_processes_table(FILE *f, const memclient_snapshot *s);
/* Per-bank use of split regions and the banks of bank-set buffers (memctl_dump_banks.c);
 * the snapshot must come from a dump with MEMCLIENT_DUMP_BANKS. */
void memctl_banks_table(FILE *f, const memclient_snapshot *s);
/* Only the per-bank use part of it (memctl devices). */
void memctl_bank_use_table(FILE *f, const memclient_snapshot *s);
/* Sub-devices with their use and bound sessions (memctl_dump_banks.c). */
void memctl_subdevs_table(FILE *f, const memclient_snapshot *s);
/* report: "memory_usage_summary", "l1_usage_summary", "detailed_memory_usage";
 * returns -EINVAL for another name. */
int memctl_dump_csv(FILE *f, const memclient_snapshot *s, const char *report);
bool memctl_csv_report_valid(const char *report);
bool memctl_csv_report_needs_blocks(const char *report);

/* The peaks of a snapshot dumped with MEMCLIENT_DUMP_PEAKS on device (UINT32_MAX: every
 * one) whose what is in mask (bit 1 << MEMCLIENT_PEAK_*), as a table (WHAT, DEVICE, GROUP,
 * REGION, OWNER, CURRENT, PEAK, WHEN) or a JSON array (ind: the elements' indent). */
void memctl_peaks_table(FILE *f, const memclient_snapshot *s, uint32_t device, unsigned mask);
void memctl_peaks_json(FILE *f, const memclient_snapshot *s, uint32_t device, unsigned mask,
                       const char *ind);

/* memctl metrics: the Prometheus text of a snapshot dumped with MEMCLIENT_DUMP_USAGE; and
 * serving it over HTTP at addr ("HOST:PORT", "[V6]:PORT", ":PORT") until SIGINT/SIGTERM
 * (memctl_http.c). */
/* What a metrics snapshot is dumped with (per process use, pools, per-bank use). */
#define MEMCTL_METRICS_DUMP \
    (MEMCLIENT_DUMP_USAGE | MEMCLIENT_DUMP_POOLS | MEMCLIENT_DUMP_BANKS | MEMCLIENT_DUMP_CGROUPS | \
     MEMCLIENT_DUMP_LIMITS | MEMCLIENT_DUMP_FAILURES | MEMCLIENT_DUMP_PEAKS)
void memctl_metrics_write(FILE *f, const memclient_snapshot *s);
int memctl_metrics_serve(const memctl_globals *g, const char *addr);

#endif
