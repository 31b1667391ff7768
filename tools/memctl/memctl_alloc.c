/* memctl alloc --hold / memctl free HANDLE: allocations by hand, for operators and tests.
 * An allocation lives as long as the session that made it, so `alloc` must stay
 * connected: it holds the buffer until SIGINT or SIGTERM, then frees it and exits 0. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "banklist.h"
#include "memctl_service.h"

static const char alloc_usage[] =
    "usage: memctl alloc --device N --class C\n"
    "                    (--size SIZE | --dtype T --shape D0xD1.. | --sizes LIST)\n"
    "                    [--scope S] [--name NAME [--shared]] [--page-size B] [--align A]\n"
    "                    [--banks N] [--bank-set LIST] [--per-bank | --mode M] [--at ADDR]\n"
    "                    --hold [--json]\n"
    "  class: code, constant, placeholder, internal, logging\n"
    "  scope: dram (global, default), sram (l1), dram.texture\n"
    "  sizes: 4096, 0x1000, 4KiB, 1MiB, 2GiB (or K, M, G, T: powers of 1024; KB, GB\n"
    "         and fractions are refused as ambiguous)\n"
    "  bank set: bank ids and ranges, e.g. 0-3,8: one address free in every bank of the\n"
    "         set, reserved there only (tt-metal's uniform per-core allocation); with\n"
    "         --per-bank an address of its own in each bank (--per-bank alone: every bank\n"
    "         of the group)\n"
    "  --mode M: the bank set's mode by tt-metal's name: uniform_per_core (the default),\n"
    "         range_lockstep (searched in the set's banks, reserved in every bank of the\n"
    "         group) or per_core (= --per-bank)\n"
    "  --sizes LIST: per-core shard sizes, e.g. 4KiB,8KiB: one size per bank of the\n"
    "         --bank-set, in its order, with --per-bank (or --mode per_core)\n"
    "  --at ADDR: at that address of the group's map or not at all (tt-metal's\n"
    "         allocate_at_address; every bank of a bank set, each piece per bank)\n"
    "  prints the buffer as key=value on one line, holds it until SIGINT/SIGTERM, frees it\n";

static uint32_t bank_ids[MEMD_BANKSET_MAX];
static uint64_t piece_sizes[MEMD_BANKSET_MAX];

/* "4KiB,8KiB": positive sizes, at most one per bank of a bank set; how many, or -EINVAL
 * (an empty field too: ",4KiB" and "4KiB,,8KiB" are typos, not one size). */
static int parse_sizes(const char *v)
{
    int n = 0;
    for (;;) {
        char tok[32];
        size_t len = strcspn(v, ",");
        if (len == 0 || len >= sizeof(tok) || n == (int)MEMD_BANKSET_MAX)
            return -EINVAL;
        memcpy(tok, v, len);
        tok[len] = '\0';
        if (memctl_parse_size(tok, &piece_sizes[n]) < 0 || piece_sizes[n] == 0)
            return -EINVAL;
        n++;
        if (!v[len])
            return n;
        v += len + 1;
    }
}

static int parse_shape(const char *v, memclient_alloc_req *r)
{
    char buf[128];
    if (strlen(v) >= sizeof(buf))
        return -EINVAL;
    strcpy(buf, v);
    r->ndim = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, "x", &save); tok; tok = strtok_r(NULL, "x", &save)) {
        if (r->ndim == MEMD_MAX_DIMS || memctl_parse_u64(tok, &r->shape[r->ndim]) < 0)
            return -EINVAL;
        r->ndim++;
    }
    /* "2xx3" and trailing/leading x leave empty tokens that strtok skips: reject them. */
    if (r->ndim == 0 || strstr(v, "xx") || v[0] == 'x' || v[strlen(v) - 1] == 'x')
        return -EINVAL;
    return 0;
}

/* What the command line named so far, beside the request itself. */
typedef struct alloc_seen {
    bool dev, cls, size, shape, hold;
    int nsizes;                 /* pieces given with --sizes */
} alloc_seen;

/* One option with its value v; 0, or an exit code after the message. */
static int alloc_option(const char *a, const char *v, memclient_alloc_req *r, char *name,
                        alloc_seen *seen)
{
    const char *cmd = "alloc";
    if (!strcmp(a, "--device")) {
        if (memctl_parse_u32(v, &r->device) < 0)
            return memctl_bad_value(cmd, a, v, "a device id");
        seen->dev = true;
    } else if (!strcmp(a, "--class")) {
        if (memclient_class_parse(v, &r->cls) < 0)
            return memctl_bad_value(cmd, a, v,
                                    "code, constant, placeholder, internal or logging");
        seen->cls = true;
    } else if (!strcmp(a, "--scope")) {
        if (memclient_scope_parse(v, &r->scope) < 0)
            return memctl_bad_value(cmd, a, v, "dram, global, sram, l1 or dram.texture");
    } else if (!strcmp(a, "--size")) {
        int e = memctl_parse_size(v, &r->bytes);
        if (e < 0 || r->bytes == 0)
            return memctl_bad_value(cmd, a, v, e == -ERANGE ? "too large"
                                    : "a positive size, e.g. 4096, 4KiB or 2GiB; KB/GB are ambiguous");
        seen->size = true;
    } else if (!strcmp(a, "--sizes")) {
        if ((seen->nsizes = parse_sizes(v)) < 0)
            return memctl_bad_value(cmd, a, v, "positive sizes, one per bank of the bank "
                                    "set, e.g. 4KiB,8KiB");
        r->sizes = piece_sizes;
    } else if (!strcmp(a, "--page-size")) {
        if (memctl_parse_size(v, &r->page_size) < 0)
            return memctl_bad_value(cmd, a, v, "a size in bytes");
    } else if (!strcmp(a, "--align")) {
        if (memctl_parse_size(v, &r->alignment) < 0 ||
            (r->alignment & (r->alignment - 1)) != 0)
            return memctl_bad_value(cmd, a, v, "a power of two");
    } else if (!strcmp(a, "--banks")) {
        if (memctl_parse_u32(v, &r->banks) < 0 || r->banks == 0)
            return memctl_bad_value(cmd, a, v, "a positive number of banks");
    } else if (!strcmp(a, "--bank-set")) {
        uint32_t n;
        int e = memctl_parse_banks(cmd, a, v, bank_ids, &n);
        if (e)
            return e;
        r->bank_set = bank_ids;
        r->nbank_set = n;
    } else if (!strcmp(a, "--mode")) {
        if (memclient_alloc_req_set_mode(r, v) < 0)
            return memctl_bad_value(cmd, a, v, "uniform_per_core, range_lockstep or per_core");
    } else if (!strcmp(a, "--at")) {
        if (memctl_parse_u64(v, &r->address) < 0)
            return memctl_bad_value(cmd, a, v, "an address, e.g. 0x1000 or 4096");
        r->flags |= MEMCLIENT_ALLOC_AT;
    } else if (!strcmp(a, "--name")) {
        if (strlen(v) >= MEMD_NAME_MAX || !*v)
            return memctl_bad_value(cmd, a, v, "1 to 63 bytes");
        strcpy(name, v);
        r->name = name;
    } else if (!strcmp(a, "--dtype")) {
        if (memclient_dtype_parse(v, &r->dtype) < 0)
            return memctl_bad_value(cmd, a, v, "u8, i8, u16, i16, f16, bf16, u32, i32, "
                                    "f32, u64, i64 or f64");
    } else if (!strcmp(a, "--shape")) {
        if (parse_shape(v, r) < 0)
            return memctl_bad_value(cmd, a, v, "1 to 4 dimensions like 32x1024");
        seen->shape = true;
    } else {
        fprintf(stderr, "memctl alloc: unknown option '%s'\n%s", a, alloc_usage);
        return MEMCTL_EXIT_USAGE;
    }
    return 0;
}

/* The combinations the options must form; 0, or MEMCTL_EXIT_USAGE after the message. */
static int alloc_complete(const memclient_alloc_req *r, const alloc_seen *seen)
{
    const char *missing = !seen->dev ? "--device" : !seen->cls ? "--class" : NULL;
    if (missing) {
        fprintf(stderr, "memctl alloc: %s is required\n%s", missing, alloc_usage);
        return MEMCTL_EXIT_USAGE;
    }
    bool have_dtype = r->dtype != MEMD_DTYPE_NONE;
    if (r->sizes ? (seen->size || seen->shape || have_dtype || r->page_size)
                 : seen->size ? (seen->shape || have_dtype) : !(seen->shape && have_dtype)) {
        fprintf(stderr, "memctl alloc: give either --size, or --dtype with --shape, or "
                        "--sizes (without --page-size)\n");
        return MEMCTL_EXIT_USAGE;
    }
    /* The client reads one size per bank of the set: the counts must agree here. */
    if (r->sizes && (uint32_t)seen->nsizes != r->nbank_set) {
        fprintf(stderr, "memctl alloc: --sizes gives %d sizes for a --bank-set of %" PRIu32
                        " banks: one size per bank\n", seen->nsizes, r->nbank_set);
        return MEMCTL_EXIT_USAGE;
    }
    if ((r->flags & MEMCLIENT_ALLOC_SHARED) && !r->name) {
        fprintf(stderr, "memctl alloc: --shared needs --name\n");
        return MEMCTL_EXIT_USAGE;
    }
    if (!seen->hold) {
        fprintf(stderr, "memctl alloc: the daemon frees a session's memory when it disconnects, "
                        "so an allocation would end with this command: pass --hold to keep it "
                        "until SIGINT/SIGTERM\n");
        return MEMCTL_EXIT_USAGE;
    }
    return 0;
}

/* 0 to go on, -1 after --help, else an exit code. */
static int parse_alloc(int argc, char **argv, memclient_alloc_req *r, char *name, bool *json)
{
    alloc_seen seen = {0};
    r->scope = MEMD_SCOPE_DRAM;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int rc;
        if (!strcmp(a, "--hold")) {
            seen.hold = true;
        } else if (!strcmp(a, "--json")) {
            *json = true;
        } else if (!strcmp(a, "--shared")) {
            r->flags |= MEMCLIENT_ALLOC_SHARED;
        } else if (!strcmp(a, "--per-bank")) {
            r->per_bank = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(alloc_usage, stdout);
            return -1;
        } else if (a[0] != '-' || a[1] != '-') {
            fprintf(stderr, "memctl alloc: unexpected argument '%s'\n%s", a, alloc_usage);
            return MEMCTL_EXIT_USAGE;
        } else if (!(v = memctl_optarg("alloc", argc, argv, &i))) {
            return MEMCTL_EXIT_USAGE;
        } else if ((rc = alloc_option(a, v, r, name, &seen)) != 0) {
            return rc;
        }
    }
    return alloc_complete(r, &seen);
}

/* A bank-set buffer's mode and its banks' addresses (text: " mode=range
 * bank_addrs=0:0x..,1:0x.."; JSON: as the dump's allocation keys). Nothing for lockstep
 * over every bank in text; JSON always names the mode. */
static void print_banks(memclient *c, const memclient_buffer *b, bool json)
{
    static memclient_bank banks[MEMD_BANKSET_MAX];
    const char *mode = memctl_mode_text(b->bank_mode);
    if (json)
        printf(", \"bank_mode\": \"%s\"", memclient_bank_mode_name(b->bank_mode));
    if (b->bank_mode == MEMD_BANKS_ALL)
        return;
    int n = memclient_bank_info(c, b->handle, banks, MEMD_BANKSET_MAX);
    if (!json)
        printf(" mode=%s", mode);
    if (n < 0)
        return;
    if (n > (int)MEMD_BANKSET_MAX)
        n = (int)MEMD_BANKSET_MAX;
    if (!json) {
        printf(" bank_addrs=");
        for (int i = 0; i < n; i++)
            printf("%s%" PRIu32 ":0x%" PRIx64, i ? "," : "", banks[i].bank, banks[i].address);
        return;
    }
    printf(", \"bank_ids\": [");
    for (int i = 0; i < n; i++)
        printf("%s%" PRIu32, i ? ", " : "", banks[i].bank);
    printf("], \"bank_addresses\": [");
    for (int i = 0; i < n; i++) {
        printf("%s{\"bank\": %" PRIu32 ", \"address\": %" PRIu64 ", \"absolute\": %" PRIu64
               ", \"core\": ",
               i ? ", " : "", banks[i].bank, banks[i].address, banks[i].absolute);
        if (banks[i].logical_x == MEMD_NO_CORE)
            printf("null}");
        else
            printf("{\"logical\": [%u, %u], \"noc\": [%u, %u]}}", banks[i].logical_x,
                   banks[i].logical_y, banks[i].noc_x, banks[i].noc_y);
    }
    printf("]");
}

int memctl_cmd_alloc(const memctl_globals *g, int argc, char **argv)
{
    memclient_alloc_req req = {0};
    char name[MEMD_NAME_MAX];
    bool json = false;
    int r = parse_alloc(argc, argv, &req, name, &json);
    if (r)
        return r < 0 ? 0 : r;

    /* Block the signals before allocating: one arriving between the allocation and
     * sigwait must still end in a clean free, not in death by default action. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);

    memclient *c;
    if ((r = memctl_connect_flags(g, MEMCLIENT_CONNECT_RECONNECT, &c)) != 0)
        return r;
    memclient_buffer b;
    r = memclient_alloc(c, &req, &b);
    if (r < 0) {
        int code = memctl_fail(c, "alloc", "allocation failed", r);
        memclient_disconnect(c);
        return code;
    }
    /* Region names come with the state dump; an index is still useful without it. */
    char rbuf[24];
    const char *region = NULL;
    memclient_snapshot *s = NULL;
    if (memclient_dump(c, req.device, 0, &s) == 0)
        region = memd_report_region_name(s, req.device, b.kind, b.region, rbuf, sizeof(rbuf));
    else
        region = (snprintf(rbuf, sizeof(rbuf), "#%" PRIu32, b.region), rbuf);
    if (json) {
        printf("{\"handle\": %" PRIu64 ", \"handle_str\": \"%" PRIu64 "\", \"device\": %" PRIu32
               ", \"kind\": \"%s\", \"region\": ", b.handle, b.handle, req.device,
               memclient_kind_name(b.kind));
        memd_json_str(stdout, region);
        printf(", \"address\": %" PRIu64 ", \"size_per_bank\": %" PRIu64 ", \"banks\": %" PRIu32
               ", \"page_size\": %" PRIu64 ", \"pitch\": %" PRIu64 ", \"refcount\": %" PRIu32,
               b.address, b.size_per_bank, b.banks, b.page_size, b.pitch, b.refcount);
    } else {
        printf("handle=%" PRIu64 " device=%" PRIu32 " kind=%s region=%s address=0x%" PRIx64
               " size_per_bank=%" PRIu64 " banks=%" PRIu32 " page_size=%" PRIu64 " pitch=%" PRIu64
               " refcount=%" PRIu32,
               b.handle, req.device, memclient_kind_name(b.kind), region, b.address,
               b.size_per_bank, b.banks, b.page_size, b.pitch, b.refcount);
    }
    memclient_snapshot_free(s);
    print_banks(c, &b, json);
    puts(json ? "}" : "");
    fflush(stdout);
    fprintf(stderr, "memctl alloc: holding handle %" PRIu64 "; SIGINT or SIGTERM frees it\n",
            b.handle);

    int sig = memctl_hold(c, &set, "alloc");
    if (sig < 0) {
        memclient_disconnect(c);
        return MEMCTL_EXIT_CONNECT;
    }
    r = memclient_free(c, b.handle);
    int code = r < 0 ? memctl_fail(NULL, "alloc", "freeing the held buffer", r) : 0;
    if (r == 0)
        fprintf(stderr, "memctl alloc: %s: freed handle %" PRIu64 "\n", strsignal(sig), b.handle);
    memclient_disconnect(c);
    return code;
}

int memctl_cmd_free(const memctl_globals *g, int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: memctl free HANDLE [--json]\n  frees an allocation of another session: "
               "needs root or the daemon's admin group\n");
        return 0;
    }
    bool json = false;
    const char *hs = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!hs)
            hs = argv[i];
        else
            hs = "";
    }
    if (!hs || !*hs) {
        fprintf(stderr, "usage: memctl free HANDLE [--json]\n");
        return MEMCTL_EXIT_USAGE;
    }
    uint64_t handle;
    if (memctl_parse_u64(hs, &handle) < 0 || handle == 0)
        return memctl_bad_value("free", "HANDLE", hs, "a positive allocation handle");
    memclient *c;
    int r = memctl_connect(g, &c);
    if (r)
        return r;
    r = memclient_free(c, handle);
    char what[64];
    snprintf(what, sizeof(what), "cannot free handle %" PRIu64, handle);
    int code = r < 0 ? memctl_fail(NULL, "free", what, r) : 0;
    if (r == 0 && json)
        printf("{\"freed\": %" PRIu64 ", \"freed_str\": \"%" PRIu64 "\"}\n", handle, handle);
    else if (r == 0)
        printf("freed handle %" PRIu64 "\n", handle);
    memclient_disconnect(c);
    return code;
}
