/* memd-bench-replay — a runtime's allocations, four ways.
 *
 *   memd-bench-replay MODEL.yaml|MODEL.onnx [--dims NAME=N,...] [--socket PATH]
 *                     [--device N] [--inferences N] [--repeat R]
 *                     [--mode call,batch,pool,inproc]
 *
 * Replays op-by-op execution of a model (memd's model YAML, client/parsers/model_yaml.h;
 * a .onnx file goes through the memctl of this build first, `memctl model import`, with
 * --dims for its symbolic dimensions): before each op, allocate
 * its outputs; after the last op that reads a tensor, free it; inputs are allocated before
 * the first op and outputs freed after the last, weights are not part of it (loaded once).
 * The same sequence runs N inferences in each mode:
 *   call    one memclient_alloc / memclient_free per tensor (a round trip each)
 *   batch   per op, one memclient_alloc_batch of its outputs and one memclient_free_batch
 *           of the tensors that die after it
 *   pool    memclient_pool_alloc / memclient_pool_free in one client pool, names and all
 *   inproc  the engine's range allocator in the process, no daemon: the floor
 * and prints one JSON line per mode: mode, ns_per_pair (wall time / alloc+free pairs,
 * the median of R repeats, which go round the modes, each after one untimed inference),
 * cpu_ns_per_pair (the same in this thread's CPU time), peak_bytes (most bytes live at
 * once, per bank), pairs.
 *
 * Checks behaviour too: pool and inproc run the same allocator on the same sequence, so
 * they must place every tensor at the same offset; a failed call exits 1. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memd/client.h"
#include "model_yaml.h"
#include "range.h"
#include "test_clock.h"

typedef struct replay {
    const memd_model_yaml *m;
    uint32_t *replayed;    /* tensor indices that are allocated and freed */
    size_t nreplayed;
    /* Per op step s: allocs before it, frees after it (indices into tensors). */
    uint32_t **alloc_at, **free_at;
    size_t *nalloc_at, *nfree_at;
    size_t nsteps;
    uint64_t total;        /* bytes of every replayed tensor, rounded up */
} replay;

typedef struct opts {
    const char *model, *socket, *dims;
    uint32_t device;
    unsigned inferences, repeat;
    bool modes[4];
} opts;

enum { MODE_CALL, MODE_BATCH, MODE_POOL, MODE_INPROC };
static const char *const mode_names[] = {"call", "batch", "pool", "inproc"};

/* Each mode times its replay itself, wall clock and this thread's CPU time (which a
 * loaded machine's preemptions do not inflate); the CPU time goes here. */
static double cpu_start, cpu_spent;

static double now_ns(void)
{
    cpu_start = (double)memd_test_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return (double)memd_test_clock_ns(CLOCK_MONOTONIC);
}

static double since(double t0)
{
    double t = (double)memd_test_clock_ns(CLOCK_MONOTONIC) - t0;
    cpu_spent = (double)memd_test_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
    return t;
}

static void die(const char *what, int rc)
{
    memclient_error e;
    memclient_last_error(&e);
    fprintf(stderr, "memd-bench-replay: %s: %s\n", what, rc < 0 && e.status == rc
                                                              ? e.message
                                                              : memclient_strerror(rc));
    exit(1);
}

static uint64_t align_of(const replay *r, uint32_t t)
{
    return r->m->life[t].alignment ? r->m->life[t].alignment : 1;
}

static int build(const memd_model_yaml *m, replay *r)
{
    *r = (replay){.m = m, .nsteps = m->desc.nops ? m->desc.nops : 1};
    size_t nt = m->desc.ntensors;
    r->replayed = malloc((nt + 1) * sizeof *r->replayed);
    r->alloc_at = calloc(r->nsteps, sizeof *r->alloc_at);
    r->free_at = calloc(r->nsteps, sizeof *r->free_at);
    r->nalloc_at = calloc(r->nsteps, sizeof *r->nalloc_at);
    r->nfree_at = calloc(r->nsteps, sizeof *r->nfree_at);
    if (!r->replayed || !r->alloc_at || !r->free_at || !r->nalloc_at || !r->nfree_at)
        return -ENOMEM;
    for (size_t t = 0; t < nt; t++) {
        const memclient_tensor_life *l = &m->life[t];
        memclient_tensor_role role = m->tensors[t].role;
        if (role == MEMCLIENT_TENSOR_WEIGHT || l->alias_of != MEMCLIENT_NO_TENSOR ||
            l->size == 0 || l->upper <= l->lower || l->upper > r->nsteps)
            continue;
        r->replayed[r->nreplayed++] = (uint32_t)t;
        r->nalloc_at[l->lower]++;
        r->nfree_at[l->upper - 1]++;
        uint64_t a = l->alignment > 32 ? l->alignment : 32;
        r->total += (l->size + a - 1) / a * a + a;
    }
    for (size_t s = 0; s < r->nsteps; s++) {
        r->alloc_at[s] = malloc((r->nalloc_at[s] + 1) * sizeof(uint32_t));
        r->free_at[s] = malloc((r->nfree_at[s] + 1) * sizeof(uint32_t));
        if (!r->alloc_at[s] || !r->free_at[s])
            return -ENOMEM;
        r->nalloc_at[s] = r->nfree_at[s] = 0;
    }
    for (size_t i = 0; i < r->nreplayed; i++) {
        uint32_t t = r->replayed[i];
        const memclient_tensor_life *l = &m->life[t];
        r->alloc_at[l->lower][r->nalloc_at[l->lower]++] = t;
        r->free_at[l->upper - 1][r->nfree_at[l->upper - 1]++] = t;
    }
    return 0;
}

/* ---- the four modes: each runs n inferences and returns ns per pair ---- */

typedef struct run {
    uint64_t live, peak;
    uint64_t *where;       /* per tensor: handle (call, batch, pool) or address (inproc) */
    uint64_t *offset;      /* pool and inproc: each tensor's offset, last inference */
    uint64_t *size;        /* per tensor: bytes it holds */
} run;

static void account(run *u, uint64_t add, uint64_t sub)
{
    u->live = u->live + add - sub;
    if (u->live > u->peak)
        u->peak = u->live;
}

static double mode_call(const replay *r, memclient *c, uint32_t dev, unsigned n, run *u)
{
    const memd_model_yaml *m = r->m;
    double t0 = now_ns();
    for (unsigned k = 0; k < n; k++)
        for (size_t s = 0; s < r->nsteps; s++) {
            for (size_t i = 0; i < r->nalloc_at[s]; i++) {
                uint32_t t = r->alloc_at[s][i];
                memclient_alloc_req q = {.device = dev, .cls = MEMD_CLASS_INTERNAL,
                                         .scope = MEMD_SCOPE_DRAM, .bytes = m->life[t].size,
                                         .alignment = align_of(r, t)};
                memclient_buffer b;
                int rc = memclient_alloc(c, &q, &b);
                if (rc < 0)
                    die("memclient_alloc", rc);
                u->where[t] = b.handle;
                u->size[t] = b.size_per_bank;
                account(u, b.size_per_bank, 0);
            }
            for (size_t i = 0; i < r->nfree_at[s]; i++) {
                uint32_t t = r->free_at[s][i];
                int rc = memclient_free(c, u->where[t]);
                if (rc < 0)
                    die("memclient_free", rc);
                account(u, 0, u->size[t]);
            }
        }
    return since(t0);
}

static double mode_batch(const replay *r, memclient *c, uint32_t dev, unsigned n, run *u)
{
    const memd_model_yaml *m = r->m;
    size_t most = 1;
    for (size_t s = 0; s < r->nsteps; s++) {
        most = r->nalloc_at[s] > most ? r->nalloc_at[s] : most;
        most = r->nfree_at[s] > most ? r->nfree_at[s] : most;
    }
    memclient_alloc_req *q = calloc(most, sizeof *q);
    memclient_buffer *b = calloc(most, sizeof *b);
    uint64_t *h = calloc(most, sizeof *h);
    if (!q || !b || !h)
        die("out of memory", -ENOMEM);
    double t0 = now_ns();
    for (unsigned k = 0; k < n; k++)
        for (size_t s = 0; s < r->nsteps; s++) {
            size_t na = r->nalloc_at[s], nf = r->nfree_at[s];
            for (size_t i = 0; i < na; i++) {
                uint32_t t = r->alloc_at[s][i];
                q[i] = (memclient_alloc_req){.device = dev, .cls = MEMD_CLASS_INTERNAL,
                                             .scope = MEMD_SCOPE_DRAM,
                                             .bytes = m->life[t].size,
                                             .alignment = align_of(r, t)};
            }
            int rc;
            if (na && (rc = memclient_alloc_batch(c, q, na, b)) < 0)
                die("memclient_alloc_batch", rc);
            for (size_t i = 0; i < na; i++) {
                uint32_t t = r->alloc_at[s][i];
                u->where[t] = b[i].handle;
                u->size[t] = b[i].size_per_bank;
                account(u, b[i].size_per_bank, 0);
            }
            for (size_t i = 0; i < nf; i++) {
                h[i] = u->where[r->free_at[s][i]];
                account(u, 0, u->size[r->free_at[s][i]]);
            }
            if (nf && (rc = memclient_free_batch(c, h, nf)) < 0)
                die("memclient_free_batch", rc);
        }
    double dt = since(t0);
    free(q);
    free(b);
    free(h);
    return dt;
}

static double mode_pool(const replay *r, memclient_pool *p, uint64_t base, unsigned n, run *u)
{
    const memd_model_yaml *m = r->m;
    double t0 = now_ns();
    for (unsigned k = 0; k < n; k++)
        for (size_t s = 0; s < r->nsteps; s++) {
            for (size_t i = 0; i < r->nalloc_at[s]; i++) {
                uint32_t t = r->alloc_at[s][i];
                memclient_pool_buffer b;
                int rc = memclient_pool_alloc(p, m->life[t].size, align_of(r, t),
                                              m->tensors[t].name, &b);
                if (rc < 0)
                    die("memclient_pool_alloc", rc);
                u->where[t] = b.handle;
                if (k + 1 == n) /* the placement check needs one inference's offsets */
                    u->offset[t] = b.address - base;
            }
            for (size_t i = 0; i < r->nfree_at[s]; i++) {
                int rc = memclient_pool_free(p, u->where[r->free_at[s][i]]);
                if (rc < 0)
                    die("memclient_pool_free", rc);
            }
        }
    double dt = since(t0);
    memclient_pool_info pi;
    memclient_pool_query(p, &pi);
    u->peak = pi.peak;
    return dt;
}

static double mode_inproc(const replay *r, memd_range *g, unsigned n, run *u)
{
    const memd_model_yaml *m = r->m;
    double t0 = now_ns();
    for (unsigned k = 0; k < n; k++)
        for (size_t s = 0; s < r->nsteps; s++) {
            for (size_t i = 0; i < r->nalloc_at[s]; i++) {
                uint32_t t = r->alloc_at[s][i];
                uint64_t addr;
                int rc = memd_range_alloc(g, m->life[t].size, align_of(r, t),
                                          MEMD_DIR_BOTTOM_UP, MEMD_FIT_FIRST, &addr);
                if (rc < 0)
                    die("memd_range_alloc", rc);
                u->where[t] = addr;
            }
            for (size_t i = 0; i < r->nfree_at[s]; i++)
                (void)memd_range_free(g, u->where[r->free_at[s][i]], NULL);
        }
    double dt = since(t0);
    memcpy(u->offset, u->where, m->desc.ntensors * sizeof *u->offset);
    return dt;
}

/* One untimed inference in process: every tensor's offset, the high-water mark and the
 * most bytes live at once (as the allocator reserved them). */
static void inproc_shape(const replay *r, uint64_t *offset, uint64_t *high, uint64_t *peak)
{
    const memd_model_yaml *m = r->m;
    memd_range *g;
    if (memd_range_create(0, r->total, MEMCLIENT_POOL_MIN_ALIGN, &g) < 0)
        die("memd_range_create", -ENOMEM);
    uint64_t live = 0;
    *high = *peak = 0;
    for (size_t s = 0; s < r->nsteps; s++) {
        for (size_t i = 0; i < r->nalloc_at[s]; i++) {
            uint32_t t = r->alloc_at[s][i];
            uint64_t addr, sz = 0;
            if (memd_range_alloc(g, m->life[t].size, align_of(r, t), MEMD_DIR_BOTTOM_UP,
                                 MEMD_FIT_FIRST, &addr) < 0)
                die("memd_range_alloc", -ENOMEM);
            (void)memd_range_lookup(g, addr, &sz);
            offset[t] = addr;
            live += sz;
            *peak = live > *peak ? live : *peak;
            *high = addr + sz > *high ? addr + sz : *high;
        }
        for (size_t i = 0; i < r->nfree_at[s]; i++) {
            uint32_t t = r->free_at[s][i];
            uint64_t sz = 0;
            (void)memd_range_free(g, offset[t], &sz);
            live -= sz;
        }
    }
    memd_range_destroy(g);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void usage(void)
{
    fputs("usage: memd-bench-replay MODEL.yaml|MODEL.onnx [--dims NAME=N,...] [--socket PATH]\n"
          "                         [--device N] [--inferences N] [--repeat R]\n"
          "                         [--mode call,batch,pool,inproc]\n",
          stderr);
    exit(2);
}

/* An ONNX model becomes model YAML in dir through `memctl model import` (the memctl
 * this bench was built with: one importer, memd's Python package). 0, or 1 after saying
 * why. */
static int import_onnx(const char *onnx, const char *dims, const char *dir, char *yaml,
                       size_t len)
{
    snprintf(yaml, len, "%s/model.yaml", dir);
    char *argv[] = {MEMD_BENCH_MEMCTL, "model", "import", (char *)onnx, "-o", yaml,
                    dims ? "--dims" : NULL, (char *)dims, NULL};
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("memd-bench-replay: fork");
        return 1;
    }
    if (pid == 0) {
        execv(argv[0], argv);
        fprintf(stderr, "memd-bench-replay: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return 1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "memd-bench-replay: %s: memctl model import failed\n", onnx);
        return 1;
    }
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool parse_modes(const char *s, bool *modes)
{
    memset(modes, 0, 4 * sizeof *modes);
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int i = 0;
        while (i < 4 && strcmp(tok, mode_names[i]) != 0)
            i++;
        if (i == 4)
            return false;
        modes[i] = true;
    }
    return true;
}

static unsigned parse_uint(const char *s, unsigned lo)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end || v < lo || v > 1000000000ul)
        usage();
    return (unsigned)v;
}

int main(int argc, char **argv)
{
    opts o = {.inferences = 200, .repeat = 31, .modes = {true, true, true, true}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-' && !o.model)
            o.model = a;
        else if (!v)
            usage();
        else if (strcmp(a, "--socket") == 0)
            o.socket = argv[++i];
        else if (strcmp(a, "--dims") == 0)
            o.dims = argv[++i];
        else if (strcmp(a, "--device") == 0)
            o.device = parse_uint(argv[++i], 0);
        else if (strcmp(a, "--inferences") == 0)
            o.inferences = parse_uint(argv[++i], 1);
        else if (strcmp(a, "--repeat") == 0)
            o.repeat = parse_uint(argv[++i], 1);
        else if (strcmp(a, "--mode") == 0) {
            if (!parse_modes(argv[++i], o.modes))
                usage();
        } else
            usage();
    }
    if (!o.model)
        usage();
    const char *path = o.model;
    char tmp[] = "/tmp/memd-bench-replay.XXXXXX", yaml[sizeof tmp + 16];
    bool onnx = ends_with(o.model, ".onnx");
    if (onnx) {
        if (!mkdtemp(tmp)) {
            perror("memd-bench-replay: mkdtemp");
            return 1;
        }
        int rc = import_onnx(o.model, o.dims, tmp, yaml, sizeof yaml);
        path = yaml;
        if (rc != 0) {
            unlink(yaml);
            rmdir(tmp);
            return rc;
        }
    } else if (o.dims) {
        usage(); /* --dims is for ONNX models */
    }
    memd_model_yaml m;
    memd_error err = {0};
    int rc = memd_model_yaml_read(path, &m, &err);
    if (onnx) {
        unlink(yaml);
        rmdir(tmp);
    }
    if (rc < 0) {
        char msg[sizeof err.file + sizeof err.msg + 32];
        memd_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "memd-bench-replay: %s\n", msg);
        return 1;
    }
    replay r;
    if (build(&m, &r) < 0 || r.nreplayed == 0) {
        fprintf(stderr, "memd-bench-replay: %s: %s\n", o.model,
                r.nreplayed ? "out of memory" : "no tensor to allocate");
        return 1;
    }
    size_t nt = m.desc.ntensors;
    run u = {.where = calloc(nt, sizeof(uint64_t)), .offset = calloc(nt, sizeof(uint64_t)),
             .size = calloc(nt, sizeof(uint64_t))};
    uint64_t *inproc_off = calloc(nt, sizeof(uint64_t)), *pool_off = calloc(nt, sizeof(uint64_t));
    if (!u.where || !u.offset || !u.size || !inproc_off || !pool_off)
        return 1;

    /* The high-water mark sizes the pool: the same allocator over a range large enough
     * places every tensor as in process. */
    uint64_t high, inproc_peak;
    inproc_shape(&r, inproc_off, &high, &inproc_peak);
    high = (high + 4095) / 4096 * 4096;

    memclient *c = NULL;
    bool daemon = o.modes[MODE_CALL] || o.modes[MODE_BATCH] || o.modes[MODE_POOL];
    if (daemon && (rc = memclient_connect(o.socket, &c)) < 0)
        die("connect", rc);
    uint64_t pairs = (uint64_t)r.nreplayed * o.inferences;
    /* Repeats go round the modes, so that a load that comes and goes on a shared machine
     * weighs on every mode alike; each mode reports its median. */
    double *samples_of[4], *cpu_of[4];
    uint64_t peak_of[4] = {0};
    for (int mode = 0; mode < 4; mode++)
        if (!(samples_of[mode] = calloc(o.repeat, sizeof(double))) ||
            !(cpu_of[mode] = calloc(o.repeat, sizeof(double))))
            die("out of memory", -ENOMEM);
    for (unsigned k = 0; k < o.repeat; k++) {
        for (int mode = 0; mode < 4; mode++) {
            if (!o.modes[mode])
                continue;
            run w = u;
            w.peak = w.live = 0;
            double dt = 0;
            /* Each timed run follows one untimed inference in the same mode: what is
             * measured is the steady state of a runtime that runs many, not the first
             * touch of a new pool or range right after the previous mode's syscalls. */
            if (mode == MODE_CALL) {
                (void)mode_call(&r, c, o.device, 1, &w);
                dt = mode_call(&r, c, o.device, o.inferences, &w);
            } else if (mode == MODE_BATCH) {
                (void)mode_batch(&r, c, o.device, 1, &w);
                dt = mode_batch(&r, c, o.device, o.inferences, &w);
            } else if (mode == MODE_POOL) {
                memclient_alloc_req q = {.device = o.device, .cls = MEMD_CLASS_INTERNAL,
                                         .scope = MEMD_SCOPE_DRAM, .bytes = high,
                                         .name = "replay-pool"};
                memclient_pool *p;
                if ((rc = memclient_pool_create(c, &q, &p)) < 0)
                    die("memclient_pool_create", rc);
                memclient_pool_info pi;
                memclient_pool_query(p, &pi);
                (void)mode_pool(&r, p, pi.address, 1, &w);
                dt = mode_pool(&r, p, pi.address, o.inferences, &w);
                if ((rc = memclient_pool_flush(p)) < 0)
                    die("memd refused a pool report", rc);
                if ((rc = memclient_pool_destroy(p)) < 0)
                    die("memclient_pool_destroy", rc);
                memcpy(pool_off, w.offset, nt * sizeof *pool_off);
            } else {
                memd_range *g;
                if (memd_range_create(0, high, MEMCLIENT_POOL_MIN_ALIGN, &g) < 0)
                    die("memd_range_create", -ENOMEM);
                (void)mode_inproc(&r, g, 1, &w);
                dt = mode_inproc(&r, g, o.inferences, &w);
                memd_range_destroy(g);
                w.peak = inproc_peak;
            }
            samples_of[mode][k] = dt / (double)pairs;
            cpu_of[mode][k] = cpu_spent / (double)pairs;
            peak_of[mode] = w.peak;
        }
    }
    for (int mode = 0; mode < 4; mode++) {
        double *sm = samples_of[mode], *cm = cpu_of[mode];
        if (!o.modes[mode]) {
            free(sm);
            free(cm);
            continue;
        }
        qsort(sm, o.repeat, sizeof *sm, cmp_double);
        qsort(cm, o.repeat, sizeof *cm, cmp_double);
        printf("{\"bench\": \"replay\", \"model\": \"%s\", \"mode\": \"%s\", "
               "\"ns_per_pair\": %.1f, \"cpu_ns_per_pair\": %.1f, \"peak_bytes\": %" PRIu64
               ", \"pairs\": %" PRIu64 ", \"tensors\": %zu, \"ops\": %zu, "
               "\"inferences\": %u, \"repeat\": %u}\n",
               m.desc.name, mode_names[mode], sm[o.repeat / 2], cm[o.repeat / 2],
               peak_of[mode], pairs, r.nreplayed, m.desc.nops, o.inferences, o.repeat);
        free(sm);
        free(cm);
    }
    fflush(stdout);
    /* The pool is the engine in the process: same offsets, same peak. */
    if (o.modes[MODE_POOL]) {
        for (size_t i = 0; i < r.nreplayed; i++) {
            uint32_t t = r.replayed[i];
            if (pool_off[t] != inproc_off[t]) {
                fprintf(stderr, "memd-bench-replay: tensor %s at offset %" PRIu64
                        " in the pool but %" PRIu64 " in process\n", m.tensors[t].name,
                        pool_off[t], inproc_off[t]);
                return 1;
            }
        }
        if (peak_of[MODE_POOL] != inproc_peak) {
            fprintf(stderr, "memd-bench-replay: pool peak %" PRIu64 " != in-process %" PRIu64
                    "\n", peak_of[MODE_POOL], inproc_peak);
            return 1;
        }
    }
    memclient_disconnect(c);
    for (size_t s = 0; s < r.nsteps; s++) {
        free(r.alloc_at[s]);
        free(r.free_at[s]);
    }
    free(r.alloc_at);
    free(r.free_at);
    free(r.nalloc_at);
    free(r.nfree_at);
    free(r.replayed);
    free(u.where);
    free(u.offset);
    free(u.size);
    free(inproc_off);
    free(pool_off);
    memd_model_yaml_free(&m);
    return 0;
}
