/* memd daemon — /proc lookups for the state store (see procstat.h). */
#include "procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ssize_t read_file(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, len - 1);
    int e = errno;
    close(fd);
    if (n < 0)
        return -e;
    buf[n] = '\0';
    return n;
}

int memd_proc_parse_stat(const char *text, size_t len, uint64_t *start)
{
    /* "pid (comm) state ppid ...": comm may contain anything, so fields are counted
     * from the LAST ')'. Field 3 (state) follows it; field 22 is starttime. */
    const char *end = text + len, *p = NULL;
    for (const char *q = text; q < end; q++)
        if (*q == ')')
            p = q;
    if (!p || end - p < 4 || p[1] != ' ')
        return -EINVAL;
    p += 2;
    char state = *p;
    for (int field = 3; field < 22; field++) {
        p = memchr(p, ' ', (size_t)(end - p));
        if (!p)
            return -EINVAL;
        p++;
    }
    char *e;
    errno = 0;
    unsigned long long v = strtoull(p, &e, 10);
    if (e == p || errno || (*e != ' ' && *e != '\n' && *e != '\0'))
        return -EINVAL;
    if (state == 'Z' || state == 'X')
        return -ENOENT;
    *start = v;
    return 0;
}

int memd_proc_starttime(uint32_t pid, uint64_t *start)
{
    if (pid == 0)
        return -ENOENT;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%u/stat", pid);
    ssize_t n = read_file(path, buf, sizeof buf);
    if (n < 0)
        return n == -ESRCH ? -ENOENT : (int)n;
    return memd_proc_parse_stat(buf, (size_t)n, start);
}

int memd_proc_boot_id(char *out, size_t len)
{
    char buf[64];
    ssize_t n = read_file("/proc/sys/kernel/random/boot_id", buf, sizeof buf);
    if (n < 0)
        return (int)n;
    buf[strcspn(buf, "\n")] = '\0';
    if (strlen(buf) + 1 > len)
        return -ERANGE;
    memcpy(out, buf, strlen(buf) + 1);
    return 0;
}
