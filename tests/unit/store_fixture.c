/* State-store test fixture (store_fixture.h). */
#include "store_fixture.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char sf_dir[64];
char sf_path[128];
char sf_fail[128];

void sf_setup_in(const char *prefix)
{
    snprintf(sf_dir, sizeof sf_dir, "/tmp/%s-XXXXXX", prefix);
    ck_assert_ptr_nonnull(mkdtemp(sf_dir));
    snprintf(sf_path, sizeof sf_path, "%s/%s", sf_dir, MEMD_STORE_FILE);
    snprintf(sf_fail, sizeof sf_fail, "%s/fail", sf_dir);
}

void sf_teardown(void)
{
    char p[sizeof sf_path + 16];
    snprintf(p, sizeof p, "%s.new", sf_path); /* left by a refused start's copy */
    unlink(p);
    snprintf(p, sizeof p, "%s.discarded", sf_path);
    unlink(p);
    unlink(sf_path);
    unlink(sf_fail);
    rmdir(sf_dir);
}

int sf_start(memd_state *st, const memd_device_spec *specs, uint32_t n, uint32_t grace_ms,
             memd_store_opts opts, memd_error *err)
{
    return sf_start_with(st, specs, n, grace_ms, opts, err, NULL);
}

int sf_start_with(memd_state *st, const memd_device_spec *specs, uint32_t n, uint32_t grace_ms,
                  memd_store_opts opts, memd_error *err, void (*before)(memd_state *st))
{
    memd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    strcpy(cfg.path, "unit.yaml");
    cfg.limits = (memd_limits){.max_frame = 1u << 20, .max_sessions = 64,
                               .max_allocs_per_session = 100000,
                               .max_reply_backlog = 4u << 20,
                               .reclaim_grace_ms = grace_ms ? grace_ms : 30000,
                               .max_suballocs_per_pool = MEMD_POOL_MAX_SUBALLOCS};
    cfg.ndevices = n;
    cfg.devices = (memd_device_spec *)specs;
    ck_assert_int_eq(memd_state_init(st, &cfg, err), 0);
    if (before)
        before(st);
    opts.dir = sf_dir;
    opts.failpoint = sf_fail;
    return memd_store_open(st, &opts, err);
}

void sf_stop(memd_state *st)
{
    memd_store_close(st);
    memd_state_fini(st);
}

memd_session *sf_session(memd_state *st, uint32_t pid, uint32_t uid)
{
    memd_session *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    s->pid = pid;
    s->uid = uid;
    s->gid = uid;
    strcpy(s->comm, "unit");
    memd_session_open(st, s);
    return s;
}

memd_alloc *sf_alloc(memd_state *st, memd_session *s, uint32_t dev, uint8_t cls,
                     uint64_t bytes, const char *shared_name)
{
    memd_alloc_request r = {.device = dev, .cls = cls, .scope = MEMD_SCOPE_DRAM,
                            .bytes = bytes, .shared = shared_name != NULL,
                            .name = shared_name ? shared_name : ""};
    memd_alloc *a = NULL;
    memd_error err = {0};
    int rc = memd_alloc_create(st, s, &r, &a, &err);
    ck_assert_msg(rc == 0, "alloc: %d %s", rc, err.msg);
    return a;
}

void sf_flush(memd_state *st)
{
    memd_error e = {0};
    ck_assert_msg(memd_store_flush(st, &e) == 0, "flush: %s", e.msg);
}

MDB_env *sf_raw_open(const char *table, MDB_txn **txn, MDB_dbi *dbi)
{
    MDB_env *env;
    struct stat sb;
    ck_assert_int_eq(stat(sf_path, &sb), 0);
    ck_assert_int_eq(mdb_env_create(&env), 0);
    mdb_env_set_maxdbs(env, 3);
    mdb_env_set_mapsize(env, (size_t)sb.st_size);
    ck_assert_int_eq(mdb_env_open(env, sf_path, MDB_NOSUBDIR | MDB_NOLOCK, 0600), 0);
    ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, txn), 0);
    ck_assert_int_eq(mdb_dbi_open(*txn, table, 0, dbi), 0);
    return env;
}

void sf_raw_close(MDB_env *env, MDB_txn *txn)
{
    ck_assert_int_eq(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}
