/* libmemclient against a scripted fake daemon on a temporary Unix socket: what the
 * library sends, how it decodes every reply kind, and how it fails on replies a real
 * daemon should never send (wrong id, oversized, truncated, cut connection). The real
 * daemon is exercised by tests/integration. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check_main.h"
#include "memd/client.h"
#include "wire.h"

/* ---- the fake daemon ------------------------------------------------------------------ */

typedef struct fake fake;
/* Called for every request after HELLO; returns 0 to go on, -1 to close the connection. */
typedef int (*fake_handler)(fake *f, const memd_wire_hdr *h, const uint8_t *p);

struct fake {
    char dir[64];
    char path[128];
    int lfd, cfd;
    pthread_t thread;
    fake_handler handler;
    memd_wire_hello hello;  /* what the client sent */
    uint16_t welcome_version;
    uint32_t max_frame;
    int requests;           /* frames after HELLO */
    uint64_t last_id;
    memd_wire_alloc_req last_alloc;
    void *arg;
};

static int rd_full(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int wr_full(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        ssize_t r = send(fd, p, n, MSG_NOSIGNAL);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int reply(fake *f, uint16_t op, uint64_t id, int32_t status, const void *payload,
                 uint32_t len)
{
    uint8_t hdr[MEMD_HDR_SIZE];
    memd_wire_hdr h = {MEMD_PROTO_MAGIC, MEMD_PROTO_VERSION, op, id, len, status};
    memd_wire_hdr_put(hdr, &h);
    if (wr_full(f->cfd, hdr, sizeof hdr) < 0)
        return -1;
    return len ? wr_full(f->cfd, payload, len) : 0;
}

static int reply_error(fake *f, const memd_wire_hdr *h, const memd_wire_error *e)
{
    uint8_t b[MEMD_WIRE_ERROR_SIZE];
    memd_wire_error_put(b, e);
    return reply(f, h->opcode, h->id, e->status, b, sizeof b);
}

static memd_wire_buffer buffer_for(uint64_t handle, uint64_t address)
{
    memd_wire_buffer b = {.handle = handle, .address = address, .size_per_bank = 4096,
                          .page_size = 4096, .pitch = 0, .banks = 12, .refcount = 1,
                          .kind = MEMD_KIND_DRAM, .region = 1};
    return b;
}

static int reply_buffer(fake *f, const memd_wire_hdr *h, uint64_t handle)
{
    uint8_t b[MEMD_WIRE_BUFFER_SIZE];
    memd_wire_buffer w = buffer_for(handle, handle * 0x1000);
    memd_wire_buffer_put(b, &w);
    return reply(f, h->opcode, h->id, 0, b, sizeof b);
}

static void *serve(void *arg)
{
    fake *f = arg;
    f->cfd = accept(f->lfd, NULL, NULL);
    if (f->cfd < 0)
        return NULL;
    uint8_t hb[MEMD_HDR_SIZE];
    uint8_t *payload = malloc(1u << 22);
    while (rd_full(f->cfd, hb, sizeof hb) == 0) {
        memd_wire_hdr h;
        if (memd_wire_hdr_get(hb, sizeof hb, 1u << 22, &h) < 0)
            break;
        if (rd_full(f->cfd, payload, h.len) < 0)
            break;
        /* The client sends only what the opcode table accepts: the daemon closes on
         * anything else, and so does the fake. */
        if (memd_wire_op_check_len(h.opcode, payload, h.len) < 0)
            break;
        if (h.opcode == MEMD_OP_HELLO) {
            memd_wire_hello_get(payload, h.len, &f->hello);
            memd_wire_welcome w = {.version = f->welcome_version, .session_id = 77,
                                   .max_frame = f->max_frame, .ndevices = 2};
            memd_wire_strset(w.server_version, sizeof w.server_version, "fake-9.9");
            uint8_t b[MEMD_WIRE_WELCOME_SIZE];
            memd_wire_welcome_put(b, &w);
            if (reply(f, h.opcode, h.id, 0, b, sizeof b) < 0)
                break;
            continue;
        }
        f->requests++;
        f->last_id = h.id;
        if (h.opcode == MEMD_OP_ALLOC)
            memd_wire_alloc_req_get(payload, h.len, &f->last_alloc);
        if (f->handler(f, &h, payload) < 0)
            break;
    }
    free(payload);
    close(f->cfd);
    return NULL;
}

static void fake_start(fake *f, fake_handler handler)
{
    memset(f, 0, sizeof *f);
    f->handler = handler;
    f->welcome_version = MEMD_PROTO_VERSION;
    f->max_frame = 1u << 20;
    strcpy(f->dir, "/tmp/memclient-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/memd.sock", f->dir);
    f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(f->lfd, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, f->path);
    ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(f->lfd, 4), 0);
    ck_assert_int_eq(pthread_create(&f->thread, NULL, serve, f), 0);
}

static void fake_stop(fake *f)
{
    pthread_join(f->thread, NULL);
    close(f->lfd);
    unlink(f->path);
    rmdir(f->dir);
}

static memclient *connect_ok(fake *f)
{
    memclient *c = NULL;
    int r = memclient_connect(f->path, &c);
    ck_assert_msg(r == 0, "connect: %d", r);
    ck_assert_ptr_nonnull(c);
    return c;
}

static memclient_alloc_req dram_req(uint64_t bytes)
{
    memclient_alloc_req r = {.device = 1, .cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_DRAM,
                             .bytes = bytes};
    return r;
}

/* ---- handlers ------------------------------------------------------------------------- */

/* ALLOC -> buffer with handle = request id; FREE -> ok; everything else -> EINVAL. */
static int h_echo(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    (void)p;
    if (h->opcode == MEMD_OP_ALLOC)
        return reply_buffer(f, h, h->id);
    if (h->opcode == MEMD_OP_FREE)
        return reply(f, h->opcode, h->id, 0, NULL, 0);
    memd_wire_error e = {.status = -EINVAL};
    memd_wire_strset(e.message, sizeof e.message, "unexpected");
    return reply_error(f, h, &e);
}

/* Replies to a device-tagged ALLOC with handle = the request's device (thread test). */
static int h_device_echo(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    memd_wire_alloc_req r;
    (void)p;
    if (memd_wire_alloc_req_get(p, h->len, &r) < 0)
        return -1;
    return reply_buffer(f, h, r.device);
}

static int h_nomem(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    (void)p;
    memd_wire_error e = {.status = -ENOMEM, .detail = MEMD_ERR_DETAIL_NOMEM, .requested = 1000,
                         .size_per_bank = 1024, .allocated = 9000, .free = 3000,
                         .largest_free = 512, .device = 1, .cls = MEMD_CLASS_CONSTANT,
                         .kind = MEMD_KIND_DRAM, .region = 1};
    memd_wire_strset(e.message, sizeof e.message, "device 1 dram/data: no block of 1024 bytes");
    return reply_error(f, h, &e);
}

static int h_wrong_id(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    (void)p;
    memd_wire_hdr x = *h;
    x.id += 1000;
    return reply_buffer(f, &x, 5);
}

static int h_oversized(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    (void)p;
    uint8_t hdr[MEMD_HDR_SIZE];
    memd_wire_hdr x = {MEMD_PROTO_MAGIC, MEMD_PROTO_VERSION, h->opcode, h->id,
                       MEMD_MAX_REPLY + 1u, 0};
    memd_wire_hdr_put(hdr, &x);
    wr_full(f->cfd, hdr, sizeof hdr);
    return 0; /* keep the connection: the client must hang up itself */
}

static int h_hangup(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    (void)f, (void)h, (void)p;
    return -1;
}

static int h_short_buffer(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    (void)p;
    uint8_t b[MEMD_WIRE_BUFFER_SIZE] = {0};
    return reply(f, h->opcode, h->id, 0, b, sizeof b - 8);
}

static int h_frame_rejected(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    (void)p;
    memd_wire_error e = {.status = -EBADMSG};
    memd_wire_strset(e.message, sizeof e.message, "bad length");
    memd_wire_hdr x = *h;
    x.id = 0;
    reply_error(f, &x, &e);
    return -1;
}

static int h_batch(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    uint32_t n;
    if (h->opcode == MEMD_OP_FREE_BATCH) {
        if (memd_wire_count_get(p, h->len, MEMD_WIRE_HANDLE_SIZE, UINT32_MAX, &n) < 0)
            return -1;
        f->arg = (void *)(uintptr_t)n;
        return reply(f, h->opcode, h->id, 0, NULL, 0);
    }
    if (memd_wire_count_get(p, h->len, MEMD_WIRE_ALLOC_REQ_SIZE, UINT32_MAX, &n) < 0)
        return -1;
    /* A count of 3 gets a reply with 2 buffers: the client must reject it. */
    uint32_t rn = n == 3 ? 2 : n;
    size_t len = MEMD_WIRE_COUNT_SIZE + (size_t)rn * MEMD_WIRE_BUFFER_SIZE;
    uint8_t *b = malloc(len), *q = memd_wire_count_put(b, rn);
    for (uint32_t i = 0; i < rn; i++) {
        memd_wire_alloc_req r;
        memd_wire_alloc_req_get(p + MEMD_WIRE_COUNT_SIZE + (size_t)i * MEMD_WIRE_ALLOC_REQ_SIZE,
                                MEMD_WIRE_ALLOC_REQ_SIZE, &r);
        memd_wire_buffer w = buffer_for(100 + i, r.bytes);
        q = memd_wire_buffer_put(q, &w);
    }
    int ret = reply(f, h->opcode, h->id, 0, b, (uint32_t)len);
    free(b);
    return ret;
}

static int h_banks(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    (void)p;
    uint8_t b[MEMD_WIRE_COUNT_SIZE + 5 * 8], *q = memd_wire_count_put(b, 5);
    for (int i = 0; i < 5; i++)
        q = memd_wire_put_u64(q, 0x1000u * (unsigned)(i + 1));
    return reply(f, h->opcode, h->id, 0, b, sizeof b);
}

static int h_query(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    uint64_t handle = memd_wire_u64(p);
    if (handle != 42) {
        memd_wire_error e = {.status = -EPERM};
        memd_wire_strset(e.message, sizeof e.message, "handle belongs to session 3");
        return reply_error(f, h, &e);
    }
    memd_wire_alloc_info a = {.buf = buffer_for(42, 0x2000), .device = 1,
                              .cls = MEMD_CLASS_PLACEHOLDER, .scope = MEMD_SCOPE_DRAM,
                              .pid = 123, .uid = 1000, .gid = 1000, .session_id = 77,
                              .created_ns = 555};
    memd_wire_strset(a.name, sizeof a.name, "weights");
    memd_wire_strset(a.comm, sizeof a.comm, "python3");
    uint8_t b[MEMD_WIRE_ALLOC_INFO_SIZE];
    memd_wire_alloc_info_put(b, &a);
    return reply(f, h->opcode, h->id, 0, b, sizeof b);
}

/* A DUMP reply; arg = 1 puts a DEVICE record before the SERVER record (invalid). */
static int h_dump(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    (void)p;
    uint8_t b[4096], *q = b;
    memd_wire_server_rec sv = {.start_ns = 1, .now_ns = 2, .sessions = 3, .pid = 4,
                               .requests = 5, .allocs = 6, .frees = 7};
    memd_wire_strset(sv.version, sizeof sv.version, "0.1.0");
    memd_wire_device_rec dev = {.id = 0, .texture = 1};
    memd_wire_strset(dev.name, sizeof dev.name, "n300");
    memd_wire_strset(dev.arch, sizeof dev.arch, "wormhole_b0");
    memd_wire_group_rec g = {.device = 0, .kind = MEMD_KIND_SRAM, .nregions = 2, .banks = 64,
                             .clients = 1, .bank_size = 1 << 20, .alignment = 32,
                             .stats = {.total = 900, .allocated = 100, .free = 800,
                                       .largest_free = 700}};
    memd_wire_region_rec rg = {.device = 0, .kind = MEMD_KIND_SRAM, .region = 1,
                               .allocatable = 1, .base = 0x1000, .size = 900};
    memd_wire_strset(rg.name, sizeof rg.name, "buffers");
    memd_wire_alloc_info a = {.buf = buffer_for(9, 0x1100), .device = 0, .pid = 11};
    memd_wire_block_rec bl = {.device = 0, .kind = MEMD_KIND_SRAM, .region = 1, .allocated = 1,
                              .address = 0x1100, .size = 100};
    memd_wire_session_rec se = {.id = 77, .pid = 11, .allocations = 1};
    memd_wire_strset(se.client_name, sizeof se.client_name, "test");
    if (f->arg) {
        q = memd_wire_tag_put(q, MEMD_REC_DEVICE);
        q = memd_wire_device_rec_put(q, &dev);
    }
    q = memd_wire_tag_put(q, MEMD_REC_SERVER);
    q = memd_wire_server_rec_put(q, &sv);
    q = memd_wire_tag_put(q, MEMD_REC_DEVICE);
    q = memd_wire_device_rec_put(q, &dev);
    q = memd_wire_tag_put(q, MEMD_REC_GROUP);
    q = memd_wire_group_rec_put(q, &g);
    q = memd_wire_tag_put(q, MEMD_REC_REGION);
    q = memd_wire_region_rec_put(q, &rg);
    q = memd_wire_tag_put(q, MEMD_REC_ALLOC);
    q = memd_wire_alloc_info_put(q, &a);
    q = memd_wire_tag_put(q, MEMD_REC_BLOCK);
    q = memd_wire_block_rec_put(q, &bl);
    q = memd_wire_tag_put(q, MEMD_REC_SESSION);
    q = memd_wire_session_rec_put(q, &se);
    return reply(f, h->opcode, h->id, 0, b, (uint32_t)(q - b));
}

/* A DUMP reply with one 64-bank SRAM group and a sub-device whose SUBDEV_BANKS record is
 * the case's (arg); the fake keeps the request's flags there. */
typedef struct subdev_case {
    uint32_t nbanks;        /* the SUBDEV record's */
    uint32_t count;         /* the SUBDEV_BANKS record's */
    uint32_t ids[4];        /* its ids (min(count, 4) of them are written) */
    size_t cut;             /* bytes left off the end of the reply */
    int lone;               /* no SUBDEV record before it */
    int twice;              /* the record twice */
    int none;               /* no SUBDEV_BANKS record (a daemon from before them) */
    uint32_t flags;         /* the request's */
} subdev_case;

static int h_dump_subdev(fake *f, const memd_wire_hdr *h, const uint8_t *p)
{
    subdev_case *k = f->arg;
    memd_wire_dump_req q;
    if (memd_wire_dump_req_get(p, h->len, &q) == 0)
        k->flags = q.flags;
    uint8_t b[2048], *o = b;
    memd_wire_server_rec sv = {.pid = 4};
    memd_wire_device_rec dev = {.id = 0};
    memd_wire_group_rec g = {.device = 0, .kind = MEMD_KIND_SRAM, .nregions = 1, .banks = 64};
    memd_wire_subdev_rec sd = {.device = 0, .kind = MEMD_KIND_SRAM, .nbanks = k->nbanks};
    memd_wire_strset(sd.name, sizeof sd.name, "part");
    o = memd_wire_device_rec_put(memd_wire_tag_put(memd_wire_server_rec_put(
                                     memd_wire_tag_put(o, MEMD_REC_SERVER), &sv),
                                                   MEMD_REC_DEVICE),
                                 &dev);
    o = memd_wire_group_rec_put(memd_wire_tag_put(o, MEMD_REC_GROUP), &g);
    if (!k->lone)
        o = memd_wire_subdev_rec_put(memd_wire_tag_put(o, MEMD_REC_SUBDEV), &sd);
    for (int i = 0; !k->none && i < 1 + k->twice; i++) {
        o = memd_wire_put_u32(memd_wire_tag_put(o, MEMD_REC_SUBDEV_BANKS), k->count);
        o = memd_wire_put_u32(o, 0);
        for (uint32_t j = 0; j < k->count && j < 4; j++)
            o = memd_wire_put_u32(o, k->ids[j]);
    }
    return reply(f, h->opcode, h->id, 0, b, (uint32_t)(o - b - k->cut));
}

/* ---- tests ---------------------------------------------------------------------------- */

START_TEST(connect_negotiates)
{
    fake f;
    fake_start(&f, h_echo);
    memclient *c = NULL;
    ck_assert_int_eq(memclient_connect_named(f.path, "unit-test", &c), 0);
    memclient_session_info si;
    ck_assert_int_eq(memclient_session(c, &si), 0);
    ck_assert_uint_eq(si.protocol_version, 1);
    ck_assert_uint_eq(si.session_id, 77);
    ck_assert_uint_eq(si.max_frame, 1u << 20);
    ck_assert_uint_eq(si.ndevices, 2);
    ck_assert_str_eq(si.server_version, "fake-9.9");
    ck_assert_str_eq(si.socket_path, f.path);
    ck_assert_uint_eq(memclient_max_alloc_batch(c), ((1u << 20) - 8) / 136);
    memclient_disconnect(c);
    fake_stop(&f);
    ck_assert_uint_eq(f.hello.min_version, 1);
    ck_assert_uint_eq(f.hello.max_version, MEMD_PROTO_VERSION);
    ck_assert_str_eq(f.hello.client_name, "unit-test");
}
END_TEST

START_TEST(connect_uses_env)
{
    fake f;
    fake_start(&f, h_echo);
    setenv("MEMD_SOCKET", f.path, 1);
    memclient *c = NULL;
    ck_assert_int_eq(memclient_connect(NULL, &c), 0);
    memclient_session_info si;
    memclient_session(c, &si);
    ck_assert_str_eq(si.socket_path, f.path);
    memclient_disconnect(c);
    unsetenv("MEMD_SOCKET");
    fake_stop(&f);
}
END_TEST

START_TEST(connect_failures_name_the_path)
{
    memclient *c = (memclient *)1;
    memclient_error e;
    ck_assert_int_eq(memclient_connect("/nonexistent/memd.sock", &c), -ENOENT);
    ck_assert_ptr_null(c);
    ck_assert_int_eq(memclient_last_error(&e), -ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "/nonexistent/memd.sock"));

    char longp[200];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    ck_assert_int_eq(memclient_connect(longp, &c), -ENAMETOOLONG);
    ck_assert_int_eq(memclient_connect("/tmp/x", NULL), -EINVAL);
    ck_assert_str_eq(memclient_default_socket(), "/run/memd/memd.sock");
}
END_TEST

START_TEST(connect_rejects_bad_version)
{
    fake f;
    fake_start(&f, h_echo);
    f.welcome_version = 7;
    memclient *c = NULL;
    ck_assert_int_eq(memclient_connect(f.path, &c), -EPROTONOSUPPORT);
    ck_assert_ptr_null(c);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "protocol version 7"), "%s", e.message);
    fake_stop(&f);
}
END_TEST

START_TEST(alloc_encodes_and_decodes)
{
    fake f;
    fake_start(&f, h_echo);
    memclient *c = connect_ok(&f);
    memclient_alloc_req r = {.device = 3, .cls = MEMD_CLASS_INTERNAL, .scope = MEMD_SCOPE_SRAM,
                             .dtype = MEMD_DTYPE_BF16, .ndim = 2, .shape = {32, 64},
                             .page_size = 2048, .alignment = 64, .banks = 8,
                             .flags = MEMCLIENT_ALLOC_SHARED, .name = "kv-cache"};
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_uint_eq(b.handle, f.last_id);
    ck_assert_uint_eq(b.address, f.last_id * 0x1000);
    ck_assert_uint_eq(b.size_per_bank, 4096);
    ck_assert_uint_eq(b.banks, 12);
    ck_assert_int_eq(b.kind, MEMD_KIND_DRAM);
    ck_assert_uint_eq(b.region, 1);
    ck_assert_int_eq(memclient_free(c, b.handle), 0);
    memclient_disconnect(c);
    fake_stop(&f);
    ck_assert_int_eq(f.requests, 2);
    memd_wire_alloc_req *w = &f.last_alloc;
    ck_assert_uint_eq(w->device, 3);
    ck_assert_uint_eq(w->cls, MEMD_CLASS_INTERNAL);
    ck_assert_uint_eq(w->scope, MEMD_SCOPE_SRAM);
    ck_assert_uint_eq(w->dtype, MEMD_DTYPE_BF16);
    ck_assert_uint_eq(w->ndim, 2);
    ck_assert_uint_eq(w->shape[1], 64);
    ck_assert_uint_eq(w->page_size, 2048);
    ck_assert_uint_eq(w->alignment, 64);
    ck_assert_uint_eq(w->banks, 8);
    ck_assert_uint_eq(w->flags, MEMD_ALLOC_F_SHARED);
    ck_assert_str_eq(w->name, "kv-cache");
}
END_TEST

START_TEST(alloc_rejects_unencodable_requests)
{
    fake f;
    fake_start(&f, h_echo);
    memclient *c = connect_ok(&f);
    memclient_buffer b;
    memclient_alloc_req r = dram_req(64);
    char name[100];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    r.name = name;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ENAMETOOLONG);
    r = dram_req(64);
    r.flags = MEMCLIENT_ALLOC_SHARED;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -EINVAL);
    r = dram_req(64);
    r.cls = MEMD_CLASS_COUNT;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -EINVAL);
    r = dram_req(64);
    r.ndim = MEMD_MAX_DIMS + 1;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -EINVAL);
    r = dram_req(64);
    r.flags = 0x80;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -EINVAL);
    ck_assert_int_eq(memclient_alloc(c, NULL, &b), -EINVAL);
    /* Nothing was sent, and the connection still works. */
    r = dram_req(64);
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    memclient_disconnect(c);
    fake_stop(&f);
    ck_assert_int_eq(f.requests, 1);
}
END_TEST

START_TEST(nomem_detail)
{
    fake f;
    fake_start(&f, h_nomem);
    memclient *c = connect_ok(&f);
    memclient_alloc_req r = dram_req(1000);
    memclient_buffer b = {.handle = 12345};
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ENOMEM);
    ck_assert_uint_eq(b.handle, 12345); /* untouched on failure */
    memclient_error e;
    ck_assert_int_eq(memclient_last_error(&e), -ENOMEM);
    ck_assert_int_eq(e.detail, MEMCLIENT_DETAIL_NOMEM);
    ck_assert_str_eq(e.message, "device 1 dram/data: no block of 1024 bytes");
    ck_assert_uint_eq(e.requested, 1000);
    ck_assert_uint_eq(e.size_per_bank, 1024);
    ck_assert_uint_eq(e.allocated, 9000);
    ck_assert_uint_eq(e.free, 3000);
    ck_assert_uint_eq(e.largest_free, 512);
    ck_assert_uint_eq(e.device, 1);
    ck_assert_int_eq(e.cls, MEMD_CLASS_CONSTANT);
    ck_assert_int_eq(e.kind, MEMD_KIND_DRAM);
    ck_assert_uint_eq(e.region, 1);
    /* An error reply is not fatal: the connection goes on. */
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ENOMEM);
    memclient_disconnect(c);
    fake_stop(&f);
}
END_TEST

/* A reply for another request, an oversized one, a short one, a cut connection and a
 * frame rejected with id 0 all end the connection; later calls say so. */
static void expect_dead(fake_handler h, int expect, const char *why)
{
    fake f;
    fake_start(&f, h);
    memclient *c = connect_ok(&f);
    memclient_alloc_req r = dram_req(64);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), expect);
    memclient_error e;
    ck_assert_int_eq(memclient_last_error(&e), expect);
    ck_assert_msg(strstr(e.message, why), "message '%s' lacks '%s'", e.message, why);
    ck_assert_int_eq(memclient_free(c, 1), -ENOTCONN);
    ck_assert_int_eq(memclient_last_error(&e), -ENOTCONN);
    memclient_completion done;
    ck_assert_int_eq(memclient_complete(c, &done), -ENOENT);
    memclient_disconnect(c);
    fake_stop(&f);
}

/* Replies that kill the connection: the handler, the error and what its message names. */
static const struct {
    fake_handler h;
    int expect;
    const char *why;
} dead_replies[] = {
    {h_wrong_id, -EPROTO, "expected id"},
    {h_oversized, -EMSGSIZE, "MEMD_MAX_REPLY"},
    {h_short_buffer, -EBADMSG, "malformed ALLOC reply"},
    {h_hangup, -ECONNRESET, "closed the connection"},
    {h_frame_rejected, -EBADMSG, "daemon rejected a frame: bad length"},
};

START_TEST(reply_kills_connection)
{
    expect_dead(dead_replies[_i].h, dead_replies[_i].expect, dead_replies[_i].why);
}
END_TEST

START_TEST(pipelined_in_order)
{
    fake f;
    fake_start(&f, h_echo);
    memclient *c = connect_ok(&f);
    enum { N = 200 };
    static memclient_buffer bufs[N];
    uint64_t tickets[N];
    memclient_alloc_req r = dram_req(64);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(memclient_submit_alloc(c, &r, &bufs[i], &tickets[i]), 0);
    ck_assert_uint_eq(memclient_pending(c), N);
    /* A blocking call in the middle waits only for its own reply. */
    memclient_buffer mid;
    ck_assert_int_eq(memclient_alloc(c, &r, &mid), 0);
    ck_assert_uint_eq(mid.handle, tickets[N - 1] + 1);
    for (int i = 0; i < N; i++) {
        memclient_completion done;
        ck_assert_int_eq(memclient_complete(c, &done), 0);
        ck_assert_uint_eq(done.ticket, tickets[i]);
        ck_assert_int_eq(done.status, 0);
        ck_assert_uint_eq(bufs[i].handle, tickets[i]);
    }
    memclient_completion done;
    ck_assert_int_eq(memclient_complete(c, &done), -ENOENT);
    ck_assert_uint_eq(memclient_pending(c), 0);
    memclient_disconnect(c);
    fake_stop(&f);
}
END_TEST

/* 20000 pipelined frees, ~1 MB of requests: the fake answers each as it reads, so both
 * socket buffers fill; the library must read replies while it sends. */
START_TEST(pipelined_no_deadlock)
{
    fake f;
    fake_start(&f, h_echo);
    memclient *c = connect_ok(&f);
    enum { N = 20000 };
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(memclient_submit_free(c, (uint64_t)i + 1, NULL), 0);
    int ok = 0;
    memclient_completion done;
    while (memclient_complete(c, &done) == 0)
        ok += done.status == 0;
    ck_assert_int_eq(ok, N);
    memclient_disconnect(c);
    fake_stop(&f);
    ck_assert_int_eq(f.requests, N);
}
END_TEST

START_TEST(pipelined_error_detail_per_request)
{
    fake f;
    fake_start(&f, h_nomem);
    memclient *c = connect_ok(&f);
    memclient_alloc_req r = dram_req(64);
    memclient_buffer b[2];
    ck_assert_int_eq(memclient_submit_alloc(c, &r, &b[0], NULL), 0);
    ck_assert_int_eq(memclient_submit_alloc(c, &r, &b[1], NULL), 0);
    ck_assert_int_eq(memclient_flush(c), 0);
    memclient_completion done;
    ck_assert_int_eq(memclient_complete(c, &done), 0);
    ck_assert_int_eq(done.status, -ENOMEM);
    memclient_error e;
    ck_assert_int_eq(memclient_last_error(&e), -ENOMEM);
    ck_assert_uint_eq(e.largest_free, 512);
    ck_assert_int_eq(memclient_complete(c, &done), 0);
    ck_assert_int_eq(done.status, -ENOMEM);
    memclient_disconnect(c);
    fake_stop(&f);
}
END_TEST

typedef struct {
    memclient *c;
    uint32_t id;
    int bad;
} thread_arg;

static void *share_worker(void *p)
{
    thread_arg *a = p;
    for (int i = 0; i < 500; i++) {
        memclient_alloc_req r = dram_req(64);
        r.device = a->id;
        memclient_buffer b;
        if (memclient_alloc(a->c, &r, &b) != 0 || b.handle != a->id)
            a->bad++;
    }
    return NULL;
}

START_TEST(threads_share_a_connection)
{
    fake f;
    fake_start(&f, h_device_echo);
    memclient *c = connect_ok(&f);
    enum { T = 4 };
    pthread_t th[T];
    thread_arg args[T];
    for (int i = 0; i < T; i++) {
        args[i] = (thread_arg){.c = c, .id = 1000 + (uint32_t)i};
        pthread_create(&th[i], NULL, share_worker, &args[i]);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(args[i].bad, 0);
    }
    memclient_disconnect(c);
    fake_stop(&f);
    ck_assert_int_eq(f.requests, T * 500);
}
END_TEST

START_TEST(batches)
{
    fake f;
    fake_start(&f, h_batch);
    memclient *c = connect_ok(&f);
    memclient_alloc_req reqs[5];
    memclient_buffer out[5];
    for (int i = 0; i < 5; i++)
        reqs[i] = dram_req(1000 + (uint64_t)i);
    ck_assert_int_eq(memclient_alloc_batch(c, reqs, 5, out), 0);
    for (int i = 0; i < 5; i++) {
        ck_assert_uint_eq(out[i].handle, 100 + (uint64_t)i);
        ck_assert_uint_eq(out[i].address, 1000 + (uint64_t)i);
    }
    uint64_t handles[4] = {1, 2, 3, 4};
    ck_assert_int_eq(memclient_free_batch(c, handles, 4), 0);
    ck_assert_uint_eq((uintptr_t)f.arg, 4);
    /* An invalid element fails the whole batch before anything is sent. */
    reqs[2].scope = MEMD_SCOPE_COUNT;
    ck_assert_int_eq(memclient_alloc_batch(c, reqs, 5, out), -EINVAL);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_ptr_nonnull(strstr(e.message, "batch element 2"));
    /* Over the daemon's frame limit: refused locally. */
    size_t max = memclient_max_alloc_batch(c);
    memclient_alloc_req *big = calloc(max + 1, sizeof(*big));
    memclient_buffer *bigout = calloc(max + 1, sizeof(*bigout));
    for (size_t i = 0; i <= max; i++)
        big[i] = dram_req(64);
    ck_assert_int_eq(memclient_alloc_batch(c, big, max + 1, bigout), -EMSGSIZE);
    free(big);
    free(bigout);
    /* A reply with the wrong count is malformed. */
    reqs[2].scope = MEMD_SCOPE_DRAM;
    ck_assert_int_eq(memclient_alloc_batch(c, reqs, 3, out), -EBADMSG);
    memclient_disconnect(c);
    fake_stop(&f);
}
END_TEST

START_TEST(query_and_banks)
{
    fake f;
    fake_start(&f, h_query);
    memclient *c = connect_ok(&f);
    memclient_alloc_info info;
    ck_assert_int_eq(memclient_query(c, 42, &info), 0);
    ck_assert_uint_eq(info.buf.handle, 42);
    ck_assert_uint_eq(info.pid, 123);
    ck_assert_uint_eq(info.uid, 1000);
    ck_assert_int_eq(info.cls, MEMD_CLASS_PLACEHOLDER);
    ck_assert_str_eq(info.name, "weights");
    ck_assert_str_eq(info.comm, "python3");
    ck_assert_int_eq(memclient_query(c, 43, &info), -EPERM);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_str_eq(e.message, "handle belongs to session 3");
    memclient_disconnect(c);
    fake_stop(&f);

    fake_start(&f, h_banks);
    c = connect_ok(&f);
    uint64_t addrs[3] = {0};
    ck_assert_int_eq(memclient_bank_addresses(c, 1, addrs, 3), 5);
    ck_assert_uint_eq(addrs[0], 0x1000);
    ck_assert_uint_eq(addrs[2], 0x3000);
    ck_assert_int_eq(memclient_bank_addresses(c, 1, NULL, 0), 5);
    memclient_disconnect(c);
    fake_stop(&f);
}
END_TEST

START_TEST(dump_parses)
{
    fake f;
    fake_start(&f, h_dump);
    memclient *c = connect_ok(&f);
    memclient_snapshot *s = NULL;
    ck_assert_int_eq(memclient_dump(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_BLOCKS, &s), 0);
    ck_assert_str_eq(s->server.version, "0.1.0");
    ck_assert_uint_eq(s->server.frees, 7);
    ck_assert_uint_eq(s->ndevices, 1);
    ck_assert_str_eq(s->devices[0].arch, "wormhole_b0");
    ck_assert_int_eq(s->devices[0].texture, 1);
    ck_assert_uint_eq(s->ngroups, 1);
    ck_assert_int_eq(s->groups[0].kind, MEMD_KIND_SRAM);
    ck_assert_uint_eq(s->groups[0].stats.largest_free, 700);
    ck_assert_uint_eq(s->nregions, 1);
    ck_assert_str_eq(s->regions[0].name, "buffers");
    ck_assert_uint_eq(s->nallocs, 1);
    ck_assert_uint_eq(s->allocs[0].buf.handle, 9);
    ck_assert_uint_eq(s->nblocks, 1);
    ck_assert_uint_eq(s->blocks[0].size, 100);
    ck_assert_uint_eq(s->nsessions, 1);
    ck_assert_str_eq(s->sessions[0].client_name, "test");
    const memclient_region *rg = memclient_snapshot_region(s, 0, MEMD_KIND_SRAM, 1);
    ck_assert_ptr_eq(rg, &s->regions[0]);
    ck_assert_ptr_null(memclient_snapshot_region(s, 0, MEMD_KIND_DRAM, 1));
    memclient_snapshot_free(s);
    ck_assert_int_eq(memclient_dump(c, 0, MEMCLIENT_DUMP_ALL + 1, &s), -EINVAL);
    /* SERVER must come first. */
    f.arg = (void *)1;
    ck_assert_int_eq(memclient_dump(c, 0, 0, &s), -EBADMSG);
    ck_assert_ptr_null(s);
    memclient_disconnect(c);
    fake_stop(&f);
}
END_TEST

/* SUBDEV_BANKS records: asked for with MEMCLIENT_DUMP_BANKS, decoded into bank_ids, and
 * every malformed one refused (length, count, order, bound, position). */
START_TEST(dump_subdev_banks)
{
    static const struct {
        subdev_case k;
        int rc;
    } cases[] = {
        {{.nbanks = 3, .count = 3, .ids = {1, 40, 63}}, 0},
        {{.nbanks = 3, .none = 1}, 0},
        {{.nbanks = 4, .count = 3, .ids = {1, 40, 63}}, -EBADMSG},  /* count != nbanks */
        {{.nbanks = 3, .count = 3, .ids = {1, 1, 63}}, -EINVAL},    /* duplicate */
        {{.nbanks = 3, .count = 3, .ids = {40, 1, 63}}, -EINVAL},   /* not increasing */
        {{.nbanks = 3, .count = 3, .ids = {1, 40, 64}}, -EINVAL},   /* past the group */
        {{.nbanks = 3, .count = 3, .ids = {1, 40, 63}, .cut = 4}, -EBADMSG},
        {{.nbanks = 3, .count = 3, .ids = {1, 40, 63}, .cut = 14}, -EBADMSG},
        {{.nbanks = 4, .count = MEMD_BANKSET_MAX + 1}, -EINVAL},   /* count over the max */
        {{.nbanks = 5, .count = 5, .ids = {1, 2, 3, 4}}, -EBADMSG},   /* an id missing */
        {{.nbanks = 3, .count = 3, .ids = {1, 40, 63}, .lone = 1}, -EBADMSG},
        {{.nbanks = 3, .count = 3, .ids = {1, 40, 63}, .twice = 1}, -EBADMSG},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake f;
        subdev_case k = cases[i].k;
        fake_start(&f, h_dump_subdev);
        f.arg = &k;
        memclient *c = connect_ok(&f);
        memclient_snapshot *s = NULL;
        int rc = memclient_dump(c, 0, MEMCLIENT_DUMP_BANKS, &s);
        ck_assert_msg(rc == cases[i].rc, "case %zu: %d, expected %d", i, rc, cases[i].rc);
        ck_assert_uint_eq(k.flags & (MEMD_DUMP_F_BANKS | MEMD_DUMP_F_SUBDEV_BANKS),
                          MEMD_DUMP_F_BANKS | MEMD_DUMP_F_SUBDEV_BANKS);
        if (rc == 0) {
            ck_assert_uint_eq(s->nsubdevs, 1);
            if (k.none) {
                ck_assert_ptr_null(s->subdevs[0].bank_ids);
            } else {
                ck_assert_uint_eq(s->nsubdev_bank_ids, 3);
                ck_assert_ptr_eq(s->subdevs[0].bank_ids, s->subdev_bank_ids);
                ck_assert_mem_eq(s->subdevs[0].bank_ids, k.ids, 3 * sizeof k.ids[0]);
            }
        } else {
            ck_assert_ptr_null(s);
        }
        memclient_snapshot_free(s);
        memclient_disconnect(c);
        fake_stop(&f);
    }
}
END_TEST

START_TEST(names_and_strerror)
{
    memd_scope sc;
    memd_class cl;
    memd_kind k;
    memd_dtype t;
    ck_assert_int_eq(memclient_scope_parse("global", &sc), 0);
    ck_assert_int_eq(sc, MEMD_SCOPE_DRAM);
    ck_assert_int_eq(memclient_scope_parse("l1", &sc), 0);
    ck_assert_int_eq(sc, MEMD_SCOPE_SRAM);
    ck_assert_int_eq(memclient_scope_parse("dram.texture", &sc), 0);
    ck_assert_int_eq(sc, MEMD_SCOPE_DRAM_TEXTURE);
    ck_assert_int_eq(memclient_scope_parse("texture", &sc), -EINVAL);
    ck_assert_int_eq(memclient_class_parse("placeholder", &cl), 0);
    ck_assert_int_eq(cl, MEMD_CLASS_PLACEHOLDER);
    ck_assert_int_eq(memclient_class_parse("Placeholder", &cl), -EINVAL);
    ck_assert_int_eq(memclient_kind_parse("sram", &k), 0);
    ck_assert_int_eq(memclient_dtype_parse("bf16", &t), 0);
    ck_assert_int_eq(t, MEMD_DTYPE_BF16);
    ck_assert_int_eq(memclient_dtype_parse("none", &t), -EINVAL);
    ck_assert_int_eq(memclient_dtype_parse(NULL, &t), -EINVAL);
    ck_assert_str_eq(memclient_class_name(MEMD_CLASS_LOGGING), "logging");
    ck_assert_str_eq(memclient_kind_name((memd_kind)9), "unknown");
    /* The same aliases as the daemon's config loader. */
    ck_assert_int_eq(memclient_dtype_parse("float32", &t), 0);
    ck_assert_int_eq(t, MEMD_DTYPE_F32);
    ck_assert_int_eq(memclient_scope_parse("global.texture", &sc), 0);
    ck_assert_int_eq(sc, MEMD_SCOPE_DRAM_TEXTURE);
    ck_assert_int_eq(memclient_kind_parse("global", &k), 0);
    ck_assert_int_eq(k, MEMD_KIND_DRAM);
    ck_assert_str_eq(memclient_scope_name(MEMD_SCOPE_DRAM_TEXTURE), "dram.texture");
    ck_assert_ptr_nonnull(strstr(memclient_strerror(-ENOMEM), "device memory"));
    ck_assert_str_eq(memclient_strerror(ENOMEM), memclient_strerror(-ENOMEM));
    ck_assert_ptr_nonnull(memclient_strerror(-4095));
    ck_assert_str_eq(memclient_strerror(0), "success");
}
END_TEST

Suite *memd_test_suite(void)
{
    signal(SIGPIPE, SIG_IGN); /* the fake daemon writes to clients that hung up */
    Suite *s = suite_create("memclient");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, connect_negotiates);
    tcase_add_test(tc, connect_uses_env);
    tcase_add_test(tc, connect_failures_name_the_path);
    tcase_add_test(tc, connect_rejects_bad_version);
    tcase_add_test(tc, alloc_encodes_and_decodes);
    tcase_add_test(tc, alloc_rejects_unencodable_requests);
    tcase_add_test(tc, nomem_detail);
    tcase_add_loop_test(tc, reply_kills_connection, 0,
                        (int)(sizeof dead_replies / sizeof dead_replies[0]));
    tcase_add_test(tc, pipelined_in_order);
    tcase_add_test(tc, pipelined_no_deadlock);
    tcase_add_test(tc, pipelined_error_detail_per_request);
    tcase_add_test(tc, threads_share_a_connection);
    tcase_add_test(tc, batches);
    tcase_add_test(tc, query_and_banks);
    tcase_add_test(tc, dump_parses);
    tcase_add_test(tc, dump_subdev_banks);
    tcase_add_test(tc, names_and_strerror);
    suite_add_tcase(s, tc);
    return s;
}
