/* The state store's allocations table (daemon/store_internal.h): a single allocation has
 * a record of its own, the allocations of one batch share records by chunks of up to
 * MEMD_STORE_CHUNK consecutive handles. Round trips through a real LMDB file (a chunk
 * emptied is deleted, one half freed is rewritten), a store written one record per
 * handle (restored as it is), damaged records refused (a foreign handle, a cut record,
 * an empty value), a write that fails half way followed by one that succeeds,
 * batch-sized rounds (the benchmark's shape) freed in order or not, and ALLOC_BATCH on
 * the request sf_path, all or nothing. */
#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "check_main.h"
#include "dispatch.h"
#include "frames.h"
#include "session.h"
#include "state.h"
#include "store.h"
#include "store_codec.h"
#include "store_fixture.h"
#include "wire_frame.h"
#include "unit_device.h"
#include "store_internal.h"
#include "wire.h"

#define DEV 7

/* ---- fixtures ---- */

static void setup(void)
{
    sf_setup_in("memd-chunks");
}

static int start_v(memd_state *st, memd_error *err)
{
    memd_device_spec spec;
    unit_device_spec(&spec, DEV, 896);
    return sf_start(st, &spec, 1, 0, (memd_store_opts){0}, err);
}

static void start(memd_state *st)
{
    memd_error err = {0};
    int rc = start_v(st, &err);
    ck_assert_msg(rc == 0, "store open failed (%d): %s", rc, err.msg);
}

/* A session of this process (alive: restored as an orphan, not released). */
static memd_session *session(memd_state *st)
{
    return sf_session(st, (uint32_t)getpid(), (uint32_t)getuid());
}

/* A started store and a session of this process in it. */
static memd_session *start_session(memd_state *st)
{
    start(st);
    return session(st);
}

static memd_alloc *alloc(memd_state *st, memd_session *s, uint64_t bytes)
{
    return sf_alloc(st, s, DEV, MEMD_CLASS_CONSTANT, bytes, NULL);
}

static void release(memd_state *st, memd_session *s, uint64_t handle)
{
    memd_alloc *a = memd_alloc_find(st, handle);
    ck_assert_ptr_nonnull(a);
    memd_hold_release(st, memd_alloc_hold_of(a, s));
}

/* ---- the file, read and written directly (memd not running) ---- */

/* The keys of the allocations table and, per key, how many records its value holds
 * (every one of them must decode and belong to the key's chunk). Returns the count. */
static size_t table(uint64_t *keys, uint32_t *nrecs, size_t cap)
{
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_env *env = sf_raw_open("allocations", &txn, &dbi);
    MDB_cursor *c;
    ck_assert_int_eq(mdb_cursor_open(txn, dbi, &c), 0);
    MDB_val k, v;
    size_t n = 0;
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        ck_assert_uint_lt(n, cap);
        ck_assert_uint_eq(k.mv_size, 8);
        keys[n] = memd_store_key_get_u64(k.mv_data);
        nrecs[n] = 0;
        const uint8_t *p = v.mv_data;
        size_t left = v.mv_size;
        while (left > 0) {
            size_t len;
            memd_store_alloc_rec r;
            ck_assert_int_eq(memd_store_alloc_rec_len(p, left, &len), 0);
            ck_assert_int_eq(memd_store_alloc_rec_get(p, len, &r), 0);
            ck_assert_uint_ge(r.handle, keys[n]);
            ck_assert_uint_lt(r.handle, keys[n] + MEMD_STORE_CHUNK);
            nrecs[n]++;
            p += len;
            left -= len;
        }
        n++;
    }
    mdb_cursor_close(c);
    sf_raw_close(env, txn);
    return n;
}

/* Rewrites the table one record per handle under key = handle, as a store written
 * before chunks was. Returns the number of records. */
static size_t split_to_handles(void)
{
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_env *env = sf_raw_open("allocations", &txn, &dbi);
    MDB_cursor *c;
    ck_assert_int_eq(mdb_cursor_open(txn, dbi, &c), 0);
    /* Copy everything out first: the table is rewritten below. */
    size_t cap = 1u << 16, used = 0, n = 0;
    uint8_t *copy = malloc(cap);
    MDB_val k, v;
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        ck_assert_uint_le(used + v.mv_size + 8, cap);
        memcpy(copy + used, &v.mv_size, 8);
        memcpy(copy + used + 8, v.mv_data, v.mv_size);
        used += 8 + v.mv_size;
    }
    mdb_cursor_close(c);
    ck_assert_int_eq(mdb_drop(txn, dbi, 0), 0);
    for (size_t off = 0; off < used;) {
        size_t vlen;
        memcpy(&vlen, copy + off, 8);
        const uint8_t *p = copy + off + 8;
        off += 8 + vlen;
        while (vlen > 0) {
            size_t len;
            memd_store_alloc_rec r;
            ck_assert_int_eq(memd_store_alloc_rec_len(p, vlen, &len), 0);
            ck_assert_int_eq(memd_store_alloc_rec_get(p, len, &r), 0);
            uint8_t key[8];
            memd_store_key_u64(key, r.handle);
            MDB_val mk = {8, key}, mv = {len, (void *)p};
            ck_assert_int_eq(mdb_put(txn, dbi, &mk, &mv, 0), 0);
            n++;
            p += len;
            vlen -= len;
        }
    }
    free(copy);
    sf_raw_close(env, txn);
    return n;
}

static void poke(uint64_t key, const void *val, size_t vlen)
{
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_env *env = sf_raw_open("allocations", &txn, &dbi);
    uint8_t k[8];
    memd_store_key_u64(k, key);
    MDB_val mk = {8, k}, mv = {vlen, (void *)val};
    ck_assert_int_eq(mdb_put(txn, dbi, &mk, &mv, 0), 0);
    sf_raw_close(env, txn);
}

static void unpoke(uint64_t key)
{
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_env *env = sf_raw_open("allocations", &txn, &dbi);
    uint8_t k[8];
    memd_store_key_u64(k, key);
    MDB_val mk = {8, k};
    ck_assert_int_eq(mdb_del(txn, dbi, &mk, NULL), 0);
    sf_raw_close(env, txn);
}

/* The record of one allocation as the store writes it. */
static size_t one_record(uint8_t *buf, uint64_t handle, const memd_placement *pl,
                         uint32_t session_id)
{
    memd_store_alloc_rec r = {.handle = handle, .device = DEV, .pl = *pl,
                              .cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_DRAM,
                              .session_id = session_id, .nholders = 1};
    uint8_t *p = memd_store_alloc_rec_put(buf, &r);
    p = memd_store_holder_put(p, session_id, 1, 0);
    memd_store_alloc_rec_seal(buf, (size_t)(p - buf));
    return (size_t)(p - buf);
}

/* Every handle in want[0, n) is restored, at the address it had, and nothing else. */
static void expect_restored(memd_state *st, const uint64_t *want, const uint64_t *addr,
                            size_t n)
{
    ck_assert_uint_eq(st->handles.len, n);
    for (size_t i = 0; i < n; i++) {
        const memd_alloc *a = memd_alloc_find(st, want[i]);
        ck_assert_msg(a != NULL, "handle %llu not restored", (unsigned long long)want[i]);
        ck_assert_uint_eq(a->pl.address, addr[i]);
    }
}

/* n allocations made as one ALLOC_BATCH makes them (sharing records). */
static void alloc_batch(memd_state *st, memd_session *s, int n, uint64_t *h, uint64_t *addr,
                        uint64_t bytes)
{
    memd_store_batch(st, true);
    for (int i = 0; i < n; i++) {
        memd_alloc *a = alloc(st, s, bytes + (uint64_t)i);
        h[i] = a->handle;
        if (addr)
            addr[i] = a->pl.address;
    }
    memd_store_batch(st, false);
}

/* ---- tests ---- */

START_TEST(single_allocations_keep_own_records)
{
    memd_state st;
    memd_session *s = start_session(&st);
    uint64_t h[5];
    for (int i = 0; i < 5; i++)
        h[i] = alloc(&st, s, 1000)->handle;
    sf_flush(&st);
    uint64_t keys[16];
    uint32_t nrecs[16];
    ck_assert_uint_eq(table(keys, nrecs, 16), 5);
    for (int i = 0; i < 5; i++) {
        ck_assert_uint_eq(keys[i], h[i]);
        ck_assert_uint_eq(nrecs[i], 1);
    }
    release(&st, s, h[2]);
    sf_flush(&st);
    ck_assert_uint_eq(table(keys, nrecs, 16), 4);
    sf_stop(&st);
    free(s);
}
END_TEST

START_TEST(batch_records_follow_frees_and_restore)
{
    memd_state st;
    memd_session *s = start_session(&st);
    enum { N = 27 }; /* three chunks and part of a fourth */
    uint64_t h[N], addr[N];
    alloc_batch(&st, s, N, h, addr, 1000);
    sf_flush(&st);
    uint64_t keys[64];
    uint32_t nrecs[64];
    size_t nk = table(keys, nrecs, 64);
    ck_assert_uint_eq(nk, (N + MEMD_STORE_CHUNK - 1) / MEMD_STORE_CHUNK);
    for (size_t i = 0; i < nk; i++) {
        ck_assert_uint_eq(keys[i], h[i * MEMD_STORE_CHUNK]);
        ck_assert_uint_eq(nrecs[i], i + 1 < nk ? MEMD_STORE_CHUNK : N % MEMD_STORE_CHUNK);
    }

    /* Free the whole second chunk (its record goes), and every second allocation
     * elsewhere (those records are rewritten with the others). */
    uint64_t keep[N], keep_addr[N];
    size_t nkeep = 0;
    for (int i = 0; i < N; i++) {
        if (i / (int)MEMD_STORE_CHUNK == 1 || i % 2 == 1) {
            release(&st, s, h[i]);
        } else {
            keep[nkeep] = h[i];
            keep_addr[nkeep++] = addr[i];
        }
    }
    sf_flush(&st);
    nk = table(keys, nrecs, 64);
    ck_assert_uint_eq(nk, 3);
    uint32_t total = 0;
    for (size_t i = 0; i < nk; i++) {
        ck_assert_uint_ne(keys[i], h[MEMD_STORE_CHUNK]);
        total += nrecs[i];
    }
    ck_assert_uint_eq(total, nkeep);
    sf_stop(&st);
    free(s);

    start(&st);
    expect_restored(&st, keep, keep_addr, nkeep);
    /* Restored allocations keep their records: freeing one rewrites its chunk. */
    memd_session *s2 = session(&st);
    memd_alloc *a = alloc(&st, s2, 64);
    ck_assert_uint_gt(a->handle, h[N - 1]);
    sf_flush(&st);
    ck_assert_uint_eq(table(keys, nrecs, 64), 4);
    sf_stop(&st);
    free(s2);
    start(&st);
    ck_assert_uint_eq(st.handles.len, nkeep + 1);
    sf_stop(&st);
}
END_TEST

/* A store written one record per handle (key = handle) restores as it is, and goes on
 * being written that way for those allocations. */
START_TEST(per_handle_store_restored)
{
    memd_state st;
    memd_session *s = start_session(&st);
    enum { N = 19 };
    uint64_t h[N], addr[N];
    alloc_batch(&st, s, N, h, addr, 4096);
    sf_flush(&st);
    sf_stop(&st);
    free(s);
    ck_assert_uint_eq(split_to_handles(), N);
    uint64_t keys[64];
    uint32_t nrecs[64];
    ck_assert_uint_eq(table(keys, nrecs, 64), N);

    start(&st);
    expect_restored(&st, h, addr, N);
    /* The orphaned session's allocation 3 goes: its own record with it. */
    memd_alloc *a = memd_alloc_find(&st, h[3]);
    ck_assert_uint_eq(a->store_key, h[3]);
    memd_hold_release(&st, memd_alloc_holders(a));
    sf_flush(&st);
    sf_stop(&st);
    ck_assert_uint_eq(table(keys, nrecs, 64), N - 1);
    for (size_t i = 0; i < N - 1; i++)
        ck_assert_uint_eq(nrecs[i], 1);
    start(&st);
    ck_assert_uint_eq(st.handles.len, N - 1);
    ck_assert_ptr_null(memd_alloc_find(&st, h[3]));
    sf_stop(&st);
}
END_TEST

/* One 1000-byte allocation of a fresh session, committed, and the store stopped: its
 * placement in *pl, its handle in *handle; returns its session's id. */
static uint32_t stored_alloc(memd_state *st, memd_placement *pl, uint64_t *handle)
{
    memd_session *s = start_session(st);
    memd_alloc *a = alloc(st, s, 1000);
    memd_alloc_placement(a, pl);
    *handle = a->handle;
    uint32_t sid = s->id;
    sf_flush(st);
    sf_stop(st);
    free(s);
    return sid;
}

/* The record of an allocation under a key whose range does not hold its handle. */
START_TEST(foreign_handle_in_record_refused)
{
    memd_state st;
    memd_placement pl;
    uint64_t first;
    uint32_t sid = stored_alloc(&st, &pl, &first);
    pl.address += 256 * KIB; /* elsewhere: only the key is wrong */
    uint64_t handle = first + 3 * MEMD_STORE_CHUNK;
    uint8_t rec[256];
    size_t n = one_record(rec, handle, &pl, sid);
    poke(handle - MEMD_STORE_CHUNK, rec, n);
    memd_error err = {0};
    ck_assert_int_lt(start_v(&st, &err), 0);
    ck_assert_msg(strstr(err.msg, "damaged") && strstr(err.msg, "outside its key"), "%s", err.msg);
    ck_assert_ptr_null(st.store);
    memd_state_fini(&st);
    /* Under a key at or above its handle it is just as wrong. */
    unpoke(handle - MEMD_STORE_CHUNK);
    poke(handle + 1, rec, n);
    ck_assert_int_lt(start_v(&st, &err), 0);
    ck_assert_msg(strstr(err.msg, "damaged") && strstr(err.msg, "outside its key"), "%s", err.msg);
    memd_state_fini(&st);
    /* Under a key that does hold it, it restores. */
    unpoke(handle + 1);
    poke(handle - 2, rec, n);
    start(&st);
    ck_assert_uint_eq(st.handles.len, 2);
    ck_assert_uint_eq(memd_alloc_find(&st, handle)->store_key, handle - 2);
    sf_stop(&st);
}
END_TEST

START_TEST(cut_or_empty_record_refused)
{
    memd_state st;
    memd_placement pl;
    uint64_t first;
    uint32_t sid = stored_alloc(&st, &pl, &first);
    uint64_t key = first + 4 * MEMD_STORE_CHUNK;
    /* Two records where the second is cut short. */
    uint8_t rec[512];
    pl.address += 128 * KIB;
    size_t n = one_record(rec, key, &pl, sid);
    pl.address += 128 * KIB;
    size_t m = one_record(rec + n, key + MEMD_STORE_CHUNK - 1, &pl, sid);
    poke(key, rec, n + m - 3);
    memd_error err = {0};
    ck_assert_int_lt(start_v(&st, &err), 0);
    ck_assert_msg(strstr(err.msg, "damaged"), "%s", err.msg);
    memd_state_fini(&st);
    /* Whole, both records restore. */
    poke(key, rec, n + m);
    start(&st);
    ck_assert_uint_eq(st.handles.len, 3);
    ck_assert_uint_eq(memd_alloc_find(&st, key + MEMD_STORE_CHUNK - 1)->store_key, key);
    sf_stop(&st);
    /* An empty value. */
    poke(key, rec, 0);
    ck_assert_int_lt(start_v(&st, &err), 0);
    ck_assert_msg(strstr(err.msg, "damaged") && strstr(err.msg, "empty"), "%s", err.msg);
    memd_state_fini(&st);
}
END_TEST

/* A write that fails after appending must not leave the writer believing in records
 * that were never committed (the largest key is kept between writes). */
START_TEST(failed_write_then_good_one)
{
    memd_state st;
    memd_session *s = start_session(&st);
    uint64_t first[4];
    alloc_batch(&st, s, 4, first, NULL, 1000);
    sf_flush(&st);
    FILE *f = fopen(sf_fail, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    /* New records appended, the first one emptied: all in a write that fails. */
    enum { N = 3 * MEMD_STORE_CHUNK };
    uint64_t h[N], addr[N];
    alloc_batch(&st, s, N, h, addr, 2000);
    for (int i = 0; i < 4; i++)
        release(&st, s, first[i]);
    memd_error e;
    ck_assert_int_eq(memd_store_flush(&st, &e), -EIO);
    unlink(sf_fail);
    sf_flush(&st);
    sf_stop(&st);
    free(s);
    start(&st);
    expect_restored(&st, h, addr, N);
    sf_stop(&st);
}
END_TEST

/* Rounds of the benchmark's shape: a batch allocated, an older batch freed, flushed
 * together, many times over; the store always restores exactly what is live. */
START_TEST(batch_rounds_restore_exactly)
{
    memd_state st;
    memd_session *s = start_session(&st);
    enum { B = 100, D = 3, ROUNDS = 20 };
    uint64_t h[D][B];
    for (int r = 0; r < ROUNDS; r++) {
        int slot = r % D;
        if (r >= D) {
            /* In order, or every other round in no order (37 is prime to B): the
             * writer sorts such a list instead of writing its records over and over. */
            for (int i = 0; i < B; i++)
                release(&st, s, h[slot][r % 2 ? i * 37 % B : i]);
        }
        alloc_batch(&st, s, B, h[slot], NULL, 32 + (uint64_t)(r * 37) % 2000);
        sf_flush(&st);
    }
    uint64_t want[D * B], addr[D * B];
    size_t n = 0;
    for (int d = 0; d < D; d++)
        for (int i = 0; i < B; i++) {
            want[n] = h[d][i];
            addr[n++] = memd_alloc_find(&st, h[d][i])->pl.address;
        }
    sf_stop(&st);
    free(s);
    start(&st);
    expect_restored(&st, want, addr, n);
    sf_stop(&st);
}
END_TEST

/* ALLOC_BATCH on the request sf_path: its allocations share records; one that fails
 * (a bad record at the end) leaves nothing, in memory or in the store; a plain ALLOC
 * after it has a record of its own. */
START_TEST(alloc_batch_request_shares_records)
{
    memd_state st;
    memd_session *s = start_session(&st);
    enum { N = 20 };
    static uint8_t payload[MEMD_WIRE_COUNT_SIZE + N * MEMD_WIRE_ALLOC_REQ_SIZE];
    static uint8_t in[MEMD_HDR_SIZE + sizeof payload];
    memd_wire_alloc_req r = {.device = DEV, .cls = MEMD_CLASS_CONSTANT,
                             .scope = MEMD_SCOPE_DRAM, .bytes = 3000};
    uint8_t *p = memd_wire_count_put(payload, N);
    for (int i = 0; i < N; i++)
        p = memd_wire_alloc_req_put(p, &r);
    memd_buf out = {0};
    size_t used;
    size_t n = frame(in, MEMD_OP_ALLOC_BATCH, 1, payload, sizeof payload);
    ck_assert_int_eq(memd_frames_process(&st, s, in, n, &out, SIZE_MAX, &used), 0);
    ck_assert_uint_eq(st.handles.len, N);
    uint64_t keys[64];
    uint32_t nrecs[64];
    ck_assert_uint_eq(table(keys, nrecs, 64), (N + MEMD_STORE_CHUNK - 1) / MEMD_STORE_CHUNK);

    /* The last record names a device that does not exist: all or nothing. */
    r.device = 99;
    memd_wire_alloc_req_put(payload + MEMD_WIRE_COUNT_SIZE +
                                (N - 1) * MEMD_WIRE_ALLOC_REQ_SIZE, &r);
    n = frame(in, MEMD_OP_ALLOC_BATCH, 2, payload, sizeof payload);
    out.len = out.off = 0;
    ck_assert_int_eq(memd_frames_process(&st, s, in, n, &out, SIZE_MAX, &used), 0);
    memd_wire_hdr h;
    ck_assert_int_eq(memd_wire_hdr_get(out.data, out.len, MEMD_MAX_REPLY, &h), 0);
    ck_assert_int_eq(h.status, -ENODEV);
    ck_assert_uint_eq(st.handles.len, N);
    ck_assert_uint_eq(table(keys, nrecs, 64), (N + MEMD_STORE_CHUNK - 1) / MEMD_STORE_CHUNK);

    r.device = DEV;
    uint8_t one[MEMD_WIRE_ALLOC_REQ_SIZE];
    memd_wire_alloc_req_put(one, &r);
    n = frame(in, MEMD_OP_ALLOC, 3, one, sizeof one);
    out.len = out.off = 0;
    ck_assert_int_eq(memd_frames_process(&st, s, in, n, &out, SIZE_MAX, &used), 0);
    size_t nk = table(keys, nrecs, 64);
    ck_assert_uint_eq(nk, (N + MEMD_STORE_CHUNK - 1) / MEMD_STORE_CHUNK + 1);
    ck_assert_uint_eq(nrecs[nk - 1], 1);
    sf_stop(&st);
    free(s);
    memd_buf_free(&out);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("store-chunks");
    TCase *tc = tcase_create("store-chunks");
    tcase_add_checked_fixture(tc, setup, sf_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, single_allocations_keep_own_records);
    tcase_add_test(tc, batch_records_follow_frees_and_restore);
    tcase_add_test(tc, per_handle_store_restored);
    tcase_add_test(tc, foreign_handle_in_record_refused);
    tcase_add_test(tc, cut_or_empty_record_refused);
    tcase_add_test(tc, failed_write_then_good_one);
    tcase_add_test(tc, batch_rounds_restore_exactly);
    tcase_add_test(tc, alloc_batch_request_shares_records);
    suite_add_tcase(s, tc);
    return s;
}
