/* memctl — entry point: global options, then one subcommand. */
#include <stdio.h>
#include <string.h>

#include "memd/version.h"
#include "memctl.h"

typedef struct memctl_cmd {
    const char *name;
    memctl_cmd_fn fn;
    const char *usage;
} memctl_cmd;

static const memctl_cmd cmds[] = {
    {"plan", memctl_cmd_plan, "plan INPUT.csv [--output OUT.csv] [--budget-ms MS] [--seed S]"},
    {"dump", memctl_cmd_dump, "dump [--device N] [--json | --csv --report NAME] [--detailed] [--watch SEC]"},
    {"alloc", memctl_cmd_alloc, "alloc --device N --class C (--size BYTES | --dtype T --shape D0xD1) [--scope S] [--name N [--shared]] [--page-size B] [--align A] [--banks N] --hold"},
    {"free", memctl_cmd_free, "free HANDLE"},
    {"devices", memctl_cmd_devices, "devices"},
    {"sessions", memctl_cmd_sessions, "sessions"},
    {"metrics", memctl_cmd_metrics, "metrics"},
    {"model", memctl_cmd_model, "model (check FILE.yaml | load FILE.yaml [--device N] [--instances K] [--hold] | list [--json] | import FILE.onnx [-o OUT.yaml])"},
    {"plan-submit", memctl_cmd_plan_submit, "plan-submit INPUT.csv [--validate] [--budget-ms MS] [--seed S] [--output OUT.csv]"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: memctl [--socket PATH] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        fprintf(f, "  %s\n", cmds[i].usage);
    fprintf(f, "\nexit codes: 0 ok, 1 failed, 2 usage, 3 cannot connect, 4 permission denied, "
               "5 out of device memory\n");
}

int main(int argc, char **argv)
{
    memctl_globals g = {0};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--socket")) {
            if (++i >= argc) {
                fprintf(stderr, "memctl: --socket needs a path\n");
                return 2;
            }
            g.socket_path = argv[i];
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--version")) {
            printf("memctl %s\n", MEMD_VERSION_STRING);
            return 0;
        } else {
            fprintf(stderr, "memctl: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++)
        if (!strcmp(argv[i], cmds[c].name))
            return cmds[c].fn(&g, argc - i, argv + i);
    fprintf(stderr, "memctl: unknown command '%s'\n", argv[i]);
    usage(stderr);
    return 2;
}
