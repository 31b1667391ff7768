/* memd tests — running memctl (see memctl_run.h). */

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "memctl_run.h"
#include "test_run.h"

const char *memctl_path(void)
{
    static char path[1024];
    const char *bin = getenv("MEMCTL_BIN");
    if (bin && *bin)
        return bin;
    const char *root = getenv("MEMD_BUILD_ROOT");
    snprintf(path, sizeof path, "%s/tools/memctl/memctl", root && *root ? root : ".");
    return path;
}

char *memctl_slurp(const char *path)
{
    char *text = memd_test_slurp(path, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    return text;
}

/* argv of memctl [--socket f's-socket] args... (at most 31 words), NULL-terminated. */
static void memctl_argv(const memd_fixture *f, const char *const *args, const char *argv[32])
{
    int n = 0;
    argv[n++] = memctl_path();
    if (f) {
        argv[n++] = "--socket";
        argv[n++] = f->socket_path;
    }
    for (; *args && n < 31; args++)
        argv[n++] = *args;
    argv[n] = NULL;
}

pid_t memctl_spawn(const memd_fixture *f, const char *const *args, uid_t uid, int out_fd,
                   int err_fd)
{
    const char *argv[32];
    memctl_argv(f, args, argv);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        if (uid != 0 && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
            _exit(120);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

void memctl_output_paths(const memd_fixture *f, char *out_path, char *err_path)
{
    snprintf(out_path, MEMCTL_PATH_MAX, "%s/memctl.out", f->dir);
    snprintf(err_path, MEMCTL_PATH_MAX, "%s/memctl.err", f->dir);
}

void memctl_output_clear(const char *out_path, const char *err_path, char **out, char **err)
{
    free(*out);
    free(*err);
    *out = *err = NULL;
    unlink(out_path);
    unlink(err_path);
}

int memctl_run(const memd_fixture *f, const char *const *args, uid_t uid, const char *out_path,
               const char *err_path, char **out, char **err)
{
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert(o >= 0 && e >= 0);
    pid_t pid = memctl_spawn(f, args, uid, o, e);
    close(o);
    close(e);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    free(*out);
    free(*err);
    *out = memctl_slurp(out_path);
    *err = memctl_slurp(err_path);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

int memctl_capture(const memd_fixture *f, const char *const *args, char *out, size_t outlen)
{
    const char *argv[32];
    memctl_argv(f, args, argv);
    return memd_test_run(argv, out, outlen);
}

void memctl_suite_start(memd_fixture *f, memclient **c, char *out_path, char *err_path)
{
    cu_start(f);
    *c = cu_connect(f);
    memctl_output_paths(f, out_path, err_path);
}

void memctl_suite_stop(memd_fixture *f, memclient *c, const char *out_path,
                       const char *err_path, char **out, char **err)
{
    memclient_disconnect(c);
    memctl_output_clear(out_path, err_path, out, err);
    ck_assert_int_eq(memd_fixture_stop(f), 0);
}

void memctl_yaml_start(memd_fixture *f, const char *yaml, bool capture_stderr, char *out_path,
                       char *err_path)
{
    memd_fixture_opts o = {.config_yaml = yaml, .capture_stderr = capture_stderr};
    ck_assert_int_eq(memd_fixture_start(f, &o), 0);
    memctl_output_paths(f, out_path, err_path);
}

void memctl_yaml_stop(memd_fixture *f, const char *out_path, const char *err_path, char **out,
                      char **err)
{
    memctl_output_clear(out_path, err_path, out, err);
    memd_fixture_destroy(f);
}

void memctl_expect_all(const char *text, const char *const *want)
{
    for (; *want; want++)
        ck_assert_msg(strstr(text, *want), "no '%s' in:\n%s", *want, text);
}
