/* memd tests — running a program and capturing its output (see test_run.h). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_run.h"

int memd_test_run(const char *const argv[], char *out, size_t outlen)
{
    int p[2];
    if (pipe(p) != 0)
        return -errno;
    fflush(NULL); /* the child must not print this process's buffered output again */
    pid_t pid = fork();
    if (pid < 0) {
        int err = -errno;
        close(p[0]);
        close(p[1]);
        return err;
    }
    if (pid == 0) {
        dup2(p[1], STDERR_FILENO);
        dup2(p[1], STDOUT_FILENO);
        close(p[0]);
        close(p[1]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < outlen && (r = read(p[0], out + n, outlen - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(p[0]);
    int ws;
    waitpid(pid, &ws, 0);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

char *memd_test_slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    int err = buf ? 0 : ENOMEM;
    while (!err && (got = fread(buf + n, 1, cap - n - 1, fp)) > 0) {
        n += got;
        char *more = n + 1 < cap ? buf : realloc(buf, cap *= 2);
        if (more)
            buf = more;
        else
            err = ENOMEM;
    }
    if (!err && ferror(fp))
        err = EIO;
    fclose(fp);
    if (err) {
        free(buf);
        errno = err;
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}
