/* memd daemon — checking a state store before memd trusts it (see store.h).
 *
 * A store that exists but cannot be trusted must never be read as empty, and must never
 * crash memd: LMDB trusts its pages (a damaged branch or leaf page ends in an assertion,
 * SIGABRT, or a wild read, SIGSEGV/SIGBUS), so memd never reads the file itself first.
 *
 *   1. The two LMDB meta pages are read with pread and checked here: magic, version,
 *      page numbers, and the transaction ids. LMDB writes transaction T into meta page
 *      T % 2 and the id last, so a sound file has an even id in page 0 and the next or
 *      previous one in page 1 (both 0 before the first commit). A flipped id would make
 *      LMDB pick the other page, i.e. an older map, without a word: refused here. The
 *      newer page's last page must lie inside the file (a truncated file is refused
 *      before anything maps it).
 *   2. A child process opens the file read-only and reads every record of every table,
 *      checking each one's length, fields and checksum (store_codec.c), that keys rise
 *      strictly, and that each table has as many records as LMDB counts for it (a damaged
 *      branch page that skips or repeats leaves would not). It writes what it read into
 *      a new LMDB file. If anything is wrong it says what; if LMDB crashes on a damaged
 *      page, only the child dies.
 *   3. memd opens that new file, which LMDB itself built from checked records (no stale
 *      free list, no damaged page left unread), and after a successful restore renames
 *      it over the old one (store.c). */
#include "store_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"

/* ---- 1: LMDB's meta pages (lmdb 0.9 data format 1, 64-bit) ---- */

#define LMDB_MAGIC 0xBEEFC0DEu
#define LMDB_DATA_VERSION 1u
#define LMDB_P_META 0x08u
/* Offsets in a meta page: page header (u64 pgno, u16 pad, u16 flags, u16 lower, u16
 * upper), then MDB_meta: u32 magic, u32 version, address, mapsize, two MDB_db of 48
 * bytes (the first's u32 md_pad is the page size), last page, transaction id. */
#define OFF_PGNO 0
#define OFF_FLAGS 10
#define OFF_MAGIC 16
#define OFF_VERSION 20
#define OFF_PSIZE 40
#define OFF_LAST_PG 136
#define OFF_TXNID 144
#define META_BYTES 152

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define DAMAGED "the state store %s is damaged (%s). memd does not start on a map it cannot " \
                "trust; once no client holds device memory, start memd with --discard-state"

typedef struct meta_page {
    uint64_t txnid, last_pg;
    uint32_t psize;
} meta_page;

static int read_meta_page(int fd, const char *path, uint32_t i, uint32_t psize, meta_page *m,
                          memd_error *err)
{
    uint8_t b[META_BYTES];
    ssize_t n = pread(fd, b, sizeof b, (off_t)i * psize);
    if (n < 0)
        return memd_error_set(err, -errno, "cannot read the state store %s: %s", path,
                              strerror(errno));
    char why[96];
    if ((size_t)n < sizeof b)
        snprintf(why, sizeof why, "meta page %u is cut short", i);
    else if (le32(b + OFF_MAGIC) != LMDB_MAGIC)
        snprintf(why, sizeof why, "meta page %u has no LMDB magic: not an LMDB file", i);
    else if (le32(b + OFF_VERSION) != LMDB_DATA_VERSION)
        snprintf(why, sizeof why, "meta page %u has LMDB data version %u", i,
                 le32(b + OFF_VERSION));
    else if (le64(b + OFF_PGNO) != i || !(b[OFF_FLAGS] & LMDB_P_META))
        snprintf(why, sizeof why, "meta page %u has a damaged page header", i);
    else
        why[0] = '\0';
    if (why[0])
        return memd_error_set(err, -EINVAL, DAMAGED, path, why);
    m->txnid = le64(b + OFF_TXNID);
    m->last_pg = le64(b + OFF_LAST_PG);
    m->psize = le32(b + OFF_PSIZE);
    return 0;
}

int memd_store_check_meta_pages(int fd, const char *path, memd_error *err)
{
    struct stat sb;
    if (fstat(fd, &sb) < 0)
        return memd_error_set(err, -errno, "cannot stat the state store %s: %s", path,
                              strerror(errno));
    /* memd makes a store under another name and renames it into place once it holds its
     * meta record (store.c): an empty file here is a store that lost its contents. */
    if (sb.st_size == 0)
        return memd_error_set(err, -EINVAL, DAMAGED, path,
                              "it is empty (0 bytes), but memd never leaves an empty store");
    meta_page m[2];
    int rc = read_meta_page(fd, path, 0, 0, &m[0], err);
    if (rc < 0)
        return rc;
    uint32_t ps = m[0].psize;
    if (ps < 512 || ps > 65536 || (ps & (ps - 1)))
        return memd_error_set(err, -EINVAL, DAMAGED, path, "meta page 0 has a bad page size");
    if ((rc = read_meta_page(fd, path, 1, ps, &m[1], err)) < 0)
        return rc;
    char why[160] = "";
    uint64_t t0 = m[0].txnid, t1 = m[1].txnid;
    const meta_page *newer = t1 > t0 ? &m[1] : &m[0];
    if (m[1].psize != ps)
        snprintf(why, sizeof why, "its meta pages disagree on the page size");
    else if ((t0 & 1) != 0 || (t1 != 0 && (t1 & 1) != 1) ||
             (t0 != t1 + 1 && t1 != t0 + 1 && (t0 | t1) != 0))
        snprintf(why, sizeof why, "its meta pages hold transactions %llu and %llu, which no "
                                  "sequence of commits leaves",
                 (unsigned long long)t0, (unsigned long long)t1);
    else if (newer->last_pg < 1 || newer->last_pg >= (uint64_t)sb.st_size / ps)
        snprintf(why, sizeof why, "its last page %llu lies beyond its %lld bytes (truncated?)",
                 (unsigned long long)newer->last_pg, (long long)sb.st_size);
    if (why[0])
        return memd_error_set(err, -EINVAL, DAMAGED, path, why);
    return 0;
}

/* ---- 2: the child's reading and copying ---- */

typedef struct copier {
    MDB_txn *rtxn, *wtxn;          /* wtxn NULL: no copy (it could not be written) */
    int copy_rc;                   /* the LMDB error that stopped the copy, 0 */
    char *msg;
    size_t msglen;
} copier;

/* What is wrong with the store: -EINVAL with c->msg. */
static int say(copier *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(copier *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, c->msglen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* The copy could not be written (no space, ...): not the store's fault. Checking goes
 * on without it. */
static void copy_failed(copier *c, int rc)
{
    if (c->wtxn)
        mdb_txn_abort(c->wtxn);
    c->wtxn = NULL;
    if (!c->copy_rc)
        c->copy_rc = rc;
}

/* One record of a table: 0, or -EINVAL with c->msg saying what is wrong with it. */
static int check_alloc(copier *c, const MDB_val *k, const MDB_val *v)
{
    if (k->mv_size != 8)
        return say(c, "an allocation key of %zu bytes", k->mv_size);
    uint64_t key = memd_store_key_get_u64(k->mv_data);
    const uint8_t *p = v->mv_data;
    size_t left = v->mv_size;
    if (left == 0)
        return say(c, "allocation record %llu is empty", (unsigned long long)key);
    while (left > 0) {
        size_t len;
        memd_store_alloc_rec r;
        int rc = memd_store_alloc_rec_len(p, left, &len);
        if (rc == 0)
            rc = memd_store_alloc_rec_get(p, len, &r);
        if (rc == 0 && (r.handle < key || r.handle - key >= MEMD_STORE_CHUNK))
            rc = -ERANGE;
        if (rc < 0)
            return say(c, "allocation record %llu: %s", (unsigned long long)key,
                       rc == -EBADMSG ? "bad length or checksum"
                       : rc == -ERANGE ? "handle outside its key's chunk"
                                       : strerror(-rc));
        p += len;
        left -= len;
    }
    return 0;
}

static int check_session(copier *c, const MDB_val *k, const MDB_val *v)
{
    if (k->mv_size != 4)
        return say(c, "a session key of %zu bytes", k->mv_size);
    uint32_t key = memd_store_key_get_u32(k->mv_data);
    memd_store_sess_rec r;
    int rc = memd_store_sess_rec_get(v->mv_data, v->mv_size, &r);
    if (rc < 0 || r.id != key)
        return say(c, "session record %u: %s", key,
                   rc == -EBADMSG ? "bad length or checksum"
                   : rc < 0       ? strerror(-rc)
                                  : "key mismatch");
    return 0;
}

static int check_meta(copier *c, const MDB_val *k, const MDB_val *v)
{
    if (k->mv_size != 4 || memcmp(k->mv_data, "meta", 4) != 0)
        return say(c, "an unknown key in the meta table");
    memd_store_meta m;
    int rc = memd_store_meta_get(v->mv_data, v->mv_size, &m);
    if (rc == -EPROTONOSUPPORT)
        return say(c, "written by another memd version (store format %u, this memd reads %u)",
                   m.format, MEMD_STORE_FORMAT);
    if (rc < 0)
        return say(c, "its meta record: %s",
                   rc == -EBADMSG ? "bad length or checksum" : strerror(-rc));
    return 0;
}

/* Other layers' records (store_object.h): the envelope, checksum included. What they say
 * is their owner's to check when memd restores them. */
static int check_object(copier *c, const MDB_val *k, const MDB_val *v)
{
    memd_record r;
    int rc = memd_store_obj_get(k->mv_data, k->mv_size, v->mv_data, v->mv_size, &r);
    if (rc < 0)
        return say(c, "object record %u/%llu: %s", r.kind, (unsigned long long)r.id,
                   rc == -EBADMSG ? "bad length, checksum or key" : strerror(-rc));
    return 0;
}

typedef struct table {
    const char *name;
    int (*check)(copier *, const MDB_val *, const MDB_val *);
    bool optional;                 /* absent from stores written before it existed */
} table;

static const table tables[] = {
    {"meta", check_meta, false},
    {"sessions", check_session, false},
    {"allocations", check_alloc, false},
    {"objects", check_object, true},
};

static int lmdb_say(copier *c, int rc, const char *what, const char *name)
{
    return say(c, "%s %s: %s", what, name, mdb_strerror(rc));
}

/* Reads table t through, checking every record, and appends each to the copy. */
static int copy_table(copier *c, const table *t, MDB_dbi from, MDB_dbi to)
{
    MDB_cursor *cur;
    int rc = mdb_cursor_open(c->rtxn, from, &cur);
    if (rc != 0)
        return lmdb_say(c, rc, "cannot read table", t->name);
    MDB_val k, v, prev = {0, NULL};
    size_t n = 0;
    int out = 0;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && out == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        /* Keys of one table have one size: byte order is their order. */
        if (prev.mv_data && (k.mv_size != prev.mv_size ||
                             memcmp(k.mv_data, prev.mv_data, k.mv_size) <= 0)) {
            out = say(c, "table %s: keys out of order", t->name);
            break;
        }
        if ((out = t->check(c, &k, &v)) < 0)
            break;
        int put;
        if (c->wtxn && (put = mdb_put(c->wtxn, to, &k, &v, MDB_APPEND)) != 0)
            copy_failed(c, put);
        prev = k;
        n++;
    }
    mdb_cursor_close(cur);
    if (out < 0)
        return out;
    if (rc != MDB_NOTFOUND)
        return lmdb_say(c, rc, "cannot read table", t->name);
    MDB_stat ms;
    if ((rc = mdb_stat(c->rtxn, from, &ms)) != 0)
        return lmdb_say(c, rc, "cannot count table", t->name);
    if (ms.ms_entries != n)
        return say(c, "table %s holds %zu records where LMDB counts %zu", t->name, n,
                   ms.ms_entries);
    if (t->check == check_meta && n != 1)
        return say(c, "no meta record");
    return 0;
}

static int open_env(MDB_env **env, const char *path, size_t map, unsigned flags)
{
    int rc = mdb_env_create(env);
    if (rc != 0)
        return rc;
    if ((rc = mdb_env_set_maxdbs(*env, 4)) == 0 && (rc = mdb_env_set_mapsize(*env, map)) == 0)
        rc = mdb_env_open(*env, path, flags | MDB_NOSUBDIR | MDB_NOLOCK | MDB_NORDAHEAD, 0600);
    if (rc != 0) {
        mdb_env_close(*env);
        *env = NULL;
    }
    return rc;
}

/* Every table of src read through and checked, and copied into dst while it can be.
 * 0, -EINVAL (damaged: c->msg says how), -EIO (sound, but no copy: c->msg says why). */
static int read_tables(copier *c, MDB_env *src, MDB_env *dst, const char *to)
{
    int rc, out = 0;
    if ((rc = mdb_txn_begin(src, NULL, MDB_RDONLY, &c->rtxn)) != 0)
        return say(c, "LMDB cannot read it: %s", mdb_strerror(rc));
    if (dst && (rc = mdb_txn_begin(dst, NULL, 0, &c->wtxn)) != 0)
        copy_failed(c, rc);
    for (size_t i = 0; out == 0 && i < sizeof tables / sizeof tables[0]; i++) {
        MDB_dbi a, b = 0;
        if ((rc = mdb_dbi_open(c->rtxn, tables[i].name, 0, &a)) == MDB_NOTFOUND &&
            tables[i].optional)
            continue;
        if (rc != 0) {
            out = lmdb_say(c, rc, "no table", tables[i].name);
            break;
        }
        if (c->wtxn && (rc = mdb_dbi_open(c->wtxn, tables[i].name, MDB_CREATE, &b)) != 0)
            copy_failed(c, rc);
        out = copy_table(c, &tables[i], a, b);
    }
    mdb_txn_abort(c->rtxn);
    if (out != 0) {
        copy_failed(c, 0);
        return out;
    }
    if (c->wtxn && (rc = mdb_txn_commit(c->wtxn)) != 0)
        c->copy_rc = rc;
    c->wtxn = NULL;
    if (c->copy_rc) {
        snprintf(c->msg, c->msglen, "cannot write the checked copy %s: %s", to,
                 mdb_strerror(c->copy_rc));
        return -EIO;
    }
    return 0;
}

/* Checks the store at from and copies it to to in one pass: 0; -EINVAL, damaged;
 * -EIO, the store is sound but the copy could not be written. */
static int copy_store(const char *from, const char *to, uint64_t size, char *msg, size_t msglen)
{
    copier c = {.msg = msg, .msglen = msglen};
    MDB_env *src = NULL, *dst = NULL;
    int rc = open_env(&src, from, (size_t)size, MDB_RDONLY);
    if (rc != 0)
        return say(&c, "LMDB cannot open it: %s", mdb_strerror(rc));
    /* The copy is never larger than the original's pages; twice that is room to spare. */
    if ((rc = open_env(&dst, to, (size_t)(2 * size + MEMD_STORE_MAP_MIN), MDB_NOSYNC)) != 0)
        c.copy_rc = rc; /* checked all the same */
    int out = read_tables(&c, src, dst, to);
    if (dst)
        mdb_env_close(dst);
    mdb_env_close(src);
    return out;
}

/* ---- 3: the child, seen from memd ---- */

#define CHECK_SECONDS 120u /* a store memd wrote reads in well under a second per 100 MB */

int memd_store_checked_copy(const char *from, const char *to, memd_error *err)
{
    struct stat sb;
    if (stat(from, &sb) < 0)
        return memd_error_set(err, -errno, "cannot stat the state store %s: %s", from,
                              strerror(errno));
    int p[2];
    if (pipe(p) < 0)
        return memd_error_set(err, -errno, "cannot check the state store %s: pipe: %s", from,
                              strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return memd_error_set(err, -e, "cannot check the state store %s: fork: %s", from,
                              strerror(e));
    }
    if (pid == 0) {
        close(p[0]);
        alarm(CHECK_SECONDS); /* a loop in damaged pages ends here */
        char msg[400] = "";
        int rc = copy_store(from, to, (uint64_t)sb.st_size, msg, sizeof msg);
        if (rc < 0 && write(p[1], msg, strlen(msg)) < 0)
            _exit(3);
        _exit(rc == -EIO ? 2 : rc < 0 ? 1 : 0);
    }
    close(p[1]);
    char msg[400];
    size_t got = 0;
    for (;;) {
        ssize_t n = read(p[0], msg + got, sizeof msg - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || (got += (size_t)n) == sizeof msg - 1)
            break;
    }
    msg[got] = '\0';
    close(p[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return memd_error_set(err, -errno, "cannot check the state store %s: waitpid: %s",
                                  from, strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    unlink(to);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
        /* Every record checked, only the copy failed (a full state file system): the
         * store is used in place. Its free list is the one thing left unchecked. */
        memd_log(LOG_WARNING, "state store %s: checked, but no checked copy could be made "
                              "(%s): using it in place", from, msg);
        return 1;
    }
    char why[480];
    if (WIFSIGNALED(status))
        snprintf(why, sizeof why, "reading it %s (signal %d, %s)",
                 WTERMSIG(status) == SIGALRM ? "took over " "120 s" : "crashed the checker",
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(why, sizeof why, "%s", got ? msg : "the checker failed");
    return memd_error_set(err, -EINVAL, DAMAGED, from, why);
}
