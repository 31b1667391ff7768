/* memd daemon — stored sessions: tokens, reclaim after a restart, orphans and their
 * release (see store.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "alloc.h"
#include "error.h"
#include "event.h"
#include "log.h"
#include "procstat.h"
#include "session.h"
#include "store_internal.h"

static void remember(memd_store *S, const memd_session *s)
{
    S->last = s;
    S->last_id = s->id;
}

static int random_token(uint8_t *out)
{
    size_t got = 0;
    while (got < MEMD_TOKEN_SIZE) {
        ssize_t n = getrandom(out + got, MEMD_TOKEN_SIZE - got, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        got += (size_t)n;
    }
    return 0;
}

int memd_store_sess_add(memd_state *st, memd_session *s)
{
    memd_store *S = st->store;
    memd_store_sess *ss = memd_store_sess_get(S, s->id);
    if (ss) {
        if (ss->s != s)
            return -EEXIST; /* an orphan with this id: cannot happen, ids are not reused */
        remember(S, s);
        return 0;
    }
    ss = calloc(1, sizeof *ss);
    if (!ss)
        return -ENOMEM;
    ss->s = s;
    int rc = random_token(ss->token);
    if (rc == 0 && memd_map_put(&S->sessions, s->id, (uint64_t)(uintptr_t)ss) < 0)
        rc = -ENOMEM;
    if (rc < 0) {
        free(ss);
        return rc;
    }
    /* Unknown (0) if /proc cannot tell: then only a vanished pid releases the orphan
     * early, a reused one waits for the grace period. */
    if (memd_proc_starttime(s->pid, &ss->starttime) < 0)
        ss->starttime = 0;
    memd_store_mark(S, MEMD_STORE_SESS_KEY | s->id);
    remember(S, s);
    return 0;
}

/* ---- HELLO ---- */

static bool token_eq(const uint8_t *a, const uint8_t *b)
{
    uint8_t d = 0; /* no early exit: the time taken says nothing about the token */
    for (size_t i = 0; i < MEMD_TOKEN_SIZE; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}

/* s takes over orphan ss: its id and every hold, in memory and in the store. */
static uint32_t take_over(memd_state *st, memd_session *s, memd_store_sess *ss)
{
    memd_store *S = st->store;
    memd_session *o = ss->s;
    memd_store_sess *mine = memd_store_sess_get(S, s->id);
    if (mine && mine->s == s) {
        /* s said a plain HELLO before: its own record goes, it becomes the orphan. */
        memd_map_remove(&S->sessions, s->id);
        memd_store_mark(S, MEMD_STORE_SESS_KEY | s->id);
        free(mine);
    }
    uint32_t n = o->nholds;
    for (memd_hold *h = o->holds; h; h = h->next)
        h->session = s;
    s->holds = o->holds; /* s holds nothing (checked): the lists need no merging */
    s->nholds = o->nholds;
    o->holds = NULL;
    o->nholds = 0;
    free(s->group_holds); /* and so do its per-group counts (state.h) */
    s->group_holds = o->group_holds;
    o->group_holds = NULL;
    s->id = o->id;
    ss->s = s;
    ss->orphan = false;
    S->norphans--;
    if (memd_proc_starttime(s->pid, &ss->starttime) < 0)
        ss->starttime = 0;
    memd_store_mark(S, MEMD_STORE_SESS_KEY | s->id);
    remember(S, s);
    memd_hooks_session_reclaimed(st, o, s); /* its models and instances too (hooks.h) */
    memd_session_close(st, o); /* unlinks it; it holds nothing and is no longer stored */
    free(o);
    return n;
}

static int reclaim(memd_state *st, memd_session *s, const memd_wire_hello *h,
                   memd_wire_welcome *w, memd_error *err)
{
    memd_store *S = st->store;
    uint32_t id = h->reclaim_session;
    if (!S)
        return memd_error_set(err, -ESTALE, "cannot reclaim session %u: this memd keeps no "
                                          "state store", id);
    if (s->nholds)
        return memd_error_set(err, -EISCONN, "cannot reclaim session %u: this session %u "
                                           "holds allocations already", id, s->id);
    memd_store_sess *ss = memd_store_sess_get(S, id);
    if (!ss)
        return memd_error_set(err, -ESTALE,
                            "session %u is not known to memd: released after its reclaim "
                            "period, its process was gone, or the state was reset", id);
    /* Token and uid first: whether a session is connected is its owner's business only
     * (issue 27: -EBUSY told another uid). */
    if (!token_eq(ss->token, h->reclaim_token) || ss->s->uid != s->uid)
        return memd_error_set(err, -EACCES, "reclaiming session %u: token or uid %u does not "
                                          "match", id, s->uid);
    if (!ss->orphan)
        return memd_error_set(err, ss->s == s ? -EISCONN : -EBUSY,
                            "session %u is connected; only an orphaned session (from before "
                            "a restart) can be reclaimed", id);
    uint32_t old = s->id;
    uint32_t n = take_over(st, s, ss);
    memd_event(st, s, MEMD_EVENT_RECLAIM, LOG_INFO, UINT32_MAX, 0,
               "session %u (pid %u, %s) reclaimed orphaned session %u with %u allocation "
               "holds", old, s->pid, s->comm, s->id, n);
    w->flags |= MEMD_WELCOME_F_RECLAIMED;
    w->reclaimed = n;
    return 0;
}

int memd_store_hello(memd_state *st, memd_session *s, const memd_wire_hello *h,
                     memd_wire_welcome *w, memd_error *err)
{
    memd_store *S = st->store;
    if (h->flags & MEMD_HELLO_F_RECLAIM) {
        int rc = reclaim(st, s, h, w, err);
        if (rc < 0)
            return rc;
    } else if (S && memd_store_sess_add(st, s) < 0) {
        return memd_error_set(err, -EIO, "state store: cannot record session %u", s->id);
    }
    w->session_id = s->id;
    if (S) {
        const memd_store_sess *ss = memd_store_sess_get(S, s->id);
        memcpy(w->token, ss->token, sizeof w->token);
        w->flags |= MEMD_WELCOME_F_PERSISTENT;
    }
    return 0;
}

/* ---- closing, orphans ---- */

void memd_store_session_closed(void *data, memd_session *s)
{
    memd_state *st = data;
    memd_store *S = st->store;
    memd_store_sess *ss = memd_store_sess_get(S, s->id);
    if (!ss || ss->s != s)
        return; /* never stored, or an orphan just taken over */
    memd_map_remove(&S->sessions, s->id);
    if (ss->orphan)
        S->norphans--;
    free(ss);
    if (S->last == s)
        S->last = NULL;
    if (S->stopping && !S->in_round)
        return; /* stays in the store: the next memd restores it as an orphan */
    memd_store_mark(S, MEMD_STORE_SESS_KEY | s->id);
    if (S->defer == 0) {
        memd_error e;
        (void)memd_store_flush(st, &e); /* logged there; retried by the tick */
    }
}

uint32_t memd_store_orphans(const memd_state *st)
{
    return st->store ? st->store->norphans : 0;
}

uint32_t memd_store_session_flags(const memd_state *st, const memd_session *s,
                                  uint64_t *deadline_ns)
{
    const memd_store_sess *ss = st->store ? memd_store_sess_get(st->store, s->id) : NULL;
    if (ss && ss->s == s && ss->orphan) {
        *deadline_ns = ss->deadline_ns;
        return MEMD_SESSION_F_ORPHANED;
    }
    *deadline_ns = 0;
    return 0;
}

bool memd_store_orphan_dead(const memd_store_sess *ss)
{
    uint64_t start;
    int rc = memd_proc_starttime(ss->s->pid, &start);
    if (rc == -ENOENT)
        return true;
    /* Another process now has the pid: the owner is gone. (/proc not readable: wait.) */
    return rc == 0 && ss->starttime != 0 && start != ss->starttime;
}

void memd_store_orphan_release(memd_state *st, memd_store_sess *ss, const char *why)
{
    memd_store *S = st->store;
    memd_session *o = ss->s;
    uint64_t bytes = 0;
    for (const memd_hold *h = o->holds; h; h = h->next)
        bytes += memd_alloc_device_bytes(st, memd_hold_alloc(h));
    memd_event(st, o, MEMD_EVENT_ORPHAN_RELEASE, LOG_NOTICE, UINT32_MAX, bytes,
               "orphaned session %u (pid %u, %s, uid %u) %s: releasing its %u allocation "
               "holds, %llu bytes", o->id, o->pid, o->comm[0] ? o->comm : "?", o->uid, why,
               o->nholds, (unsigned long long)bytes);
    S->defer++;
    memd_session_close(st, o); /* frees ss through memd_store_session_closed */
    S->defer--;
    free(o);
}

/* The orphans (a copy: releasing one changes the table). NULL when there are none or
 * memory is short (then nothing is done this time). */
static memd_store_sess **orphans(memd_store *S, size_t *n)
{
    *n = 0;
    if (S->norphans == 0)
        return NULL;
    memd_store_sess **list = malloc(S->norphans * sizeof *list);
    if (!list)
        return NULL;
    for (size_t i = 0; i < S->sessions.cap && *n < S->norphans; i++) {
        if (!S->sessions.slots[i].key)
            continue;
        memd_store_sess *ss = (memd_store_sess *)(uintptr_t)S->sessions.slots[i].val;
        if (ss->orphan)
            list[(*n)++] = ss;
    }
    return list;
}

void memd_store_drop_orphans(memd_state *st)
{
    memd_store *S = st->store;
    size_t n;
    memd_store_sess **list = orphans(S, &n);
    for (size_t i = 0; i < n; i++) {
        memd_session *o = list[i]->s;
        memd_session_close(st, o); /* not recorded: the caller set stopping */
        free(o);
    }
    free(list);
}

uint32_t memd_store_tick(memd_state *st)
{
    memd_store *S = st->store;
    if (!S)
        return 0;
    size_t n;
    memd_store_sess **list = orphans(S, &n);
    uint64_t now = memd_now_ns();
    char why[96];
    for (size_t i = 0; i < n; i++) {
        memd_store_sess *ss = list[i];
        if (memd_store_orphan_dead(ss)) {
            memd_store_orphan_release(st, ss, "has no process any more");
        } else if (now >= ss->deadline_ns) {
            snprintf(why, sizeof why, "was not reclaimed within %u ms",
                     st->limits.reclaim_grace_ms);
            memd_store_orphan_release(st, ss, why);
        }
    }
    free(list);
    if (memd_store_pending(S)) {
        memd_error e;
        (void)memd_store_flush(st, &e); /* logged there */
    }
    return S->norphans;
}

uint32_t memd_store_tick_ms(const memd_state *st)
{
    uint32_t ms = st->limits.reclaim_grace_ms / 4;
    return ms < 20 ? 20 : ms > 1000 ? 1000 : ms;
}
