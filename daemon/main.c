/* memd — the device memory daemon.
 *
 *   memd [--config FILE] [--socket PATH] [--foreground] [--discard-state]
 *        [--state-max-bytes SIZE]
 *   memd --check-config FILE [--json]
 *   memd --discover [--json] [--descriptors DIR] [--sysfs-root DIR] [--dev-root DIR]
 *   memd --version
 *
 * Without --config it serves the installed default config (sysconfdir/memd/memd.yaml).
 * Only a memd run from the build tree it was built in serves the source tree's config
 * instead; an installed memd never looks into a source tree, even one still on disk. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "units.h"
#include "listen.h"
#include "log.h"
#include "memd-build-config.h"
#include "model.h"
#include "server.h"
#include "check_config.h"
#include "discover.h"
#include "config.h"
#include "state.h"
#include "postmortem_files.h"
#include "store.h"

/* Whether this executable lives in the build tree it was built in (MEMD_BUILD_ROOT):
 * meson installs a copy elsewhere, so an installed memd answers false. */
static bool in_build_tree(void)
{
    char exe[PATH_MAX], root[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || !realpath(MEMD_BUILD_ROOT, root))
        return false;
    exe[n] = '\0';
    size_t len = strlen(root);
    return strncmp(exe, root, len) == 0 && exe[len] == '/';
}

static const char *default_config(void)
{
    static char installed[PATH_MAX];
    snprintf(installed, sizeof installed, "%s/memd.yaml", MEMD_SYSCONFDIR);
    return in_build_tree() ? MEMD_SOURCE_CONFIG : installed;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: memd [--config FILE] [--socket PATH] [--foreground] [--discard-state]\n"
            "            [--state-max-bytes SIZE]\n"
            "       memd --check-config FILE [--json]\n"
            "       memd --discover [--json] [--descriptors DIR] [--sysfs-root DIR]\n"
            "                       [--dev-root DIR]\n"
            "       memd --version\n"
            "\n"
            "  --config FILE        daemon config (default: %s)\n%s"
            "  --socket PATH        listen here (default: the config's, else %s);\n"
            "                       ignored when systemd passes a socket\n"
            "  --foreground         do not detach (what systemd and tests use)\n"
            "  --discard-state      set the stored allocation map aside (as\n"
            "                       memd-state.mdb.discarded) and start empty: only when no\n"
            "                       client holds device memory; logged\n"
            "  --state-max-bytes SIZE  limit of the state store file (default 1GiB)\n"
            "  --check-config FILE  load FILE, print the resulting memory map, exit 0/1\n"
            "  --discover           list the host's accelerators (sysfs, devfs) as memd.yaml\n"
            "                       device stanzas with their descriptor pairs\n"
            "  --descriptors DIR    with --discover: a tt-metal tree or a folder of\n"
            "                       soc_*.yaml/core_*.yaml (default: $TT_METAL_HOME)\n"
            "  --sysfs-root DIR     with --discover: sysfs is here (default /sys)\n"
            "  --dev-root DIR       with --discover: devfs is here (default /dev)\n"
            "  --json               with --check-config or --discover: print JSON\n"
            "  --version            print the version\n",
            default_config(),
            in_build_tree() ? "                       (the source tree's: this memd runs from "
                              "its build tree)\n" : "",
            MEMD_DEFAULT_SOCKET);
}

/* Detaching: the parent stays until the child reports readiness through a pipe, so
 * `memd` exits 0 only once the socket is being served, and 1 if startup failed. */
static int ready_fd = -1;

static void on_ready(void *ctx)
{
    (void)ctx;
    if (ready_fd < 0)
        return;
    char ok = 1;
    (void)!write(ready_fd, &ok, 1);
    close(ready_fd);
    ready_fd = -1;
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        close(null);
    }
}

/* Returns in the child; the parent exits with the child's startup verdict. */
static int detach(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid > 0) {
        close(p[1]);
        char ok = 0;
        ssize_t n;
        do
            n = read(p[0], &ok, 1);
        while (n < 0 && errno == EINTR);
        _exit(n == 1 && ok == 1 ? 0 : 1);
    }
    close(p[0]);
    ready_fd = p[1];
    setsid();
    if (chdir("/") < 0)
        return -errno;
    memd_log_to_syslog(true);
    return 0;
}

typedef struct opts {
    const char *config, *socket, *check;
    bool foreground, json, version, discover;
    memd_discover_opts disc;
    bool discard_state;
    uint64_t state_max;           /* 0: the store's default */
} opts;

static int parse(int argc, char **argv, opts *o)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"socket", required_argument, NULL, 's'},
        {"foreground", no_argument, NULL, 'f'},
        {"check-config", required_argument, NULL, 'C'},
        {"json", no_argument, NULL, 'j'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {"discard-state", no_argument, NULL, 'R'},
        {"state-max-bytes", required_argument, NULL, 'M'},
        {"discover", no_argument, NULL, 'D'},
        {"descriptors", required_argument, NULL, 'd'},
        {"sysfs-root", required_argument, NULL, 'S'},
        {"dev-root", required_argument, NULL, 'v'},
        {0},
    };
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "c:s:fh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c': o->config = optarg; break;
        case 's': o->socket = optarg; break;
        case 'f': o->foreground = true; break;
        case 'C': o->check = optarg; break;
        case 'j': o->json = true; break;
        case 'V': o->version = true; break;
        case 'h': usage(stdout); exit(0);
        case 'R': o->discard_state = true; break;
        case 'D': o->discover = true; break;
        case 'd': o->disc.descriptors = optarg; break;
        case 'S': o->disc.sysfs = optarg; break;
        case 'v': o->disc.devfs = optarg; break;
        case 'M':
            if (memd_parse_size(optarg, &o->state_max, NULL) < 0 || o->state_max < (1u << 20)) {
                fprintf(stderr, "memd: --state-max-bytes %s: expected a size of at least 1MiB\n",
                        optarg);
                return -EINVAL;
            }
            break;
        default:
            fprintf(stderr, "memd: %s: %s\n",
                    optopt ? "unknown option or missing argument" : "unknown option",
                    argv[optind - 1]);
            return -EINVAL;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "memd: unexpected argument '%s'\n", argv[optind]);
        return -EINVAL;
    }
    if (o->json && !o->check && !o->discover) {
        fprintf(stderr, "memd: --json only goes with --check-config or --discover\n");
        return -EINVAL;
    }
    if ((o->disc.descriptors || o->disc.sysfs || o->disc.devfs) && !o->discover) {
        fprintf(stderr, "memd: --descriptors, --sysfs-root and --dev-root only go with "
                        "--discover\n");
        return -EINVAL;
    }
    if (o->socket && !*o->socket) {
        fprintf(stderr, "memd: --socket needs a path\n");
        return -EINVAL;
    }
    return 0;
}

static void log_error(const memd_error *e)
{
    char msg[1200];
    memd_error_format(e, msg, sizeof msg);
    memd_log(LOG_ERR, "%s", msg);
}

static int serve(const opts *o)
{
    /* SIGHUP never ends memd: ignored until the loop watches it (a reload), and again
     * once the loop is done. */
    signal(SIGHUP, SIG_IGN);
    const char *path = o->config ? o->config : default_config();
    memd_config cfg;
    memd_error e = {0};
    memset(&cfg, 0, sizeof cfg);
    if (memd_config_load(path, &cfg, &e) < 0) {
        log_error(&e);
        return 1;
    }
    memd_state st;
    if (memd_state_init(&st, &cfg, &e) < 0) {
        log_error(&e);
        memd_config_free(&cfg);
        return 1;
    }
    e = (memd_error){0};
    const char *sock = o->socket ? o->socket
                       : cfg.socket_path[0] ? cfg.socket_path
                                            : MEMD_DEFAULT_SOCKET;
    memd_listen l;
    if (memd_listen_open(sock, &l, &e) < 0) {
        log_error(&e);
        memd_state_fini(&st);
        memd_config_free(&cfg);
        return 1;
    }
    if (l.activated)
        sock = l.path[0] ? l.path : "the socket passed by systemd";
    memd_log_set_level(cfg.log_level);
    memd_log(LOG_INFO, "config %s", cfg.path);
    /* The map from before a crash or stop, restored before the first client is served. */
    char dir[512];
    memd_store_opts so = {.dir = dir, .max_bytes = o->state_max, .discard = o->discard_state};
#ifdef MEMD_TEST_BUILD
    /* memd-test only (daemon/meson.build): the integration tests' failing store. */
    so.failpoint = getenv("MEMD_TEST_STORE_FAILPOINT");
#endif
    /* The model layer first: the store hands it its records (plans, models, instances). */
    if ((memd_models_init(&st) < 0 && memd_error_set(&e, -ENOMEM, "out of memory") < 0) ||
        memd_store_dir(cfg.state_dir, l.activated ? l.path : sock, dir, sizeof dir, &e) < 0 ||
        memd_store_open(&st, &so, &e) < 0) {
        log_error(&e);
        memd_listen_close(&l);
        memd_state_fini(&st);
        memd_config_free(&cfg);
        return 1;
    }
    memd_pm_files_open(&st, dir);
    int code = 0;
    if (!o->foreground) {
        int rc = detach();
        if (rc < 0) {
            memd_log(LOG_ERR, "cannot detach: %s", strerror(-rc));
            code = 1;
        }
    }
    if (code == 0) {
        code = memd_server_run(&st, cfg.path, l.fd, sock, on_ready, NULL);
        signal(SIGHUP, SIG_IGN);
        l.fd = -1; /* closed with the loop's handle */
    }
    memd_listen_close(&l);
    memd_pm_files_close(&st);
    memd_store_close(&st);
    memd_state_fini(&st);
    memd_config_free(&cfg);
    return code;
}

int main(int argc, char **argv)
{
    opts o = {0};
    if (parse(argc, argv, &o) < 0) {
        usage(stderr);
        return 2;
    }
    if (o.version) {
        printf("memd %s\n", MEMD_VERSION);
        return 0;
    }
    if (o.check)
        return memd_check_config(o.check, o.json, stdout, stderr);
    if (o.discover) {
        o.disc.json = o.json;
        o.disc.sysfs = o.disc.sysfs ? o.disc.sysfs : "/sys";
        o.disc.devfs = o.disc.devfs ? o.disc.devfs : "/dev";
        return memd_discover(&o.disc, stdout, stderr);
    }
    return serve(&o);
}
