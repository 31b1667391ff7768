/* Sub-devices through the real daemon: a config with two partitions of device 0's 64 L1
 * banks ("left" 0-31 bound to uid nobody, with a budget; "right" 32-63 for sessions that
 * bind by request). A session bound to one allocates only inside it (lockstep becomes
 * lockstep over its banks), cannot reach another's banks, another device or group, its
 * budget, or rebind; definitions by request are admin only and follow the overlap rule;
 * the dump and memctl devices show the sub-devices, their use and their sessions. */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "daemon_fixture.h"
#include "memctl_run.h"

static memd_fixture f;

static void teardown(void)
{
    memd_fixture_destroy(&f);
}

static void start(void)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "devices:\n"
             "  - id: 0\n"
             "    descriptor: %s/config/devices/wormhole_b0.yaml\n"
             "sub_devices:\n"
             "  - name: left\n"
             "    device: 0\n"
             "    group: l1\n"
             "    banks: 0-31\n"
             "    budget: 1MiB\n"
             "    users: [%u]\n"
             "  - name: right\n"
             "    device: 0\n"
             "    group: sram\n"
             "    banks: 32-63\n"
             "    groups: [4242]\n",
             memd_fixture_source_root(), CU_NOBODY);
    memd_fixture_opts o = {.config_yaml = yaml, .capture_stderr = true};
    ck_assert_int_eq(memd_fixture_start(&f, &o), 0);
    cu_open_socket_to_all(&f);
}

/* Every bank of handle h lies in [lo, hi]; returns how many there are (or -1). */
static int banks_within(memclient *c, uint64_t h, uint32_t lo, uint32_t hi)
{
    memclient_bank b[64];
    int n = memclient_bank_info(c, h, b, 64);
    for (int i = 0; i < n; i++)
        if (b[i].bank < lo || b[i].bank > hi)
            return -1;
    return n;
}

/* Connects to sock and allocates 4 KiB of SRAM without a bank set: the sub-device the
 * config binds the caller to must place it in lockstep over its 32 banks, lo..hi. 0 (the
 * connection in *c), or an exit code naming the failed step (10 connect, 11 alloc, 12
 * banks). */
static int alloc_inside(const char *sock, uint32_t lo, uint32_t hi, memclient **c,
                        memclient_alloc_req *r)
{
    if (memclient_connect(sock, c) != 0)
        return 10;
    *r = cu_sram(4096);
    memclient_buffer b;
    if (memclient_alloc(*c, r, &b) != 0 || b.bank_mode != MEMD_BANKS_RANGE || b.banks != 32)
        return 11;
    return banks_within(*c, b.handle, lo, hi) == 32 ? 0 : 12;
}

/* As nobody, bound to "left" by the config. Exit codes name the failed step. */
static int nobody_in_left(void *arg)
{
    memclient *c;
    memclient_alloc_req r;
    memclient_buffer b;
    int rc = alloc_inside(arg, 0, 31, &c, &r);
    if (rc)
        return rc;
    /* Per bank without a set: each of its banks. */
    r.per_bank = 1;
    if (memclient_alloc(c, &r, &b) != 0 || banks_within(c, b.handle, 0, 31) != 32)
        return 13;
    /* Another sub-device's bank, another group: refused. */
    uint32_t outside = 40, inside[] = {3, 5};
    r.per_bank = 0;
    r.bank_set = &outside;
    r.nbank_set = 1;
    if (memclient_alloc(c, &r, &b) != -EACCES)
        return 14;
    memclient_error e;
    memclient_last_error(&e);
    if (!strstr(e.message, "bank 40") || !strstr(e.message, "left"))
        return 15;
    r.bank_set = inside;
    r.nbank_set = 2;
    if (memclient_alloc(c, &r, &b) != 0 || banks_within(c, b.handle, 3, 5) != 2)
        return 16;
    memclient_alloc_req d = cu_req(MEMD_CLASS_CONSTANT, 4096);
    if (memclient_alloc(c, &d, &b) != -EACCES)
        return 17;
    /* The budget: 1 MiB over its banks; 4 KiB x 32 = 128 KiB each lockstep buffer. */
    memclient_alloc_req big = cu_sram(32 * 1024);
    if (memclient_alloc(c, &big, &b) != -EDQUOT)
        return 18;
    /* No rebinding, no defining. */
    if (memclient_subdev_bind(c, "right") != -EPERM)
        return 19;
    uint32_t banks[] = {0};
    memclient_subdev sd = {.name = "mine", .device = 0, .kind = MEMD_KIND_SRAM, .banks = banks,
                           .nbanks = 1};
    if (memclient_subdev_define(c, &sd) >= 0)
        return 20;
    memclient_disconnect(c);
    return 0;
}

START_TEST(bound_sessions_stay_inside)
{
    start();
    memclient *root = cu_connect(&f);
    /* Root is not bound: anywhere. */
    uint32_t b40 = 40;
    memclient_alloc_req r = cu_sram(4096);
    r.bank_set = &b40;
    r.nbank_set = 1;
    memclient_buffer x;
    ck_assert_int_eq(memclient_alloc(root, &r, &x), 0);
    ck_assert_int_eq(cu_run_as(CU_NOBODY, nobody_in_left, f.socket_path), 0);

    /* Bind by request, before allocating: then right's banks only. */
    memclient *c = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(c, "nope"), -ENOENT);
    ck_assert_int_eq(memclient_subdev_bind(c, "right"), 0);
    ck_assert_int_eq(memclient_subdev_bind(c, "right"), 0); /* again: no-op */
    memclient_alloc_req l = cu_sram(8192);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &l, &b), 0);
    ck_assert_int_eq(banks_within(c, b.handle, 32, 63), 32);
    /* Right's lockstep buffers go around root's piece in bank 40. */
    ck_assert_uint_ne(b.address, x.address);
    uint32_t b3 = 3;
    l.bank_set = &b3;
    l.nbank_set = 1;
    ck_assert_int_eq(memclient_alloc(c, &l, &b), -EACCES);
    ck_assert_int_eq(memclient_subdev_bind(c, "left"), -EPERM);
    /* A session holding memory may not bind (its buffers would be outside). */
    memclient *h = cu_connect(&f);
    memclient_alloc_req any = cu_sram(64);
    ck_assert_int_eq(memclient_alloc(h, &any, &b), 0);
    ck_assert_int_eq(memclient_subdev_bind(h, "right"), -EBUSY);

    memclient_snapshot *s = cu_dump(root, MEMCLIENT_DUMP_BANKS);
    ck_assert_uint_eq(s->nsubdevs, 2);
    ck_assert_str_eq(s->subdevs[1].name, "right");
    ck_assert_str_eq(s->subdevs[1].banks, "32-63");
    ck_assert_uint_eq(s->subdevs[1].sessions, 1);
    ck_assert_uint_eq(s->subdevs[1].used, 8192ull * 32);
    ck_assert_uint_eq(s->subdevs[0].used, 0); /* nobody's session ended: released */
    size_t bound = 0;
    for (size_t i = 0; i < s->nsessions; i++)
        bound += s->sessions[i].subdev == 2;
    ck_assert_uint_eq(bound, 1);
    ck_assert_int_eq(cu_check_banks(s), 0);
    memclient_snapshot_free(s);
    memclient_disconnect(h);
    memclient_disconnect(c);
    memclient_disconnect(root);
}
END_TEST

/* banks[0..n) = first, first + 1, ...: the consecutive banks of a sub-device. */
static void bank_run(uint32_t *banks, uint32_t n, uint32_t first)
{
    for (uint32_t i = 0; i < n; i++)
        banks[i] = first + i;
}

START_TEST(define_by_request)
{
    start();
    memclient *root = cu_connect(&f);
    uint32_t mid[16];
    bank_run(mid, 16, 24); /* 24-39: shares banks with both */
    memclient_subdev sd = {.name = "mid", .device = 0, .kind = MEMD_KIND_SRAM, .banks = mid,
                           .nbanks = 16, .budget = 65536};
    memclient_error e;
    ck_assert_int_eq(memclient_subdev_define(root, &sd), -EINVAL);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "shares bank 24 with 'left'"), "%s", e.message);
    sd.overlap[0] = "left";
    sd.overlap[1] = "right";
    ck_assert_int_eq(memclient_subdev_define(root, &sd), 0);
    ck_assert_int_eq(memclient_subdev_define(root, &sd), -EEXIST);
    uint32_t bad = 64;
    memclient_subdev off = {.name = "off", .device = 0, .kind = MEMD_KIND_SRAM, .banks = &bad,
                            .nbanks = 1};
    ck_assert_int_eq(memclient_subdev_define(root, &off), -EINVAL);
    off.device = 7;
    ck_assert_int_eq(memclient_subdev_define(root, &off), -EINVAL);

    memclient *c = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(c, "mid"), 0);
    memclient_alloc_req r = cu_sram(2048); /* x 16 banks = 32 KiB of the 64 KiB budget */
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_int_eq(banks_within(c, b.handle, 24, 39), 16);
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -EDQUOT);
    ck_assert_int_eq(memclient_free(c, b.handle), 0);
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);

    /* memctl devices and dump show them. */
    char out[16384];
    ck_assert_int_eq(memctl_capture(&f, MEMCTL_ARGS("devices"), out, sizeof out), 0);
    ck_assert_msg(strstr(out, "sub-devices: 3") && strstr(out, "24-39") &&
                  strstr(out, "request") && strstr(out, "config"), "%s", out);

    /* memctl subdev define: the same request from the command line. */
    ck_assert_int_eq(memctl_capture(&f,
                                    MEMCTL_ARGS("subdev", "define", "cli", "--device", "0",
                                                "--group", "l1", "--banks", "48-55", "--budget",
                                                "8KiB", "--overlap", "right", "--json"),
                                    out, sizeof out),
                     0);
    ck_assert_msg(strstr(out, "{\"defined\": \"cli\", \"device\": 0, \"group\": \"sram\", "
                              "\"banks\": \"48-55\", \"nbanks\": 8, \"budget\": 8192, \"window\": 0}"),
                  "%s", out);
    memclient_snapshot *s = cu_dump(root, MEMCLIENT_DUMP_BANKS);
    ck_assert_uint_eq(s->nsubdevs, 4);
    ck_assert_str_eq(s->subdevs[3].banks, "48-55");
    ck_assert_uint_eq(s->subdevs[3].budget, 8192);
    memclient_snapshot_free(s);
    /* Refusals: a bad bank list (usage, 2); the daemon's no (banks of 'right' without
     * --overlap: exit 1 with the reason). */
    ck_assert_int_eq(memctl_capture(&f,
                                    MEMCTL_ARGS("subdev", "define", "x", "--device", "0", "--group",
                                                "l1", "--banks", "9-3"),
                                    out, sizeof out),
                     2);
    ck_assert_int_eq(memctl_capture(&f,
                                    MEMCTL_ARGS("subdev", "define", "x", "--device", "0", "--group",
                                                "l1", "--banks", "60"),
                                    out, sizeof out),
                     1);
    ck_assert_msg(strstr(out, "shares bank 60 with 'right'"), "%s", out);
    memclient_disconnect(c);
    memclient_disconnect(root);
}
END_TEST

/* SIGKILL, then memd again on the same socket, config file and state store. */
static void crash_and_restart(void)
{
    memd_fixture_opts o = {.capture_stderr = true};
    ck_assert_int_eq(memd_fixture_restart(&f, &o, SIGKILL), 0);
}

static const memclient_subdev_rec *subdev_named(const memclient_snapshot *s, const char *name)
{
    for (size_t i = 0; i < s->nsubdevs; i++)
        if (!strcmp(s->subdevs[i].name, name))
            return &s->subdevs[i];
    return NULL;
}

/* uid 4321, primary group 4321, supplementary group 4242 (listed by 'right'): bound to
 * 'right' by the config through its supplementary group. */
static int supplementary_in_right(void *arg)
{
    memclient *c;
    memclient_alloc_req r;
    int rc = alloc_inside(arg, 32, 63, &c, &r);
    if (rc == 0)
        memclient_disconnect(c);
    return rc;
}

START_TEST(bound_by_supplementary_group)
{
    start();
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        gid_t g = 4242;
        if (setgroups(1, &g) != 0 || setgid(4321) != 0 || setuid(4321) != 0)
            _exit(120);
        _exit(supplementary_in_right(f.socket_path));
    }
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "child status %d", ws);
}
END_TEST

/* A sub-device an admin defined is in the state store before the reply: a crash and
 * restart bring it back (banks, budget, overlap), sessions can bind to it again and it
 * still refuses a second definition; a session bound by request stays bound when it
 * reclaims itself, its memory charged again; a config that now takes its name wins. */
START_TEST(defined_subdevs_survive_restart)
{
    start();
    memclient *root = cu_connect(&f);
    uint32_t banks[8];
    bank_run(banks, 8, 40);
    memclient_subdev sd = {.name = "kept", .device = 0, .kind = MEMD_KIND_SRAM, .banks = banks,
                           .nbanks = 8, .budget = 65536, .overlap = {"right"}};
    ck_assert_int_eq(memclient_subdev_define(root, &sd), 0);
    memclient *c = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(c, "kept"), 0);
    memclient_alloc_req r = cu_sram(2048); /* x 8 banks = 16 KiB of the budget */
    memclient_buffer held;
    ck_assert_int_eq(memclient_alloc(c, &r, &held), 0);

    crash_and_restart();
    ck_assert_int_eq(memclient_reconnect(c, 5000), 0);
    memclient_alloc_info qi;
    ck_assert_int_eq(memclient_query(c, held.handle, &qi), 0); /* its memory is kept too */
    /* ... and so is its binding by request: it still allocates only inside 'kept'. */
    memclient_buffer again;
    ck_assert_int_eq(memclient_alloc(c, &r, &again), 0);
    ck_assert_int_eq(banks_within(c, again.handle, 40, 47), 8);
    ck_assert_int_eq(memclient_subdev_bind(c, "right"), -EPERM);
    memclient *root2 = cu_connect(&f);
    memclient_snapshot *s = cu_dump(root2, MEMCLIENT_DUMP_BANKS);
    ck_assert_uint_eq(s->nsubdevs, 3);
    const memclient_subdev_rec *k = subdev_named(s, "kept");
    ck_assert_ptr_nonnull(k);
    ck_assert_str_eq(k->banks, "40-47");
    ck_assert_uint_eq(k->budget, 65536);
    ck_assert(!k->from_config);
    ck_assert_uint_eq(k->sessions, 1);             /* c, bound again */
    ck_assert_uint_eq(k->allocations, 2);          /* held (charged again) and again */
    ck_assert_uint_eq(k->used, 2 * 2048 * 8);
    memclient_snapshot_free(s);
    ck_assert_int_eq(memclient_subdev_define(root2, &sd), -EEXIST);
    /* Its overlap permission came back too: a sub-device on bank 40 without it is refused
     * for sharing with 'kept' (and 'right'), not accepted. */
    uint32_t b40 = 40;
    memclient_subdev other = {.name = "other", .device = 0, .kind = MEMD_KIND_SRAM,
                              .banks = &b40, .nbanks = 1, .overlap = {"right"}};
    ck_assert_int_eq(memclient_subdev_define(root2, &other), -EINVAL);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "'kept'"), "%s", e.message);
    memclient *c2 = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(c2, "kept"), 0);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c2, &r, &b), 0);
    ck_assert_int_eq(banks_within(c2, b.handle, 40, 47), 8);
    memclient_disconnect(c2);
    memclient_disconnect(root2);

    /* The config now defines 'kept' itself (other banks): the stored one is dropped, with
     * a warning in the log, and stays dropped. */
    FILE *cf = fopen(f.config_path, "a");
    ck_assert_ptr_nonnull(cf);
    fputs("  - name: kept\n    device: 0\n    group: dram\n    banks: 0-1\n", cf);
    fclose(cf);
    crash_and_restart();
    memclient *root3 = cu_connect(&f);
    s = cu_dump(root3, MEMCLIENT_DUMP_BANKS);
    k = subdev_named(s, "kept");
    ck_assert_ptr_nonnull(k);
    ck_assert(k->from_config);
    ck_assert_str_eq(k->banks, "0-1");
    memclient_snapshot_free(s);
    const char *log = memd_fixture_log(&f);
    ck_assert_msg(log && strstr(log, "sub-device 'kept' defined before the restart is dropped") &&
                  strstr(log, "binding to sub-device 'kept' is dropped: that sub-device is gone"),
                  "%s", log ? log : "(no log)");
    memclient_disconnect(root3);
    memclient_disconnect(c);
    memclient_disconnect(root);
}
END_TEST

/* The per-bank use of bank `bank` of device 0's L1 region "buffers" in s. */
static const memclient_bank_use *bank_use(const memclient_snapshot *s, uint32_t bank)
{
    for (size_t i = 0; i < s->nbank_use; i++)
        if (s->bank_use[i].device == 0 && s->bank_use[i].kind == MEMD_KIND_SRAM &&
            s->bank_use[i].bank == bank)
            return &s->bank_use[i];
    return NULL;
}

/* Two sessions at once, A bound to 'left' and B to 'right' by request. Both are root
 * (admins, who may free other sessions' buffers): bound, neither reaches the other's
 * banks, to allocate there or to free what lies there (single and batch free, nothing
 * freed); B filling every one of its banks leaves A's banks as they were; an unbound
 * admin still reclaims. The dump and memctl devices show each with its session. */
START_TEST(two_bound_sessions_isolated)
{
    start();
    memclient *a = cu_connect(&f), *b = cu_connect(&f), *root = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(a, "left"), 0);
    ck_assert_int_eq(memclient_subdev_bind(b, "right"), 0);
    memclient_snapshot *s = cu_dump(root, 0);
    uint64_t region = cu_region(s, MEMD_KIND_SRAM, "buffers")->size;
    memclient_snapshot_free(s);
    /* Root, bound to nothing: lockstep over all 64 banks, at the top of each. */
    memclient_buffer rl;
    memclient_alloc_req any = cu_sram(1024);
    ck_assert_int_eq(memclient_alloc(root, &any, &rl), 0);

    /* A: lockstep over its banks, a range on two of them, per bank over all of them. */
    memclient_buffer al, ar, ap, bl, x;
    memclient_alloc_req r = cu_sram(4096);
    ck_assert_int_eq(memclient_alloc(a, &r, &al), 0);
    uint32_t two[] = {3, 5}, b3 = 3, b40 = 40;
    r.bank_set = two;
    r.nbank_set = 2;
    ck_assert_int_eq(memclient_alloc(a, &r, &ar), 0);
    memclient_alloc_req pr = cu_sram(4096);
    pr.per_bank = 1;
    ck_assert_int_eq(memclient_alloc(a, &pr, &ap), 0);
    ck_assert_int_eq(banks_within(a, al.handle, 0, 31), 32);
    ck_assert_int_eq(banks_within(a, ap.handle, 0, 31), 32);
    memclient_alloc_req lr = cu_sram(8192);
    ck_assert_int_eq(memclient_alloc(b, &lr, &bl), 0);
    ck_assert_int_eq(banks_within(b, bl.handle, 32, 63), 32);

    /* banks N over a sub-device of 32: refused as such, not as a bank set it never gave. */
    memclient_error e;
    memclient_alloc_req four = cu_sram(4096);
    four.banks = 4;
    ck_assert_int_eq(memclient_alloc(a, &four, &x), -EINVAL);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "bound to sub-device 'left' of 32 banks: banks 4 cannot be "
                                    "honoured"), "%s", e.message);
    four.banks = 32;
    ck_assert_int_eq(memclient_alloc(a, &four, &x), 0);
    ck_assert_int_eq(memclient_free(a, x.handle), 0);

    /* Neither allocates in the other's banks. */
    r.bank_set = &b3;
    r.nbank_set = 1;
    ck_assert_int_eq(memclient_alloc(b, &r, &x), -EACCES);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "bank 3") && strstr(e.message, "right"), "%s", e.message);
    r.per_bank = 1;
    ck_assert_int_eq(memclient_alloc(b, &r, &x), -EACCES);
    r.bank_set = &b40;
    ck_assert_int_eq(memclient_alloc(a, &r, &x), -EACCES);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "bank 40") && strstr(e.message, "left"), "%s", e.message);

    /* Nor frees what lies there, though admin: one handle, or a batch (nothing freed). */
    ck_assert_int_eq(memclient_free(b, al.handle), -EACCES);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "sub-device 'left'") && strstr(e.message, "'right'"), "%s",
                  e.message);
    uint64_t both[] = {bl.handle, ar.handle};
    ck_assert_int_eq(memclient_free_batch(b, both, 2), -EACCES);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "handle 1 of 2 (nothing freed)"), "%s", e.message);
    ck_assert_int_eq(memclient_free(a, bl.handle), -EACCES);
    /* A buffer of no sub-device (root's, over every bank) is out of reach too. */
    ck_assert_int_eq(memclient_free(a, rl.handle), -EACCES);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "in no sub-device"), "%s", e.message);
    memclient_alloc_info qi;
    ck_assert_int_eq(memclient_query(a, al.handle, &qi), 0);
    ck_assert_int_eq(memclient_query(a, ar.handle, &qi), 0);
    ck_assert_int_eq(memclient_query(b, bl.handle, &qi), 0);
    ck_assert_int_eq(memclient_query(root, rl.handle, &qi), 0);

    /* B fills every one of its banks: its next buffer has no room, naming one of them;
     * A's banks hold exactly A's (and root's) buffers, and A still allocates. */
    s = cu_dump(root, MEMCLIENT_DUMP_BANKS);
    uint64_t a_bank3 = bank_use(s, 3)->stats.allocated;
    ck_assert_uint_eq(a_bank3, 4096 * 3 + 1024);
    memclient_snapshot_free(s);
    memclient_buffer full;
    memclient_alloc_req fr = cu_sram(region - 8192 - 1024);
    fr.per_bank = 1;
    int frc = memclient_alloc(b, &fr, &full);
    memclient_last_error(&e);
    ck_assert_msg(frc == 0, "%d %s", frc, e.message);
    ck_assert_int_eq(memclient_alloc(b, &any, &x), -ENOMEM);
    memclient_last_error(&e);
    const char *in = strstr(e.message, ": bank ");
    ck_assert_msg(in && atoi(in + 7) >= 32 && atoi(in + 7) <= 63 && strstr(in, " ran out"), "%s",
                  e.message);
    ck_assert_int_eq(memclient_alloc(a, &any, &x), 0);
    ck_assert_int_eq(banks_within(a, x.handle, 0, 31), 32);
    s = cu_dump(root, MEMCLIENT_DUMP_BANKS);
    ck_assert_uint_eq(bank_use(s, 3)->stats.allocated, a_bank3 + 1024);
    ck_assert_uint_eq(bank_use(s, 40)->stats.free, 0);
    ck_assert_int_eq(cu_check_banks(s), 0);
    /* Each sub-device: its one session, its charge. */
    const memclient_subdev_rec *left = subdev_named(s, "left"), *right = subdev_named(s, "right");
    ck_assert_uint_eq(left->sessions, 1);
    ck_assert_uint_eq(right->sessions, 1);
    ck_assert_uint_eq(left->used, 4096 * 32 + 4096 * 2 + 4096 * 32 + 1024 * 32);
    ck_assert_uint_eq(right->used, 8192 * 32 + (region - 8192 - 1024) * 32);
    uint32_t ids[2] = {0, 0}; /* the sessions bound to left and right */
    for (size_t i = 0; i < s->nsessions; i++)
        if (s->sessions[i].subdev == (uint32_t)(left - s->subdevs) + 1)
            ids[0] = s->sessions[i].id;
        else if (s->sessions[i].subdev == (uint32_t)(right - s->subdevs) + 1)
            ids[1] = s->sessions[i].id;
    ck_assert(ids[0] && ids[1] && ids[0] != ids[1]);
    memclient_snapshot_free(s);
    /* memctl devices: each sub-device's row ends with its session. */
    char out[16384];
    ck_assert_int_eq(memctl_capture(&f, MEMCTL_ARGS("devices"), out, sizeof out), 0);
    const char *names[] = {"\n  left ", "\n  right "};
    for (int i = 0; i < 2; i++) {
        const char *line = strstr(out, names[i]);
        ck_assert_msg(line, "%s", out);
        line++;
        int len = (int)strcspn(line, "\n");
        char tail[32];
        int tl = snprintf(tail, sizeof tail, "config  %" PRIu32, ids[i]);
        ck_assert_msg(len > tl && !strncmp(line + len - tl, tail, (size_t)tl), "%.*s", len, line);
    }

    /* memctl sessions: each bound session's row names its sub-device. */
    ck_assert_int_eq(memctl_capture(&f, MEMCTL_ARGS("sessions"), out, sizeof out), 0);
    int named = 0;
    for (const char *line = out; *line;) {
        size_t len = strcspn(line, "\n");
        unsigned id;
        if (sscanf(line, " %u ", &id) == 1 && (id == ids[0] || id == ids[1])) {
            char *row = strndup(line, len);
            ck_assert_msg(strstr(row, id == ids[1] ? "  right  " : "  left  "), "%s", row);
            free(row);
            named++;
        }
        line += len + (line[len] == '\n');
    }
    ck_assert_msg(named == 2, "%s", out);
    ck_assert_msg(strstr(out, "SUB-DEVICE"), "%s", out);

    /* An admin bound to no sub-device still reclaims anything; A may free its own. */
    ck_assert_int_eq(memclient_free(root, al.handle), 0);
    ck_assert_int_eq(memclient_free(a, ar.handle), 0);
    ck_assert_int_eq(memclient_free(b, full.handle), 0);
    memclient_disconnect(a);
    memclient_disconnect(b);
    memclient_disconnect(root);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-subdevs");
    TCase *tc = tcase_create("subdevs");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, bound_sessions_stay_inside);
    tcase_add_test(tc, define_by_request);
    tcase_add_test(tc, defined_subdevs_survive_restart);
    tcase_add_test(tc, bound_by_supplementary_group);
    tcase_add_test(tc, two_bound_sessions_isolated);
    suite_add_tcase(s, tc);
    return s;
}
