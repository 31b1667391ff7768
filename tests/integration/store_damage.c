/* memd-store-damage — starts the real memd on many damaged copies of one state store and
 * says how each start ended. The promise (store.h): a store memd cannot trust is refused,
 * naming the file; one it can is restored exactly. Never a crash, never an empty or
 * different map.
 *
 *   memd-store-damage [COPIES [SEED]]     (default 36 copies, seed 1)
 *
 * It runs memd once with clients of its own (this process, so every session's process
 * is alive at restart): single, batched and shared named allocations, some freed again,
 * two models (each loaded by two clients) with instances, one of them released, and a
 * plan of its own.
 * It dumps the map, SIGKILLs memd and keeps the store file. Then, for each copy, it
 * writes a damaged version of that file into the state directory, one kind of damage
 * per copy in turn:
 *   bit      one random bit flipped in the pages the store uses
 *   bits     2..16 random bits flipped there
 *   page     one of those pages zeroed
 *   cut      the file truncated below its used size (every fourth: to 0 bytes)
 *   boot     one bit of the boot id in the meta record flipped
 *   lmdb     one bit of one of LMDB's two meta page headers flipped
 * and starts memd on it. Outcomes: "restored" (memd serves, and an admin dump shows
 * exactly the allocations of the original: handles, addresses, sizes, holders, names;
 * and its plans, models and instances: ids, plans, buffers, users, owners, state),
 * "refused" (memd exited with status 1 and its message names the store file), and the
 * failures: "CRASHED" (killed by a signal), "WRONG" (serving a map other than the
 * original), "OTHER" (any other exit, or no answer within 30 s). Prints one line per copy
 * and a summary; exits 1 if any copy failed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "memd/client.h"
#include "test_clock.h"
#include "test_rand.h"

enum { RESTORED, REFUSED, CRASHED, WRONG, OTHER, NOUTCOMES };
static const char *const outcome_name[] = {"restored", "refused", "CRASHED", "WRONG", "OTHER"};
static const char *const kind_name[] = {"bit", "bits", "page", "cut", "boot", "lmdb"};
#define NKINDS 6

static memd_fixture f;
static char store_path[256], log_path[256];
static uint64_t rng = 1;

static void die(const char *what)
{
    fprintf(stderr, "memd-store-damage: %s\n", what);
    memd_fixture_destroy(&f);
    exit(2);
}

/* ---- the original map ---- */

typedef struct rec {
    uint64_t handle, address, size;
    uint32_t device, kind, region, banks, refcount;
    char name[MEMD_NAME_MAX];
} rec;

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    return x->handle < y->handle ? -1 : x->handle > y->handle;
}

/* Plans, models and instances as records of 8 numbers (tag first), sorted (the dump's
 * order of instances follows the sessions' loads, which a restore may list otherwise). */
#define MREC 8
static int cmp_mrec(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    for (int i = 0; i < MREC; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static uint64_t *models_of(const memclient_snapshot *s, size_t *n)
{
    *n = s->nplans + s->nmodels + s->ninstances;
    uint64_t *m = calloc(*n * MREC + 1, sizeof *m), *p = m;
    for (size_t i = 0; m && i < s->nplans; i++, p += MREC) {
        const memclient_plan_rec *x = &s->plans[i];
        uint64_t v[MREC] = {1, x->plan_id, x->arena, x->lower_bound, x->created_ns,
                            x->buffers, x->models, (uint64_t)x->optimal};
        memcpy(p, v, sizeof v);
    }
    for (size_t i = 0; m && i < s->nmodels; i++, p += MREC) {
        const memclient_model_rec *x = &s->models[i];
        uint64_t v[MREC] = {2, x->model_id, x->plan_id, x->code_handle, x->const_handle,
                            x->users, x->instances, x->created_ns};
        memcpy(p, v, sizeof v);
    }
    for (size_t i = 0; m && i < s->ninstances; i++, p += MREC) {
        const memclient_instance_rec *x = &s->instances[i];
        uint64_t v[MREC] = {3, x->instance_id, x->model_id, x->arena_handle,
                            x->arena_address, x->session_id, x->placeholder_bytes,
                            (uint64_t)x->busy};
        memcpy(p, v, sizeof v);
    }
    if (m)
        qsort(m, *n, MREC * sizeof *m, cmp_mrec);
    return m;
}

/* Every allocation memd shows (an admin dump), sorted by handle; *models (n *nm) what
 * models_of makes of its plans, models and instances. */
static rec *snapshot(memclient *c, size_t *n, uint64_t **models, size_t *nm)
{
    memclient_snapshot *s;
    if (memclient_dump(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_MODELS, &s) < 0)
        return NULL;
    *models = models_of(s, nm);
    rec *r = calloc(s->nallocs + 1, sizeof *r);
    for (size_t i = 0; r && i < s->nallocs; i++) {
        const memclient_alloc_info *a = &s->allocs[i];
        r[i] = (rec){.handle = a->buf.handle, .address = a->buf.address,
                     .size = a->buf.size_per_bank, .device = a->device, .kind = a->buf.kind,
                     .region = a->buf.region, .banks = a->buf.banks,
                     .refcount = a->buf.refcount};
        memcpy(r[i].name, a->name, sizeof r[i].name);
    }
    *n = s->nallocs;
    memclient_snapshot_free(s);
    if (r)
        qsort(r, *n, sizeof *r, cmp_rec);
    return r;
}

/* Two models, each loaded by two of the clients, two instances per client (one released
 * to its free list), and a plan no model uses. */
static void populate_models(memclient **cl, size_t ncl)
{
    static const uint32_t in0[] = {0, 1}, out0[] = {2}, in1[] = {2, 3}, out1[] = {4};
    static const memclient_tensor_desc t[] = {
        {.name = "x", .role = MEMCLIENT_TENSOR_INPUT, .bytes = 1024},
        {.name = "w", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 8192, .alignment = 4096},
        {.name = "a", .bytes = 4096},
        {.name = "w2", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 2000},
        {.name = "y", .role = MEMCLIENT_TENSOR_OUTPUT, .bytes = 64},
    };
    static const memclient_op_desc ops[] = {
        {.name = "conv", .inputs = in0, .ninputs = 2, .outputs = out0, .noutputs = 1},
        {.name = "fc", .inputs = in1, .ninputs = 2, .outputs = out1, .noutputs = 1},
    };
    for (size_t k = 0; k < ncl; k++) {
        memclient_model_desc d = {.name = k % 2 ? "damage-b" : "damage-a",
                                  .scope = MEMD_SCOPE_DRAM, .code_bytes = 4096 * (k % 2 + 1),
                                  .tensors = t, .ntensors = 5, .ops = ops, .nops = 2};
        memclient_model_info m;
        memclient_instance i1, i2;
        if (memclient_model_load(cl[k], &d, NULL, &m, NULL) < 0 ||
            memclient_instance_create(cl[k], m.model_id, &i1, NULL, 0) < 0 ||
            memclient_instance_create(cl[k], m.model_id, &i2, NULL, 0) < 0 ||
            memclient_instance_release(cl[k], i1.instance_id, 0) < 0)
            die("a model call failed while populating");
    }
    memclient_plan_buffer b[12];
    for (int i = 0; i < 12; i++)
        b[i] = (memclient_plan_buffer){.lower = (uint64_t)i / 2, .upper = (uint64_t)i / 2 + 3,
                                       .size = 512 + 128 * (uint64_t)i, .alignment = 64};
    memclient_plan_info pi;
    if (memclient_plan_submit(cl[0], b, 12, NULL, &pi, NULL) < 0)
        die("a plan failed while populating");
}

static memclient_alloc_req req(memd_class cls, uint64_t bytes)
{
    return (memclient_alloc_req){.device = 0, .cls = cls, .scope = MEMD_SCOPE_DRAM,
                                 .bytes = bytes};
}

/* Clients of this process make a map with every kind of record: single allocations,
 * batches (records shared by chunks), shared names held by several sessions, and holes
 * where some were freed. The clients stay connected (their sessions are in the store). */
static void populate(memclient **cl, size_t ncl)
{
    static const memd_class classes[] = {MEMD_CLASS_CONSTANT, MEMD_CLASS_PLACEHOLDER,
                                         MEMD_CLASS_INTERNAL};
    for (size_t k = 0; k < ncl; k++) {
        uint64_t handles[120];
        size_t n = 0;
        for (int i = 0; i < 80; i++) {
            memclient_alloc_req r =
                req(classes[memd_test_xorshift(&rng) % 3], 256 + memd_test_xorshift(&rng) % 65536);
            memclient_buffer b;
            if (memclient_alloc(cl[k], &r, &b) < 0)
                die("an allocation failed while populating");
            handles[n++] = b.handle;
        }
        memclient_alloc_req batch[40];
        memclient_buffer out[40];
        for (int i = 0; i < 40; i++)
            batch[i] = req(MEMD_CLASS_INTERNAL, 128 + memd_test_xorshift(&rng) % 8192);
        if (memclient_alloc_batch(cl[k], batch, 40, out) < 0)
            die("a batch failed while populating");
        for (int i = 0; i < 40; i++)
            handles[n++] = out[i].handle;
        for (int i = 0; i < 6; i++) {
            char name[32];
            snprintf(name, sizeof name, "weights-%d", i);
            memclient_alloc_req r = req(MEMD_CLASS_CONSTANT, 4096 * (uint64_t)(i + 1));
            r.name = name;
            r.flags = MEMCLIENT_ALLOC_SHARED;
            memclient_buffer b;
            if (memclient_alloc(cl[k], &r, &b) < 0)
                die("a shared allocation failed while populating");
        }
        for (size_t i = 0; i < n; i++)
            if (memd_test_xorshift(&rng) % 3 == 0 && memclient_free(cl[k], handles[i]) < 0)
                die("a free failed while populating");
    }
    populate_models(cl, ncl);
}

/* ---- files ---- */

static uint8_t *read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0)
        return NULL;
    uint8_t *b = malloc((size_t)sb.st_size + 1);
    size_t got = 0;
    while (b && got < (size_t)sb.st_size) {
        ssize_t n = read(fd, b + got, (size_t)sb.st_size - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    *len = got;
    return b;
}

static void write_all(const char *path, const uint8_t *b, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        die("cannot write the damaged copy");
    for (size_t done = 0; done < len;) {
        ssize_t n = write(fd, b + done, len - done);
        if (n <= 0)
            die("cannot write the damaged copy");
        done += (size_t)n;
    }
    close(fd);
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Bytes of the file LMDB uses: up to the last page of the newer meta page. */
static size_t used_bytes(const uint8_t *b, size_t len)
{
    const size_t ps = 4096;
    if (len < 2 * ps)
        return len;
    const uint8_t *m = le64(b + 144) > le64(b + ps + 144) ? b : b + ps;
    size_t used = (size_t)(le64(m + 136) + 1) * ps;
    return used < len ? used : len;
}

/* The damaged copy of kind k; returns its length and describes the damage in what. */
static size_t damage(uint8_t *b, size_t len, size_t used, int k, const char *boot,
                     char *what, size_t wlen)
{
    switch (k) {
    case 0: {
        size_t bit = memd_test_xorshift(&rng) % (used * 8);
        b[bit / 8] ^= (uint8_t)(1u << bit % 8);
        snprintf(what, wlen, "bit %zu of byte %zu", bit % 8, bit / 8);
        return len;
    }
    case 1: {
        unsigned n = 2 + (unsigned)(memd_test_xorshift(&rng) % 15);
        for (unsigned i = 0; i < n; i++) {
            size_t bit = memd_test_xorshift(&rng) % (used * 8);
            b[bit / 8] ^= (uint8_t)(1u << bit % 8);
        }
        snprintf(what, wlen, "%u bits", n);
        return len;
    }
    case 2: {
        size_t page = memd_test_xorshift(&rng) % (used / 4096);
        memset(b + page * 4096, 0, 4096);
        snprintf(what, wlen, "page %zu of %zu zeroed", page, used / 4096);
        return len;
    }
    case 3: {
        size_t n = memd_test_xorshift(&rng) % 4 == 0 ? 0 : memd_test_xorshift(&rng) % used;
        snprintf(what, wlen, "cut to %zu of %zu bytes", n, used);
        return n;
    }
    case 4: {
        uint8_t *p = memmem(b, used, boot, strlen(boot));
        if (!p)
            die("the boot id is not in the store file");
        size_t bit = memd_test_xorshift(&rng) % (strlen(boot) * 8);
        p[bit / 8] ^= (uint8_t)(1u << bit % 8);
        snprintf(what, wlen, "boot id bit %zu at byte %zu", bit, (size_t)(p - b));
        return len;
    }
    default: {
        size_t at = (memd_test_xorshift(&rng) % 2) * 4096 + memd_test_xorshift(&rng) % 152;
        unsigned bit = (unsigned)(memd_test_xorshift(&rng) % 8);
        b[at] ^= (uint8_t)(1u << bit);
        snprintf(what, wlen, "LMDB meta page %zu byte %zu bit %u", at / 4096, at % 4096, bit);
        return len;
    }
    }
}

/* ---- one start ---- */

static pid_t spawn(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0)
            dup2(fd, STDERR_FILENO);
        execl(memd_fixture_memd_path(), memd_fixture_memd_path(), "--foreground", "--config",
              f.config_path, "--socket", f.socket_path, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Starts memd on the copy now in place and says how that ended. */
static uint64_t *want_models;
static size_t nwant_models;

static int try_start(const rec *want, size_t nwant, char *detail, size_t dlen)
{
    unlink(f.socket_path);
    pid_t pid = spawn();
    long deadline = memd_test_now_ms() + 30000;
    int ws = 0, out = OTHER;
    detail[0] = '\0';
    for (;;) {
        if (waitpid(pid, &ws, WNOHANG) == pid) {
            pid = 0;
            break;
        }
        memclient *c;
        if (access(f.socket_path, F_OK) == 0 && memclient_connect(f.socket_path, &c) == 0) {
            size_t n = 0, nm = 0;
            uint64_t *models = NULL;
            rec *got = snapshot(c, &n, &models, &nm);
            memclient_disconnect(c);
            bool same_models = models && nm == nwant_models &&
                               memcmp(models, want_models, nm * MREC * sizeof *models) == 0;
            out = got && n == nwant && memcmp(got, want, n * sizeof *got) == 0 && same_models
                      ? RESTORED
                      : WRONG;
            if (out == WRONG)
                snprintf(detail, dlen, "serving %zu allocations and %zu plans, models and "
                         "instances (%s), the original had %zu and %zu", n, nm,
                         same_models ? "the same" : "others", nwant, nwant_models);
            free(got);
            free(models);
            break;
        }
        if (memd_test_now_ms() > deadline) {
            snprintf(detail, dlen, "no answer within 30 s");
            break;
        }
        memd_test_sleep_ms(5);
    }
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &ws, 0);
        return out;
    }
    size_t len = 0;
    char *log = (char *)read_all(log_path, &len);
    if (log)
        log[len] = '\0';
    if (WIFSIGNALED(ws)) {
        snprintf(detail, dlen, "signal %d", WTERMSIG(ws));
        out = CRASHED;
    } else if (WEXITSTATUS(ws) == 1 && log && strstr(log, store_path)) {
        /* The reason in brackets after the path, as memd printed it. */
        const char *why = strstr(log, "damaged (");
        why = why ? why + 9 : strstr(log, store_path) + strlen(store_path);
        const char *end = strstr(why, "). memd");
        snprintf(detail, dlen, "%.*s", end ? (int)(end - why) : (int)strcspn(why, "\n"), why);
        out = REFUSED;
    } else {
        snprintf(detail, dlen, "exit status %d: %.200s", WEXITSTATUS(ws), log ? log : "");
    }
    free(log);
    return out;
}

int main(int argc, char **argv)
{
    unsigned copies = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 36;
    rng = argc > 2 ? strtoull(argv[2], NULL, 10) * 2654435761u + 1 : 1;
    signal(SIGPIPE, SIG_IGN);
    memd_fixture_opts o = {.capture_stderr = true};
    if (memd_fixture_start(&f, &o) < 0)
        die("memd did not start");
    snprintf(store_path, sizeof store_path, "%s/memd-state.mdb", f.dir);
    snprintf(log_path, sizeof log_path, "%s/memd.log", f.dir);
    memclient *cl[4];
    for (int i = 0; i < 4; i++)
        if (memclient_connect(f.socket_path, &cl[i]) < 0)
            die("cannot connect");
    populate(cl, 4);
    size_t nwant = 0;
    rec *want = snapshot(cl[0], &nwant, &want_models, &nwant_models);
    if (!want || nwant < 300 || nwant_models < 2 + 2 + 8)
        die("the original map is too small");
    kill(f.pid, SIGKILL);
    memd_fixture_wait(&f, 10000);
    size_t len;
    uint8_t *orig = read_all(store_path, &len);
    if (!orig)
        die("cannot read the store");
    size_t used = used_bytes(orig, len);
    char boot[64] = "";
    FILE *bf = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!bf || !fgets(boot, sizeof boot, bf))
        die("cannot read the boot id");
    fclose(bf);
    boot[strcspn(boot, "\n")] = '\0';

    /* The undamaged copy first: it must restore. */
    char detail[300], what[96];
    int r = try_start(want, nwant, detail, sizeof detail);
    printf("original store (%zu bytes, %zu used, %zu allocations): %s %s\n", len, used, nwant,
           outcome_name[r], detail);
    unsigned tally[NKINDS][NOUTCOMES] = {{0}}, bad = r != RESTORED;
    uint8_t *b = malloc(len);
    for (unsigned i = 0; i < copies; i++) {
        int k = (int)(i % NKINDS);
        memcpy(b, orig, len);
        size_t n = damage(b, len, used, k, boot, what, sizeof what);
        write_all(store_path, b, n);
        r = try_start(want, nwant, detail, sizeof detail);
        tally[k][r]++;
        bad += r >= CRASHED;
        printf("copy %u (%s: %s): %s%s%s\n", i + 1, kind_name[k], what, outcome_name[r],
               detail[0] ? ": " : "", detail);
    }
    printf("\n%u damaged copies, seed %s:\n", copies, argc > 2 ? argv[2] : "1");
    unsigned total[NOUTCOMES] = {0};
    for (int k = 0; k < NKINDS; k++) {
        printf("  %-5s", kind_name[k]);
        for (int o2 = 0; o2 < NOUTCOMES; o2++) {
            printf("  %s %u", outcome_name[o2], tally[k][o2]);
            total[o2] += tally[k][o2];
        }
        printf("\n");
    }
    printf("  all  ");
    for (int o2 = 0; o2 < NOUTCOMES; o2++)
        printf("  %s %u", outcome_name[o2], total[o2]);
    printf("\n");
    for (int i = 0; i < 4; i++)
        memclient_disconnect(cl[i]);
    free(b);
    free(orig);
    free(want);
    free(want_models);
    memd_fixture_destroy(&f);
    return bad ? 1 : 0;
}
