/* memd daemon — the flight recorder (see history.h). */
#include "history.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Interned strings past this many bytes are recorded as "": a client that sends a new
 * context with every request cannot grow the daemon without bound. */
#define HIST_STRINGS_MAX (64u << 20)
/* The separator between a context and its stack in one interned string. */
#define HIST_SEP '\x1f'

typedef struct hist_strings {
    char **s;                      /* id i is s[i - 1] */
    uint32_t n, cap;
    uint32_t *slots;               /* open addressing over ids; 0: empty */
    uint32_t nslots;               /* power of two, or 0 */
    size_t bytes;
} hist_strings;

struct memd_history {
    memd_hist_rec *ring;
    uint64_t cap;                  /* records */
    uint64_t next_seq;             /* the next record's number; the first is 1 */
    uint64_t pos;                  /* its slot: (next_seq - 1) % cap, kept to skip a division */
    memd_hist_who *whos;
    uint32_t nwhos, whos_cap;
    uint32_t free_who;             /* first free entry + 1, 0: none */
    uint32_t used_whos;
    hist_strings strs;
};

static uint32_t hash_str(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static int strings_grow(hist_strings *t)
{
    uint32_t n = t->nslots ? t->nslots * 2 : 256;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t i = 0; i < t->nslots; i++) {
        uint32_t id = t->slots[i];
        if (!id)
            continue;
        uint32_t j = hash_str(t->s[id - 1], strlen(t->s[id - 1])) & (n - 1);
        while (slots[j])
            j = (j + 1) & (n - 1);
        slots[j] = id;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

/* The id of s[0, len) ("" is 0), made on first sight; 0 as well when memory is short or
 * the table is full. */
static uint32_t intern(hist_strings *t, const char *s, size_t len)
{
    if (len == 0)
        return 0;
    if ((t->n + 1) * 2 > t->nslots && strings_grow(t) < 0)
        return 0;
    uint32_t j = hash_str(s, len) & (t->nslots - 1);
    for (uint32_t id; (id = t->slots[j]); j = (j + 1) & (t->nslots - 1))
        if (strncmp(t->s[id - 1], s, len) == 0 && t->s[id - 1][len] == '\0')
            return id;
    if (t->bytes + len + 1 > HIST_STRINGS_MAX)
        return 0;
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 256;
        char **ns = realloc(t->s, cap * sizeof *ns);
        if (!ns)
            return 0;
        t->s = ns;
        t->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return 0;
    memcpy(copy, s, len);
    copy[len] = '\0';
    t->s[t->n++] = copy;
    t->bytes += len + 1;
    return t->slots[j] = t->n;
}

static const char *string_of(const hist_strings *t, uint32_t id)
{
    return id ? t->s[id - 1] : "";
}

static memd_history *recorder(memd_state *st)
{
    if (st->history || st->limits.history_events == 0)
        return st->history;
    memd_history *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    /* Populated at once, and each page touched from here: first touches, one page per 64
     * records, would fault in the allocation path until the ring has wrapped (3x a
     * 64-buffer batch's latency, measured; the touch took a further ~12 % off in a VM
     * whose hypervisor maps a page on its first touch from user space). */
    size_t bytes = (size_t)st->limits.history_events * sizeof *h->ring;
    void *ring = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (ring == MAP_FAILED) {
        free(h);
        return NULL;
    }
    for (size_t off = 0; off < bytes; off += 4096)
        ((volatile char *)ring)[off] = 0;
    h->ring = ring;
    h->cap = st->limits.history_events;
    h->next_seq = 1;
    return st->history = h;
}

int memd_history_prepare(memd_state *st)
{
    return recorder(st) || st->limits.history_events == 0 ? 0 : -ENOMEM;
}

static void who_put(memd_history *h, uint32_t i)
{
    memd_hist_who *w = &h->whos[i];
    if (--w->refs)
        return;
    w->next_free = h->free_who;
    h->free_who = i + 1;
    h->used_whos--;
}

/* A free entry: one no session and no record names any more, else a new one;
 * UINT32_MAX when memory is short. */
static uint32_t who_new(memd_history *h)
{
    if (h->free_who) {
        uint32_t i = h->free_who - 1;
        h->free_who = h->whos[i].next_free;
        return i;
    }
    if (h->nwhos == h->whos_cap) {
        uint32_t cap = h->whos_cap ? h->whos_cap * 2 : 64;
        memd_hist_who *w = realloc(h->whos, cap * sizeof *w);
        if (!w)
            return UINT32_MAX;
        h->whos = w;
        h->whos_cap = cap;
    }
    return h->nwhos++;
}

/* s's entry, made the first time it records something (the session's reference), with a
 * reference for the caller's record; UINT32_MAX when memory is short. */
static uint32_t who_of(memd_history *h, memd_session *s)
{
    if (s->hist_who) {
        h->whos[s->hist_who - 1].refs++;
        return s->hist_who - 1;
    }
    uint32_t i = who_new(h);
    if (i == UINT32_MAX)
        return i;
    memd_hist_who *w = &h->whos[i];
    *w = (memd_hist_who){.session_id = s->id, .pid = s->pid, .uid = s->uid, .refs = 2};
    memcpy(w->comm, s->comm, sizeof w->comm);
    w->comm[sizeof w->comm - 1] = '\0';
    memcpy(w->client_name, s->client_name, sizeof w->client_name);
    w->client_name[sizeof w->client_name - 1] = '\0';
    h->used_whos++;
    s->hist_who = i + 1;
    return i;
}

/* What every record has, in *r; false when the recorder is off. */
static bool begin(memd_state *st, memd_session *s, uint8_t type, memd_hist_rec *r)
{
    memd_history *h = recorder(st);
    uint32_t who;
    if (!h || (who = who_of(h, s)) == UINT32_MAX)
        return false;
    *r = (memd_hist_rec){.time_ns = memd_state_now(st), .who = who, .type = type,
                         .context = s->hist_context};
    return true;
}

/* The record's references to who-entries: its session, and a revoking admin. */
static uint32_t actor_of(const memd_hist_rec *r)
{
    return r->type == MEMD_HIST_REVOKE ? r->actor : 0;
}

/* r into the next slot (one cache line: the ring's records never straddle two); the
 * record it overwrites lets go of its who-entries. */
static void put(memd_history *h, const memd_hist_rec *r)
{
    _Static_assert(sizeof *r == 64, "a record is one cache line");
    memd_hist_rec *old = &h->ring[h->pos];
    if (h->next_seq > h->cap) {
        who_put(h, old->who);
        if (actor_of(old))
            who_put(h, actor_of(old) - 1);
    }
    *old = *r;
    if (++h->pos == h->cap)
        h->pos = 0;
    h->next_seq++;
}

static void fill(memd_hist_rec *r, const memd_state *st, const memd_alloc *a)
{
    r->handle = a->handle;
    r->address = a->pl.address;
    r->size_per_bank = a->pl.size_per_bank;
    r->banks = memd_alloc_bank_count(st, a);
    r->device = st->devs[a->dev].spec->id;
    r->cls = a->cls;
    r->kind = a->pl.kind;
    r->region = a->pl.region;
}

void memd_history_alloc(memd_state *st, memd_session *s, const memd_alloc *a)
{
    memd_hist_rec r;
    if (!begin(st, s, MEMD_HIST_ALLOC, &r))
        return;
    fill(&r, st, a);
    const char *name = memd_alloc_name(a);
    if (name[0])
        r.name = intern(&st->history->strs, name, strlen(name));
    put(st->history, &r);
}

void memd_history_release(memd_state *st, memd_session *s, const memd_alloc *a)
{
    uint8_t type = st->hist_cause ? st->hist_cause : MEMD_HIST_FREE;
    memd_hist_rec r;
    if (!begin(st, s, type, &r))
        return;
    fill(&r, st, a);
    const char *name = memd_alloc_name(a);
    if (name[0])
        r.name = intern(&st->history->strs, name, strlen(name));
    if (type == MEMD_HIST_REVOKE && st->hist_actor) {
        uint32_t actor = who_of(st->history, st->hist_actor);
        r.actor = actor == UINT32_MAX ? 0 : actor + 1;
        r.context = st->hist_actor->hist_context; /* why the admin freed it */
    }
    put(st->history, &r);
}

void memd_history_object(memd_state *st, memd_session *s, const memd_hist_obj *o)
{
    memd_hist_rec r;
    if (!begin(st, s, o->type, &r))
        return;
    r.handle = o->id;
    r.address = o->ref;
    r.size_per_bank = o->bytes;
    r.banks = o->count;
    r.actor = o->added;
    r.status = (int32_t)o->removed;
    r.device = o->device;
    r.cls = o->cls;
    r.kind = o->kind;
    r.region = o->region;
    if (o->name && o->name[0])
        r.name = intern(&st->history->strs, o->name, strnlen(o->name, MEMD_NAME_MAX - 1));
    put(st->history, &r);
}

void memd_history_session_end(memd_state *st, memd_session *s)
{
    if (st->history && s->hist_who)
        who_put(st->history, s->hist_who - 1);
    s->hist_who = 0;
}

uint32_t memd_history_whos(const memd_state *st)
{
    return st->history ? st->history->used_whos : 0;
}

void memd_history_fail(memd_state *st, memd_session *s, const memd_alloc_request *req,
                       int rc, const memd_error *err)
{
    memd_hist_rec r;
    if (!begin(st, s, MEMD_HIST_FAIL, &r))
        return;
    r.handle = err->room.requested ? err->room.requested : req->bytes;
    r.size_per_bank = err->room.size_per_bank;
    r.device = req->device;
    r.cls = req->cls < MEMD_CLASS_COUNT ? req->cls : 0;
    r.kind = err->room.kind < MEMD_KIND_COUNT ? err->room.kind : 0;
    r.region = err->room.region;
    r.status = rc;
    if (req->name && req->name[0])
        r.name = intern(&st->history->strs, req->name, strnlen(req->name, MEMD_NAME_MAX - 1));
    put(st->history, &r);
}

int memd_history_set_context(memd_state *st, memd_session *s, const char *context,
                             const char *stack)
{
    memd_history *h = recorder(st);
    if (!h)
        return 0; /* nothing records it */
    size_t cl = strlen(context), sl = strlen(stack);
    if (cl + sl == 0) {
        s->hist_context = 0;
        return 0;
    }
    char buf[MEMD_CONTEXT_MAX + MEMD_STACK_MAX];
    memcpy(buf, context, cl);
    size_t len = cl;
    if (sl) {
        buf[len++] = HIST_SEP;
        memcpy(buf + len, stack, sl);
        len += sl;
    }
    uint32_t id = intern(&h->strs, buf, len);
    if (!id)
        return -ENOMEM;
    s->hist_context = id;
    return 0;
}

static bool passes(const memd_hist_rec *r, const memd_hist_who *w, const memd_session *s,
                   const memd_hist_filter *f)
{
    if ((!s->admin && w->uid != s->uid) || (r->type > MEMD_HIST_REVOKE && !f->all))
        return false;
    if (r->time_ns < f->since_ns || (f->device != UINT32_MAX && r->device != f->device) ||
        (f->pid && w->pid != f->pid))
        return false;
    return !f->client[0] || strcmp(f->client, w->client_name) == 0 ||
           strcmp(f->client, w->comm) == 0;
}

uint64_t memd_history_read(const memd_state *st, const memd_session *s, uint64_t since,
                           uint32_t max, const memd_hist_filter *f, uint64_t *lost,
                           int (*fn)(void *ctx, const memd_hist_view *v), void *ctx)
{
    const memd_history *h = st->history;
    *lost = 0;
    if (!h)
        return since > 1 ? since : 1;
    uint64_t oldest = h->next_seq > h->cap ? h->next_seq - h->cap : 1;
    if (since < 1)
        since = 1;
    if (since > h->next_seq)
        since = oldest; /* a number from a previous daemon: all of this one's */
    if (since < oldest) {
        *lost = oldest - since;
        since = oldest;
    }
    uint64_t seq = since;
    for (uint32_t n = 0; seq < h->next_seq && (max == 0 || n < max); seq++) {
        const memd_hist_rec *r = &h->ring[(seq - 1) % h->cap];
        const memd_hist_who *w = &h->whos[r->who];
        if (!passes(r, w, s, f))
            continue;
        const char *c = string_of(&h->strs, r->context);
        const char *sep = strchr(c, HIST_SEP);
        memd_hist_view v = {.seq = seq, .rec = r, .who = w,
                            .actor = actor_of(r) ? &h->whos[actor_of(r) - 1] : NULL,
                            .name = string_of(&h->strs, r->name), .context = c,
                            .context_len = sep ? (size_t)(sep - c) : strlen(c)};
        if (fn(ctx, &v) < 0)
            break;
        n++;
    }
    return seq;
}

uint64_t memd_history_next_seq(const memd_state *st)
{
    return st->history ? st->history->next_seq : 1;
}

uint64_t memd_history_capacity(const memd_state *st)
{
    return st->limits.history_events;
}

void memd_history_free(memd_state *st)
{
    memd_history *h = st->history;
    if (!h)
        return;
    for (uint32_t i = 0; i < h->strs.n; i++)
        free(h->strs.s[i]);
    free(h->strs.s);
    free(h->strs.slots);
    free(h->whos);
    munmap(h->ring, (size_t)h->cap * sizeof *h->ring);
    free(h);
    st->history = NULL;
}
