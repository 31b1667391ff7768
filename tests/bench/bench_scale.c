/* memd-bench-scale — the daemon at a million allocations (issue 14).
 *
 *   memd-bench-scale --socket PATH --pid PID --allocs N [--dumps K] [--size BYTES]
 *                    [--hold SECONDS] [--usage 1] [--blocks 1]
 *
 * Against a running memd (PID, for its memory figures; its config must allow N
 * allocations per session): one client makes N allocations in batches, then dumps the
 * whole map K times (what memctl dump, sessions and metrics do) while a second client
 * allocates and frees one buffer after another, then frees everything. Prints one JSON
 * line: the daemon's resident memory (anonymous and file-backed, from /proc/PID/status)
 * before, with the N allocations and 3 s after they are freed, the bytes per live
 * allocation, each dump's time, and the second client's round trips during the dumps
 * (median, p99, max) against the same figures measured just before them, which are the
 * stall the dumps cause. --hold keeps the allocations that long after the dumps (to try
 * memctl against them) before freeing them. --usage 1 asks each dump for the usage records
 * too (MEMCLIENT_DUMP_USAGE: what every session holds per bank group, with the last page);
 * --blocks 1 every block of every region (MEMCLIENT_DUMP_BLOCKS: memctl dump --svg, --csv
 * --report).
 *
 * It checks behaviour, never time: every dump must show exactly the N allocations, and
 * the other client's requests must all succeed. Any violation exits non-zero. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memd/client.h"
#include "test_clock.h"

typedef struct opts {
    const char *socket;
    long pid;
    uint64_t allocs, size;
    uint32_t dumps, hold;
    unsigned dump_flags;
} opts;

/* The calling thread's last failure, as text. */
static const char *last_error(void)
{
    static _Thread_local memclient_error e;
    memclient_last_error(&e);
    return e.message;
}

/* kB of the daemon's RssAnon and RssFile. */
static int rss(long pid, uint64_t *anon, uint64_t *file)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    *anon = *file = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long v;
        if (sscanf(line, "RssAnon: %llu", &v) == 1)
            *anon = v;
        else if (sscanf(line, "RssFile: %llu", &v) == 1)
            *file = v;
    }
    fclose(f);
    return 0;
}

/* The second client: one allocation and its free per round, round trip times kept. */
typedef struct prober {
    memclient *c;
    _Atomic bool stop;
    _Atomic int phase; /* 0: before the dumps, 1: during them */
    uint64_t *ns[2];
    size_t n[2], cap;
    int failed;
} prober;

static void *probe(void *arg)
{
    prober *p = arg;
    memclient_alloc_req r = {.cls = MEMD_CLASS_INTERNAL, .scope = MEMD_SCOPE_DRAM, .bytes = 64};
    while (!atomic_load(&p->stop)) {
        int ph = atomic_load(&p->phase);
        memclient_buffer b;
        uint64_t t0 = memd_test_now_ns();
        int rc = memclient_alloc(p->c, &r, &b);
        uint64_t t1 = memd_test_now_ns();
        if (rc == 0)
            rc = memclient_free(p->c, b.handle);
        if (rc != 0) {
            p->failed = rc;
            return NULL;
        }
        if (p->n[ph] < p->cap)
            p->ns[ph][p->n[ph]++] = t1 - t0;
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void latency(const char *key, uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    double med = n ? (double)v[n / 2] / 1e6 : 0, p99 = n ? (double)v[n * 99 / 100] / 1e6 : 0,
           max = n ? (double)v[n - 1] / 1e6 : 0;
    printf(",\"%s\":{\"rounds\":%zu,\"median_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f}", key, n,
           med, p99, max);
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){.dumps = 3, .size = 32};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        char *end;
        unsigned long long x = strtoull(v, &end, 0);
        bool num = *v && *end == '\0';
        if (!strcmp(a, "--socket"))
            o->socket = v;
        else if (!strcmp(a, "--pid") && num)
            o->pid = (long)x;
        else if (!strcmp(a, "--allocs") && num && x > 0)
            o->allocs = x;
        else if (!strcmp(a, "--dumps") && num && x > 0 && x < 1000)
            o->dumps = (uint32_t)x;
        else if (!strcmp(a, "--size") && num && x > 0)
            o->size = x;
        else if (!strcmp(a, "--hold") && num && x < 3600)
            o->hold = (uint32_t)x;
        else if (!strcmp(a, "--usage") && num && x <= 1)
            o->dump_flags |= x ? MEMCLIENT_DUMP_USAGE : 0;
        else if (!strcmp(a, "--blocks") && num && x <= 1)
            o->dump_flags |= x ? MEMCLIENT_DUMP_BLOCKS : 0;
        else
            return -EINVAL;
    }
    return o->socket && o->pid > 0 && o->allocs ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
    opts o;
    if (argc % 2 == 0 || parse(argc, argv, &o) < 0) {
        fprintf(stderr, "usage: memd-bench-scale --socket PATH --pid PID --allocs N "
                        "[--dumps K] [--size BYTES] [--hold SECONDS] [--usage 1] [--blocks 1]\n");
        return 2;
    }
    memclient *c = NULL;
    prober p = {.cap = 1u << 22};
    if (memclient_connect(o.socket, &c) < 0 || memclient_connect(o.socket, &p.c) < 0) {
        fprintf(stderr, "memd-bench-scale: cannot connect to %s: %s\n", o.socket,
                last_error());
        return 1;
    }
    uint64_t *handles = malloc(o.allocs * sizeof *handles);
    p.ns[0] = malloc(p.cap * sizeof(uint64_t));
    p.ns[1] = malloc(p.cap * sizeof(uint64_t));
    size_t batch = memclient_max_alloc_batch(c);
    size_t fbatch = memclient_max_free_batch(c);
    memclient_alloc_req *reqs = calloc(batch, sizeof *reqs);
    memclient_buffer *bufs = calloc(batch, sizeof *bufs);
    if (!handles || !p.ns[0] || !p.ns[1] || !reqs || !bufs)
        return 1;
    for (size_t i = 0; i < batch; i++)
        reqs[i] = (memclient_alloc_req){.cls = MEMD_CLASS_INTERNAL, .scope = MEMD_SCOPE_DRAM,
                                        .bytes = o.size};
    uint64_t a0, f0, a1, f1, a2, f2;
    rss(o.pid, &a0, &f0);
    uint64_t t0 = memd_test_now_ns();
    for (uint64_t done = 0; done < o.allocs;) {
        size_t n = o.allocs - done < batch ? (size_t)(o.allocs - done) : batch;
        int rc = memclient_alloc_batch(c, reqs, n, bufs);
        if (rc < 0) {
            fprintf(stderr, "memd-bench-scale: allocation %" PRIu64 ": %s\n", done,
                    last_error());
            return 1;
        }
        for (size_t i = 0; i < n; i++)
            handles[done + i] = bufs[i].handle;
        done += n;
    }
    double alloc_s = (double)(memd_test_now_ns() - t0) / 1e9;
    rss(o.pid, &a1, &f1);

    pthread_t th;
    pthread_create(&th, NULL, probe, &p);
    memd_test_sleep_ms(250); /* the other client's round trips before any dump */
    atomic_store(&p.phase, 1);
    double dump_ms[1000];
    int bad = 0;
    for (uint32_t k = 0; k < o.dumps; k++) {
        memclient_snapshot *s = NULL;
        uint64_t d0 = memd_test_now_ns();
        int rc = memclient_dump(c, MEMCLIENT_ALL_DEVICES, o.dump_flags, &s);
        dump_ms[k] = (double)(memd_test_now_ns() - d0) / 1e6;
        if (rc < 0) {
            fprintf(stderr, "memd-bench-scale: dump: %s\n", last_error());
            bad = 1;
            break;
        }
        size_t mine = 0; /* the other client's buffer may be in it too */
        for (size_t i = 0; i < s->nallocs; i++)
            mine += s->allocs[i].buf.handle >= handles[0] &&
                    s->allocs[i].buf.handle <= handles[o.allocs - 1];
        if (mine != o.allocs) {
            fprintf(stderr, "memd-bench-scale: dump %u shows %zu of %" PRIu64 " allocations\n",
                    k, mine, o.allocs);
            bad = 1;
        }
        memclient_snapshot_free(s);
    }
    atomic_store(&p.stop, true);
    pthread_join(th, NULL);
    if (p.failed) {
        fprintf(stderr, "memd-bench-scale: the other client failed: %d\n", p.failed);
        bad = 1;
    }

    if (o.hold) {
        fprintf(stderr, "memd-bench-scale: holding %" PRIu64 " allocations for %u s\n", o.allocs,
                o.hold);
        memd_test_sleep_ms(o.hold * 1000L);
    }
    uint64_t t2 = memd_test_now_ns();
    for (uint64_t done = 0; done < o.allocs;) {
        size_t n = o.allocs - done < fbatch ? (size_t)(o.allocs - done) : fbatch;
        if (memclient_free_batch(c, handles + done, n) < 0) {
            fprintf(stderr, "memd-bench-scale: free: %s\n", last_error());
            return 1;
        }
        done += n;
    }
    double free_s = (double)(memd_test_now_ns() - t2) / 1e9;
    /* memd gives freed heap back on a 2 s timer once many frees came (server.c) */
    memd_test_sleep_ms(3000);
    rss(o.pid, &a2, &f2);

    printf("{\"bench\":\"scale\",\"allocs\":%" PRIu64 ",\"alloc_s\":%.2f,\"free_s\":%.2f"
           ",\"rss_anon_kb\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]"
           ",\"rss_file_kb\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]"
           ",\"anon_bytes_per_alloc\":%.1f,\"rss_bytes_per_alloc\":%.1f,\"dump_ms\":[",
           o.allocs, alloc_s, free_s, a0, a1, a2, f0, f1, f2,
           (double)(a1 - a0) * 1024.0 / (double)o.allocs,
           (double)((a1 + f1) - (a0 + f0)) * 1024.0 / (double)o.allocs);
    for (uint32_t k = 0; k < o.dumps; k++)
        printf("%s%.1f", k ? "," : "", dump_ms[k]);
    printf("]");
    latency("other_client_before", p.ns[0], p.n[0]);
    latency("other_client_during_dumps", p.ns[1], p.n[1]);
    printf("}\n");
    memclient_disconnect(p.c);
    memclient_disconnect(c);
    return bad;
}
