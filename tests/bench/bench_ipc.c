/* memd-bench-ipc — the service benchmark of BENCHMARKS.md section 2.
 *
 *   memd-bench-ipc --socket PATH --clients C --seconds T [--batch B] [--pipeline D]
 *                  [--device N] [--max-size BYTES] [--seed S]
 *                  [--bank-set range|per-bank|mixed] [--set-size K]
 *
 * C threads, each with its own connection, run D independent chains of "allocate B
 * random DRAM sizes, then free them", keeping D requests in flight with libmemclient's
 * submit/complete API (D = 1 is plain request/reply). With --threads T < C, each thread
 * serves its connections in turn like redis-benchmark -P D: it takes a connection's D
 * replies, then sends the D next requests with one write. One alloc or one free is one
 * op; latency is per request, from submit to completion. Prints one JSON line.
 *
 * --bank-set: SRAM buffers on bank sets instead of DRAM lockstep ones, the requests of a
 * tt-metal runtime placing sharded tensors: each buffer gets K consecutive bank ids (a
 * shard grid row, K-aligned, chosen at random), range lockstep, per bank, or mixed (range,
 * per bank and plain lockstep in turn, across requests and batches). --batch 1 sends one
 * ALLOC_BANKS per buffer (all there was before); --batch B sends B of them in one
 * ALLOC_BATCH_BANKS. The JSON adds alloc_us: the median alloc request's latency divided
 * by B, microseconds per buffer.
 *
 * It also checks behaviour, never time: every successful allocation must be at least as
 * large as asked, every free of a live handle must succeed, and only -ENOMEM may fail an
 * allocation (the daemon is shared: other clients may fill the device). Any violation
 * exits non-zero. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memd/client.h"
#include "test_clock.h"
#include "test_rand.h"

typedef struct opts {
    const char *socket;
    uint32_t clients, threads, batch, pipeline, device;
    double seconds;
    uint64_t max_size, seed;
    uint32_t bank_mode;    /* BANKS_*: --bank-set */
    uint32_t set_size;     /* K */
    uint32_t nbanks;       /* the device's SRAM banks (from a dump) */
} opts;

enum { BANKS_NONE, BANKS_RANGE, BANKS_PER_BANK, BANKS_MIXED };
static const char *const bank_modes[] = {"none", "range", "per-bank", "mixed"};

/* One chain: a request in flight, either the alloc of its B buffers or their free. */
typedef struct chain {
    bool freeing;
    uint64_t ticket;
    uint64_t t0;
    memclient_alloc_req *reqs;
    memclient_buffer *bufs;
    uint64_t *handles;
    uint32_t *sets;        /* --bank-set: K ids per request */
} chain;

typedef struct worker {
    const opts *o;
    memclient *c;
    chain *chains;
    uint32_t *fifo;        /* chain of each request in flight, in order */
    uint32_t head, inflight;
    bool stopping;
    uint64_t deadline;
    uint64_t rng;
    uint64_t ops, nomem, wrong;
    uint64_t *lat;         /* ns per request */
    size_t nlat, caplat;
    uint64_t picked;       /* --bank-set mixed: buffers given a mode so far */
    uint64_t *alat;        /* ns per alloc request */
    size_t nalat, capalat;
    char error[320];       /* first fatal error */
} worker;

static int record(uint64_t **lat, size_t *nlat, size_t *caplat, uint64_t ns)
{
    if (*nlat == *caplat) {
        size_t n = *caplat ? *caplat * 2 : 1u << 16;
        uint64_t *p = realloc(*lat, n * sizeof(*p));
        if (!p)
            return -ENOMEM;
        *lat = p;
        *caplat = n;
    }
    (*lat)[(*nlat)++] = ns;
    return 0;
}

/* --bank-set: request j's set, K consecutive ids at a random K-aligned start, and its
 * mode. */
static void pick_banks(worker *w, chain *ch, uint32_t j)
{
    const opts *o = w->o;
    uint32_t K = o->set_size, *ids = ch->sets + (size_t)j * K;
    uint32_t start = (uint32_t)(memd_test_rand(&w->rng) % (o->nbanks / K)) * K;
    for (uint32_t k = 0; k < K; k++)
        ids[k] = start + k;
    uint32_t mode = o->bank_mode == BANKS_MIXED ? 1 + w->picked++ % 3 : o->bank_mode;
    memclient_alloc_req *r = &ch->reqs[j];
    r->bank_set = mode == BANKS_MIXED ? NULL : ids; /* mixed's third: plain lockstep */
    r->nbank_set = mode == BANKS_MIXED ? 0 : K;
    r->per_bank = mode == BANKS_PER_BANK;
}

static int submit(worker *w, chain *ch)
{
    const opts *o = w->o;
    ch->t0 = memd_test_now_ns();
    if (ch->freeing) {
        if (o->batch == 1)
            return memclient_submit_free(w->c, ch->handles[0], &ch->ticket);
        return memclient_submit_free_batch(w->c, ch->handles, o->batch, &ch->ticket);
    }
    for (uint32_t i = 0; i < o->batch; i++) {
        ch->reqs[i].bytes = 32 + memd_test_rand(&w->rng) % (o->max_size - 31);
        if (o->bank_mode != BANKS_NONE)
            pick_banks(w, ch, i);
    }
    if (o->batch == 1)
        return memclient_submit_alloc(w->c, &ch->reqs[0], &ch->bufs[0], &ch->ticket);
    return memclient_submit_alloc_batch(w->c, ch->reqs, o->batch, ch->bufs, &ch->ticket);
}

static void fatal(worker *w, const char *what, int err)
{
    memclient_error e;
    memclient_last_error(&e);
    snprintf(w->error, sizeof(w->error), "%s: %s", what,
             e.status == err ? e.message : memclient_strerror(err));
}

/* Allocates the chains and sends the first D requests. 0, or -1 with w->error set. */
static int worker_begin(worker *w)
{
    const opts *o = w->o;
    uint32_t D = o->pipeline, B = o->batch;
    w->chains = calloc(D, sizeof(*w->chains));
    w->fifo = calloc(D, sizeof(*w->fifo));
    bool ok = w->chains && w->fifo;
    for (uint32_t i = 0; ok && i < D; i++) {
        chain *ch = &w->chains[i];
        ch->reqs = calloc(B, sizeof(memclient_alloc_req));
        ch->bufs = calloc(B, sizeof(memclient_buffer));
        ch->handles = calloc(B, sizeof(uint64_t));
        ch->sets = calloc((size_t)B * o->set_size, sizeof(uint32_t));
        ok = ch->reqs && ch->bufs && ch->handles && ch->sets;
        for (uint32_t j = 0; ok && j < B; j++)
            ch->reqs[j] = (memclient_alloc_req){
                .device = o->device, .cls = MEMD_CLASS_CONSTANT,
                .scope = o->bank_mode != BANKS_NONE ? MEMD_SCOPE_SRAM : MEMD_SCOPE_DRAM};
    }
    if (!ok) {
        snprintf(w->error, sizeof(w->error), "out of memory");
        return -1;
    }
    if (!w->c)
        return -1;
    w->deadline = memd_test_now_ns() + (uint64_t)(o->seconds * 1e9);
    for (uint32_t i = 0; i < D; i++) {
        int r = submit(w, &w->chains[i]);
        if (r < 0) {
            fatal(w, "submit", r);
            return -1;
        }
        w->fifo[(w->head + w->inflight++) % D] = i;
    }
    return 0;
}

/* Completes the oldest request of w and sends its successor: 1 while requests are in
 * flight, 0 when w is done, -1 on an error (w->error set). */
static int worker_step(worker *w)
{
    const opts *o = w->o;
    uint32_t D = o->pipeline, B = o->batch;
    memclient_completion done;
    int r = memclient_complete(w->c, &done);
    if (r < 0) {
        fatal(w, "complete", r);
        return -1;
    }
    chain *ch = &w->chains[w->fifo[w->head]];
    w->head = (w->head + 1) % D;
    w->inflight--;
    uint64_t t = memd_test_now_ns();
    if (done.ticket != ch->ticket) {
        snprintf(w->error, sizeof(w->error), "completion ticket %" PRIu64 " but request %"
                 PRIu64 " was next", done.ticket, ch->ticket);
        return -1;
    }
    if (record(&w->lat, &w->nlat, &w->caplat, t - ch->t0) < 0 ||
        (!ch->freeing && done.status == 0 &&
         record(&w->alat, &w->nalat, &w->capalat, t - ch->t0) < 0)) {
        snprintf(w->error, sizeof(w->error), "out of memory");
        return -1;
    }
    if (t >= w->deadline)
        w->stopping = true;
    if (done.status == 0) {
        w->ops += B;
        if (!ch->freeing) {
            for (uint32_t j = 0; j < B; j++) {
                if (ch->bufs[j].size_per_bank < ch->reqs[j].bytes)
                    w->wrong++;
                ch->handles[j] = ch->bufs[j].handle;
            }
        }
        ch->freeing = !ch->freeing;
    } else if (!ch->freeing && done.status == -ENOMEM) {
        w->nomem++; /* retry with new sizes */
    } else {
        fatal(w, ch->freeing ? "free" : "alloc", done.status);
        w->wrong++;
        return -1;
    }
    /* After the deadline only the frees that clean up are still sent. */
    if (ch->freeing || !w->stopping) {
        if ((r = submit(w, ch)) < 0) {
            fatal(w, "submit", r);
            return -1;
        }
        w->fifo[(w->head + w->inflight++) % D] = (uint32_t)(ch - w->chains);
    }
    return w->inflight > 0;
}

static void worker_end(worker *w)
{
    for (uint32_t i = 0; w->chains && i < w->o->pipeline; i++) {
        free(w->chains[i].reqs);
        free(w->chains[i].bufs);
        free(w->chains[i].handles);
        free(w->chains[i].sets);
    }
    free(w->chains);
    free(w->fifo);
}

/* One thread drives a group of clients: each its own connection, served in turn (like
 * redis-benchmark's single loop). With --threads equal to --clients (the default), every
 * client has a thread of its own. */
typedef struct group {
    worker *w;             /* first worker of the group; members are w[0], w[stride], ... */
    uint32_t n, stride;
    pthread_t thread;
    pthread_barrier_t *start;
} group;

static int flush(worker *w)
{
    int r = memclient_flush(w->c);
    if (r < 0)
        fatal(w, "flush", r);
    return r;
}

static void *run(void *arg)
{
    group *g = arg;
    pthread_barrier_wait(g->start);
    uint32_t active = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        worker *w = &g->w[(size_t)i * g->stride];
        if (worker_begin(w) == 0 && (g->n == 1 || flush(w) == 0))
            active++;
        else
            w->inflight = 0; /* failed: skipped below */
    }
    while (active > 0) {
        for (uint32_t i = 0; i < g->n; i++) {
            worker *w = &g->w[(size_t)i * g->stride];
            if (w->inflight == 0)
                continue;
            /* Alone, the thread takes one reply at a time and its next wait sends the
             * frames. Serving others in turn, it takes the replies of every request in
             * flight (each chain's next request queued behind its reply) and sends them
             * all with one write, the way redis-benchmark -P D does, or this client
             * idles until its turn comes again. */
            uint32_t n = g->n > 1 ? w->inflight : 1;
            int r = 1;
            for (uint32_t k = 0; k < n && r > 0; k++)
                r = worker_step(w);
            if (r > 0 && g->n > 1)
                r = flush(w) == 0 ? 1 : -1;
            if (r <= 0) {
                w->inflight = 0;
                active--;
            }
        }
    }
    for (uint32_t i = 0; i < g->n; i++)
        worker_end(&g->w[(size_t)i * g->stride]);
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!s || !*s || *s == '-')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

static bool parse_u32(const char *s, uint32_t *out, uint32_t min, uint32_t max)
{
    uint64_t v;
    if (!parse_u64(s, &v) || v < min || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* The SRAM bank count of device dev (0: none, or the dump failed). */
static uint32_t sram_banks(memclient *c, uint32_t dev)
{
    memclient_snapshot *s;
    uint32_t n = 0;
    if (memclient_dump(c, dev, 0, &s) < 0)
        return 0;
    for (size_t i = 0; i < s->ngroups; i++)
        if (s->groups[i].device == dev && s->groups[i].kind == MEMD_KIND_SRAM)
            n = s->groups[i].banks;
    memclient_snapshot_free(s);
    return n;
}

static int usage(const char *msg)
{
    if (msg)
        fprintf(stderr, "memd-bench-ipc: %s\n", msg);
    fprintf(stderr, "usage: memd-bench-ipc --socket PATH --clients C --seconds T [--batch B] "
                    "[--pipeline D] [--threads T] [--device N] [--max-size BYTES] [--seed S]\n"
                    "       [--bank-set range|per-bank|mixed] [--set-size K]\n"
                    "  --threads T: the clients are served by T threads in turn (default: one "
                    "thread per client)\n");
    return 2;
}

int main(int argc, char **argv)
{
    opts o = {.clients = 1, .batch = 1, .pipeline = 1, .seconds = 1.0, .max_size = 4096,
              .seed = 0x5EED0002, .set_size = 8};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool good;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return usage(NULL), 0;
        if (!v)
            return usage("every option takes a value");
        i++;
        if (!strcmp(a, "--socket")) {
            o.socket = v;
            good = *v;
        } else if (!strcmp(a, "--clients")) {
            good = parse_u32(v, &o.clients, 1, 4096);
        } else if (!strcmp(a, "--threads")) {
            good = parse_u32(v, &o.threads, 1, 4096);
        } else if (!strcmp(a, "--batch")) {
            good = parse_u32(v, &o.batch, 1, 1u << 20);
        } else if (!strcmp(a, "--pipeline")) {
            good = parse_u32(v, &o.pipeline, 1, 1u << 16);
        } else if (!strcmp(a, "--device")) {
            good = parse_u32(v, &o.device, 0, UINT32_MAX - 1);
        } else if (!strcmp(a, "--max-size")) {
            good = parse_u64(v, &o.max_size) && o.max_size >= 32;
        } else if (!strcmp(a, "--bank-set")) {
            good = false;
            for (uint32_t m = BANKS_RANGE; m <= BANKS_MIXED; m++)
                if (!strcmp(v, bank_modes[m]))
                    o.bank_mode = m, good = true;
        } else if (!strcmp(a, "--set-size")) {
            good = parse_u32(v, &o.set_size, 1, MEMD_BANKSET_MAX);
        } else if (!strcmp(a, "--seed")) {
            good = parse_u64(v, &o.seed);
        } else if (!strcmp(a, "--seconds")) {
            char *end;
            errno = 0;
            o.seconds = strtod(v, &end);
            good = !errno && !*end && o.seconds > 0 && o.seconds <= 3600;
        } else {
            fprintf(stderr, "memd-bench-ipc: unknown option '%s'\n", a);
            return usage(NULL);
        }
        if (!good) {
            fprintf(stderr, "memd-bench-ipc: bad value for %s: '%s'\n", a, v);
            return usage(NULL);
        }
    }

    if (o.threads == 0 || o.threads > o.clients)
        o.threads = o.clients;
    worker *w = calloc(o.clients, sizeof(*w));
    group *g = calloc(o.threads, sizeof(*g));
    pthread_barrier_t start;
    if (!w || !g || pthread_barrier_init(&start, NULL, o.threads + 1) != 0) {
        fprintf(stderr, "memd-bench-ipc: out of memory\n");
        return 1;
    }
    /* Connect everyone first: connection setup is not part of the rate. */
    int failed = 0;
    for (uint32_t i = 0; i < o.clients; i++) {
        w[i].o = &o;
        w[i].rng = o.seed + i;
        int r = memclient_connect_named(o.socket, "memd-bench-ipc", &w[i].c);
        if (r < 0 && !failed++) {
            memclient_error e;
            memclient_last_error(&e);
            fprintf(stderr, "memd-bench-ipc: client %u: %s\n", i, e.message);
        }
        if (r == 0 && o.batch > memclient_max_alloc_batch(w[i].c) && !failed++)
            fprintf(stderr, "memd-bench-ipc: --batch %u is over the daemon's frame limit "
                            "(at most %zu allocations per request)\n",
                    o.batch, memclient_max_alloc_batch(w[i].c));
    }
    if (!failed && o.bank_mode != BANKS_NONE && (o.nbanks = sram_banks(w[0].c, o.device)) < o.set_size &&
        !failed++)
        fprintf(stderr, "memd-bench-ipc: --set-size %u, but device %u has %u SRAM banks\n",
                o.set_size, o.device, o.nbanks);
    for (uint32_t i = 0; failed && i < o.clients; i++) {
        /* the workers see no connection and stop at once */
        memclient_disconnect(w[i].c);
        w[i].c = NULL;
    }
    /* Thread t serves clients t, t + T, t + 2T, ... */
    for (uint32_t t = 0; t < o.threads; t++) {
        g[t] = (group){.w = &w[t], .n = (o.clients - t + o.threads - 1) / o.threads,
                       .stride = o.threads, .start = &start};
        pthread_create(&g[t].thread, NULL, run, &g[t]);
    }
    pthread_barrier_wait(&start);
    uint64_t t0 = memd_test_now_ns();
    for (uint32_t t = 0; t < o.threads; t++)
        pthread_join(g[t].thread, NULL);
    double elapsed = (double)(memd_test_now_ns() - t0) / 1e9;
    pthread_barrier_destroy(&start);

    uint64_t ops = 0, nomem = 0, wrong = 0;
    size_t nlat = 0, nalat = 0;
    for (uint32_t i = 0; i < o.clients; i++) {
        nalat += w[i].nalat;
        ops += w[i].ops;
        nomem += w[i].nomem;
        wrong += w[i].wrong;
        nlat += w[i].nlat;
        if (w[i].error[0]) {
            fprintf(stderr, "memd-bench-ipc: client %u: %s\n", i, w[i].error);
            failed++;
        }
    }
    uint64_t *lat = malloc((nlat ? nlat : 1) * sizeof(*lat));
    uint64_t *alat = malloc((nalat ? nalat : 1) * sizeof(*alat));
    if (!lat || !alat) {
        fprintf(stderr, "memd-bench-ipc: out of memory\n");
        return 1;
    }
    size_t k = 0, ka = 0;
    for (uint32_t i = 0; i < o.clients; i++) {
        if (w[i].nlat)
            memcpy(lat + k, w[i].lat, w[i].nlat * sizeof(*lat));
        k += w[i].nlat;
        free(w[i].lat);
        if (w[i].nalat)
            memcpy(alat + ka, w[i].alat, w[i].nalat * sizeof(*alat));
        ka += w[i].nalat;
        free(w[i].alat);
        memclient_disconnect(w[i].c);
    }
    qsort(lat, nlat, sizeof(*lat), cmp_u64);
    /* nearest rank */
    double p50 = nlat ? (double)lat[(nlat - 1) / 2] / 1e3 : 0;
    double p99 = nlat ? (double)lat[(size_t)((double)(nlat - 1) * 0.99)] / 1e3 : 0;
    free(lat);
    qsort(alat, nalat, sizeof(*alat), cmp_u64);
    double alloc_us = nalat ? (double)alat[(nalat - 1) / 2] / 1e3 / o.batch : 0;
    free(alat);
    free(w);
    free(g);
    if (failed)
        return 1;
    printf("{\"bench\":\"ipc\",\"clients\":%u,\"threads\":%u,\"batch\":%u,\"pipeline\":%u,\"ops\":%" PRIu64
           ",\"ops_per_s\":%.0f,\"p50_us\":%.1f,\"p99_us\":%.1f,\"seconds\":%.3f,\"requests\":%zu"
           ",\"nomem\":%" PRIu64 ",\"bank_set\":\"%s\",\"set_size\":%u,\"alloc_us\":%.2f}\n",
           o.clients, o.threads, o.batch, o.pipeline, ops, elapsed > 0 ? (double)ops / elapsed : 0, p50, p99,
           elapsed, nlat, nomem, bank_modes[o.bank_mode], o.bank_mode ? o.set_size : 0, alloc_us);
    if (wrong) {
        fprintf(stderr, "memd-bench-ipc: %" PRIu64 " allocations smaller than requested\n", wrong);
        return 1;
    }
    if (ops == 0) {
        fprintf(stderr, "memd-bench-ipc: no operation succeeded\n");
        return 1;
    }
    return 0;
}
