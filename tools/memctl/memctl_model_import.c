/* memctl model import FILE.onnx [-o OUT.yaml] [--dims NAME=N,...] [--name NAME]
 *
 * Imports an ONNX model into memd's model YAML for users outside Python: runs the memd
 * Python package's importer (`python3 -m memd import ...`) with the interpreter memd was
 * built for (Debian's /usr/bin/python3, which python3-onnx belongs to), whatever
 * `python3` comes first on PATH. The package is looked up, first to last: $MEMD_PYTHONPATH,
 * the build tree this memctl belongs to (BUILD/python beside BUILD/tools/memctl), the
 * installed package (meson install), then the interpreter's own path. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memd-python-config.h"
#include "memctl_model.h"

/* dir/memd/__init__.py exists. */
static bool has_package(const char *dir)
{
    char p[PATH_MAX];
    return dir[0] && snprintf(p, sizeof p, "%s/memd/__init__.py", dir) < (int)sizeof p &&
           access(p, R_OK) == 0;
}

/* BUILD/python when this memctl is BUILD/tools/memctl/memctl. */
static bool build_tree_dir(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = '\0';
    return snprintf(out, len, "%s/../../python", exe) < (int)len && has_package(out);
}

int memctl_model_import(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs("usage: memctl model import FILE.onnx [-o OUT.yaml] [--dims NAME=N,...] "
              "[--name NAME] [--json]\n"
              "  Imports an ONNX model into memd's model YAML (stdout without -o) with the\n"
              "  summary on stderr, or with --json (needs -o) as one JSON object on stdout;\n"
              "  memd Python package (" MEMD_PYTHON " -m memd import).\n",
              argc < 2 ? stderr : stdout);
        return argc < 2 ? MEMCTL_EXIT_USAGE : 0;
    }
    if (!MEMD_PYTHON[0]) {
        fprintf(stderr, "memctl model import: memd was built without its Python package "
                        "(meson setup -Dpython=enabled, with python3-dev installed)\n");
        return MEMCTL_EXIT_FAIL;
    }
    char path[3 * PATH_MAX + 8] = "";
    const char *env = getenv("MEMD_PYTHONPATH");
    char build[PATH_MAX];
    const char *parts[] = {env && env[0] ? env : NULL,
                           build_tree_dir(build, sizeof build) ? build : NULL,
                           has_package(MEMD_PYTHON_SITE) ? MEMD_PYTHON_SITE : NULL,
                           getenv("PYTHONPATH")};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (!parts[i] || !parts[i][0])
            continue;
        size_t used = strlen(path);
        snprintf(path + used, sizeof path - used, "%s%s", used ? ":" : "", parts[i]);
    }
    if (path[0] && setenv("PYTHONPATH", path, 1) < 0) {
        fprintf(stderr, "memctl model import: %s\n", strerror(errno));
        return MEMCTL_EXIT_FAIL;
    }
    /* python3 -m memd import ARGS... (argv[0] is "import") */
    char **args = calloc((size_t)argc + 4, sizeof *args);
    if (!args) {
        fprintf(stderr, "memctl model import: out of memory\n");
        return MEMCTL_EXIT_FAIL;
    }
    args[0] = (char *)MEMD_PYTHON;
    args[1] = (char *)"-m";
    args[2] = (char *)"memd";
    for (int i = 0; i < argc; i++)
        args[3 + i] = argv[i];
    fflush(NULL);
    execv(MEMD_PYTHON, args);
    fprintf(stderr, "memctl model import: cannot run %s: %s\n", MEMD_PYTHON, strerror(errno));
    free(args);
    return MEMCTL_EXIT_FAIL;
}
