/* memd-bench-alloc — the engine allocator benchmark of BENCHMARKS.md section 1.
 *
 * The workload (RNG, draw order, checksum) is fixed by that document so results compare
 * with other allocators on the identical sequence. All draws are generated before any
 * timing; only the steady phase is timed. --reference runs the same sequence on the
 * linear reference model (tests/common/ref_range.c) in the same process, interleaved
 * with the memd runs, so every result carries a same-run baseline on a noisy machine.
 *
 * The bench also checks behaviour, never time: no two live blocks may overlap or leave
 * the region, frees of live blocks must succeed, the allocator's own statistics must
 * agree with the live blocks, and memd and the reference must place every block at the
 * same address. Any violation exits non-zero.
 *
 * --align A runs another workload instead (issue 14): --live 64-byte buffers aligned to
 * A, allocated bottom-up first fit, then --pairs times: free a random live buffer and
 * allocate a new one, which goes into the lowest free slot. With A above the region's
 * 32-byte granule every live buffer leaves a free block behind it that fits by size but
 * not once aligned: the case a first-fit walk pays for per live buffer. Only the
 * allocations are timed ("us_per_aligned_alloc").
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_banks.h"
#include "range.h"
#include "ref_range.h"
#include "test_clock.h"
#include "test_rand.h"

#define REGION_SIZE (UINT64_C(1) << 30)
#define REGION_ALIGN UINT64_C(32)
#define MIN_SIZE UINT64_C(32)
#define EMPTY UINT64_MAX

typedef struct opts {
    uint64_t live, pairs, seed, max_size, repeat;
    uint64_t align; /* 0: the BENCHMARKS.md workload; else the aligned one */
    memd_fit fit;
    bool reference;
    const char *banks; /* --banks MODE: bench_banks.c instead */
    uint64_t largest;  /* --largest K: time the K largest free blocks at the end (0: no) */
} opts;

typedef struct draws {
    uint64_t *fill_size;
    uint8_t *fill_dir; /* 1: bottom-up */
    uint64_t *slot, *size;
    uint8_t *dir;
    uint64_t checksum;
} draws;

typedef struct result {
    double ns_per_pair;
    uint64_t steady_fail;
    uint64_t wrong; /* unexpected return codes */
    double largest_ns, walk_ns; /* --largest: memd_range_largest_free, a walk finding them */
} result;

/* One allocator under test, behind the same five calls. */
typedef struct impl {
    int (*create)(void **h);
    void (*destroy)(void *h);
    int (*alloc)(void *h, uint64_t size, uint64_t align, memd_dir dir, memd_fit fit,
                 uint64_t *addr);
    int (*free)(void *h, uint64_t addr);
    void (*stats)(void *h, memd_range_stats *st);
    /* --largest: times the k largest free blocks and a walk that finds the same; 0, or
     * -EFAULT when they differ. NULL: not offered. */
    int (*largest)(void *h, uint64_t k, result *res);
} impl;

/* ---------------------------------------------------------------- adapters */

/* name_impl: the impl over the range allocator whose functions are prefix_* (memd's and
 * the reference one have the same interface). */
#define RANGE_IMPL(name, prefix, largest)                                                  \
    static int name##_create(void **h)                                                     \
    {                                                                                      \
        prefix *r;                                                                         \
        int rc = prefix##_create(0, REGION_SIZE, REGION_ALIGN, &r);                        \
        *h = r;                                                                            \
        return rc;                                                                         \
    }                                                                                      \
    static void name##_destroy(void *h) { prefix##_destroy(h); }                           \
    static int name##_alloc(void *h, uint64_t size, uint64_t align, memd_dir dir,          \
                            memd_fit fit, uint64_t *addr)                                  \
    {                                                                                      \
        return prefix##_alloc(h, size, align, dir, fit, addr);                             \
    }                                                                                      \
    static int name##_free(void *h, uint64_t addr) { return prefix##_free(h, addr, NULL); } \
    static void name##_stats(void *h, memd_range_stats *st) { prefix##_stats_get(h, st); }  \
    static const impl name##_impl = {name##_create, name##_destroy, name##_alloc,          \
                                     name##_free, name##_stats, largest}

/* The walk a post-mortem avoids: every block, keeping the k largest free ones. */
typedef struct top_walk {
    uint64_t k, n, size[32];
} top_walk;

static int top_visit(void *ctx, uint64_t addr, uint64_t size, bool used)
{
    top_walk *w = ctx;
    (void)addr;
    if (used || (w->n == w->k && w->size[w->k - 1] >= size))
        return 0;
    uint64_t i = w->n < w->k ? w->n++ : w->k - 1;
    for (; i > 0 && w->size[i - 1] < size; i--)
        w->size[i] = w->size[i - 1];
    w->size[i] = size;
    return 0;
}

static int memd_largest(void *h, uint64_t k, result *res)
{
    enum { CALLS = 1000 };
    uint64_t a[32], s[32];
    size_t n = 0;
    double t0 = (double)memd_test_now_ns();
    for (int i = 0; i < CALLS; i++)
        n = memd_range_largest_free(h, k, a, s);
    double t1 = (double)memd_test_now_ns();
    top_walk w = {.k = k};
    memd_range_foreach(h, top_visit, &w);
    double t2 = (double)memd_test_now_ns();
    res->largest_ns = (t1 - t0) / CALLS;
    res->walk_ns = t2 - t1;
    if (n != w.n)
        return -EFAULT;
    for (size_t i = 0; i < n; i++)
        if (s[i] != w.size[i])
            return -EFAULT;
    return 0;
}

RANGE_IMPL(memd, memd_range, memd_largest);
RANGE_IMPL(ref, ref_range, NULL);

/* ---------------------------------------------------------------- workload */

static void mix(uint64_t *h, uint64_t v)
{
    *h ^= v;
    *h *= 0x100000001b3ull;
}

static uint64_t draw_size(uint64_t *s, double log2_max)
{
    double u = (double)(memd_test_rand(s) >> 11) * 0x1.0p-53;
    uint64_t raw = (uint64_t)floor(exp2(log2(32.0) + (log2_max - log2(32.0)) * u));
    return (raw + 31) & ~UINT64_C(31);
}

static uint8_t draw_dir(uint64_t *s)
{
    return (memd_test_rand(s) % 5) != 0;
}

static void draws_free(draws *d)
{
    free(d->fill_size);
    free(d->fill_dir);
    free(d->slot);
    free(d->size);
    free(d->dir);
}

static int draws_make(const opts *o, draws *d)
{
    memset(d, 0, sizeof(*d));
    d->fill_size = malloc(o->live * sizeof(uint64_t));
    d->fill_dir = malloc(o->live);
    d->slot = malloc(o->pairs * sizeof(uint64_t));
    d->size = malloc(o->pairs * sizeof(uint64_t));
    d->dir = malloc(o->pairs);
    if (!d->fill_size || !d->fill_dir || !d->slot || !d->size || !d->dir) {
        draws_free(d);
        return -ENOMEM;
    }
    uint64_t s = o->seed, h = 0xcbf29ce484222325ull;
    double log2_max = log2((double)o->max_size);
    for (uint64_t i = 0; i < o->live; i++) {
        d->fill_size[i] = draw_size(&s, log2_max);
        mix(&h, d->fill_size[i]);
        d->fill_dir[i] = draw_dir(&s);
        mix(&h, d->fill_dir[i]);
    }
    for (uint64_t k = 0; k < o->pairs; k++) {
        d->slot[k] = memd_test_rand(&s) % o->live;
        mix(&h, d->slot[k]);
        d->size[k] = draw_size(&s, log2_max);
        mix(&h, d->size[k]);
        d->dir[k] = draw_dir(&s);
        mix(&h, d->dir[k]);
    }
    d->checksum = h;
    return 0;
}

static memd_dir dir_of(uint8_t bottom_up)
{
    return bottom_up ? MEMD_DIR_BOTTOM_UP : MEMD_DIR_TOP_DOWN;
}

/* One full run from a fresh allocator. addr[i] / size[i] describe slot i at the end
 * (addr EMPTY if the slot is empty); st gets the allocator's own statistics. */
static int run(const impl *im, const opts *o, const draws *d, uint64_t *addr, uint64_t *size,
               memd_range_stats *st, result *res)
{
    void *h;
    int rc = im->create(&h);
    if (rc < 0)
        return rc;
    *res = (result){0};
    for (uint64_t i = 0; i < o->live; i++) {
        rc = im->alloc(h, d->fill_size[i], REGION_ALIGN, dir_of(d->fill_dir[i]), o->fit,
                       &addr[i]);
        size[i] = d->fill_size[i];
        if (rc != 0) {
            addr[i] = EMPTY;
            res->wrong += rc != -ENOMEM;
        }
    }

    uint64_t fail = 0, wrong = 0;
    double t0 = (double)memd_test_now_ns();
    for (uint64_t k = 0; k < o->pairs; k++) {
        uint64_t s = d->slot[k];
        if (addr[s] != EMPTY)
            wrong += im->free(h, addr[s]) != 0;
        rc = im->alloc(h, d->size[k], REGION_ALIGN, dir_of(d->dir[k]), o->fit, &addr[s]);
        size[s] = d->size[k];
        if (rc != 0) {
            addr[s] = EMPTY;
            fail++;
            wrong += rc != -ENOMEM;
        }
    }
    double t1 = (double)memd_test_now_ns();

    im->stats(h, st);
    if (o->largest && im->largest && im->largest(h, o->largest, res) < 0)
        res->wrong++; /* the k largest free blocks are not the walk's */
    im->destroy(h);
    res->ns_per_pair = (t1 - t0) / (double)o->pairs;
    res->steady_fail = fail;
    res->wrong += wrong;
    return 0;
}

/* ---------------------------------------------------------------- verification */

typedef struct span {
    uint64_t addr, size;
} span;

typedef struct layout {
    uint64_t count, live_bytes, total_free, largest_free;
} layout;

static int cmp_span(const void *a, const void *b)
{
    uint64_t x = ((const span *)a)->addr, y = ((const span *)b)->addr;
    return (x > y) - (x < y);
}

/* Sort the live blocks by address; fail on overlap, misalignment or leaving the region.
 * The free-space figures come from the gaps between live blocks, not from the
 * allocator. */
static int check_layout(uint64_t n, const uint64_t *addr, const uint64_t *size, layout *out)
{
    span *v = malloc((n ? n : 1) * sizeof(span));
    if (!v)
        return -ENOMEM;
    uint64_t c = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (addr[i] == EMPTY)
            continue;
        v[c].addr = addr[i];
        v[c].size = size[i];
        c++;
    }
    qsort(v, c, sizeof(span), cmp_span);
    layout l = {.count = c};
    uint64_t cursor = 0;
    int rc = 0;
    for (uint64_t i = 0; i < c; i++) {
        if (v[i].addr % REGION_ALIGN != 0 || v[i].size > REGION_SIZE ||
            v[i].addr > REGION_SIZE - v[i].size) {
            fprintf(stderr, "memd-bench-alloc: block [0x%" PRIx64 ", +%" PRIu64
                            ") is misaligned or outside the region\n",
                    v[i].addr, v[i].size);
            rc = -EFAULT;
            break;
        }
        if (v[i].addr < cursor) {
            fprintf(stderr, "memd-bench-alloc: block at 0x%" PRIx64
                            " overlaps the block ending at 0x%" PRIx64 "\n",
                    v[i].addr, cursor);
            rc = -EFAULT;
            break;
        }
        if (v[i].addr - cursor > l.largest_free)
            l.largest_free = v[i].addr - cursor;
        l.live_bytes += v[i].size;
        cursor = v[i].addr + v[i].size;
    }
    if (rc == 0 && REGION_SIZE - cursor > l.largest_free)
        l.largest_free = REGION_SIZE - cursor;
    l.total_free = REGION_SIZE - l.live_bytes;
    free(v);
    *out = l;
    return rc;
}

/* The allocator's own counters must describe the same layout. */
static int check_stats(const char *who, const memd_range_stats *st, const layout *l)
{
    if (st->total == REGION_SIZE && st->allocated == l->live_bytes &&
        st->free == l->total_free && st->largest_free == l->largest_free &&
        st->allocations == l->count)
        return 0;
    fprintf(stderr,
            "memd-bench-alloc: %s statistics disagree with the live blocks: allocated %" PRIu64
            " vs %" PRIu64 ", largest free %" PRIu64 " vs %" PRIu64 ", allocations %" PRIu64
            " vs %" PRIu64 "\n",
            who, st->allocated, l->live_bytes, st->largest_free, l->largest_free,
            st->allocations, l->count);
    return -EFAULT;
}

/* ---------------------------------------------------------------- CLI */

static void usage(FILE *f)
{
    fprintf(f, "usage: memd-bench-alloc --live N --pairs P [--seed S] [--max-size BYTES]\n"
               "                        [--policy first|best] [--reference] [--repeat K]\n"
               "                        [--align BYTES] [--largest K]\n"
               "       memd-bench-alloc --banks lockstep|lockstep-split|lockstep-unsplit|range|range-lockstep|per-bank|mixed|mixed-cut\n"
               "                        --live N --pairs P [--seed S] [--repeat K]\n");
}

/* Decimal or 0x-hex, whole string, within [min, max]. */
static int parse_u64(const char *flag, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!s) {
        fprintf(stderr, "memd-bench-alloc: %s needs a value\n", flag);
        return -EINVAL;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (s[0] == '\0' || s[0] == '-' || s[0] == '+' || *end != '\0' || errno == ERANGE ||
        v < min || v > max) {
        fprintf(stderr, "memd-bench-alloc: %s: '%s' is not an integer in [%" PRIu64 ", %" PRIu64 "]\n",
                flag, s, min, max);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, opts *o)
{
    *o = (opts){.seed = 0x5EED0001, .max_size = UINT64_C(1) << 20, .repeat = 1,
                .fit = MEMD_FIT_FIRST};
    bool have_live = false, have_pairs = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (strcmp(a, "--live") == 0) {
            rc = parse_u64(a, v, 1, UINT64_C(100000000), &o->live);
            have_live = true;
            i++;
        } else if (strcmp(a, "--pairs") == 0) {
            rc = parse_u64(a, v, 1, UINT64_C(1000000000), &o->pairs);
            have_pairs = true;
            i++;
        } else if (strcmp(a, "--seed") == 0) {
            rc = parse_u64(a, v, 0, UINT64_MAX, &o->seed);
            i++;
        } else if (strcmp(a, "--max-size") == 0) {
            rc = parse_u64(a, v, MIN_SIZE, REGION_SIZE, &o->max_size);
            i++;
        } else if (strcmp(a, "--largest") == 0) {
            rc = parse_u64(a, v, 1, 32, &o->largest);
            i++;
        } else if (strcmp(a, "--repeat") == 0) {
            rc = parse_u64(a, v, 1, 101, &o->repeat);
            i++;
        } else if (strcmp(a, "--policy") == 0) {
            if (v && strcmp(v, "first") == 0) {
                o->fit = MEMD_FIT_FIRST;
            } else if (v && strcmp(v, "best") == 0) {
                o->fit = MEMD_FIT_BEST;
            } else {
                fprintf(stderr, "memd-bench-alloc: --policy must be 'first' or 'best'\n");
                rc = -EINVAL;
            }
            i++;
        } else if (strcmp(a, "--align") == 0) {
            rc = parse_u64(a, v, REGION_ALIGN, REGION_SIZE, &o->align);
            if (rc == 0 && (o->align & (o->align - 1)) != 0) {
                fprintf(stderr, "memd-bench-alloc: --align must be a power of two\n");
                rc = -EINVAL;
            }
            i++;
        } else if (strcmp(a, "--banks") == 0) {
            if (!v) {
                fprintf(stderr, "memd-bench-alloc: --banks needs a mode\n");
                rc = -EINVAL;
            }
            o->banks = v;
            i++;
        } else if (strcmp(a, "--reference") == 0) {
            o->reference = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(EXIT_SUCCESS);
        } else {
            fprintf(stderr, "memd-bench-alloc: unknown argument '%s'\n", a);
            rc = -EINVAL;
        }
        if (rc < 0)
            return rc;
    }
    if (!have_live || !have_pairs) {
        fprintf(stderr, "memd-bench-alloc: --live and --pairs are required\n");
        return -EINVAL;
    }
    if (o->align && o->live > REGION_SIZE / o->align) {
        fprintf(stderr, "memd-bench-alloc: --live %" PRIu64 " buffers aligned to %" PRIu64
                        " do not fit the 1 GiB region\n", o->live, o->align);
        return -EINVAL;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, uint64_t n)
{
    qsort(v, n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define ALIGNED_SIZE UINT64_C(64)

/* The --align workload from a fresh allocator; res->ns_per_pair is ns per allocation. */
static int run_aligned(const impl *im, const opts *o, const uint64_t *slot, uint64_t *addr,
                       uint64_t *size, memd_range_stats *st, result *res)
{
    void *h;
    int rc = im->create(&h);
    if (rc < 0)
        return rc;
    memset(res, 0, sizeof(*res));
    for (uint64_t i = 0; i < o->live; i++) {
        size[i] = ALIGNED_SIZE;
        rc = im->alloc(h, ALIGNED_SIZE, o->align, MEMD_DIR_BOTTOM_UP, o->fit, &addr[i]);
        if (rc != 0) {
            addr[i] = EMPTY;
            res->wrong++; /* the region holds 1 GiB / align buffers: --live is checked */
        }
    }
    double spent = 0;
    for (uint64_t k = 0; k < o->pairs; k++) {
        uint64_t s = slot[k];
        if (addr[s] != EMPTY)
            res->wrong += im->free(h, addr[s]) != 0;
        double t0 = (double)memd_test_now_ns();
        rc = im->alloc(h, ALIGNED_SIZE, o->align, MEMD_DIR_BOTTOM_UP, o->fit, &addr[s]);
        spent += (double)memd_test_now_ns() - t0;
        if (rc != 0) {
            addr[s] = EMPTY;
            res->wrong++;
        }
    }
    im->stats(h, st);
    im->destroy(h);
    res->ns_per_pair = spent / (double)o->pairs;
    return 0;
}

static int main_aligned(const opts *o)
{
    uint64_t *slot = calloc(o->pairs, sizeof(uint64_t));
    uint64_t *addr = calloc(o->live, sizeof(uint64_t)), *size = calloc(o->live, sizeof(uint64_t));
    uint64_t *raddr = calloc(o->live, sizeof(uint64_t));
    double *ns = calloc(o->repeat, sizeof(double)), *rns = calloc(o->repeat, sizeof(double));
    int status = EXIT_FAILURE;
    if (!slot || !addr || !size || !raddr || !ns || !rns) {
        fprintf(stderr, "memd-bench-alloc: out of memory\n");
        goto out;
    }
    uint64_t s = o->seed;
    for (uint64_t k = 0; k < o->pairs; k++)
        slot[k] = memd_test_rand(&s) % o->live;
    memd_range_stats st, rst;
    result res, rres;
    for (uint64_t rep = 0; rep < o->repeat; rep++) {
        if (run_aligned(&memd_impl, o, slot, addr, size, &st, &res) < 0 || res.wrong) {
            fprintf(stderr, "memd-bench-alloc: aligned run failed\n");
            goto out;
        }
        ns[rep] = res.ns_per_pair;
        if (!o->reference)
            continue;
        if (run_aligned(&ref_impl, o, slot, raddr, size, &rst, &rres) < 0 || rres.wrong ||
            memcmp(addr, raddr, o->live * sizeof(uint64_t)) != 0) {
            fprintf(stderr, "memd-bench-alloc: memd and the reference model placed blocks "
                            "differently\n");
            goto out;
        }
        rns[rep] = rres.ns_per_pair;
    }
    for (uint64_t i = 0; i < o->live; i++) {
        if (addr[i] % o->align != 0) {
            fprintf(stderr, "memd-bench-alloc: 0x%" PRIx64 " is not aligned\n", addr[i]);
            goto out;
        }
    }
    layout lay;
    if (check_layout(o->live, addr, size, &lay) < 0 || check_stats("memd", &st, &lay) < 0)
        goto out;
    printf("{\"bench\":\"alloc-aligned\",\"live\":%" PRIu64 ",\"pairs\":%" PRIu64
           ",\"align\":%" PRIu64 ",\"size\":%" PRIu64 ",\"us_per_aligned_alloc\":%.3f",
           o->live, o->pairs, o->align, ALIGNED_SIZE, median(ns, o->repeat) / 1e3);
    if (o->reference)
        printf(",\"ref_us_per_aligned_alloc\":%.3f", median(rns, o->repeat) / 1e3);
    printf("}\n");
    status = EXIT_SUCCESS;
out:
    free(slot);
    free(addr);
    free(size);
    free(raddr);
    free(ns);
    free(rns);
    return status;
}

int main(int argc, char **argv)
{
    opts o;
    if (parse_args(argc, argv, &o) < 0) {
        usage(stderr);
        return 2;
    }
    if (o.align)
        return main_aligned(&o);
    if (o.banks)
        return memd_bench_banks(o.banks, o.live, o.pairs, o.seed, o.repeat) < 0 ? EXIT_FAILURE
                                                                                 : EXIT_SUCCESS;
    draws d;
    uint64_t *addr = calloc(o.live, sizeof(uint64_t)), *size = calloc(o.live, sizeof(uint64_t));
    uint64_t *raddr = calloc(o.live, sizeof(uint64_t)), *rsize = calloc(o.live, sizeof(uint64_t));
    double *ns = calloc(o.repeat, sizeof(double)), *rns = calloc(o.repeat, sizeof(double));
    int status = EXIT_FAILURE;
    if (!addr || !size || !raddr || !rsize || !ns || !rns || draws_make(&o, &d) < 0) {
        fprintf(stderr, "memd-bench-alloc: out of memory\n");
        goto out_nodraws;
    }

    memd_range_stats st, rst;
    result res, rres, first = {0};
    layout lay;
    for (uint64_t rep = 0; rep < o.repeat; rep++) {
        if (run(&memd_impl, &o, &d, addr, size, &st, &res) < 0) {
            fprintf(stderr, "memd-bench-alloc: memd_range_create failed\n");
            goto out;
        }
        if (res.wrong) {
            fprintf(stderr, "memd-bench-alloc: %" PRIu64 " unexpected return codes\n", res.wrong);
            goto out;
        }
        if (rep > 0 && res.steady_fail != first.steady_fail) {
            fprintf(stderr, "memd-bench-alloc: repeat %" PRIu64 " is not deterministic\n", rep);
            goto out;
        }
        first = res;
        ns[rep] = res.ns_per_pair;
        if (!o.reference)
            continue;
        if (run(&ref_impl, &o, &d, raddr, rsize, &rst, &rres) < 0) {
            fprintf(stderr, "memd-bench-alloc: ref_range_create failed\n");
            goto out;
        }
        rns[rep] = rres.ns_per_pair;
        if (rres.wrong || rres.steady_fail != res.steady_fail ||
            memcmp(addr, raddr, o.live * sizeof(uint64_t)) != 0) {
            fprintf(stderr, "memd-bench-alloc: memd and the reference model placed blocks "
                            "differently\n");
            goto out;
        }
    }

    if (check_layout(o.live, addr, size, &lay) < 0 || check_stats("memd", &st, &lay) < 0)
        goto out;
    if (o.reference && check_stats("reference", &rst, &lay) < 0)
        goto out;

    double ns_pair = median(ns, o.repeat);
    printf("{\"bench\":\"alloc\",\"live\":%" PRIu64 ",\"pairs\":%" PRIu64 ",\"seed\":%" PRIu64
           ",\"max_size\":%" PRIu64 ",\"checksum\":\"0x%016" PRIx64 "\",\"ns_per_pair\":%.1f"
           ",\"steady_fail\":%" PRIu64 ",\"live_bytes\":%" PRIu64 ",\"total_free\":%" PRIu64
           ",\"largest_free\":%" PRIu64 ",\"frag_ratio\":%.6f",
           o.live, o.pairs, o.seed, o.max_size, d.checksum, ns_pair, res.steady_fail,
           lay.live_bytes, lay.total_free, lay.largest_free,
           lay.total_free ? (double)lay.largest_free / (double)lay.total_free : 0.0);
    if (o.reference) {
        double ref_pair = median(rns, o.repeat);
        printf(",\"ref_ns_per_pair\":%.1f,\"speedup\":%.2f", ref_pair,
               ns_pair > 0 ? ref_pair / ns_pair : 0.0);
    }
    if (o.largest)
        printf(",\"free_blocks\":%" PRIu64 ",\"largest_k\":%" PRIu64 ",\"largest_ns\":%.1f"
               ",\"walk_ns\":%.1f", st.free_blocks, o.largest, res.largest_ns, res.walk_ns);
    printf("}\n");
    status = EXIT_SUCCESS;
out:
    draws_free(&d);
out_nodraws:
    free(addr);
    free(size);
    free(raddr);
    free(rsize);
    free(ns);
    free(rns);
    return status;
}
