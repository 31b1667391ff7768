/* Models, plans and instances across a daemon restart, with the real memd and
 * libmemclient: after a SIGKILL (or a clean stop) and a start on the same state
 * directory, the dump shows the same plans, models and instances with the same ids,
 * handles, addresses and owners; a plan request is answered from the cache; the owner
 * that reclaims its session releases and reuses instances and unloads normally; a
 * session that never reclaims lets go of its instances and model holds when the grace
 * period ends, as if it had died; `memctl model load --hold` unloads cleanly after a
 * restart; a model record damaged in the store refuses the start naming the file; and
 * model requests whose replies were lost in a crash are answered once when the library
 * sends them again (MEMD_REQ_F_RETRY). */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "store_objects_file.h"
#include "client_util.h"
#include "test_clock.h"
#include "test_run.h"
#include "memctl_run.h"

static memd_fixture f;
static memd_fixture_opts fo;
static char yaml[1024];
static char fp[160], fp_env[200]; /* memd-test's store failpoints (lost replies) */
static const char *envs[2];

/* x -> conv(w) -> a -> relu -> b -> fc(w2) -> y, plus code. */
enum { X, W, A, B, W2, Y, NT };
static const uint32_t op0_in[] = {X, W}, op0_out[] = {A};
static const uint32_t op1_in[] = {A}, op1_out[] = {B};
static const uint32_t op2_in[] = {B, W2, A}, op2_out[] = {Y};
static const memclient_tensor_desc tensors[NT] = {
    [X] = {.name = "x", .role = MEMCLIENT_TENSOR_INPUT, .bytes = 3 * 1024},
    [W] = {.name = "w", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 20000, .alignment = 4096},
    [A] = {.name = "a", .bytes = 16384},
    [B] = {.name = "b", .bytes = 8192},
    [W2] = {.name = "w2", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 5000},
    [Y] = {.name = "y", .role = MEMCLIENT_TENSOR_OUTPUT, .bytes = 40},
};
static const memclient_op_desc ops[] = {
    {.name = "conv", .inputs = op0_in, .ninputs = 2, .outputs = op0_out, .noutputs = 1},
    {.name = "relu", .inputs = op1_in, .ninputs = 1, .outputs = op1_out, .noutputs = 1},
    {.name = "fc", .inputs = op2_in, .ninputs = 3, .outputs = op2_out, .noutputs = 1},
};

static memclient_model_desc model(const char *name)
{
    return (memclient_model_desc){.name = name, .device = 0, .scope = MEMD_SCOPE_DRAM,
                                  .code_bytes = 8192, .tensors = tensors, .ntensors = NT,
                                  .ops = ops, .nops = 3};
}

static void start(uint32_t grace_ms)
{
    snprintf(yaml, sizeof yaml,
             "limits:\n  reclaim_grace_ms: %u\ndevices:\n  - id: 0\n    descriptor: "
             "%s/config/devices/wormhole_b0.yaml\n",
             grace_ms, memd_fixture_source_root());
    memset(&fo, 0, sizeof fo);
    fo.config_yaml = yaml;
    fo.capture_stderr = true;
    ck_assert_int_eq(memd_fixture_start(&f, &fo), 0);
}

static void respawn(void)
{
    ck_assert_int_eq(memd_fixture_respawn(&f, &fo), 0);
}

/* sig SIGKILL: a crash; SIGTERM: a clean stop. Then memd again on the same directory. */
static void restart(int sig)
{
    ck_assert_int_eq(memd_fixture_restart(&f, &fo, sig), 0);
}

static void teardown(void)
{
    memd_fixture_destroy(&f);
    if (fp[0]) {
        char p[200];
        snprintf(p, sizeof p, "%s.kill", fp);
        unlink(p);
        fp[0] = '\0';
    }
}

static memclient_snapshot *models_dump(memclient *c)
{
    memclient_snapshot *s;
    ck_assert_int_eq(memclient_dump(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_MODELS, &s), 0);
    return s;
}

static const memclient_instance_rec *find_instance(const memclient_snapshot *s, uint64_t id)
{
    for (size_t i = 0; i < s->ninstances; i++)
        if (s->instances[i].instance_id == id)
            return &s->instances[i];
    return NULL;
}

static const memclient_model_rec *find_model(const memclient_snapshot *s, uint64_t id)
{
    for (size_t i = 0; i < s->nmodels; i++)
        if (s->models[i].model_id == id)
            return &s->models[i];
    return NULL;
}

static const memclient_plan_rec *find_plan(const memclient_snapshot *s, uint64_t id)
{
    for (size_t i = 0; i < s->nplans; i++)
        if (s->plans[i].plan_id == id)
            return &s->plans[i];
    return NULL;
}

static const memclient_session_rec *find_session(const memclient_snapshot *s, uint32_t id)
{
    for (size_t i = 0; i < s->nsessions; i++)
        if (s->sessions[i].id == id)
            return &s->sessions[i];
    return NULL;
}

/* Everything a before-dump lists, the after-dump lists the same (the plans' hit counts
 * and the sessions' orphan state aside). */
static void assert_same(const memclient_snapshot *a, const memclient_snapshot *b)
{
    ck_assert_uint_eq(a->nplans, b->nplans);
    ck_assert_uint_eq(a->nmodels, b->nmodels);
    ck_assert_uint_eq(a->ninstances, b->ninstances);
    ck_assert_uint_eq(a->nallocs, b->nallocs);
    for (size_t i = 0; i < a->nplans; i++) {
        const memclient_plan_rec *x = &a->plans[i], *y = find_plan(b, x->plan_id);
        ck_assert_msg(y, "plan %llx lost", (unsigned long long)x->plan_id);
        ck_assert_uint_eq(b->plans[i].plan_id, x->plan_id); /* in LRU order, oldest first */
        ck_assert_uint_eq(x->arena, y->arena);
        ck_assert_uint_eq(x->lower_bound, y->lower_bound);
        ck_assert_uint_eq(x->created_ns, y->created_ns);
        ck_assert_uint_eq(x->buffers, y->buffers);
        ck_assert_uint_eq(x->models, y->models);
        ck_assert_int_eq(x->optimal, y->optimal);
        ck_assert_int_eq(x->precomputed, y->precomputed);
        ck_assert_str_eq(x->strategy, y->strategy);
    }
    for (size_t i = 0; i < a->nmodels; i++) {
        const memclient_model_rec *x = &a->models[i], *y = find_model(b, x->model_id);
        ck_assert_msg(y, "model %llu lost", (unsigned long long)x->model_id);
        ck_assert_str_eq(x->name, y->name);
        ck_assert_uint_eq(x->plan_id, y->plan_id);
        ck_assert_uint_eq(x->code_handle, y->code_handle);
        ck_assert_uint_eq(x->const_handle, y->const_handle);
        ck_assert_uint_eq(x->code_bytes, y->code_bytes);
        ck_assert_uint_eq(x->const_bytes, y->const_bytes);
        ck_assert_uint_eq(x->arena, y->arena);
        ck_assert_uint_eq(x->created_ns, y->created_ns);
        ck_assert_uint_eq(x->users, y->users);
        ck_assert_uint_eq(x->instances, y->instances);
        ck_assert_uint_eq(x->ntensors, y->ntensors);
    }
    for (size_t i = 0; i < a->ninstances; i++) {
        const memclient_instance_rec *x = &a->instances[i], *y = find_instance(b, x->instance_id);
        ck_assert_msg(y, "instance %llu lost", (unsigned long long)x->instance_id);
        ck_assert_uint_eq(x->model_id, y->model_id);
        ck_assert_uint_eq(x->arena_handle, y->arena_handle);
        ck_assert_uint_eq(x->arena_address, y->arena_address);
        ck_assert_uint_eq(x->arena_bytes, y->arena_bytes);
        ck_assert_uint_eq(x->placeholder_bytes, y->placeholder_bytes);
        ck_assert_uint_eq(x->placeholders, y->placeholders);
        ck_assert_uint_eq(x->session_id, y->session_id);
        ck_assert_uint_eq(x->pid, y->pid);
        ck_assert_int_eq(x->busy, y->busy);
    }
    for (size_t i = 0; i < a->nallocs; i++) {
        const memclient_alloc_info *x = &a->allocs[i], *y = cu_find(b, x->buf.handle);
        ck_assert_msg(y, "allocation %llu lost", (unsigned long long)x->buf.handle);
        ck_assert_uint_eq(x->buf.address, y->buf.address);
        ck_assert_uint_eq(x->buf.refcount, y->buf.refcount);
        ck_assert_uint_eq(x->session_id, y->session_id);
    }
}

static uint32_t session_id(memclient *c)
{
    memclient_session_info info;
    ck_assert_int_eq(memclient_session(c, &info), 0);
    return info.session_id;
}

/* A plan problem of its own (not a model's). */
static void problem(memclient_plan_buffer *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (memclient_plan_buffer){.lower = i / 3, .upper = i / 3 + 2 + i % 4,
                                       .size = 256 + 64 * (i % 7), .alignment = 64};
}

static void survive(int sig)
{
    /* Long enough for session 1 to reclaim under valgrind on a loaded machine, short
     * enough to wait for session 2's release. */
    start(8000);
    memclient *c1 = cu_connect(&f), *c2 = cu_connect(&f);
    uint32_t s1 = session_id(c1), s2 = session_id(c2);
    memclient_model_desc d = model("persisted");
    memclient_model_info m1, m2;
    memclient_tensor_info ti[NT];
    ck_assert_int_eq(memclient_model_load(c1, &d, NULL, &m1, ti), 0);
    ck_assert_int_eq(memclient_model_load(c2, &d, NULL, &m2, NULL), 0);
    ck_assert_uint_eq(m1.model_id, m2.model_id);
    memclient_instance i1, i2, i3;
    memclient_tensor_addr a1[NT];
    ck_assert_int_eq(memclient_instance_create(c1, m1.model_id, &i1, a1, NT), NT);
    ck_assert_int_eq(memclient_instance_create(c1, m1.model_id, &i2, NULL, 0), NT);
    ck_assert_int_eq(memclient_instance_release(c1, i2.instance_id, 0), 0); /* on its free list */
    ck_assert_int_eq(memclient_instance_create(c2, m1.model_id, &i3, NULL, 0), NT);
    enum { N = 40 };
    memclient_plan_buffer pb[N];
    problem(pb, N);
    memclient_plan_info p1, p2;
    uint64_t o1[N], o2[N];
    ck_assert_int_eq(memclient_plan_submit(c1, pb, N, NULL, &p1, o1), 0);
    ck_assert(!p1.cached);

    memclient *admin = cu_connect(&f);
    memclient_snapshot *before = models_dump(admin);
    ck_assert_uint_eq(before->nplans, 2);
    ck_assert_uint_eq(before->nmodels, 1);
    ck_assert_uint_eq(before->ninstances, 3);
    memclient_disconnect(admin);

    restart(sig);

    admin = cu_connect(&f);
    memclient_snapshot *after = models_dump(admin);
    assert_same(before, after);
    ck_assert(find_session(after, s1)->orphaned);
    ck_assert(find_session(after, s2)->orphaned);
    memclient_snapshot_free(after);
    /* A plan request is answered from the cache. */
    ck_assert_int_eq(memclient_plan_submit(admin, pb, N, NULL, &p2, o2), 0);
    ck_assert(p2.cached);
    ck_assert_uint_eq(p2.plan_id, p1.plan_id);
    ck_assert_mem_eq(o1, o2, sizeof o1);

    /* The model is the same one to a new session (found by name and content hash): the
     * load shares it. */
    memclient *c3 = cu_connect(&f);
    memclient_model_info ms;
    ck_assert_int_eq(memclient_model_load(c3, &d, NULL, &ms, NULL), 0);
    ck_assert(!ms.created);
    ck_assert(ms.plan_cached);
    ck_assert_uint_eq(ms.model_id, m1.model_id);
    ck_assert_uint_eq(ms.const_handle, m1.const_handle);
    ck_assert_uint_eq(ms.code_address, m1.code_address);
    ck_assert_uint_eq(ms.users, 3);
    ck_assert_int_eq(memclient_model_unload(c3, ms.model_id, 0), 0);
    memclient_disconnect(c3);

    /* The owner reclaims and goes on: its model, instances and free list are its own. */
    ck_assert_int_eq(memclient_reconnect(c1, 5000), 0);
    ck_assert_uint_eq(session_id(c1), s1);
    memclient_model_info q;
    memclient_tensor_info qt[NT];
    ck_assert_int_eq(memclient_model_query(c1, m1.model_id, &q, qt, NT), NT);
    ck_assert_uint_eq(q.const_address, m1.const_address);
    ck_assert_mem_eq(qt, ti, sizeof ti);
    memclient_instance r;
    memclient_tensor_addr ra[NT];
    ck_assert_int_eq(memclient_instance_create(c1, m1.model_id, &r, ra, NT), NT);
    ck_assert(r.reused); /* i2, from its free list */
    ck_assert_uint_eq(r.instance_id, i2.instance_id);
    ck_assert_uint_eq(r.arena_address, i2.arena_address);
    ck_assert_int_eq(memclient_instance_release(c1, i1.instance_id, 0), 0);
    ck_assert_int_eq(memclient_instance_release(c1, i1.instance_id, 0), -EALREADY);
    /* An instance still in use (r) keeps the model unless forced. */
    ck_assert_int_eq(memclient_model_unload(c1, m1.model_id, 0), -EBUSY);

    /* c2 never reclaims: when the grace period ends its instance and its hold on the
     * model go, the model stays for c1. */
    uint64_t gone[] = {i3.arena_handle};
    ck_assert(cu_wait_gone(admin, gone, 1, 40000));
    after = models_dump(admin);
    ck_assert_ptr_null(find_session(after, s2));
    ck_assert_ptr_null(find_instance(after, i3.instance_id));
    ck_assert_uint_eq(find_model(after, m1.model_id)->users, 1);
    ck_assert_uint_eq(find_model(after, m1.model_id)->instances, 2);
    ck_assert_uint_eq(cu_find(after, m1.const_handle)->buf.refcount, 1);
    ck_assert_int_eq(cu_check_map(after), 0);
    memclient_snapshot_free(after);

    ck_assert_int_eq(memclient_instance_release(c1, r.instance_id, 0), 0);
    ck_assert_int_eq(memclient_model_unload(c1, m1.model_id, 0), 0);
    after = models_dump(admin);
    ck_assert_uint_eq(after->nmodels, 0);
    ck_assert_uint_eq(after->ninstances, 0);
    ck_assert_ptr_null(cu_find(after, m1.const_handle));
    ck_assert_ptr_null(cu_find(after, m1.code_handle));
    ck_assert_ptr_null(cu_find(after, i1.arena_handle));
    ck_assert_uint_eq(find_plan(after, m1.plan_id)->models, 0); /* cached, unused */
    memclient_snapshot_free(after);

    /* What changed after the restart is stored too: another restart shows it. */
    memclient_disconnect(admin);
    memclient_disconnect(c1);
    memclient_disconnect(c2);
    restart(SIGKILL);
    admin = cu_connect(&f);
    after = models_dump(admin);
    ck_assert_uint_eq(after->nmodels, 0);
    ck_assert_uint_eq(after->ninstances, 0);
    ck_assert_uint_eq(after->nplans, 2);
    ck_assert_uint_eq(after->nallocs, 0);
    memclient_snapshot_free(after);
    /* Ids are never given out twice. */
    memclient_model_info m3;
    ck_assert_int_eq(memclient_model_load(admin, &d, NULL, &m3, NULL), 0);
    ck_assert_uint_gt(m3.model_id, m1.model_id);
    memclient_instance i4;
    ck_assert_int_eq(memclient_instance_create(admin, m3.model_id, &i4, NULL, 0), NT);
    ck_assert_uint_gt(i4.instance_id, i3.instance_id);
    memclient_disconnect(admin);
    memclient_snapshot_free(before);
}

START_TEST(models_survive_sigkill)
{
    survive(SIGKILL);
}
END_TEST

START_TEST(models_survive_clean_stop)
{
    survive(SIGTERM);
}
END_TEST

/* A session whose process is gone at the restart releases its models at once. */
START_TEST(dead_owner_released_at_start)
{
    start(60000);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        memclient *c = NULL;
        memclient_model_desc d = model("orphaned");
        memclient_model_info m;
        memclient_instance in;
        int ok = memclient_connect(f.socket_path, &c) == 0 && memclient_model_load(c, &d, NULL, &m, NULL) == 0 &&
                 memclient_instance_create(c, m.model_id, &in, NULL, 0) == NT;
        char b = ok ? 'y' : 'n';
        if (write(p[1], &b, 1) != 1)
            _exit(2);
        pause(); /* killed below, holding everything */
        _exit(0);
    }
    close(p[1]);
    char b = 0;
    ck_assert_int_eq(read(p[0], &b, 1), 1);
    ck_assert_int_eq(b, 'y');
    close(p[0]);
    ck_assert_int_eq(kill(f.pid, SIGKILL), 0);
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 128 + SIGKILL);
    kill(pid, SIGKILL);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    respawn();
    memclient *admin = cu_connect(&f);
    memclient_snapshot *s = models_dump(admin);
    ck_assert_uint_eq(s->nmodels, 0);
    ck_assert_uint_eq(s->ninstances, 0);
    ck_assert_uint_eq(s->nallocs, 0);
    ck_assert_uint_eq(s->nplans, 1); /* the cache keeps the model's plan */
    ck_assert_uint_eq(s->plans[0].models, 0);
    memclient_snapshot_free(s);
    memclient_disconnect(admin);
}
END_TEST

START_TEST(memctl_model_hold_across_restart)
{
    start(30000);
    char file[1024];
    snprintf(file, sizeof file, "%s/config/models/tiny_cnn.yaml", memd_fixture_source_root());
    int p[2], e[2];
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(pipe(e), 0);
    pid_t pid = memctl_spawn(
        &f, MEMCTL_ARGS("model", "load", file, "--instances", "2", "--hold"), 0, p[1], e[1]);
    close(p[1]);
    close(e[1]);
    /* memctl says it holds the model on stderr once everything is made. */
    FILE *err = fdopen(e[0], "r");
    char line[512] = "";
    while (fgets(line, sizeof line, err) && !strstr(line, "holding model")) {
    }
    ck_assert_msg(strstr(line, "holding model"), "memctl: %s", line);
    memclient *admin = cu_connect(&f);
    memclient_snapshot *before = models_dump(admin);
    ck_assert_uint_eq(before->nmodels, 1);
    ck_assert_uint_eq(before->ninstances, 2);
    memclient_disconnect(admin);

    restart(SIGKILL);

    /* memctl reclaims its session by itself: the orphan goes, the model stays its own. */
    admin = cu_connect(&f);
    bool back = false;
    for (int i = 0; i < 1000 && !back; i++) { /* 20 s at most */
        memclient_snapshot *s = models_dump(admin);
        assert_same(before, s);
        back = !find_session(s, s->instances[0].session_id)->orphaned;
        memclient_snapshot_free(s);
        if (!back)
            memd_test_sleep_ms(20);
    }
    ck_assert_msg(back, "memctl did not reclaim its session");
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    while (fgets(line, sizeof line, err) && !strstr(line, "unloaded")) {
    }
    ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "memctl ended with %d: %s", ws, line);
    ck_assert_msg(strstr(line, "unloaded"), "%s", line);
    fclose(err);
    close(p[0]);
    memclient_snapshot *s = models_dump(admin);
    ck_assert_uint_eq(s->nmodels, 0);
    ck_assert_uint_eq(s->ninstances, 0);
    ck_assert_uint_eq(s->nallocs, 0);
    memclient_snapshot_free(s);
    memclient_snapshot_free(before);
    memclient_disconnect(admin);
}
END_TEST

/* One bit of a model record flipped in the stopped daemon's store: memd refuses to start
 * and names the file (the record's checksum), and starts again with --discard-state. */
START_TEST(damaged_model_record_refused)
{
    start(30000);
    memclient *c = cu_connect(&f);
    memclient_model_desc d = model("damaged");
    memclient_model_info m;
    ck_assert_int_eq(memclient_model_load(c, &d, NULL, &m, NULL), 0);
    ck_assert_int_eq(kill(f.pid, SIGKILL), 0);
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 128 + SIGKILL);
    memclient_disconnect(c);
    char path[256];
    snprintf(path, sizeof path, "%s/memd-state.mdb", f.dir);
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_env *env = store_objects_open(path, &txn, &dbi);
    uint8_t key[9] = {3}; /* MEMD_RECORD_MODEL, id big-endian */
    for (int i = 0; i < 8; i++)
        key[1 + i] = (uint8_t)(m.model_id >> (56 - 8 * i));
    MDB_val k = {sizeof key, key}, v;
    ck_assert_int_eq(mdb_get(txn, dbi, &k, &v), 0);
    ck_assert_uint_gt(v.mv_size, 200);
    ((uint8_t *)v.mv_data)[100] ^= 0x10; /* inside the name: a writable map changes the file */
    ck_assert_int_eq(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    /* memd refuses, naming the file and the record. */
    const char *run[] = {memd_fixture_memd_path(), "--foreground", "--config", f.config_path,
                         "--socket", f.socket_path, NULL};
    char out[4096];
    int ws = memd_test_run(run, out, sizeof out);
    ck_assert_msg(ws == 1, "memd: %d: %s", ws, out);
    ck_assert_msg(strstr(out, path) && strstr(out, "object record 3/") &&
                  strstr(out, "--discard-state"), "%s", out);
    /* The documented way out. */
    char *argv[] = {(char *)memd_fixture_memd_path(), "--foreground", "--config",
                    f.config_path, "--socket", f.socket_path, "--discard-state", NULL};
    ck_assert_int_eq(memd_fixture_spawn(&f, &fo, argv), 0);
}
END_TEST

/* ---- replies lost with the daemon (memd-test's "kill" failpoint) ---- */

typedef struct call {
    memclient *c;
    int op; /* 0 load, 1 instance create, 2 instance release, 3 release + free, 4 unload */
    uint64_t id;
    memclient_model_info m;
    memclient_instance in;
    int rc;
} call;

static void *run_call(void *arg)
{
    call *k = arg;
    memclient_model_desc d = model("retried");
    switch (k->op) {
    case 0: k->rc = memclient_model_load(k->c, &d, NULL, &k->m, NULL); break;
    case 1: k->rc = memclient_instance_create(k->c, k->id, &k->in, NULL, 0); break;
    case 2: k->rc = memclient_instance_release(k->c, k->id, 0); break;
    case 3: k->rc = memclient_instance_release(k->c, k->id, MEMCLIENT_INSTANCE_FREE); break;
    default: k->rc = memclient_model_unload(k->c, k->id, 0); break;
    }
    return NULL;
}

/* Runs k while memd dies right after committing it, before its reply; memd starts again
 * and the library reconnects, reclaims and sends the request again as a retry. */
static void call_across_a_crash(call *k)
{
    char p[200];
    snprintf(p, sizeof p, "%s.kill", fp);
    int fd = open(p, O_WRONLY | O_CREAT, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, run_call, k), 0);
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 128 + SIGKILL);
    respawn();
    pthread_join(t, NULL);
}

static memclient_snapshot *admin_dump(void)
{
    memclient *admin = cu_connect(&f);
    memclient_snapshot *s = models_dump(admin);
    memclient_disconnect(admin);
    return s;
}

START_TEST(lost_model_replies_answered_once)
{
    snprintf(fp, sizeof fp, "/tmp/memd-models-restart-%d", (int)getpid());
    snprintf(fp_env, sizeof fp_env, "MEMD_TEST_STORE_FAILPOINT=%s", fp);
    envs[0] = fp_env;
    snprintf(yaml, sizeof yaml,
             "limits:\n  reclaim_grace_ms: 30000\ndevices:\n  - id: 0\n    descriptor: "
             "%s/config/devices/wormhole_b0.yaml\n", memd_fixture_source_root());
    memset(&fo, 0, sizeof fo);
    fo.config_yaml = yaml;
    fo.capture_stderr = true;
    fo.test_build = true;
    fo.env = envs;
    ck_assert_int_eq(memd_fixture_start(&f, &fo), 0);
    memclient *c;
    ck_assert_int_eq(memclient_connect_flags(f.socket_path, "retry", MEMCLIENT_CONNECT_RECONNECT,
                                             &c), 0);
    uint32_t sid = session_id(c);

    call k = {.c = c, .op = 0};
    call_across_a_crash(&k); /* the plan, then the load: the kill takes the first commit */
    ck_assert_int_eq(k.rc, 0);
    uint64_t mid = k.m.model_id;
    memclient_snapshot *s = admin_dump();
    ck_assert_uint_eq(s->nmodels, 1);
    ck_assert_uint_eq(s->models[0].model_id, mid);
    ck_assert_uint_eq(s->models[0].users, 1);
    ck_assert_uint_eq(cu_find(s, k.m.const_handle)->buf.refcount, 1);
    memclient_snapshot_free(s);

    k = (call){.c = c, .op = 1, .id = mid};
    call_across_a_crash(&k);
    ck_assert_int_eq(k.rc, NT);
    memclient_instance first = k.in;
    s = admin_dump();
    ck_assert_uint_eq(s->ninstances, 1); /* not a second one for the retry */
    ck_assert_uint_eq(s->instances[0].instance_id, first.instance_id);
    ck_assert_uint_eq(s->instances[0].arena_handle, first.arena_handle);
    ck_assert_uint_eq(s->instances[0].session_id, sid);
    ck_assert_int_eq(s->instances[0].busy, 1);
    memclient_snapshot_free(s);

    k = (call){.c = c, .op = 2, .id = first.instance_id};
    call_across_a_crash(&k);
    ck_assert_int_eq(k.rc, 0); /* not -EALREADY */
    s = admin_dump();
    ck_assert_uint_eq(s->ninstances, 1);
    ck_assert_int_eq(s->instances[0].busy, 0);
    memclient_snapshot_free(s);

    k = (call){.c = c, .op = 1, .id = mid};
    call_across_a_crash(&k);
    ck_assert_int_eq(k.rc, NT);
    ck_assert(k.in.reused); /* the retry answers as the first sending did */
    ck_assert_uint_eq(k.in.instance_id, first.instance_id);
    s = admin_dump();
    ck_assert_uint_eq(s->ninstances, 1);
    ck_assert_int_eq(s->instances[0].busy, 1);
    memclient_snapshot_free(s);

    k = (call){.c = c, .op = 3, .id = first.instance_id};
    call_across_a_crash(&k);
    ck_assert_int_eq(k.rc, 0); /* not -ENOENT */
    s = admin_dump();
    ck_assert_uint_eq(s->ninstances, 0);
    ck_assert_ptr_null(cu_find(s, first.arena_handle));
    memclient_snapshot_free(s);

    k = (call){.c = c, .op = 4, .id = mid};
    call_across_a_crash(&k);
    ck_assert_int_eq(k.rc, 0); /* not -ENOENT */
    s = admin_dump();
    ck_assert_uint_eq(s->nmodels, 0);
    ck_assert_uint_eq(s->nallocs, 0);
    memclient_snapshot_free(s);
    /* Without the retry flag a stale reference is still an error. */
    ck_assert_int_eq(memclient_model_unload(c, mid, 0), -ENOENT);
    ck_assert_int_eq(memclient_instance_release(c, first.instance_id, 0), -ENOENT);
    ck_assert_uint_eq(session_id(c), sid);
    memclient_disconnect(c);
}
END_TEST

/* Readiness is in the store: a ready model stays ready (a new loader does not wait), a
 * filling one stays filling by the same session, which sets it ready after its reclaim. */
START_TEST(readiness_survives_restart)
{
    start(8000);
    memclient *c1 = cu_connect(&f), *c2 = cu_connect(&f);
    uint32_t s2 = session_id(c2);
    memclient_model_desc dr = model("r-ready"), df = model("r-filling");
    memclient_model_info mr, mf, m;
    ck_assert_int_eq(memclient_model_load(c1, &dr, NULL, &mr, NULL), 0);
    ck_assert(mr.created);
    ck_assert_int_eq(memclient_model_set_ready(c1, mr.model_id), 0);
    ck_assert_int_eq(memclient_model_load(c2, &df, NULL, &mf, NULL), 0);
    ck_assert(mf.created);

    restart(SIGKILL);

    memclient *admin = cu_connect(&f);
    memclient_snapshot *s;
    ck_assert_int_eq(memclient_dump(admin, MEMCLIENT_ALL_DEVICES,
                                    MEMCLIENT_DUMP_MODELS | MEMCLIENT_DUMP_MODEL_STATE, &s), 0);
    const memclient_model_rec *r = find_model(s, mr.model_id), *fl = find_model(s, mf.model_id);
    ck_assert(r && r->state_known && r->ready);
    ck_assert(fl && fl->state_known && !fl->ready);
    ck_assert_uint_eq(fl->filler_session, s2);
    memclient_snapshot_free(s);

    memclient *c3 = cu_connect(&f);
    ck_assert_int_eq(memclient_model_load(c3, &dr, NULL, &m, NULL), 0);
    ck_assert(!m.created);
    ck_assert_int_eq(memclient_model_wait(c3, mr.model_id, 0, &m, NULL, 0), NT);
    ck_assert(!m.created);
    ck_assert_int_eq(memclient_model_load(c3, &df, NULL, &m, NULL), 0);
    ck_assert(!m.created); /* its filler, session s2, is there to reclaim it */
    ck_assert_int_eq(memclient_model_wait(c3, mf.model_id, 100, &m, NULL, 0), -ETIMEDOUT);
    ck_assert_int_eq(memclient_reconnect(c2, 5000), 0);
    ck_assert_uint_eq(session_id(c2), s2);
    ck_assert_int_eq(memclient_model_set_ready(c2, mf.model_id), 0);
    ck_assert_int_eq(memclient_model_wait(c3, mf.model_id, 0, &m, NULL, 0), NT);
    ck_assert(!m.created);
    memclient_disconnect(c3);
    memclient_disconnect(admin);
    memclient_disconnect(c2);
    memclient_disconnect(c1);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("models-restart");
    TCase *tc = tcase_create("restart");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, models_survive_sigkill);
    tcase_add_test(tc, models_survive_clean_stop);
    tcase_add_test(tc, dead_owner_released_at_start);
    tcase_add_test(tc, memctl_model_hold_across_restart);
    tcase_add_test(tc, damaged_model_record_refused);
    tcase_add_test(tc, lost_model_replies_answered_once);
    tcase_add_test(tc, readiness_survives_restart);
    suite_add_tcase(s, tc);
    return s;
}
