/* memd tests — real-daemon fixture (see daemon_fixture.h). */
#include "daemon_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_clock.h"

extern char **environ;

#ifndef MEMD_FIXTURE_MEMD
#define MEMD_FIXTURE_MEMD NULL
#endif
#ifndef MEMD_FIXTURE_MEMD_TEST
#define MEMD_FIXTURE_MEMD_TEST NULL
#endif

/* $env if set, else the path meson passed (built), else $MEMD_BUILD_ROOT/daemon/name. */
static const char *bin_path(const char *env, const char *built, const char *name, char *buf,
                            size_t len)
{
    const char *bin = getenv(env);
    if (bin && *bin)
        return bin;
    if (built)
        return built;
    const char *root = getenv("MEMD_BUILD_ROOT");
    snprintf(buf, len, "%s/daemon/%s", root && *root ? root : ".", name);
    return buf;
}

const char *memd_fixture_memd_path(void)
{
    static char path[1024];
    return bin_path("MEMD_BIN", MEMD_FIXTURE_MEMD, "memd", path, sizeof path);
}

const char *memd_fixture_memd_test_path(void)
{
    static char path[1024];
    return bin_path("MEMD_TEST_BIN", MEMD_FIXTURE_MEMD_TEST, "memd-test", path, sizeof path);
}

const char *memd_fixture_source_root(void)
{
    const char *root = getenv("MEMD_SOURCE_ROOT");
    return root && *root ? root : ".";
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

int memd_fixture_write_file(const memd_fixture *f, const char *name, const char *text,
                            char *out, size_t outlen)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    FILE *fp = fopen(path, "w");
    if (!fp)
        return -errno;
    int ok = fputs(text, fp) >= 0;
    if (fclose(fp) != 0 || !ok)
        return -EIO;
    if (out)
        snprintf(out, outlen, "%s", path);
    return 0;
}

int memd_fixture_prepare(memd_fixture *f, const memd_fixture_opts *o)
{
    memd_fixture_opts none = {0};
    if (!o)
        o = &none;
    memset(f, 0, sizeof *f);
    f->notify_fd = -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/memd-test-XXXXXX");
    if (!mkdtemp(f->dir)) {
        fprintf(stderr, "fixture: mkdtemp: %s\n", strerror(errno));
        return -errno;
    }
    snprintf(f->socket_path, sizeof f->socket_path, "%s/memd.sock", f->dir);
    snprintf(f->notify_path, sizeof f->notify_path, "%s/notify.sock", f->dir);
    if (o->config_yaml) {
        int rc = memd_fixture_write_file(f, "memd.yaml", o->config_yaml, f->config_path,
                                         sizeof f->config_path);
        if (rc < 0) {
            fprintf(stderr, "fixture: writing config: %s\n", strerror(-rc));
            remove_dir(f->dir);
            return rc;
        }
    } else if (o->config) {
        snprintf(f->config_path, sizeof f->config_path, "%s", o->config);
    } else {
        snprintf(f->config_path, sizeof f->config_path, "%s/config/memd.yaml",
                 memd_fixture_source_root());
    }
    f->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", f->notify_path);
    if (f->notify_fd < 0 || bind(f->notify_fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        fprintf(stderr, "fixture: notify socket %s: %s\n", f->notify_path, strerror(e));
        if (f->notify_fd >= 0)
            close(f->notify_fd);
        remove_dir(f->dir);
        return -e;
    }
    return 0;
}

int memd_fixture_next_notify(memd_fixture *f, char *buf, size_t len, int timeout_ms)
{
    struct pollfd p = {.fd = f->notify_fd, .events = POLLIN};
    int rc = poll(&p, 1, timeout_ms);
    if (rc <= 0)
        return rc < 0 ? -errno : -ETIMEDOUT;
    ssize_t n = recv(f->notify_fd, buf, len - 1, 0);
    if (n < 0)
        return -errno;
    buf[n] = '\0';
    return 0;
}

static int status_of(int ws)
{
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* Has memd exited? Reaps it and records the status if so. */
static bool reaped(memd_fixture *f)
{
    int ws;
    if (f->pid <= 0)
        return true;
    pid_t r = waitpid(f->pid, &ws, WNOHANG);
    if (r == f->pid) {
        f->exit_status = status_of(ws);
        f->pid = 0;
        return true;
    }
    return false;
}

static int wait_ready(memd_fixture *f, int timeout_ms)
{
    long deadline = memd_test_now_ms() + timeout_ms;
    char msg[1024];
    for (;;) {
        if (reaped(f)) {
            fprintf(stderr, "fixture: memd exited with status %d before READY=1\n",
                    f->exit_status);
            return -ECHILD;
        }
        long left = deadline - memd_test_now_ms();
        if (left <= 0) {
            fprintf(stderr, "fixture: no READY=1 from memd within %d ms\n", timeout_ms);
            return -ETIMEDOUT;
        }
        int rc = memd_fixture_next_notify(f, msg, sizeof msg, left < 100 ? (int)left : 100);
        if (rc == -ETIMEDOUT)
            continue;
        if (rc < 0)
            return rc;
        bool ready = false;
        for (char *line = strtok(msg, "\n"); line; line = strtok(NULL, "\n")) {
            if (strcmp(line, "READY=1") == 0)
                ready = true;
            else if (strncmp(line, "STATUS=", 7) == 0)
                snprintf(f->status, sizeof f->status, "%s", line + 7);
        }
        if (ready)
            return 0;
    }
}

int memd_fixture_spawn(memd_fixture *f, const memd_fixture_opts *o, char *const argv[])
{
    memd_fixture_opts none = {0};
    if (!o)
        o = &none;
    char notify_env[160], log_path[160];
    snprintf(notify_env, sizeof notify_env, "NOTIFY_SOCKET=%s", f->notify_path);
    snprintf(log_path, sizeof log_path, "%s/memd.log", f->dir);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        /* If the test dies, so does its daemon. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
        putenv(notify_env);
        for (const char *const *e = o->env; e && *e; e++)
            putenv((char *)*e);
        struct rlimit as = {o->address_space, o->address_space};
        if (o->address_space && setrlimit(RLIMIT_AS, &as) < 0)
            _exit(127);
        if (o->capture_stderr) {
            int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
            if (fd >= 0)
                dup2(fd, STDERR_FILENO);
        }
        execve(argv[0], argv, environ);
        fprintf(stderr, "fixture: exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    f->pid = pid;
    int rc = wait_ready(f, o->ready_timeout_ms > 0 ? o->ready_timeout_ms : 15000);
    if (rc < 0) {
        if (o->capture_stderr)
            fprintf(stderr, "fixture: memd said:\n%s\n", memd_fixture_log(f));
        memd_fixture_destroy(f);
    }
    return rc;
}

/* memd with o's options on f's config and socket; under $MEMD_TEST_DAEMON_WRAPPER (e.g.
 * "valgrind --error-exitcode=99 -q") when wrapped, so a tool's error shows as memd's
 * exit status at stop. */
static int launch(memd_fixture *f, const memd_fixture_opts *o, bool wrapped)
{
    char *argv[64];
    size_t n = 0;
    char wrap[512] = "", *save = NULL;
    const char *w = wrapped ? getenv("MEMD_TEST_DAEMON_WRAPPER") : NULL;
    if (w)
        snprintf(wrap, sizeof wrap, "%s", w);
    for (char *t = strtok_r(wrap, " ", &save); t && n < 16; t = strtok_r(NULL, " ", &save))
        argv[n++] = t;
    if (n && argv[0][0] != '/') {
        fprintf(stderr, "fixture: MEMD_TEST_DAEMON_WRAPPER needs an absolute path: %s\n", w);
        memd_fixture_destroy(f);
        return -EINVAL;
    }
    argv[n++] = (char *)(o->test_build ? memd_fixture_memd_test_path()
                                       : memd_fixture_memd_path());
    argv[n++] = "--foreground";
    argv[n++] = "--config";
    argv[n++] = f->config_path;
    if (!o->no_socket_arg) {
        argv[n++] = "--socket";
        argv[n++] = f->socket_path;
    }
    for (const char *const *a = o->args; a && *a && n < 63; a++)
        argv[n++] = (char *)*a;
    argv[n] = NULL;
    return memd_fixture_spawn(f, o, argv);
}

int memd_fixture_start(memd_fixture *f, const memd_fixture_opts *o)
{
    memd_fixture_opts none = {0};
    if (!o)
        o = &none;
    int rc = memd_fixture_prepare(f, o);
    if (rc < 0)
        return rc;
    return launch(f, o, true);
}

int memd_fixture_respawn(memd_fixture *f, const memd_fixture_opts *o)
{
    memd_fixture_opts none = {0};
    return launch(f, o ? o : &none, false);
}

int memd_fixture_restart(memd_fixture *f, const memd_fixture_opts *o, int sig)
{
    if (f->pid <= 0 || kill(f->pid, sig) < 0)
        return -ESRCH;
    int st = memd_fixture_wait(f, 10000);
    if (st != (sig == SIGKILL ? 128 + SIGKILL : 0)) {
        fprintf(stderr, "fixture: memd ended with status %d after signal %d\n", st, sig);
        return -ECHILD;
    }
    return memd_fixture_respawn(f, o);
}

int memd_fixture_wait(memd_fixture *f, int timeout_ms)
{
    long deadline = memd_test_now_ms() + timeout_ms;
    while (!reaped(f)) {
        if (memd_test_now_ms() >= deadline)
            return -ETIMEDOUT;
        memd_test_sleep_ms(5);
    }
    return f->exit_status;
}

static void cleanup(memd_fixture *f)
{
    if (f->notify_fd >= 0)
        close(f->notify_fd);
    f->notify_fd = -1;
    if (f->dir[0])
        remove_dir(f->dir);
    f->dir[0] = '\0';
}

int memd_fixture_stop(memd_fixture *f)
{
    if (f->pid > 0) {
        kill(f->pid, SIGTERM);
        if (memd_fixture_wait(f, 10000) == -ETIMEDOUT) {
            fprintf(stderr, "fixture: memd ignored SIGTERM for 10 s; killing it\n");
            kill(f->pid, SIGKILL);
            memd_fixture_wait(f, 10000);
        }
    }
    cleanup(f);
    return f->exit_status;
}

void memd_fixture_destroy(memd_fixture *f)
{
    if (f->pid > 0) {
        kill(f->pid, SIGKILL);
        memd_fixture_wait(f, 10000);
    }
    cleanup(f);
}

int memd_fixture_connect(const memd_fixture *f)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", f->socket_path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

const char *memd_fixture_log(const memd_fixture *f)
{
    static char buf[16384];
    char path[160];
    buf[0] = '\0';
    snprintf(path, sizeof path, "%s/memd.log", f->dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return buf;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}
