/* memd daemon — post-mortems in the state directory (postmortem_files.h). */
#include "postmortem_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "log.h"
#include "pm_reply.h"
#include "postmortem.h"
#include "wire.h"

struct memd_pm_files {
    int dirfd;
    char path[4096];
};

static int save(const memd_pm_files *f, const memd_pm_saved *v)
{
    char name[32], tmp[40];
    snprintf(name, sizeof name, "%" PRIu64 ".pm", v->id);
    snprintf(tmp, sizeof tmp, ".%s.tmp", name);
    int fd = openat(f->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0)
        return -errno;
    int rc = memd_write_all(fd, v->data, v->len, false);
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && renameat(f->dirfd, tmp, f->dirfd, name) < 0)
        rc = -errno;
    if (rc < 0)
        (void)unlinkat(f->dirfd, tmp, 0);
    return rc;
}

void memd_pm_files_flush(memd_state *st)
{
    memd_pm_files *f = st->pm_files;
    memd_pm_settle(st);
    if (!f)
        return;
    uint32_t n;
    memd_pm_saved *v = memd_postmortem_saved(st, &n);
    for (uint32_t i = 0; i < n; i++) {
        if (v[i].written)
            continue;
        int rc = save(f, &v[i]);
        if (rc < 0)
            memd_log(LOG_WARNING, "post-mortem %" PRIu64 ": cannot write it in %s: %s "
                     "(kept in memory)", v[i].id, f->path, strerror(-rc));
        v[i].written = true; /* tried once: a full disk is not retried every pass */
    }
    for (uint64_t id; (id = memd_postmortem_take_dropped(st)) != 0;) {
        char name[32];
        snprintf(name, sizeof name, "%" PRIu64 ".pm", id);
        if (unlinkat(f->dirfd, name, 0) < 0 && errno != ENOENT)
            memd_log(LOG_WARNING, "post-mortem %" PRIu64 ": cannot remove %s/%s: %s", id,
                     f->path, name, strerror(errno));
    }
}

/* ID.pm's content, checked: 0 and *out (its data malloc'd), or a negative errno. */
static int load(const memd_pm_files *f, const char *name, uint64_t id, memd_pm_saved *out)
{
    int fd = openat(f->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    struct stat sb;
    /* The largest a snapshot can be: the record and every list full. */
    const off_t most = MEMD_WIRE_POSTMORTEM_SIZE + MEMD_HOLDERS_MAX * MEMD_WIRE_HOLDER_REC_SIZE +
                       MEMD_PM_BLOCKS_MAX * MEMD_WIRE_PM_BLOCK_SIZE +
                       MEMD_PM_EVENTS_MAX * MEMD_WIRE_HIST_EVENT_SIZE;
    uint8_t *data = NULL;
    int rc = fstat(fd, &sb) < 0 ? -errno : !S_ISREG(sb.st_mode) || sb.st_size > most ? -EFBIG : 0;
    if (rc == 0 && !(data = malloc((size_t)sb.st_size + 1)))
        rc = -ENOMEM;
    if (rc == 0 && read(fd, data, (size_t)sb.st_size) != sb.st_size)
        rc = -EIO;
    close(fd);
    memd_wire_postmortem w;
    if (rc == 0 && (memd_wire_postmortem_get(data, (size_t)sb.st_size, &w) < 0 || w.id != id ||
                    (size_t)sb.st_size != MEMD_WIRE_POSTMORTEM_SIZE +
                                              (size_t)w.nholders * MEMD_WIRE_HOLDER_REC_SIZE +
                                              (size_t)w.nfree * MEMD_WIRE_PM_BLOCK_SIZE +
                                              (size_t)w.nevents * MEMD_WIRE_HIST_EVENT_SIZE))
        rc = -EBADMSG;
    if (rc < 0) {
        free(data);
        return rc;
    }
    *out = (memd_pm_saved){.id = id, .time_ns = w.time_ns, .uid = w.uid, .written = true,
                           .data = data, .len = (size_t)sb.st_size};
    return 0;
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The ids of the ID.pm files in the folder, sorted: *ids (free it), their count. */
static size_t list_ids(const memd_pm_files *f, uint64_t **ids)
{
    *ids = NULL;
    int fd = dup(f->dirfd);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char *end;
        errno = 0;
        unsigned long long id = strtoull(e->d_name, &end, 10);
        if (e->d_name[0] < '1' || e->d_name[0] > '9' || errno || strcmp(end, ".pm") != 0)
            continue;
        if (n == cap) {
            uint64_t *v = realloc(*ids, (cap = cap ? 2 * cap : 64) * sizeof *v);
            if (!v)
                break;
            *ids = v;
        }
        (*ids)[n++] = id;
    }
    closedir(d);
    if (n) /* qsort's base may not be NULL, even for no elements */
        qsort(*ids, n, sizeof **ids, by_id);
    return n;
}

void memd_pm_files_open(memd_state *st, const char *state_dir)
{
    if (st->limits.postmortems == 0)
        return;
    memd_pm_files *f = calloc(1, sizeof *f);
    if (!f)
        return;
    int n = snprintf(f->path, sizeof f->path, "%s/postmortems", state_dir);
    if (n < 0 || (size_t)n >= sizeof f->path ||
        (mkdir(f->path, 0750) < 0 && errno != EEXIST) ||
        (f->dirfd = open(f->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        memd_log(LOG_WARNING, "post-mortems kept in memory only: cannot use %s: %s",
                 f->path, strerror(errno));
        free(f);
        return;
    }
    st->pm_files = f;
    uint64_t *ids;
    size_t count = list_ids(f, &ids);
    for (size_t i = 0; i < count; i++) {
        char name[32];
        snprintf(name, sizeof name, "%" PRIu64 ".pm", ids[i]);
        if (count - i > st->limits.postmortems) { /* past the bound: the oldest go */
            (void)unlinkat(f->dirfd, name, 0);
            continue;
        }
        memd_pm_saved v;
        int rc = load(f, name, ids[i], &v);
        if (rc < 0)
            memd_log(LOG_WARNING, "post-mortem %s/%s not read: %s", f->path, name,
                     strerror(-rc));
        else if (memd_postmortem_keep(st, &v) < 0)
            break;
    }
    free(ids);
}

void memd_pm_files_close(memd_state *st)
{
    memd_pm_files *f = st->pm_files;
    memd_pm_files_flush(st);
    if (!f)
        return;
    close(f->dirfd);
    free(f);
    st->pm_files = NULL;
}
