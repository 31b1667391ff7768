/* memd daemon — limits per cgroup (see cglimit.h). A handful to a few hundred per host
 * (one per pod and device): an array, and a hash index so that a charge costs one lookup
 * per component of the session's cgroup path. */
#include "cglimit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_path.h"
#include "names.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
/* A path of MEMD_SESSION_CGROUP_MAX - 1 bytes has at most half as many components, plus
 * the root. */
#define MAX_DEPTH (MEMD_SESSION_CGROUP_MAX / 2 + 1)

static uint64_t key_of(uint64_t path_hash, uint32_t dev, uint8_t kind)
{
    uint64_t k = (path_hash ^ ((uint64_t)dev << 8 | kind)) * 0x9E3779B97F4A7C15ull;
    return k ? k : 1; /* the map's keys are never 0 */
}

/* The FNV-1a hash of every ancestor of path and of path itself, root first, with its
 * length: one pass, since a prefix's hash is the running hash at its end. */
typedef struct prefix {
    uint64_t hash;
    size_t len;
} prefix;

static size_t prefixes(const char *path, prefix *out)
{
    uint64_t f = FNV_OFFSET;
    size_t n = 0;
    for (size_t i = 0; path[i] && n < MAX_DEPTH; i++) {
        f = (f ^ (uint8_t)path[i]) * FNV_PRIME;
        if (i == 0 || path[i + 1] == '/' || path[i + 1] == '\0')
            out[n++] = (prefix){f, i + 1};
    }
    return n;
}

static uint64_t path_hash(const char *path)
{
    uint64_t f = FNV_OFFSET;
    for (; *path; path++)
        f = (f ^ (uint8_t)*path) * FNV_PRIME;
    return f;
}

/* The limit of (path[0..len), dev, kind), or NULL. */
static memd_cglimit *find(const memd_cglimits *L, uint64_t key, const char *path, size_t len)
{
    uint64_t *i = memd_map_get(&L->index, key);
    if (!i)
        return NULL;
    memd_cglimit *l = &L->v[*i - 1];
    return strlen(l->cgroup) == len && memcmp(l->cgroup, path, len) == 0 ? l : NULL;
}

/* Is cgroup path in the subtree of limit path top? */
static bool under(const char *path, const char *top)
{
    size_t n = strlen(top);
    if (path[0] != '/')
        return false;
    if (n == 1)
        return true; /* the root */
    return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Bytes the sessions in l's subtree hold on its (device, group) now. */
static uint64_t usage(const memd_state *st, const memd_cglimit *l)
{
    uint64_t sum = 0;
    size_t g = (size_t)l->dev * MEMD_KIND_COUNT + l->kind;
    for (const memd_session *s = st->sessions; s; s = s->next)
        if (s->group_holds && under(s->cgroup, l->cgroup))
            sum += s->group_holds[g].bytes;
    return sum;
}

int memd_cglimits_init(memd_state *st, const memd_config *cfg, memd_error *err)
{
    if (!(st->cglimits = calloc(1, sizeof *st->cglimits)))
        return memd_error_set(err, -ENOMEM, "out of memory");
    memd_cglimit_records_listen(st);
    return memd_cglimits_reload(st, cfg, err);
}

void memd_cglimits_fini(memd_state *st)
{
    memd_cglimits *L = st->cglimits;
    if (!L)
        return;
    memd_hook_remove(st, &L->hook);
    memd_map_free(&L->index);
    free(L->v);
    free(L);
    st->cglimits = NULL;
}

static void remove_at(memd_cglimits *L, uint32_t i)
{
    memd_map_remove(&L->index, L->v[i].key);
    if (i != --L->n) {
        L->v[i] = L->v[L->n];
        *memd_map_get(&L->index, L->v[i].key) = i + 1;
    }
}

int memd_cglimits_reload(memd_state *st, const memd_config *cfg, memd_error *err)
{
    memd_cglimits *L = st->cglimits;
    for (uint32_t i = L->n; i-- > 0;)
        if (L->v[i].from_config)
            remove_at(L, i);
    for (uint32_t i = 0; i < cfg->ncglimits; i++) {
        const memd_cglimit_spec *c = &cfg->cglimits[i];
        int dev = memd_state_dev_index(st, c->device);
        if (dev < 0) /* the loader checked it against these devices */
            return memd_error_set(err, -EINVAL, "cgroup limit: no device %u", c->device);
        uint64_t key = key_of(path_hash(c->cgroup), (uint32_t)dev, (uint8_t)c->kind);
        if (memd_map_get(&L->index, key))
            continue; /* one set by request wins */
        int rc = memd_cglimit_set(st, c->cgroup, (uint32_t)dev, (uint8_t)c->kind, c->max,
                                  MEMD_CGLIMIT_CONFIG, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int memd_cglimit_set(memd_state *st, const char *cgroup, uint32_t dev, uint8_t kind,
                     uint64_t max, memd_cglimit_origin origin, memd_error *err)
{
    memd_cglimits *L = st->cglimits;
    const char *why;
    if (strlen(cgroup) >= MEMD_SESSION_CGROUP_MAX || memd_cgroup_path_check(cgroup, &why) < 0)
        return memd_error_set(err, -EINVAL, "cgroup '%.*s': %s", 100, cgroup,
                              strlen(cgroup) >= MEMD_SESSION_CGROUP_MAX ? "too long" : why);
    const memd_device_spec *spec = st->devs[dev].spec;
    if (kind >= MEMD_KIND_COUNT || spec->groups[kind].banks == 0)
        return memd_error_set(err, -EINVAL, "device %u (%s) has no %s banks", spec->id,
                              spec->name, memd_kind_name((memd_kind)(kind % MEMD_KIND_COUNT)));
    uint64_t key = key_of(path_hash(cgroup), dev, kind);
    uint64_t *at = memd_map_get(&L->index, key);
    memd_cglimit *l = at ? &L->v[*at - 1] : NULL;
    if (l && strcmp(l->cgroup, cgroup) != 0)
        return memd_error_set(err, -EEXIST, "cgroup '%.*s': its key collides with '%.*s'", 80,
                              cgroup, 80, l->cgroup);
    if (!l) {
        if (L->n == L->cap) {
            uint32_t cap = L->cap ? 2 * L->cap : 16;
            memd_cglimit *v = realloc(L->v, sizeof *v * cap);
            if (!v)
                return memd_error_set(err, -ENOMEM, "daemon out of memory");
            L->v = v;
            L->cap = cap;
        }
        if (memd_map_put(&L->index, key, L->n + 1) < 0)
            return memd_error_set(err, -ENOMEM, "daemon out of memory");
        l = &L->v[L->n++];
        *l = (memd_cglimit){.key = key, .dev = dev, .kind = kind};
        snprintf(l->cgroup, sizeof l->cgroup, "%s", cgroup);
        l->current = l->peak = usage(st, l);
    }
    l->max = max;
    l->from_config = origin == MEMD_CGLIMIT_CONFIG;
    if (origin == MEMD_CGLIMIT_REQUEST)
        memd_cglimit_record_put(st, l, false);
    return 0;
}

uint32_t memd_cglimit_clear(memd_state *st, const char *cgroup, uint32_t dev, uint8_t kind)
{
    memd_cglimits *L = st->cglimits;
    uint32_t n = 0;
    for (uint32_t i = L->n; i-- > 0;) {
        const memd_cglimit *l = &L->v[i];
        if (strcmp(l->cgroup, cgroup) != 0 || (dev != UINT32_MAX && l->dev != dev) ||
            (kind != MEMD_KIND_COUNT && l->kind != kind))
            continue;
        if (!l->from_config)
            memd_cglimit_record_put(st, l, true);
        remove_at(L, i);
        n++;
    }
    return n;
}

int memd_cglimit_check(const memd_state *st, const memd_session *s, uint32_t dev, uint8_t kind,
                       uint64_t bytes, memd_error *err)
{
    const memd_cglimits *L = st->cglimits;
    if (!L || L->n == 0 || !s->cgroup[0])
        return 0;
    prefix p[MAX_DEPTH];
    size_t n = prefixes(s->cgroup, p);
    for (size_t i = 0; i < n; i++) {
        const memd_cglimit *l = find(L, key_of(p[i].hash, dev, kind), s->cgroup, p[i].len);
        if (!l || (l->current <= l->max && bytes <= l->max - l->current))
            continue;
        err->detail = MEMD_ERR_DETAIL_LIMIT;
        /* The reply's message has 191 bytes: a long path keeps its end (the pod, the
         * container), cut at the front. */
        size_t len = strlen(l->cgroup);
        return memd_error_set(err, -ENOMEM,
                              "cgroup limit of %s%s on device %u %s: max %llu bytes, %llu in "
                              "use, %llu more requested",
                              len > 80 ? "..." : "", l->cgroup + (len > 80 ? len - 77 : 0),
                              st->devs[dev].spec->id,
                              memd_kind_name((memd_kind)kind), (unsigned long long)l->max,
                              (unsigned long long)l->current, (unsigned long long)bytes);
    }
    return 0;
}

void memd_cglimit_charge(memd_state *st, const memd_session *s, uint32_t dev, uint8_t kind,
                         uint64_t bytes, bool charge)
{
    memd_cglimits *L = st->cglimits;
    if (!L || L->n == 0 || !s->cgroup[0])
        return;
    prefix p[MAX_DEPTH];
    size_t n = prefixes(s->cgroup, p);
    for (size_t i = 0; i < n; i++) {
        memd_cglimit *l = find(L, key_of(p[i].hash, dev, kind), s->cgroup, p[i].len);
        if (!l)
            continue;
        if (!charge) {
            /* A limit set after the hold was made counted it from the session's books
             * (usage), so this never goes below 0; the guard keeps a bug visible as 0. */
            l->current -= bytes < l->current ? bytes : l->current;
        } else if ((l->current += bytes) > l->peak) {
            l->peak = l->current;
        }
    }
}

void memd_cglimit_recount(memd_state *st)
{
    memd_cglimits *L = st->cglimits;
    for (uint32_t i = 0; L && i < L->n; i++) {
        memd_cglimit *l = &L->v[i];
        l->current = usage(st, l);
        if (l->current > l->peak)
            l->peak = l->current;
    }
}

void memd_cglimit_reset_peaks(memd_state *st, int dev)
{
    memd_cglimits *L = st->cglimits;
    for (uint32_t i = 0; L && i < L->n; i++)
        if (dev < 0 || L->v[i].dev == (uint32_t)dev)
            L->v[i].peak = L->v[i].current;
}

const memd_cglimit *memd_cglimit_list(const memd_state *st, uint32_t *n)
{
    *n = st->cglimits ? st->cglimits->n : 0;
    return *n ? st->cglimits->v : NULL;
}
