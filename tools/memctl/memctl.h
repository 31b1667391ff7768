/* memctl — the operator CLI. Each subcommand lives in its own memctl_*.c file. */
#ifndef MEMD_CLIENT_MEMCTL_H
#define MEMD_CLIENT_MEMCTL_H

/* Options every subcommand may need, parsed by memctl.c before or after the subcommand. */
typedef struct memctl_globals {
    const char *socket_path; /* --socket, or NULL: $MEMD_SOCKET, then the default */
} memctl_globals;

/* A subcommand gets its own argv (argv[0] is the subcommand name) and returns the
 * process exit code: 0 success, 1 operation failed, 2 usage error. */
typedef int (*memctl_cmd_fn)(const memctl_globals *g, int argc, char **argv);

int memctl_cmd_plan(const memctl_globals *g, int argc, char **argv);
/* Service subcommands (memctl_service.h; exit codes 3 connect, 4 permission, 5 memory). */
int memctl_cmd_dump(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_alloc(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_free(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_devices(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_sessions(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_metrics(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_events(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_status(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_top(const memctl_globals *g, int argc, char **argv);
/* Models and plans in the daemon (memctl_model*.c). */
int memctl_cmd_model(const memctl_globals *g, int argc, char **argv);
int memctl_cmd_plan_submit(const memctl_globals *g, int argc, char **argv);

#endif
