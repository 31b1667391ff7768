/* memd-killtest — memd SIGKILLed under load, again and again, on the same state directory.
 *
 *   memd-killtest [KILLS [CLIENTS [SEED]]]     (default 20 kills, 4 clients, seed 1)
 *
 * CLIENTS threads, each with its own connection (MEMCLIENT_CONNECT_RECONNECT), allocate
 * and free without pause: single allocations, shared named ones (a client holds a name at
 * most once), batches (with a shared record now and then), single and batched frees.
 * Each records every allocation the daemon acknowledged and every free. Now and then a
 * client also loads a model (one model, shared by every client that loads it), creates
 * instances of it, releases them (kept or freed) and unloads it, recording what it was
 * told. memd is killed
 * at random moments: mostly by SIGKILL from here after a random 5..150 ms of load, and
 * every third time by its own "kill" failpoint (memd-test: SIGKILL right after a commit,
 * before any reply of it is sent, i.e. between a request and its reply). It is started
 * again on the same state directory; the clients reconnect, reclaim their sessions and
 * send again what was cut off (marked as retries). Then the clients stop at the end of
 * their current call and an admin dump is checked:
 *   lost          an acknowledged, unfreed allocation missing, or at another handle,
 *                 address, size, bank group or region
 *   twice         two clients' acknowledged allocations that are not one shared buffer
 *                 on the same handle, or that overlap in a bank group
 *   overlaps      two live allocations of the dump overlapping in a bank group
 *   extra         an unshared allocation of a client's session it was never told about
 *                 (a retried request that made a second buffer, or a leak)
 *   session lost  a client whose session could not be reclaimed
 * and for models: a model or instance a client was told of missing, with another id,
 * owner, arena or state (lost), an instance of a client's session it never heard of or a
 * model with more users than clients using it (extra).
 * Prints one line per kill and the totals; exits 1 if any of these is not 0. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "memd/client.h"
#include "test_clock.h"
#include "test_rand.h"

#define MAX_CLIENTS 32
#define MAX_LIVE 160
#define NNAMES 8
#define MAX_INST 3

/* The model (x -> conv(w) -> a -> fc(w2) -> y): code, constants and an arena. */
enum { MX, MW, MA, MW2, MY, MNT };
static const uint32_t mop0_in[] = {MX, MW}, mop0_out[] = {MA};
static const uint32_t mop1_in[] = {MA, MW2}, mop1_out[] = {MY};
static const memclient_tensor_desc mtensors[MNT] = {
    [MX] = {.name = "x", .role = MEMCLIENT_TENSOR_INPUT, .bytes = 1024},
    [MW] = {.name = "w", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 8192, .alignment = 4096},
    [MA] = {.name = "a", .bytes = 4096},
    [MW2] = {.name = "w2", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 2000},
    [MY] = {.name = "y", .role = MEMCLIENT_TENSOR_OUTPUT, .bytes = 64},
};
static const memclient_op_desc mops[] = {
    {.name = "conv", .inputs = mop0_in, .ninputs = 2, .outputs = mop0_out, .noutputs = 1},
    {.name = "fc", .inputs = mop1_in, .ninputs = 2, .outputs = mop1_out, .noutputs = 1},
};

typedef struct inst {
    memclient_instance in;
    uint64_t handles[MNT + 1];     /* its own buffers: the arena and the placeholders */
    size_t nhandles;
    bool busy;
} inst;

typedef struct held {
    memclient_buffer b;
    int shared;                    /* name index + 1, or 0 */
} held;

typedef struct client {
    pthread_t thread;
    int index;
    memclient *c;
    uint32_t session;
    uint64_t rng;
    held live[MAX_LIVE + 32];
    size_t nlive;
    bool holds_name[NNAMES];
    uint64_t model;                /* the model's id while this client has it loaded */
    inst insts[MAX_INST];
    size_t ninsts;
    uint64_t acked_allocs, acked_frees, failed_calls, bad_frees;
    uint64_t acked_model_calls;    /* model loads, unloads, instance creates and releases */
    int fatal;                     /* the session was lost: the error */
    char fatal_msg[320];
} client;

static memd_fixture f;
static memd_fixture_opts fo;
static client clients[MAX_CLIENTS];
static int nclients = 4;
static char fp[160], fp_env[200];
static const char *envs[2];
static atomic_bool pause_req, stop_req;
static atomic_int parked;

static memclient_alloc_req req_for(client *k, int shared)
{
    static const memd_class classes[] = {MEMD_CLASS_CONSTANT, MEMD_CLASS_PLACEHOLDER,
                                         MEMD_CLASS_INTERNAL};
    static const char *const names[NNAMES] = {"kt-shared-0", "kt-shared-1", "kt-shared-2",
                                              "kt-shared-3", "kt-shared-4", "kt-shared-5",
                                              "kt-shared-6", "kt-shared-7"};
    memclient_alloc_req r = {.device = 0, .scope = MEMD_SCOPE_DRAM};
    if (shared) {
        r.cls = MEMD_CLASS_CONSTANT;
        r.bytes = 4096u * (uint64_t)shared;
        r.name = names[shared - 1];
        r.flags = MEMCLIENT_ALLOC_SHARED;
    } else {
        r.cls = classes[memd_test_xorshift(&k->rng) % 3];
        r.bytes = 64 + memd_test_xorshift(&k->rng) % 65536;
    }
    return r;
}

/* A name this client does not hold (0 if it holds them all). */
static int free_name(client *k)
{
    int start = (int)(memd_test_xorshift(&k->rng) % NNAMES);
    for (int i = 0; i < NNAMES; i++)
        if (!k->holds_name[(start + i) % NNAMES])
            return (start + i) % NNAMES + 1;
    return 0;
}

static void add(client *k, const memclient_buffer *b, int shared)
{
    k->live[k->nlive++] = (held){.b = *b, .shared = shared};
    if (shared)
        k->holds_name[shared - 1] = true;
    k->acked_allocs++;
}

static void drop(client *k, size_t i)
{
    if (k->live[i].shared)
        k->holds_name[k->live[i].shared - 1] = false;
    k->live[i] = k->live[--k->nlive];
    k->acked_frees++;
}

/* A call failed. Transport failures were retried by the library; what reaches here is
 * an answer (no room: fine), a free refused (an acknowledged allocation the daemon does
 * not have: lost), or the session gone. */
static void failed(client *k, int rc, bool a_free)
{
    k->failed_calls++;
    memclient_error e;
    memclient_last_error(&e);
    if (rc == -ENOMEM || rc == -EDQUOT)
        return;
    if (a_free && (rc == -ENOENT || rc == -EPERM)) {
        k->bad_frees++;
        fprintf(stderr, "client %d: an acknowledged allocation could not be freed: %s\n",
                k->index, e.message);
        return;
    }
    k->fatal = rc;
    snprintf(k->fatal_msg, sizeof k->fatal_msg, "%s", e.message);
}

/* A model request failed: only "no room" is an answer a client may get. */
static void model_failed(client *k, int rc, const char *what)
{
    k->failed_calls++;
    if (rc == -ENOMEM || rc == -EDQUOT)
        return;
    memclient_error e;
    memclient_last_error(&e);
    k->fatal = rc;
    snprintf(k->fatal_msg, sizeof k->fatal_msg, "%s: %s", what, e.message);
}

static void model_op(client *k)
{
    if (!k->model) {
        memclient_model_desc d = {.name = "killtest-model", .scope = MEMD_SCOPE_DRAM,
                                  .code_bytes = 4096, .tensors = mtensors, .ntensors = MNT,
                                  .ops = mops, .nops = 2};
        memclient_model_info m;
        int rc = memclient_model_load(k->c, &d, NULL, &m, NULL);
        if (rc == 0) {
            k->model = m.model_id;
            k->acked_model_calls++;
        } else {
            model_failed(k, rc, "model load");
        }
        return;
    }
    unsigned what = (unsigned)(memd_test_xorshift(&k->rng) % 8);
    int rc;
    if (what == 0) { /* unload, with whatever instances it has */
        if ((rc = memclient_model_unload(k->c, k->model, MEMCLIENT_MODEL_FORCE)) == 0) {
            k->model = 0;
            k->ninsts = 0;
            k->acked_model_calls++;
        } else {
            model_failed(k, rc, "model unload");
        }
    } else if (what <= 3) { /* an instance: one from the free list, or a new one */
        memclient_instance in;
        memclient_tensor_addr ta[MNT];
        if ((rc = memclient_instance_create(k->c, k->model, &in, ta, MNT)) < 0) {
            model_failed(k, rc, "instance create");
            return;
        }
        k->acked_model_calls++;
        for (size_t i = 0; i < k->ninsts; i++) {
            if (k->insts[i].in.instance_id == in.instance_id) {
                if (k->insts[i].busy || !in.reused) {
                    k->fatal = -EEXIST;
                    snprintf(k->fatal_msg, sizeof k->fatal_msg, "instance %llu handed out "
                             "while busy", (unsigned long long)in.instance_id);
                }
                k->insts[i].busy = true;
                return;
            }
        }
        if (in.reused) {
            k->fatal = -EEXIST;
            snprintf(k->fatal_msg, sizeof k->fatal_msg, "instance %llu reused, but this "
                     "client never had it", (unsigned long long)in.instance_id);
            return;
        }
        if (k->ninsts == MAX_INST) { /* a fourth: free it again at once */
            if ((rc = memclient_instance_release(k->c, in.instance_id,
                                                 MEMCLIENT_INSTANCE_FREE)) < 0)
                model_failed(k, rc, "instance release");
            return;
        }
        inst *n = &k->insts[k->ninsts++];
        *n = (inst){.in = in, .busy = true};
        if (in.arena_handle)
            n->handles[n->nhandles++] = in.arena_handle;
        for (size_t t = 0; t < MNT; t++)
            if (mtensors[t].role == MEMCLIENT_TENSOR_INPUT ||
                mtensors[t].role == MEMCLIENT_TENSOR_OUTPUT)
                n->handles[n->nhandles++] = ta[t].handle;
    } else if (k->ninsts > 0) { /* release one: kept on the free list, or freed */
        size_t i = memd_test_xorshift(&k->rng) % k->ninsts;
        bool free_it = what == 7;
        if (!k->insts[i].busy && !free_it)
            return;
        rc = memclient_instance_release(k->c, k->insts[i].in.instance_id,
                                        free_it ? MEMCLIENT_INSTANCE_FREE : 0);
        if (rc < 0)
            model_failed(k, rc, "instance release");
        else
            k->acked_model_calls++;
        if (rc < 0)
            return;
        if (free_it)
            k->insts[i] = k->insts[--k->ninsts];
        else
            k->insts[i].busy = false;
    }
}

static void one_op(client *k)
{
    unsigned op = (unsigned)(memd_test_xorshift(&k->rng) % 12);
    if (op >= 10) {
        model_op(k);
        return;
    }
    if (k->nlive >= MAX_LIVE)
        op = 6 + op % 4; /* frees only */
    if (k->nlive == 0)
        op %= 6;
    int rc;
    if (op <= 2) { /* single, anonymous */
        memclient_alloc_req r = req_for(k, 0);
        memclient_buffer b;
        if ((rc = memclient_alloc(k->c, &r, &b)) == 0)
            add(k, &b, 0);
        else
            failed(k, rc, false);
    } else if (op == 3) { /* shared, named */
        int s = free_name(k);
        if (!s)
            return;
        memclient_alloc_req r = req_for(k, s);
        memclient_buffer b;
        if ((rc = memclient_alloc(k->c, &r, &b)) == 0)
            add(k, &b, s);
        else
            failed(k, rc, false);
    } else if (op <= 5) { /* batch, now and then with a shared record */
        size_t n = 2 + memd_test_xorshift(&k->rng) % 15;
        memclient_alloc_req r[16];
        memclient_buffer b[16];
        int shared_at = -1, s = 0;
        for (size_t i = 0; i < n; i++)
            r[i] = req_for(k, 0);
        if (memd_test_xorshift(&k->rng) % 3 == 0 && (s = free_name(k)) != 0) {
            shared_at = (int)(memd_test_xorshift(&k->rng) % n);
            r[shared_at] = req_for(k, s);
        }
        if ((rc = memclient_alloc_batch(k->c, r, n, b)) == 0) {
            for (size_t i = 0; i < n; i++)
                add(k, &b[i], (int)i == shared_at ? s : 0);
        } else {
            failed(k, rc, false);
        }
    } else if (op <= 7) { /* free one */
        size_t i = memd_test_xorshift(&k->rng) % k->nlive;
        if ((rc = memclient_free(k->c, k->live[i].b.handle)) == 0)
            drop(k, i);
        else
            failed(k, rc, true);
    } else { /* free a batch of distinct handles */
        size_t n = 2 + memd_test_xorshift(&k->rng) % 7, idx[8];
        if (n > k->nlive)
            n = k->nlive;
        uint64_t h[8] = {0};
        for (size_t i = 0; i < n; i++) {
            idx[i] = k->nlive - 1 - i; /* the newest n: distinct */
            h[i] = k->live[idx[i]].b.handle;
        }
        if ((rc = memclient_free_batch(k->c, h, n)) == 0) {
            for (size_t i = 0; i < n; i++)
                drop(k, idx[i]); /* from the end: earlier indexes stay valid */
        } else {
            failed(k, rc, true);
        }
    }
}

static void *client_main(void *arg)
{
    client *k = arg;
    while (!atomic_load(&stop_req) && !k->fatal) {
        if (atomic_load(&pause_req)) {
            atomic_fetch_add(&parked, 1);
            while (atomic_load(&pause_req) && !atomic_load(&stop_req))
                memd_test_sleep_ms(1);
            atomic_fetch_sub(&parked, 1);
            continue;
        }
        one_op(k);
    }
    return NULL;
}

/* ---- checking ---- */

typedef struct span {
    uint32_t device, kind;
    uint64_t address, size, handle;
} span;

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->address != y->address)
        return x->address < y->address ? -1 : 1;
    return x->handle < y->handle ? -1 : x->handle > y->handle;
}

/* Overlapping neighbours in a sorted list (the same handle twice is one buffer). */
static uint64_t overlapping(span *s, size_t n)
{
    qsort(s, n, sizeof *s, cmp_span);
    uint64_t bad = 0;
    for (size_t i = 1; i < n; i++)
        if (s[i].device == s[i - 1].device && s[i].kind == s[i - 1].kind &&
            s[i].handle != s[i - 1].handle && s[i].address < s[i - 1].address + s[i - 1].size)
            bad++;
    return bad;
}

typedef struct tally {
    uint64_t lost, twice, overlaps, extra, sessions_lost, live;
    uint64_t models, instances;    /* in the dump */
} tally;

static const memclient_alloc_info *find(const memclient_snapshot *s, uint64_t h)
{
    for (size_t i = 0; i < s->nallocs; i++)
        if (s->allocs[i].buf.handle == h)
            return &s->allocs[i];
    return NULL;
}

static bool instance_buffer(const client *k, uint64_t h)
{
    for (size_t i = 0; i < k->ninsts; i++)
        for (size_t j = 0; j < k->insts[i].nhandles; j++)
            if (k->insts[i].handles[j] == h)
                return true;
    return false;
}

/* The models and instances the clients were told of, against the dump. */
static void verify_models(const memclient_snapshot *s, tally *t)
{
    for (size_t m = 0; m < s->nmodels; m++) {
        uint32_t users = 0;
        for (int i = 0; i < nclients; i++)
            users += clients[i].model == s->models[m].model_id;
        if (s->models[m].users > users) {
            t->extra++;
            fprintf(stderr, "extra: model %llu has %u users, %u clients use it\n",
                    (unsigned long long)s->models[m].model_id, s->models[m].users, users);
        }
    }
    for (int i = 0; i < nclients; i++) {
        const client *k = &clients[i];
        if (k->model) {
            bool found = false;
            for (size_t m = 0; m < s->nmodels && !found; m++)
                found = s->models[m].model_id == k->model;
            if (!found) {
                t->lost++;
                fprintf(stderr, "lost: client %d model %llu\n", i,
                        (unsigned long long)k->model);
            }
        }
        for (size_t j = 0; j < k->ninsts; j++) {
            const inst *n = &k->insts[j];
            const memclient_instance_rec *r = NULL;
            for (size_t x = 0; x < s->ninstances && !r; x++)
                if (s->instances[x].instance_id == n->in.instance_id)
                    r = &s->instances[x];
            if (!r || r->session_id != k->session || r->model_id != k->model ||
                r->arena_handle != n->in.arena_handle ||
                r->arena_address != n->in.arena_address || (r->busy != 0) != n->busy) {
                t->lost++;
                fprintf(stderr, "lost: client %d instance %llu (%s)\n", i,
                        (unsigned long long)n->in.instance_id, r ? "changed" : "missing");
            }
        }
        for (size_t x = 0; x < s->ninstances; x++) {
            if (s->instances[x].session_id != k->session)
                continue;
            bool known = false;
            for (size_t j = 0; j < k->ninsts && !known; j++)
                known = k->insts[j].in.instance_id == s->instances[x].instance_id;
            if (!known) {
                t->extra++;
                fprintf(stderr, "extra: client %d session %u instance %llu\n", i, k->session,
                        (unsigned long long)s->instances[x].instance_id);
            }
        }
    }
}

static tally verify(memclient *admin)
{
    tally t = {0};
    memclient_snapshot *s;
    if (memclient_dump(admin, MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_MODELS, &s) < 0) {
        t.lost = UINT64_MAX;
        return t;
    }
    size_t total = 0;
    for (int i = 0; i < nclients; i++)
        total += clients[i].nlive;
    span *mine = calloc(total + 1, sizeof *mine), *all = calloc(s->nallocs + 1, sizeof *all);
    size_t nm = 0;
    for (int i = 0; i < nclients; i++) {
        client *k = &clients[i];
        if (k->fatal)
            t.sessions_lost++;
        t.lost += k->bad_frees;
        k->bad_frees = 0;
        for (size_t j = 0; j < k->nlive; j++) {
            const memclient_buffer *b = &k->live[j].b;
            const memclient_alloc_info *a = find(s, b->handle);
            if (!a || a->buf.address != b->address || a->buf.size_per_bank != b->size_per_bank ||
                a->buf.kind != b->kind || a->buf.region != b->region) {
                t.lost++;
                if (t.lost <= 3)
                    fprintf(stderr, "lost: client %d handle %llu address 0x%llx (%s)\n", i,
                            (unsigned long long)b->handle, (unsigned long long)b->address,
                            a ? "moved" : "missing");
            }
            mine[nm++] = (span){0, b->kind, b->address, b->size_per_bank, b->handle};
        }
        /* Unshared allocations of this session the client was not told about. */
        for (size_t j = 0; j < s->nallocs; j++) {
            const memclient_alloc_info *a = &s->allocs[j];
            if (a->session_id != k->session || a->name[0] || instance_buffer(k, a->buf.handle))
                continue;
            bool known = false;
            for (size_t m = 0; m < k->nlive && !known; m++)
                known = k->live[m].b.handle == a->buf.handle;
            if (!known) {
                t.extra++;
                if (t.extra <= 3)
                    fprintf(stderr, "extra: client %d session %u handle %llu\n", i,
                            k->session, (unsigned long long)a->buf.handle);
            }
        }
    }
    verify_models(s, &t);
    t.models = s->nmodels;
    t.instances = s->ninstances;
    t.twice = overlapping(mine, nm);
    for (size_t j = 0; j < s->nallocs; j++)
        all[j] = (span){s->allocs[j].device, s->allocs[j].buf.kind, s->allocs[j].buf.address,
                        s->allocs[j].buf.size_per_bank, s->allocs[j].buf.handle};
    t.overlaps = overlapping(all, s->nallocs);
    t.live = nm;
    free(mine);
    free(all);
    memclient_snapshot_free(s);
    return t;
}

/* ---- the daemon ---- */

static void respawn(void)
{
    if (memd_fixture_respawn(&f, &fo) < 0) {
        fprintf(stderr, "memd-killtest: memd did not start again\n");
        exit(2);
    }
}

int main(int argc, char **argv)
{
    unsigned kills = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20;
    nclients = argc > 2 ? atoi(argv[2]) : 4;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    if (nclients < 1 || nclients > MAX_CLIENTS) {
        fprintf(stderr, "usage: memd-killtest [KILLS [CLIENTS (1..%d) [SEED]]]\n", MAX_CLIENTS);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    snprintf(fp, sizeof fp, "/tmp/memd-killtest-%d", (int)getpid());
    snprintf(fp_env, sizeof fp_env, "MEMD_TEST_STORE_FAILPOINT=%s", fp);
    envs[0] = fp_env;
    fo = (memd_fixture_opts){.capture_stderr = true, .test_build = true, .env = envs};
    if (memd_fixture_start(&f, &fo) < 0)
        return 2;
    uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 0; i < nclients; i++) {
        client *k = &clients[i];
        k->index = i;
        k->rng = memd_test_xorshift(&rng) | 1;
        if (memclient_connect_flags(f.socket_path, "killtest", MEMCLIENT_CONNECT_RECONNECT,
                                    &k->c) < 0) {
            fprintf(stderr, "memd-killtest: cannot connect\n");
            return 2;
        }
        memclient_session_info info;
        memclient_session(k->c, &info);
        k->session = info.session_id;
        pthread_create(&k->thread, NULL, client_main, k);
    }
    tally sum = {0};
    unsigned by_failpoint = 0;
    long t0 = memd_test_now_ms();
    unsigned done = 0;
    for (unsigned n = 1; n <= kills; n++) {
        done = n;
        usleep((useconds_t)(5000 + memd_test_xorshift(&rng) % 145000));
        bool between = n % 3 == 0;
        if (between) {
            /* Dies right after its next commit, before that round's replies. */
            char p[200];
            snprintf(p, sizeof p, "%s.kill", fp);
            close(open(p, O_WRONLY | O_CREAT, 0600));
        } else {
            kill(f.pid, SIGKILL);
        }
        int st = memd_fixture_wait(&f, 20000);
        if (st != 128 + SIGKILL) {
            fprintf(stderr, "memd-killtest: memd ended with status %d, not SIGKILL\n", st);
            return 2;
        }
        by_failpoint += between;
        respawn();
        /* Clients finish their call (reconnecting, retrying) and stop. */
        atomic_store(&pause_req, true);
        long wait_from = memd_test_now_ms();
        while (atomic_load(&parked) < nclients && memd_test_now_ms() - wait_from < 60000) {
            int dead = 0;
            for (int i = 0; i < nclients; i++)
                dead += clients[i].fatal != 0;
            if (atomic_load(&parked) + dead >= nclients)
                break;
            memd_test_sleep_ms(1);
        }
        memclient *admin;
        if (memclient_connect(f.socket_path, &admin) < 0) {
            fprintf(stderr, "memd-killtest: no admin connection\n");
            return 2;
        }
        for (int i = 0; i < nclients; i++) /* a reclaimed session keeps its id */
            if (!clients[i].fatal) {
                memclient_session_info info;
                memclient_session(clients[i].c, &info);
                clients[i].session = info.session_id;
            }
        tally t = verify(admin);
        memclient_disconnect(admin);
        uint64_t acked = 0;
        for (int i = 0; i < nclients; i++)
            acked += clients[i].acked_allocs;
        printf("kill %u (%s): %llu live acknowledged, %llu acknowledged so far, %llu models "
               "and %llu instances: lost %llu, twice %llu, overlaps %llu, extra %llu, "
               "sessions lost %llu\n",
               n, between ? "after a commit, before its replies" : "SIGKILL",
               (unsigned long long)t.live, (unsigned long long)acked,
               (unsigned long long)t.models, (unsigned long long)t.instances,
               (unsigned long long)t.lost, (unsigned long long)t.twice,
               (unsigned long long)t.overlaps, (unsigned long long)t.extra,
               (unsigned long long)t.sessions_lost);
        fflush(stdout);
        sum.lost += t.lost;
        sum.twice += t.twice;
        sum.overlaps += t.overlaps;
        sum.extra += t.extra;
        sum.sessions_lost = t.sessions_lost;
        atomic_store(&pause_req, false);
        if (t.lost || t.twice || t.overlaps || t.extra || t.sessions_lost)
            break;
    }
    atomic_store(&stop_req, true);
    uint64_t acked = 0, freed = 0, fails = 0, model_calls = 0;
    for (int i = 0; i < nclients; i++) {
        pthread_join(clients[i].thread, NULL);
        model_calls += clients[i].acked_model_calls;
        acked += clients[i].acked_allocs;
        freed += clients[i].acked_frees;
        fails += clients[i].failed_calls;
        if (clients[i].fatal)
            fprintf(stderr, "client %d lost its session: %s\n", i, clients[i].fatal_msg);
        memclient_disconnect(clients[i].c);
    }
    printf("\n%u kills (%u after a commit, before its replies) in %.1f s, %d clients, seed "
           "%llu: %llu allocations, %llu frees and %llu model calls (loads, unloads, instance "
           "creates and releases) acknowledged, %llu calls answered with an error; lost "
           "%llu, handed out twice %llu, overlaps %llu, extra %llu, sessions lost %llu\n",
           done, by_failpoint, (double)(memd_test_now_ms() - t0) / 1000.0, nclients,
           (unsigned long long)seed, (unsigned long long)acked, (unsigned long long)freed,
           (unsigned long long)model_calls, (unsigned long long)fails, (unsigned long long)sum.lost,
           (unsigned long long)sum.twice, (unsigned long long)sum.overlaps,
           (unsigned long long)sum.extra, (unsigned long long)sum.sessions_lost);
    memd_fixture_destroy(&f);
    char p[200];
    snprintf(p, sizeof p, "%s.kill", fp);
    unlink(p);
    return sum.lost || sum.twice || sum.overlaps || sum.extra || sum.sessions_lost ? 1 : 0;
}
