/* memd tests — helpers for the libmemclient integration suites (see client_util.h). */
#include "client_util.h"

#include <check.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_clock.h"

void cu_start(memd_fixture *f)
{
    int r = memd_fixture_start(f, NULL);
    ck_assert_msg(r == 0, "cannot start memd (%d): %s", r, memd_fixture_memd_path());
}

void cu_start_limits(memd_fixture *f, const char *limits)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "limits: {%s}\n"
             "devices:\n"
             "  - id: 0\n"
             "    descriptor: %s/config/devices/wormhole_b0.yaml\n",
             limits, memd_fixture_source_root());
    memd_fixture_opts o = {.config_yaml = yaml, .capture_stderr = true};
    int r = memd_fixture_start(f, &o);
    ck_assert_msg(r == 0, "cannot start memd (%d) with limits {%s}", r, limits);
}

memclient *cu_connect(const memd_fixture *f)
{
    memclient *c = NULL;
    int r = memclient_connect(f->socket_path, &c);
    if (r < 0) {
        memclient_error e;
        memclient_last_error(&e);
        ck_abort_msg("connect %s: %s", f->socket_path, e.message);
    }
    return c;
}

memclient_snapshot *cu_dump(memclient *c, unsigned flags)
{
    memclient_snapshot *s = NULL;
    int r = memclient_dump(c, MEMCLIENT_ALL_DEVICES, flags, &s);
    if (r < 0) {
        memclient_error e;
        memclient_last_error(&e);
        ck_abort_msg("dump: %s", e.message);
    }
    return s;
}

memclient_alloc_req cu_req(memd_class cls, uint64_t bytes)
{
    memclient_alloc_req r = {.device = 0, .cls = cls, .scope = MEMD_SCOPE_DRAM, .bytes = bytes};
    return r;
}

memclient_alloc_req cu_sram(uint64_t bytes)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, bytes);
    r.scope = MEMD_SCOPE_SRAM;
    return r;
}

memclient_alloc_req cu_l1(uint32_t device, uint64_t bytes, uint64_t page_size,
                          const uint32_t *set, uint32_t nset, int per_bank)
{
    memclient_alloc_req r = cu_sram(bytes);
    r.device = device;
    r.page_size = page_size;
    r.bank_set = set;
    r.nbank_set = nset;
    r.per_bank = per_bank;
    return r;
}

const memclient_region *cu_region_of(const memclient_snapshot *s, uint32_t device,
                                     memd_kind kind, const char *name)
{
    for (size_t i = 0; i < s->nregions; i++)
        if (s->regions[i].device == device && s->regions[i].kind == kind &&
            !strcmp(s->regions[i].name, name))
            return &s->regions[i];
    return NULL;
}

const memclient_region *cu_region(const memclient_snapshot *s, memd_kind kind, const char *name)
{
    return cu_region_of(s, 0, kind, name);
}

uint64_t cu_region_size(memclient *c, uint32_t device, memd_kind kind, const char *name)
{
    memclient_snapshot *s = cu_dump(c, 0);
    const memclient_region *r = cu_region_of(s, device, kind, name);
    ck_assert_ptr_nonnull(r);
    uint64_t size = r->size;
    memclient_snapshot_free(s);
    return size;
}

size_t cu_galaxy_yaml(char *yaml, size_t len, uint32_t id, const char *name)
{
    const char *data = getenv("MEMD_SHARED_DATA");
    ck_assert_ptr_nonnull(data);
    int n = snprintf(yaml, len,
                     "  - id: %u\n"
                     "    name: %s\n"
                     "    tt_metal:\n"
                     "      soc_descriptor: %s/soc/tt-metal/soc_wormhole_b0_80_arch.yaml\n"
                     "      core_descriptor: %s/soc/tt-metal/core_wormhole_b0_80_arch.yaml\n"
                     "      product: galaxy\n"
                     "      hw_cqs: 1\n"
                     "    sram:\n"
                     "      reserved: 160KiB\n",
                     id, name, data, data);
    ck_assert(n > 0 && (size_t)n < len);
    return (size_t)n;
}

uint64_t cu_share(memclient *a, memclient *b, uint64_t bytes, const char *name)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, bytes);
    r.name = name;
    r.flags = MEMCLIENT_ALLOC_SHARED;
    memclient_buffer ba, bb;
    ck_assert_int_eq(memclient_alloc(a, &r, &ba), 0);
    ck_assert_int_eq(memclient_alloc(b, &r, &bb), 0);
    ck_assert_uint_eq(ba.handle, bb.handle);
    return ba.handle;
}

void cu_last_error_says(const char *what)
{
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, what), "expected \"%s\" in: %s", what, e.message);
}

size_t cu_fill_store(memclient *c, const memclient_alloc_req *r, uint64_t *handles, size_t cap)
{
    size_t n = 0;
    memclient_buffer b;
    int rc = 0;
    while (n < cap && (rc = memclient_alloc(c, r, &b)) == 0)
        handles[n++] = b.handle;
    ck_assert_int_eq(rc, -EIO);
    cu_last_error_says("state store is full");
    return n;
}

uint32_t cu_dram_banks(memclient *c)
{
    memclient_snapshot *s = cu_dump(c, 0);
    uint32_t banks = 0;
    for (size_t i = 0; i < s->ngroups; i++)
        if (s->groups[i].device == 0 && s->groups[i].kind == MEMD_KIND_DRAM)
            banks = s->groups[i].banks;
    memclient_snapshot_free(s);
    return banks;
}

uint64_t cu_data_allocated(memclient *c)
{
    memclient_snapshot *s = cu_dump(c, 0);
    uint64_t allocated = cu_region(s, MEMD_KIND_DRAM, "data")->stats.allocated;
    memclient_snapshot_free(s);
    return allocated;
}

const memclient_alloc_info *cu_find(const memclient_snapshot *s, uint64_t handle)
{
    for (size_t i = 0; i < s->nallocs; i++)
        if (s->allocs[i].buf.handle == handle)
            return &s->allocs[i];
    return NULL;
}

static int by_place(const void *x, const void *y)
{
    const memclient_alloc_info *a = *(const memclient_alloc_info *const *)x;
    const memclient_alloc_info *b = *(const memclient_alloc_info *const *)y;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    if (a->buf.kind != b->buf.kind)
        return a->buf.kind < b->buf.kind ? -1 : 1;
    if (a->buf.region != b->buf.region)
        return a->buf.region < b->buf.region ? -1 : 1;
    if (a->buf.address != b->buf.address)
        return a->buf.address < b->buf.address ? -1 : 1;
    return 0;
}

int cu_check_map(const memclient_snapshot *s)
{
    int bad = 0;
    const memclient_alloc_info **v = calloc(s->nallocs + 1, sizeof(*v));
    ck_assert_ptr_nonnull(v);
    /* The region's map is the lockstep one: bank-set buffers are cu_check_banks'. */
    size_t n = 0;
    for (size_t i = 0; i < s->nallocs; i++)
        if (s->allocs[i].buf.bank_mode == MEMD_BANKS_ALL)
            v[n++] = &s->allocs[i];
    qsort(v, n, sizeof(*v), by_place);
    for (size_t i = 0; i < n; i++) {
        const memclient_alloc_info *a = v[i];
        const memclient_region *r = memclient_snapshot_region(s, a->device, a->buf.kind,
                                                              a->buf.region);
        if (!r || a->buf.address < r->base || a->buf.size_per_bank > r->size ||
            a->buf.address - r->base > r->size - a->buf.size_per_bank) {
            fprintf(stderr, "handle %" PRIu64 " [0x%" PRIx64 ", +%" PRIu64 ") outside its region\n",
                    a->buf.handle, a->buf.address, a->buf.size_per_bank);
            bad++;
        }
        if (i + 1 < n) {
            const memclient_alloc_info *b = v[i + 1];
            if (b->device == a->device && b->buf.kind == a->buf.kind &&
                b->buf.region == a->buf.region &&
                a->buf.address + a->buf.size_per_bank > b->buf.address) {
                fprintf(stderr, "handles %" PRIu64 " [0x%" PRIx64 ", +%" PRIu64 ") and %" PRIu64
                        " [0x%" PRIx64 ", +%" PRIu64 ") overlap\n",
                        a->buf.handle, a->buf.address, a->buf.size_per_bank, b->buf.handle,
                        b->buf.address, b->buf.size_per_bank);
                bad++;
            }
        }
    }
    for (size_t i = 0; i < s->nregions; i++) {
        const memclient_region *r = &s->regions[i];
        if (!r->allocatable)
            continue;
        uint64_t bytes = 0, count = 0;
        for (size_t j = 0; j < s->nallocs; j++) {
            const memclient_alloc_info *a = &s->allocs[j];
            if (a->device != r->device || a->buf.kind != r->kind || a->buf.region != r->region)
                continue;
            count++; /* every buffer; the bytes are the lockstep map's (engine/alloc/device.h) */
            if (a->buf.bank_mode == MEMD_BANKS_ALL)
                bytes += a->buf.size_per_bank;
        }
        if (bytes != r->stats.allocated || count != r->stats.allocations) {
            fprintf(stderr, "device %" PRIu32 " region %s: stats say %" PRIu64 " bytes in %" PRIu64
                    " allocations, the records %" PRIu64 " in %" PRIu64 "\n", r->device, r->name,
                    r->stats.allocated, r->stats.allocations, bytes, count);
            bad++;
        }
    }
    free(v);
    return bad;
}

typedef struct piece {
    uint64_t at, size, handle;
} piece;

static int by_at(const void *x, const void *y)
{
    const piece *a = x, *b = y;
    return a->at < b->at ? -1 : a->at > b->at;
}

int cu_check_banks(const memclient_snapshot *s)
{
    int bad = 0;
    piece *p = calloc(s->nallocs + 1, sizeof(*p));
    ck_assert_ptr_nonnull(p);
    for (size_t u = 0; u < s->nbank_use; u++) {
        const memclient_bank_use *b = &s->bank_use[u];
        size_t n = 0;
        for (size_t i = 0; i < s->nallocs; i++) {
            const memclient_alloc_info *a = &s->allocs[i];
            if (a->device != b->device || a->buf.kind != b->kind || a->buf.region != b->region)
                continue;
            if (a->buf.bank_mode == MEMD_BANKS_ALL) {
                p[n++] = (piece){a->buf.address, a->buf.size_per_bank, a->buf.handle};
                continue;
            }
            for (size_t k = 0; k < s->nalloc_banks; k++)
                if (s->alloc_banks[k].handle == a->buf.handle &&
                    s->alloc_banks[k].bank.bank == b->bank)
                    p[n++] = (piece){s->alloc_banks[k].bank.address, a->buf.size_per_bank,
                                     a->buf.handle};
        }
        qsort(p, n, sizeof(*p), by_at);
        uint64_t bytes = 0;
        for (size_t i = 0; i < n; i++) {
            bytes += p[i].size;
            if (i + 1 < n && p[i].at + p[i].size > p[i + 1].at) {
                fprintf(stderr, "bank %" PRIu32 ": handles %" PRIu64 " and %" PRIu64 " overlap\n",
                        b->bank, p[i].handle, p[i + 1].handle);
                bad++;
            }
        }
        if (bytes != b->stats.allocated || n != b->stats.allocations) {
            fprintf(stderr, "device %" PRIu32 " bank %" PRIu32 ": stats say %" PRIu64 " bytes in %"
                    PRIu64 " allocations, the records %" PRIu64 " in %zu\n", b->device, b->bank,
                    b->stats.allocated, b->stats.allocations, bytes, n);
            bad++;
        }
    }
    free(p);
    return bad;
}

void cu_open_socket_to_all(const memd_fixture *f)
{
    ck_assert_int_eq(chmod(f->dir, 0711), 0);
    ck_assert_int_eq(chmod(f->socket_path, 0666), 0);
}

int cu_run_as(uint32_t uid, int (*fn)(void *arg), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0) {
            perror("cu_run_as: dropping privileges");
            _exit(120);
        }
        _exit(fn(arg));
    }
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

typedef struct connected_call {
    const memd_fixture *f;
    int (*fn)(memclient *c);
} connected_call;

static int connected(void *arg)
{
    const connected_call *k = arg;
    memclient *c;
    if (memclient_connect(k->f->socket_path, &c) < 0)
        return 10;
    int rc = k->fn(c);
    memclient_disconnect(c);
    return rc;
}

int cu_run_connected_as(uint32_t uid, const memd_fixture *f, int (*fn)(memclient *c))
{
    connected_call k = {f, fn};
    return cu_run_as(uid, connected, &k);
}

bool cu_wait_gone(memclient *c, const uint64_t *handles, size_t n, int timeout_ms)
{
    for (int waited = 0;; waited += 10) {
        memclient_snapshot *s = cu_dump(c, 0);
        size_t left = 0;
        for (size_t i = 0; i < n; i++)
            left += cu_find(s, handles[i]) != NULL;
        memclient_snapshot_free(s);
        if (left == 0)
            return true;
        if (waited >= timeout_ms)
            return false;
        memd_test_sleep_ms(10);
    }
}

int cu_python(const char *script, const char *arg)
{
    const char *argv[] = {"python3", "-c", script, arg, NULL};
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execvp("python3", (char *const *)argv);
        _exit(127);
    }
    int ws;
    if (waitpid(pid, &ws, 0) != pid)
        return -1;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

pid_t cu_fork_holder(const memd_fixture *f, cu_holder_fn make, const void *arg,
                     uint64_t *handles, size_t n)
{
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(pfd[0]);
        memset(handles, 0, n * sizeof *handles);
        make(f->socket_path, arg, handles, n);
        if (write(pfd[1], handles, n * sizeof *handles) != (ssize_t)(n * sizeof *handles))
            _exit(1);
        for (;;)
            pause();
    }
    close(pfd[1]);
    ck_assert_int_eq(read(pfd[0], handles, n * sizeof *handles), (ssize_t)(n * sizeof *handles));
    close(pfd[0]);
    return pid;
}

void cu_kill_holder(pid_t pid)
{
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}
