/* memctl — entry point: global options (before or after the subcommand), then one subcommand. */
#include <stdio.h>
#include <string.h>

#include "memd/version.h"
#include "memctl.h"

typedef struct memctl_cmd {
    const char *name;
    memctl_cmd_fn fn;
    const char *usage;
} memctl_cmd;

/* The overview memctl --help prints: every command with its main options, --json on
 * each (COMMAND --help has the whole list; the bash completion reads those). */
static const memctl_cmd cmds[] = {
    {"status", memctl_cmd_status, "status [--json]   (the default command)"},
    {"plan", memctl_cmd_plan, "plan INPUT.csv [--output OUT.csv] [--budget-ms MS] [--seed S] [--threads N] [--iterations N] [--json]"},
    {"dump", memctl_cmd_dump, "dump [--json | --csv --report NAME | --svg FILE | --html FILE] [--detailed] [--watch SEC] [filters]"},
    {"top", memctl_cmd_top, "top [--interval SEC] [--sort KEY] [--reverse] [--json [--iterations N] [--limit N]] [filters]\n"
                            "      (filters: --pid P --session S --name GLOB --class C --device N)"},
    {"alloc", memctl_cmd_alloc, "alloc --device N --class C (--size SIZE | --dtype T --shape D0xD1 | --sizes LIST) [--scope S] [--name N [--shared]]\n"
                                "      [--page-size B] [--align A] [--banks N | --bank-set LIST [--per-bank]] [--at ADDR] --hold [--json]"},
    {"free", memctl_cmd_free, "free HANDLE [--json]"},
    {"lowest", memctl_cmd_lowest, "lowest --device N --group G --bank B [--json]"},
    {"region", memctl_cmd_region, "region ranges [--device N] [--json] | region (shrink | reset) --device N --group G\n"
                                  "      --region R [--bottom SIZE | --top SIZE] [--json]"},
    {"devices", memctl_cmd_devices, "devices [--json]"},
    {"subdev", memctl_cmd_subdev, "subdev define NAME --device N --group G --banks LIST [--budget SIZE] [--overlap NAMES] [--window SIZE] [--json]"},
    {"limit", memctl_cmd_limit, "limit (set --cgroup PATH --device N [--group G] --max SIZE | list\n"
                                "      | clear --cgroup PATH [--device N] [--group G]) [--json]"},
    {"peaks", memctl_cmd_peaks, "peaks [--device N] [--json] | peaks reset [--device N] [--session ID] [--json]"},
    {"sessions", memctl_cmd_sessions, "sessions [--json]"},
    {"metrics", memctl_cmd_metrics, "metrics [--json | --listen ADDR:PORT]"},
    {"events", memctl_cmd_events, "events [--follow] [--json] [--since SEQ]"},
    {"postmortem", memctl_cmd_postmortem, "postmortem [ID] [--json | --html FILE]"},
    {"history", memctl_cmd_history, "history [--json | --html FILE] [--device N] [--pid P] [--client NAME] [--since DURATION] [--follow]"},
    {"model", memctl_cmd_model, "model (check FILE.yaml | load FILE.yaml [--device N] [--instances K] [--hold] | list\n"
                                "      | import FILE.onnx [-o OUT.yaml] [--dims NAME=N,...]) [--json]"},
    {"plan-submit", memctl_cmd_plan_submit, "plan-submit INPUT.csv [--validate] [--budget-ms MS] [--seed S] [--output OUT.csv] [--json]"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: memctl [--socket PATH] [--all] COMMAND [ARGS]\n"
               "  (--socket PATH, or --socket=PATH, and --all may also follow the command)\n"
               "  --all: also memctl's own sessions that hold nothing (client name \"memctl\")\n"
               "         in counts and tables, and their events\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        fprintf(f, "  %s\n", cmds[i].usage);
    fprintf(f, "\nexit codes: 0 ok, 1 failed, 2 usage, 3 cannot connect, 4 permission denied, "
               "5 out of device memory\n");
}

/* argv[*i] is --socket PATH or --socket=PATH: takes the path (advancing *i past it)
 * and returns 1; --all: returns 1; 0 for any other argument; -1 when the path is missing. */
static int global_opt(int argc, char **argv, int *i, memctl_globals *g)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--all")) {
        g->all = true;
        return 1;
    }
    if (!strncmp(a, "--socket=", 9)) {
        g->socket_path = a + 9;
    } else if (!strcmp(a, "--socket")) {
        if (*i + 1 >= argc)
            g->socket_path = "";
        else
            g->socket_path = argv[++*i];
    } else {
        return 0;
    }
    if (!*g->socket_path) {
        fprintf(stderr, "memctl: --socket needs a path\n");
        return -1;
    }
    return 1;
}

int main(int argc, char **argv)
{
    memctl_globals g = {0};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        int r = global_opt(argc, argv, &i, &g);
        if (r < 0)
            return 2;
        if (r)
            continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            break; /* memctl --json: the default command's option */
        } else if (!strcmp(argv[i], "--version")) {
            printf("memctl %s\n", MEMD_VERSION_STRING);
            return 0;
        } else {
            fprintf(stderr, "memctl: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc || argv[i][0] == '-') { /* no command: the summary, as nvidia-smi does */
        char *status_argv[] = {"status", i < argc ? argv[i] : NULL, NULL};
        if (i + 1 < argc) {
            fprintf(stderr, "memctl: unexpected argument '%s'\n", argv[i + 1]);
            return 2;
        }
        return memctl_cmd_status(&g, i < argc ? 2 : 1, status_argv);
    }
    /* --socket and --all may also follow the subcommand: take them out of its argv. */
    int n = i + 1;
    for (int j = i + 1; j < argc; j++) {
        int r = global_opt(argc, argv, &j, &g);
        if (r < 0)
            return 2;
        if (!r)
            argv[n++] = argv[j];
    }
    argv[n] = NULL;
    for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++)
        if (!strcmp(argv[i], cmds[c].name))
            return cmds[c].fn(&g, n - i, argv + i);
    fprintf(stderr, "memctl: unknown command '%s'\n", argv[i]);
    usage(stderr);
    return 2;
}
