/* The state store's objects table (store_object.h): records other layers keep in the
 * store through core's hooks. The envelope codec (round trip, every bit of a record and
 * of its key flipped is caught), records through a real LMDB file across a restart
 * (puts, replacements, deletes, kind order), the start refused naming the file when a
 * record is damaged, read by nobody or refused by its owner, the "objects" failpoint,
 * the shutdown leaving records as they are, a store written before the table existed,
 * and the model layer's own checks of its records (model_restore.c). */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "hooks.h"
#include "model.h"
#include "store_codec.h"
#include "store_fixture.h"
#include "store_objects_file.h"
#include "store_object.h"
#include "unit_device.h"

#define DEV 7

/* ---- a layer that keeps records ---- */

static struct {
    memd_hook hook;
    unsigned takes;                /* bit k: records of kind k are ours */
    uint8_t refuse;                /* this kind: refused with an error */
    size_t n;
    memd_record r[16];
    uint8_t data[16][64];
} L;

static int on_restore(void *data, const memd_record *r, memd_error *err)
{
    (void)data;
    if (!(L.takes & (1u << r->kind)))
        return 0;
    if (r->kind == L.refuse)
        return memd_error_set(err, -EINVAL, "the layer says no to %llu",
                              (unsigned long long)r->id);
    ck_assert_uint_lt(L.n, 16);
    ck_assert_uint_le(r->len, 64);
    L.r[L.n] = *r;
    memcpy(L.data[L.n], r->data, r->len);
    L.r[L.n].data = L.data[L.n];
    L.n++;
    return 1;
}

static const memd_state_events layer_events = {.record_restore = on_restore};

static void add_layer(memd_state *st)
{
    L.n = 0;
    memd_hook_add(st, &L.hook, &layer_events, NULL);
}

static void add_models(memd_state *st)
{
    ck_assert_int_eq(memd_models_init(st), 0);
}

static int start_with(memd_state *st, void (*before)(memd_state *), memd_error *err)
{
    memd_device_spec spec;
    unit_device_spec(&spec, DEV, 896);
    return sf_start_with(st, &spec, 1, 0, (memd_store_opts){0}, err, before);
}

static void start(memd_state *st)
{
    memd_error err = {0};
    int rc = start_with(st, add_layer, &err);
    ck_assert_msg(rc == 0, "store open failed (%d): %s", rc, err.msg);
}

static void stop(memd_state *st)
{
    sf_stop(st);
}

/* A stop and a start: the layer then read n records back. */
static void reopen(memd_state *st, size_t n)
{
    stop(st);
    start(st);
    ck_assert_uint_eq(L.n, n);
}

static void put(memd_state *st, uint8_t kind, uint64_t id, const char *text)
{
    memd_record r = {.kind = kind, .version = 3, .id = id, .data = (const uint8_t *)text,
                     .len = text ? strlen(text) : 0};
    memd_hooks_record_put(st, &r);
}

static void assert_rec(size_t i, uint8_t kind, uint64_t id, const char *text)
{
    ck_assert_uint_lt(i, L.n);
    ck_assert_uint_eq(L.r[i].kind, kind);
    ck_assert_uint_eq(L.r[i].id, id);
    ck_assert_uint_eq(L.r[i].version, 3);
    ck_assert_uint_eq(L.r[i].len, strlen(text));
    ck_assert_mem_eq(L.r[i].data, text, strlen(text));
}

static void setup(void)
{
    sf_setup_in("memd-objects");
    memset(&L, 0, sizeof L);
    L.takes = ~0u;
}

/* ---- the codec ---- */

START_TEST(codec_round_trip_every_bit)
{
    const char payload[] = "a model layer's bytes, 40 of them here.";
    memd_record r = {.kind = MEMD_RECORD_MODEL, .version = 513, .id = 0x0102030405060708ull,
                     .data = (const uint8_t *)payload, .len = sizeof payload};
    size_t len = memd_store_obj_size(&r);
    ck_assert_uint_eq(len, MEMD_STORE_OBJ_HEAD + sizeof payload);
    uint8_t rec[128], key[MEMD_STORE_OBJ_KEY];
    memd_store_obj_put(rec, &r);
    memd_store_obj_key(key, r.kind, r.id);
    ck_assert_uint_eq(key[0], MEMD_RECORD_MODEL);
    ck_assert_uint_eq(key[8], 8); /* big-endian: byte order is id order */
    memd_record g;
    ck_assert_int_eq(memd_store_obj_get(key, sizeof key, rec, len, &g), 0);
    ck_assert_uint_eq(g.kind, r.kind);
    ck_assert_uint_eq(g.version, 513);
    ck_assert_uint_eq(g.id, r.id);
    ck_assert_uint_eq(g.len, sizeof payload);
    ck_assert_mem_eq(g.data, payload, sizeof payload);
    /* Every single bit of the record, and of its key, flipped: never read as valid. */
    for (size_t bit = 0; bit < len * 8; bit++) {
        rec[bit / 8] ^= (uint8_t)(1u << bit % 8);
        int rc = memd_store_obj_get(key, sizeof key, rec, len, &g);
        ck_assert_msg(rc == -EBADMSG || rc == -EINVAL || rc == -EPROTONOSUPPORT,
                      "record bit %zu: %d", bit, rc);
        rec[bit / 8] ^= (uint8_t)(1u << bit % 8);
    }
    for (size_t bit = 0; bit < sizeof key * 8; bit++) {
        key[bit / 8] ^= (uint8_t)(1u << bit % 8);
        ck_assert_int_eq(memd_store_obj_get(key, sizeof key, rec, len, &g), -EBADMSG);
        key[bit / 8] ^= (uint8_t)(1u << bit % 8);
    }
    /* Cut short, or a key of another size. */
    for (size_t n = 0; n < len; n++)
        ck_assert_int_ne(memd_store_obj_get(key, sizeof key, rec, n, &g), 0);
    ck_assert_int_eq(memd_store_obj_get(key, sizeof key - 1, rec, len, &g), -EBADMSG);
    /* A kind nobody has, even with a right checksum. */
    r.kind = MEMD_RECORD_KIND_MAX + 1;
    memd_store_obj_put(rec, &r);
    memd_store_obj_key(key, r.kind, r.id);
    ck_assert_int_eq(memd_store_obj_get(key, sizeof key, rec, len, &g), -EINVAL);
    /* An empty payload is a record too. */
    r = (memd_record){.kind = MEMD_RECORD_PLAN, .id = 1};
    memd_store_obj_put(rec, &r);
    memd_store_obj_key(key, r.kind, r.id);
    ck_assert_int_eq(memd_store_obj_get(key, sizeof key, rec, MEMD_STORE_OBJ_HEAD, &g), 0);
    ck_assert_uint_eq(g.len, 0);
}
END_TEST

/* ---- through a real store ---- */

START_TEST(records_survive_a_restart)
{
    memd_state st;
    start(&st);
    put(&st, MEMD_RECORD_PLAN, 5, "plan five");
    put(&st, MEMD_RECORD_INSTANCE, 9, "instance nine");
    put(&st, MEMD_RECORD_MODEL, 300, "model 300");
    put(&st, MEMD_RECORD_MODEL, 2, "model two");
    put(&st, MEMD_RECORD_MODELS_META, 0, "counters");
    sf_flush(&st);
    put(&st, MEMD_RECORD_MODEL, 300, NULL);    /* gone */
    put(&st, MEMD_RECORD_PLAN, 5, "plan 5 v2"); /* replaced */
    put(&st, MEMD_RECORD_PLAN, 6, "plan six");
    put(&st, MEMD_RECORD_PLAN, 6, NULL);       /* made and gone in one flush */
    put(&st, MEMD_RECORD_PLAN, 1000, NULL);    /* never was */
    sf_flush(&st);
    reopen(&st, 4); /* in kind order, then id order: records may refer to earlier kinds */
    assert_rec(0, MEMD_RECORD_MODELS_META, 0, "counters");
    assert_rec(1, MEMD_RECORD_PLAN, 5, "plan 5 v2");
    assert_rec(2, MEMD_RECORD_MODEL, 2, "model two");
    assert_rec(3, MEMD_RECORD_INSTANCE, 9, "instance nine");
    /* Unflushed changes go at close (a clean stop flushes what is pending). */
    put(&st, MEMD_RECORD_INSTANCE, 9, NULL);
    reopen(&st, 3);
    stop(&st);
}
END_TEST

static void expect_refused(void (*before)(memd_state *), const char *what)
{
    memd_state st;
    memd_error err = {0};
    ck_assert_int_lt(start_with(&st, before, &err), 0);
    ck_assert_msg(strstr(err.msg, sf_path) && strstr(err.msg, what) &&
                  strstr(err.msg, "--discard-state"), "%s", err.msg);
    memd_state_fini(&st);
}

START_TEST(unread_or_refused_records_stop_the_start)
{
    memd_state st;
    start(&st);
    put(&st, MEMD_RECORD_PLAN, 5, "plan five");
    put(&st, MEMD_RECORD_INSTANCE, 7, "instance seven");
    sf_flush(&st);
    stop(&st);
    L.takes = 1u << MEMD_RECORD_PLAN; /* nobody reads instances */
    expect_refused(add_layer, "nothing in this memd reads records of kind 4");
    L.takes = ~0u;
    L.refuse = MEMD_RECORD_INSTANCE;
    expect_refused(add_layer, "the layer says no to 7");
    /* Refused starts leave the store as it was. */
    L.refuse = 0;
    start(&st);
    ck_assert_uint_eq(L.n, 2);
    stop(&st);
}
END_TEST

/* Flips one byte of the stored record (kind, id) in the file. */
static void damage(uint8_t kind, uint64_t id, size_t at)
{
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_env *env = store_objects_open(sf_path, &txn, &dbi);
    uint8_t key[MEMD_STORE_OBJ_KEY];
    memd_store_obj_key(key, kind, id);
    MDB_val k = {sizeof key, key}, v;
    ck_assert_int_eq(mdb_get(txn, dbi, &k, &v), 0);
    ck_assert_uint_lt(at, v.mv_size);
    ((uint8_t *)v.mv_data)[at] ^= 0x04;
    ck_assert_int_eq(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

START_TEST(damaged_record_refused)
{
    memd_state st;
    start(&st);
    put(&st, MEMD_RECORD_MODEL, 2, "model two");
    sf_flush(&st);
    stop(&st);
    damage(MEMD_RECORD_MODEL, 2, MEMD_STORE_OBJ_HEAD + 3); /* in the payload */
    expect_refused(add_layer, "object record 3/2: bad length, checksum or key");
    damage(MEMD_RECORD_MODEL, 2, MEMD_STORE_OBJ_HEAD + 3); /* mended */
    damage(MEMD_RECORD_MODEL, 2, 0);                       /* the format */
    expect_refused(add_layer, "object record 3/2: ");
}
END_TEST

START_TEST(objects_failpoint_fails_the_commit)
{
    memd_state st;
    start(&st);
    char fp[160];
    snprintf(fp, sizeof fp, "%s.objects", sf_fail);
    int fd = open(fp, O_WRONLY | O_CREAT, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    put(&st, MEMD_RECORD_PLAN, 5, "plan five");
    memd_error e = {0};
    ck_assert_int_eq(memd_store_flush(&st, &e), -EIO);
    ck_assert_msg(strstr(e.msg, "cannot commit"), "%s", e.msg);
    /* Nothing is lost: the record waits for the next flush that can write. */
    unlink(fp);
    sf_flush(&st);
    reopen(&st, 1);
    assert_rec(0, MEMD_RECORD_PLAN, 5, "plan five");
    stop(&st);
}
END_TEST

START_TEST(shutdown_leaves_records)
{
    memd_state st;
    start(&st);
    put(&st, MEMD_RECORD_PLAN, 5, "plan five");
    sf_flush(&st);
    /* What a stopping daemon drops (closing its sessions) stays for the next start, as
     * its allocations do; a request round is still recorded. */
    memd_store_stopping(&st);
    put(&st, MEMD_RECORD_PLAN, 5, NULL);
    uint64_t mark = memd_store_round_begin(&st);
    put(&st, MEMD_RECORD_PLAN, 8, "plan eight");
    ck_assert(memd_store_round_changed(&st, mark));
    memd_store_round_end(&st);
    reopen(&st, 2);
    assert_rec(0, MEMD_RECORD_PLAN, 5, "plan five");
    assert_rec(1, MEMD_RECORD_PLAN, 8, "plan eight");
    stop(&st);
}
END_TEST

START_TEST(store_without_objects_table)
{
    memd_state st;
    start(&st);
    memd_session *s = sf_session(&st, (uint32_t)getpid(), 0);
    memd_alloc *a = sf_alloc(&st, s, DEV, MEMD_CLASS_CONSTANT, 4 * KIB, NULL);
    uint64_t h = a->handle, addr = a->pl.address;
    sf_flush(&st);
    stop(&st);
    free(s);
    /* As a memd from before the table wrote it: no objects table at all. */
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_env *env = store_objects_open(sf_path, &txn, &dbi);
    ck_assert_int_eq(mdb_drop(txn, dbi, 1), 0);
    ck_assert_int_eq(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    start(&st);
    ck_assert_uint_eq(L.n, 0);
    const memd_alloc *b = memd_alloc_find(&st, h);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(b->pl.address, addr);
    put(&st, MEMD_RECORD_PLAN, 5, "plan five"); /* and the table is there again */
    sf_flush(&st);
    reopen(&st, 1);
    stop(&st);
}
END_TEST

/* ---- the model layer's records ---- */

/* A record in the model layer's format (model_save.c), written through core as the
 * layer would. */
static void put_raw(memd_state *st, uint8_t kind, uint64_t id, const uint8_t *p, size_t len)
{
    memd_record r = {.kind = kind, .version = 1, .id = id, .data = p, .len = len};
    memd_hooks_record_put(st, &r);
}

static void le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

START_TEST(model_records_checked)
{
    /* A plan of one buffer whose stored id is not its problem's hash. */
    memd_state st;
    start(&st);
    uint8_t plan[88 + 56] = {0};
    plan[4] = 1;                   /* one buffer */
    le64(plan + 8, 4096);          /* arena */
    memcpy(plan + 56, "greedy", 7);
    le64(plan + 88, 0);            /* lower */
    le64(plan + 96, 2);            /* upper */
    le64(plan + 104, 4096);        /* size */
    le64(plan + 112, 64);          /* align */
    put_raw(&st, MEMD_RECORD_PLAN, 77, plan, sizeof plan);
    sf_flush(&st);
    stop(&st);
    expect_refused(add_models, "plan record 77: its problem does not hash to its id");

    /* A model whose plan has no record; then a model counter of 0. */
    sf_teardown();
    setup();
    start(&st);
    uint8_t model[160 + 48 + 4] = {0};
    le64(model + 16, 1234);        /* plan id */
    model[72] = DEV;
    model[76] = 1;                 /* one tensor */
    model[84] = 1;                 /* one user */
    memcpy(model + 96, "m", 2);
    put_raw(&st, MEMD_RECORD_MODEL, 1, model, sizeof model);
    sf_flush(&st);
    stop(&st);
    expect_refused(add_models, "model record 1: its plan has no record");

    sf_teardown();
    setup();
    start(&st);
    uint8_t ids[16] = {0};
    put_raw(&st, MEMD_RECORD_MODELS_META, 0, ids, sizeof ids);
    put_raw(&st, MEMD_RECORD_INSTANCE, 3, ids, sizeof ids); /* shorter than its header */
    sf_flush(&st);
    stop(&st);
    expect_refused(add_models, "model counters record 0: counters at 0");
    /* And a version the layer does not read. */
    sf_teardown();
    setup();
    start(&st);
    memd_record r = {.kind = MEMD_RECORD_INSTANCE, .version = 2, .id = 3, .data = ids,
                     .len = sizeof ids};
    memd_hooks_record_put(&st, &r);
    sf_flush(&st);
    stop(&st);
    expect_refused(add_models, "instance record 3: version 2, this memd reads 1");
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("store-objects");
    TCase *tc = tcase_create("objects");
    tcase_add_checked_fixture(tc, setup, sf_teardown);
    tcase_add_test(tc, codec_round_trip_every_bit);
    tcase_add_test(tc, records_survive_a_restart);
    tcase_add_test(tc, unread_or_refused_records_stop_the_start);
    tcase_add_test(tc, damaged_record_refused);
    tcase_add_test(tc, objects_failpoint_fails_the_commit);
    tcase_add_test(tc, shutdown_leaves_records);
    tcase_add_test(tc, store_without_objects_table);
    tcase_add_test(tc, model_records_checked);
    suite_add_tcase(s, tc);
    return s;
}
