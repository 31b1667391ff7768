/* The golden values (see frames_golden.h). Every field gets a value of its own: numbers
 * from a sequence that spreads over all the field's bytes (so a field written at the
 * wrong offset, width or byte order shows), enums and flags at their highest valid value
 * that is not 0, counts small enough for any range check a new decoder may add, strings
 * of different lengths (one filling its field up to the NUL). Pads stay 0: the codec
 * writes 0 there whatever the struct holds. */
#include "frames_golden.h"

#include <errno.h>
#include <string.h>

#include "wire.h"

typedef struct seq {
    unsigned k;
} seq;

static uint64_t n64(seq *s)
{
    s->k++;
    return 0x8070605040302010ull + s->k * 0x0101010101010101ull;
}

static uint32_t n32(seq *s)
{
    s->k++;
    return 0x40302010u + s->k * 0x01010101u;
}

static uint16_t n16(seq *s)
{
    s->k++;
    return (uint16_t)(0x2010u + s->k * 0x0101u);
}

/* len characters cycled from stem (len < n), NUL padded. */
static void str(char *dst, size_t n, const char *stem, size_t len)
{
    size_t m = strlen(stem);
    memset(dst, 0, n);
    for (size_t i = 0; i < len && i + 1 < n; i++)
        dst[i] = stem[i % m];
}

static void bytes(uint8_t *dst, size_t n, uint8_t first)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (uint8_t)(first + 7 * i);
}

/* Bank ids: strictly increasing, as every reader requires. */
static const uint32_t IDS[] = {3, 17, 250, 4097};
#define NIDS 4u

/* ---- values ---- */

static void fill_hdr_request(memd_wire_hdr *h)
{
    *h = (memd_wire_hdr){.magic = MEMD_PROTO_MAGIC, .version = MEMD_PROTO_VERSION,
                         .opcode = MEMD_OP_ALLOC_BATCH_BANKS, .id = 0x0123456789abcdefull,
                         .len = 0x00123456u, .status = MEMD_REQ_F_RETRY};
}

static void fill_hdr_reply(memd_wire_hdr *h)
{
    *h = (memd_wire_hdr){.magic = MEMD_PROTO_MAGIC, .version = MEMD_PROTO_VERSION,
                         .opcode = MEMD_OP_QUERY, .id = 0xfedcba9876543210ull,
                         .len = MEMD_WIRE_ERROR_V1_SIZE, .status = -ENOMEM};
}

static void fill_hello(memd_wire_hello *r)
{
    memset(r, 0, sizeof *r);
    r->min_version = 1;
    r->max_version = MEMD_PROTO_VERSION;
    r->flags = MEMD_HELLO_F_RECLAIM;
    str(r->client_name, sizeof r->client_name, "golden-client", sizeof r->client_name - 1);
    r->reclaim_session = 0x01020304u;
    bytes(r->reclaim_token, sizeof r->reclaim_token, 0x11);
}

/* A client from before the reclaim fields: they are 0, and cut off the wire. */
static void fill_hello_v1(memd_wire_hello *r)
{
    fill_hello(r);
    r->flags = 0; /* RECLAIM came with the appended fields */
    str(r->client_name, sizeof r->client_name, "old", 3);
    r->reclaim_session = 0;
    memset(r->reclaim_token, 0, sizeof r->reclaim_token);
}

static void fill_welcome(memd_wire_welcome *r)
{
    seq s = {10};
    memset(r, 0, sizeof *r);
    r->version = MEMD_PROTO_VERSION;
    r->session_id = n32(&s);
    r->max_frame = n32(&s);
    r->ndevices = 0x0000d0c1u;
    str(r->server_version, sizeof r->server_version, "0.9.1-golden", 12);
    r->flags = MEMD_WELCOME_F_PERSISTENT | MEMD_WELCOME_F_RECLAIMED;
    r->reclaimed = n32(&s);
    bytes(r->token, sizeof r->token, 0x21);
}

static void fill_welcome_v1(memd_wire_welcome *r)
{
    fill_welcome(r);
    str(r->server_version, sizeof r->server_version, "0.1", sizeof r->server_version - 1);
    r->flags = 0;
    r->reclaimed = 0;
    memset(r->token, 0, sizeof r->token);
}

static void fill_error(memd_wire_error *r)
{
    seq s = {20};
    memset(r, 0, sizeof *r);
    r->status = -ENOMEM;
    r->detail = MEMD_ERR_DETAIL_QUOTA;
    str(r->message, sizeof r->message, "out of device memory in dram/data; ", 150);
    r->requested = n64(&s);
    r->size_per_bank = n64(&s);
    r->allocated = n64(&s);
    r->free = n64(&s);
    r->largest_free = n64(&s);
    r->device = n32(&s);
    r->cls = MEMD_CLASS_LOGGING;
    r->kind = MEMD_KIND_SRAM;
    r->region = 0xc3;
}

static void fill_alloc_req(memd_wire_alloc_req *r)
{
    seq s = {30};
    memset(r, 0, sizeof *r);
    r->device = n32(&s);
    r->cls = MEMD_CLASS_LOGGING;
    r->scope = MEMD_SCOPE_DRAM_TEXTURE;
    r->dtype = MEMD_DTYPE_F64;
    r->ndim = MEMD_MAX_DIMS;
    r->bytes = n64(&s);
    for (int i = 0; i < MEMD_MAX_DIMS; i++)
        r->shape[i] = n64(&s);
    r->page_size = n64(&s);
    r->alignment = n64(&s);
    r->banks = n32(&s);
    r->flags = MEMD_ALLOC_F_SHARED;
    str(r->name, sizeof r->name, "weights.", sizeof r->name - 1);
}

/* A plain element of ALLOC_BATCH_BANKS: other values, the other flag. */
static void fill_alloc_req2(memd_wire_alloc_req *r)
{
    seq s = {40};
    memset(r, 0, sizeof *r);
    r->device = n32(&s);
    r->cls = MEMD_CLASS_PLACEHOLDER;
    r->scope = MEMD_SCOPE_SRAM;
    r->dtype = MEMD_DTYPE_BF16;
    r->ndim = 2;
    r->bytes = n64(&s);
    r->shape[0] = n64(&s);
    r->shape[1] = n64(&s);
    r->page_size = n64(&s);
    r->alignment = n64(&s);
    r->banks = n32(&s);
    r->flags = MEMD_ALLOC_F_POOL;
    str(r->name, sizeof r->name, "cb", 2);
}

static void fill_buffer(memd_wire_buffer *r)
{
    seq s = {50};
    memset(r, 0, sizeof *r);
    r->handle = n64(&s);
    r->address = n64(&s);
    r->size_per_bank = n64(&s);
    r->page_size = n64(&s);
    r->pitch = n64(&s);
    r->banks = n32(&s);
    r->refcount = n32(&s);
    r->kind = MEMD_KIND_SRAM;
    r->region = 0x5a;
    r->bank_mode = MEMD_BANKS_PER_BANK;
}

static void fill_alloc_info(memd_wire_alloc_info *r)
{
    seq s = {60};
    memset(r, 0, sizeof *r);
    fill_buffer(&r->buf);
    r->device = n32(&s);
    r->cls = MEMD_CLASS_INTERNAL;
    r->scope = MEMD_SCOPE_DRAM_TEXTURE;
    r->flags = MEMD_ALLOC_I_POOL;
    r->pid = n32(&s);
    r->uid = n32(&s);
    r->gid = n32(&s);
    r->session_id = n32(&s);
    r->created_ns = n64(&s);
    str(r->name, sizeof r->name, "arena0", 6);
    str(r->comm, sizeof r->comm, "runtime", sizeof r->comm - 1);
}

static void fill_dump_req(memd_wire_dump_req *r)
{
    r->device = 0x00010203u;
    r->flags = MEMD_DUMP_F_BLOCKS | MEMD_DUMP_F_MODELS | MEMD_DUMP_F_USAGE | MEMD_DUMP_F_POOLS |
               MEMD_DUMP_F_SUBALLOCS | MEMD_DUMP_F_PAGED | MEMD_DUMP_F_BANKS |
               MEMD_DUMP_F_SUBDEV_BANKS;
    r->cursor = 0x0a0b0c0d0e0f1011ull;
}

/* The 8-byte request of before the cursor (and before PAGED). */
static void fill_dump_req_v1(memd_wire_dump_req *r)
{
    r->device = UINT32_MAX;
    r->flags = MEMD_DUMP_F_BLOCKS | MEMD_DUMP_F_MODELS;
    r->cursor = 0;
}

static void fill_page_rec(memd_wire_page_rec *r)
{
    r->next = 0x1112131415161718ull;
}

static void fill_stats_seq(memd_wire_stats *r, seq *s)
{
    r->total = n64(s);
    r->allocated = n64(s);
    r->free = n64(s);
    r->largest_free = n64(s);
    r->largest_free_addr = n64(s);
    r->free_blocks = n64(s);
    r->allocations = n64(s);
}

static void fill_stats(memd_wire_stats *r)
{
    seq s = {70};
    fill_stats_seq(r, &s);
}

static void fill_server_rec(memd_wire_server_rec *r)
{
    seq s = {80};
    memset(r, 0, sizeof *r);
    str(r->version, sizeof r->version, "1.2.3", 5);
    r->start_ns = n64(&s);
    r->now_ns = n64(&s);
    r->sessions = n32(&s);
    r->pid = n32(&s);
    r->requests = n64(&s);
    r->allocs = n64(&s);
    r->frees = n64(&s);
    r->alloc_failures = n64(&s);
    r->protocol_errors = n64(&s);
    r->sessions_total = n64(&s);
    r->bytes_in = n64(&s);
    r->bytes_out = n64(&s);
}

static void fill_device_rec(memd_wire_device_rec *r)
{
    seq s = {100};
    memset(r, 0, sizeof *r);
    r->id = n32(&s);
    r->texture = 1;
    str(r->name, sizeof r->name, "wormhole_b0-", sizeof r->name - 1);
    str(r->arch, sizeof r->arch, "wormhole", 8);
}

static void fill_group_rec(memd_wire_group_rec *r)
{
    seq s = {110};
    memset(r, 0, sizeof *r);
    r->device = n32(&s);
    r->kind = MEMD_KIND_SRAM;
    r->nregions = 0x77;
    r->banks = n32(&s);
    r->clients = n32(&s);
    r->bank_size = n64(&s);
    r->alignment = n64(&s);
    fill_stats_seq(&r->stats, &s);
}

static void fill_region_rec(memd_wire_region_rec *r)
{
    seq s = {130};
    memset(r, 0, sizeof *r);
    r->device = n32(&s);
    r->kind = MEMD_KIND_SRAM;
    r->region = 0x66;
    r->allocatable = 1;
    str(r->name, sizeof r->name, "buffers", 7);
    r->base = n64(&s);
    r->size = n64(&s);
    fill_stats_seq(&r->stats, &s);
}

static void fill_block_rec(memd_wire_block_rec *r)
{
    seq s = {150};
    memset(r, 0, sizeof *r);
    r->device = n32(&s);
    r->kind = MEMD_KIND_SRAM;
    r->region = 0x44;
    r->allocated = 1;
    r->address = n64(&s);
    r->size = n64(&s);
}

static void fill_session_rec(memd_wire_session_rec *r)
{
    seq s = {160};
    memset(r, 0, sizeof *r);
    r->id = n32(&s);
    r->pid = n32(&s);
    r->uid = n32(&s);
    r->gid = n32(&s);
    r->connected_ns = n64(&s);
    r->allocations = n64(&s);
    r->requests = n64(&s);
    str(r->comm, sizeof r->comm, "python3", 7);
    str(r->client_name, sizeof r->client_name, "trainer/", sizeof r->client_name - 1);
    r->flags = MEMD_SESSION_F_ORPHANED;
    r->subdev = n32(&s);
    r->reclaim_deadline_ns = n64(&s);
}

static void fill_events_req(memd_wire_events_req *r)
{
    r->since = 0x2122232425262728ull;
    r->max = 0x0000abcdu;
    r->flags = MEMD_EVENTS_F_WAIT;
}

static void fill_events_info(memd_wire_events_info *r)
{
    seq s = {180};
    memset(r, 0, sizeof *r);
    r->next_seq = n64(&s);
    r->lost = n64(&s);
    r->count = 3;
}

static void fill_event(memd_wire_event *r)
{
    seq s = {190};
    memset(r, 0, sizeof *r);
    r->seq = n64(&s);
    r->time_ns = n64(&s);
    r->type = MEMD_EVENT_PROTOCOL_ERROR;
    r->priority = 7;
    r->pid = n32(&s);
    r->uid = n32(&s);
    r->session_id = n32(&s);
    r->device = n32(&s);
    r->bytes = n64(&s);
    str(r->comm, sizeof r->comm, "memctl", 6);
    str(r->message, sizeof r->message, "session 7: bad frame; ", sizeof r->message - 1);
}

static void fill_session_use(memd_wire_session_use *r)
{
    seq s = {200};
    memset(r, 0, sizeof *r);
    r->session_id = n32(&s);
    r->device = n32(&s);
    r->kind = MEMD_KIND_SRAM;
    r->allocations = n32(&s);
    r->bytes = n64(&s);
    r->shared_bytes = n64(&s);
}

static void fill_upload(memd_wire_upload *r)
{
    seq s = {210};
    r->upload_id = n64(&s);
    r->total = 0x03fffff1u; /* within MEMD_UPLOAD_MAX */
    r->offset = 0x01234567u;
}

static void fill_plan_req(memd_wire_plan_req *r)
{
    memset(r, 0, sizeof *r);
    r->count = 0x000abcdeu; /* within MEMD_PLAN_MAX_BUFFERS */
    r->flags = MEMD_PLAN_F_PRECOMPUTED;
    r->budget_ms = 0x3e7u;
    r->seed = 0x3132333435363738ull;
}

static void fill_plan_buf(memd_wire_plan_buf *r)
{
    seq s = {220};
    memset(r, 0, sizeof *r);
    r->lower = n64(&s);
    r->upper = n64(&s);
    r->size = n64(&s);
    r->align = 1ull << 40;
    r->offset = n64(&s);
    r->flags = MEMD_PLAN_BUF_F_PINNED;
}

static void fill_plan_info(memd_wire_plan_info *r)
{
    seq s = {230};
    memset(r, 0, sizeof *r);
    r->plan_id = n64(&s);
    r->arena = n64(&s);
    r->lower_bound = n64(&s);
    r->iterations = n64(&s);
    r->plan_us = n64(&s);
    r->count = 0x0008f7e6u; /* within MEMD_PLAN_MAX_BUFFERS */
    r->flags = MEMD_PLAN_I_CACHED | MEMD_PLAN_I_OPTIMAL | MEMD_PLAN_I_PRECOMPUTED;
    str(r->strategy, sizeof r->strategy, "greedy-by-size+search", sizeof r->strategy - 1);
}

static void fill_plan_rec(memd_wire_plan_rec *r)
{
    seq s = {240};
    memset(r, 0, sizeof *r);
    r->plan_id = n64(&s);
    r->arena = n64(&s);
    r->lower_bound = n64(&s);
    r->created_ns = n64(&s);
    r->plan_us = n64(&s);
    r->hits = n64(&s);
    r->buffers = 0x00056789u; /* within MEMD_PLAN_MAX_BUFFERS */
    r->flags = MEMD_PLAN_I_OPTIMAL | MEMD_PLAN_I_PRECOMPUTED;
    r->models = n32(&s);
    str(r->strategy, sizeof r->strategy, "exact", 5);
}

static void fill_model_req(memd_wire_model_req *r)
{
    seq s = {260};
    memset(r, 0, sizeof *r);
    r->device = n32(&s);
    r->scope = MEMD_SCOPE_DRAM_TEXTURE;
    r->ntensors = 0x00054321u; /* within MEMD_MODEL_MAX_TENSORS */
    r->flags = 0;              /* none defined: a decoder refuses any bit */
    r->plan_id = n64(&s);
    r->code_bytes = n64(&s);
    str(r->name, sizeof r->name, "tiny_cnn-v2.", MEMD_MODEL_NAME_MAX);
    r->page_size = 1ull << 11; /* appended; a power of two, as a daemon takes it */
}

/* MODEL_LOAD's header before page sizes (the recording's model_req). */
static void fill_model_req_v1(memd_wire_model_req *r)
{
    fill_model_req(r);
    r->page_size = 0;
}

static void fill_tensor(memd_wire_tensor *r)
{
    seq s = {270};
    memset(r, 0, sizeof *r);
    r->size = n64(&s);
    r->align = 1ull << 12;
    r->lower = n64(&s);
    r->upper = n64(&s);
    r->role = MEMD_TENSOR_ALIAS;
    r->alias_of = n32(&s);
}

static void fill_model_info(memd_wire_model_info *r)
{
    seq s = {280};
    memset(r, 0, sizeof *r);
    r->model_id = n64(&s);
    r->plan_id = n64(&s);
    r->arena = n64(&s);
    r->lower_bound = n64(&s);
    r->code_handle = n64(&s);
    r->code_address = n64(&s);
    r->code_bytes = n64(&s);
    r->const_handle = n64(&s);
    r->const_address = n64(&s);
    r->const_bytes = n64(&s);
    r->created_ns = n64(&s);
    r->device = n32(&s);
    r->users = n32(&s);
    r->ntensors = 0x00034567u; /* within MEMD_MODEL_MAX_TENSORS */
    r->instances = n32(&s);
    r->flags = MEMD_MODEL_I_NEW | MEMD_MODEL_I_PLAN_OPTIMAL | MEMD_MODEL_I_PLAN_PRECOMPUTED;
    str(r->name, sizeof r->name, "resnet50", 8);
    str(r->strategy, sizeof r->strategy, "cached:greedy", 13);
}

static void fill_tensor_info(memd_wire_tensor_info *r)
{
    seq s = {300};
    memset(r, 0, sizeof *r);
    r->value = n64(&s);
    r->size = n64(&s);
    r->role = MEMD_TENSOR_INOUT;
    r->alias_of = MEMD_NO_TENSOR;
}

static void fill_page_req(memd_wire_page_req *r)
{
    seq s = {460};
    memset(r, 0, sizeof *r);
    r->device = n32(&s);
    r->cls = MEMD_CLASS_INTERNAL;
    r->scope = MEMD_SCOPE_SRAM;
}

static void fill_page_info(memd_wire_page_info *r)
{
    seq s = {470};
    memset(r, 0, sizeof *r);
    r->page_size = n64(&s);
    r->alignment = n64(&s);
    r->banks = n32(&s);
}

static void fill_ref(memd_wire_ref *r)
{
    memset(r, 0, sizeof *r);
    r->id = 0x4142434445464748ull;
    r->flags = MEMD_INST_F_FREE;
}

static void fill_instance_info(memd_wire_instance_info *r)
{
    seq s = {310};
    memset(r, 0, sizeof *r);
    r->instance_id = n64(&s);
    r->model_id = n64(&s);
    r->arena_handle = n64(&s);
    r->arena_address = n64(&s);
    r->arena_bytes = n64(&s);
    r->ntensors = 0x00045678u; /* within MEMD_MODEL_MAX_TENSORS */
    r->flags = MEMD_INST_I_REUSED;
}

static void fill_tensor_addr(memd_wire_tensor_addr *r)
{
    r->address = 0x5152535455565758ull;
    r->handle = 0x6162636465666768ull;
}

static void fill_model_rec(memd_wire_model_rec *r)
{
    seq s = {320};
    memset(r, 0, sizeof *r);
    r->model_id = n64(&s);
    r->plan_id = n64(&s);
    r->code_handle = n64(&s);
    r->const_handle = n64(&s);
    r->code_bytes = n64(&s);
    r->const_bytes = n64(&s);
    r->arena = n64(&s);
    r->created_ns = n64(&s);
    r->device = n32(&s);
    r->users = n32(&s);
    r->ntensors = 0x00067890u; /* within MEMD_MODEL_MAX_TENSORS */
    r->instances = n32(&s);
    str(r->name, sizeof r->name, "bert-base.", MEMD_MODEL_NAME_MAX);
}

static void fill_instance_rec(memd_wire_instance_rec *r)
{
    seq s = {340};
    memset(r, 0, sizeof *r);
    r->instance_id = n64(&s);
    r->model_id = n64(&s);
    r->arena_handle = n64(&s);
    r->arena_address = n64(&s);
    r->arena_bytes = n64(&s);
    r->placeholder_bytes = n64(&s);
    r->session_id = n32(&s);
    r->pid = n32(&s);
    r->placeholders = n32(&s);
    r->busy = 1;
}

static void fill_pool_op(memd_wire_pool_op *r)
{
    seq s = {360};
    memset(r, 0, sizeof *r);
    r->pool = n64(&s);
    r->offset = n64(&s);
    r->size = n64(&s);
    r->op = MEMD_POOL_OP_RESET;
    str(r->name, sizeof r->name, "kv-cache", 8);
}

static void fill_pool_rec(memd_wire_pool_rec *r)
{
    seq s = {370};
    memset(r, 0, sizeof *r);
    r->handle = n64(&s);
    r->as_of_ns = n64(&s);
    r->pooled_bytes = n64(&s);
    r->reports = n64(&s);
    r->suballocs = 0x000789abu; /* within MEMD_POOL_MAX_SUBALLOCS */
}

static void fill_suballoc_rec(memd_wire_suballoc_rec *r)
{
    seq s = {380};
    memset(r, 0, sizeof *r);
    r->pool = n64(&s);
    r->offset = n64(&s);
    r->size = n64(&s);
    str(r->name, sizeof r->name, "layer.", sizeof r->name - 1);
}

static void fill_bank_addr_seq(memd_wire_bank_addr *r, seq *s)
{
    memset(r, 0, sizeof *r);
    r->bank = n32(s);
    r->logical_x = n16(s);
    r->logical_y = n16(s);
    r->noc_x = n16(s);
    r->noc_y = n16(s);
    r->address = n64(s);
    r->absolute = n64(s);
}

static void fill_bank_addr(memd_wire_bank_addr *r)
{
    seq s = {390};
    fill_bank_addr_seq(r, &s);
}

static void fill_bank_rec(memd_wire_bank_rec *r)
{
    seq s = {400};
    memset(r, 0, sizeof *r);
    r->device = n32(&s);
    r->kind = MEMD_KIND_SRAM;
    r->region = 0x33;
    r->bank = n32(&s);
    r->logical_x = n16(&s);
    r->logical_y = n16(&s);
    r->noc_x = n16(&s);
    r->noc_y = n16(&s);
    fill_stats_seq(&r->stats, &s);
}

static void fill_alloc_bank_rec(memd_wire_alloc_bank_rec *r)
{
    seq s = {420};
    memset(r, 0, sizeof *r);
    r->handle = n64(&s);
    r->bank_mode = MEMD_BANKS_PER_BANK;
    fill_bank_addr_seq(&r->bank, &s);
}

static void fill_bankset(memd_wire_bankset *b)
{
    b->flags = MEMD_BANKSET_F_PER_BANK;
    b->count = NIDS;
}

static void fill_subdev_def(memd_wire_subdev_def *d)
{
    memset(d, 0, sizeof *d);
    str(d->name, sizeof d->name, "tenant-a", 8);
    d->device = 0x00070605u;
    d->kind = MEMD_KIND_SRAM;
    d->budget = 0x7172737475767778ull;
    str(d->overlap[0], sizeof d->overlap[0], "tenant-b", 8);
    str(d->overlap[1], sizeof d->overlap[1], "shared.", sizeof d->overlap[1] - 1);
    str(d->overlap[2], sizeof d->overlap[2], "x", 1);
    /* overlap[3] "": unused */
    d->count = NIDS;
}

static void fill_subdev_rec(memd_wire_subdev_rec *r)
{
    seq s = {440};
    memset(r, 0, sizeof *r);
    str(r->name, sizeof r->name, "tenant-b", sizeof r->name - 1);
    r->device = n32(&s);
    r->kind = MEMD_KIND_SRAM;
    r->from_config = 1;
    r->nbanks = 0x0000fedcu; /* within MEMD_BANKSET_MAX */
    r->sessions = n32(&s);
    r->budget = n64(&s);
    r->used = n64(&s);
    r->allocations = n64(&s);
    str(r->banks, sizeof r->banks, "0-31,40,", sizeof r->banks - 1);
}

/* ---- encode, and decode then encode again ---- */

/* The length of what o .. end holds, in *n: a reput's success. */
static int put_len(const uint8_t *o, const uint8_t *end, size_t *n)
{
    *n = (size_t)(end - o);
    return 0;
}

/* A record with a put/get pair of its own name. */
#define REC(NAME, TYPE, FILL)                                                                \
    static size_t put_##FILL(uint8_t *o)                                                     \
    {                                                                                        \
        TYPE v;                                                                              \
        fill_##FILL(&v);                                                                     \
        return (size_t)(memd_wire_##NAME##_put(o, &v) - o);                                  \
    }                                                                                        \
    static int reput_##FILL(const uint8_t *in, size_t len, uint8_t *o, size_t *n)            \
    {                                                                                        \
        TYPE v;                                                                              \
        int r = memd_wire_##NAME##_get(in, len, &v);                                         \
        return r < 0 ? r : put_len(o, memd_wire_##NAME##_put(o, &v), n);                    \
    }

REC(welcome, memd_wire_welcome, welcome)
REC(alloc_req, memd_wire_alloc_req, alloc_req)
REC(buffer, memd_wire_buffer, buffer)
REC(alloc_info, memd_wire_alloc_info, alloc_info)
REC(dump_req, memd_wire_dump_req, dump_req)
REC(page_rec, memd_wire_page_rec, page_rec)
REC(stats, memd_wire_stats, stats)
REC(server_rec, memd_wire_server_rec, server_rec)
REC(device_rec, memd_wire_device_rec, device_rec)
REC(group_rec, memd_wire_group_rec, group_rec)
REC(region_rec, memd_wire_region_rec, region_rec)
REC(block_rec, memd_wire_block_rec, block_rec)
REC(session_rec, memd_wire_session_rec, session_rec)
REC(events_req, memd_wire_events_req, events_req)
REC(events_info, memd_wire_events_info, events_info)
REC(event, memd_wire_event, event)
REC(session_use, memd_wire_session_use, session_use)
REC(upload, memd_wire_upload, upload)
REC(plan_req, memd_wire_plan_req, plan_req)
REC(plan_buf, memd_wire_plan_buf, plan_buf)
REC(plan_info, memd_wire_plan_info, plan_info)
REC(plan_rec, memd_wire_plan_rec, plan_rec)
REC(model_req, memd_wire_model_req, model_req)
REC(tensor, memd_wire_tensor, tensor)
REC(model_info, memd_wire_model_info, model_info)
REC(tensor_info, memd_wire_tensor_info, tensor_info)
REC(ref, memd_wire_ref, ref)
REC(page_req, memd_wire_page_req, page_req)
REC(page_info, memd_wire_page_info, page_info)
REC(instance_info, memd_wire_instance_info, instance_info)
REC(tensor_addr, memd_wire_tensor_addr, tensor_addr)
REC(model_rec, memd_wire_model_rec, model_rec)
REC(instance_rec, memd_wire_instance_rec, instance_rec)
REC(pool_op, memd_wire_pool_op, pool_op)
REC(pool_rec, memd_wire_pool_rec, pool_rec)
REC(suballoc_rec, memd_wire_suballoc_rec, suballoc_rec)
REC(bank_addr, memd_wire_bank_addr, bank_addr)
REC(bank_rec, memd_wire_bank_rec, bank_rec)
REC(alloc_bank_rec, memd_wire_alloc_bank_rec, alloc_bank_rec)
REC(subdev_rec, memd_wire_subdev_rec, subdev_rec)

/* The header, a request's (RETRY flag) and a reply's (negative status). Decoded with the
 * client's limit, MEMD_MAX_REPLY. */
#define HDR(FILL)                                                                            \
    static size_t put_##FILL(uint8_t *o)                                                     \
    {                                                                                        \
        memd_wire_hdr h;                                                                     \
        fill_##FILL(&h);                                                                     \
        return (size_t)(memd_wire_hdr_put(o, &h) - o);                                       \
    }

HDR(hdr_request)
HDR(hdr_reply)

static int reput_hdr(const uint8_t *in, size_t len, uint8_t *o, size_t *n)
{
    memd_wire_hdr h;
    int r = memd_wire_hdr_get(in, len, MEMD_MAX_REPLY, &h);
    return r < 0 ? r : put_len(o, memd_wire_hdr_put(o, &h), n);
}

/* A V1 record read back has its appended fields 0: its full re-encoding (end) must be
 * zeros past the V1 length, and only the V1 bytes are compared. */
static int cut_reput(const uint8_t *o, const uint8_t *end, size_t len, size_t *n)
{
    for (const uint8_t *p = o + len; p < end; p++)
        if (*p)
            return -EBADMSG;
    return put_len(o, o + len, n);
}

/* A record of two sizes: put_NAME_v1 writes FILL's values (0 in the appended fields) cut
 * to the V1 size; reput_NAME_any reads either size with GET, as the daemon and
 * libmemclient read them, and cuts what it writes back to the length read. */
#define REC_V1(NAME, FILL, GET, V1_SIZE)                                                     \
    static size_t put_##NAME##_v1(uint8_t *o)                                                \
    {                                                                                        \
        memd_wire_##NAME v;                                                                  \
        fill_##FILL(&v);                                                                     \
        memd_wire_##NAME##_put(o, &v);                                                       \
        return V1_SIZE;                                                                      \
    }                                                                                        \
    static int reput_##NAME##_any(const uint8_t *in, size_t len, uint8_t *o, size_t *n)      \
    {                                                                                        \
        memd_wire_##NAME v;                                                                  \
        int r = GET(in, len, &v);                                                            \
        return r < 0 ? r : cut_reput(o, memd_wire_##NAME##_put(o, &v), len, n);             \
    }

/* HELLO and welcome as clients and daemons from before the reclaim fields send them; the
 * error record before post-mortems (what a session without MEMD_HELLO_F_POSTMORTEM still
 * gets); MODEL_LOAD's header before page sizes; DUMP's 8-byte request. */
REC_V1(hello, hello_v1, memd_wire_hello_get_any, MEMD_WIRE_HELLO_V1_SIZE)
REC_V1(welcome, welcome_v1, memd_wire_welcome_get_any, MEMD_WIRE_WELCOME_V1_SIZE)
REC_V1(error, error, memd_wire_error_get_any, MEMD_WIRE_ERROR_V1_SIZE)
REC_V1(model_req, model_req_v1, memd_wire_model_req_get, MEMD_WIRE_MODEL_REQ_V1_SIZE)
REC_V1(dump_req, dump_req_v1, memd_wire_dump_req_get, MEMD_WIRE_DUMP_REQ_V1_SIZE)

/* The current HELLO, read back by get_any as the daemon reads it. */
static size_t put_hello(uint8_t *o)
{
    memd_wire_hello v;
    fill_hello(&v);
    return (size_t)(memd_wire_hello_put(o, &v) - o);
}

/* FREE / QUERY / BANKS request: one u64 (no get function: readers use memd_wire_u64). */
static size_t put_handle(uint8_t *o)
{
    return (size_t)(memd_wire_handle_put(o, 0x8182838485868788ull) - o);
}

static int reput_handle(const uint8_t *in, size_t len, uint8_t *o, size_t *n)
{
    if (len != MEMD_WIRE_HANDLE_SIZE)
        return -EBADMSG;
    return put_len(o, memd_wire_handle_put(o, memd_wire_u64(in)), n);
}

/* The count prefix, as a FREE_BATCH payload: count 2, two handles. */
static size_t put_count(uint8_t *o)
{
    uint8_t *p = memd_wire_count_put(o, 2);
    p = memd_wire_handle_put(p, 0x9192939495969798ull);
    p = memd_wire_handle_put(p, 0xa1a2a3a4a5a6a7a8ull);
    return (size_t)(p - o);
}

static int reput_count(const uint8_t *in, size_t len, uint8_t *o, size_t *n)
{
    uint32_t count;
    /* The bound is the reader's (the daemon passes its batch limit): one far above 2. */
    int r = memd_wire_count_get(in, len, MEMD_WIRE_HANDLE_SIZE, MEMD_BANKSET_MAX, &count);
    if (r < 0)
        return r;
    uint8_t *p = memd_wire_count_put(o, count);
    for (uint32_t i = 0; i < count; i++)
        p = memd_wire_handle_put(p, memd_wire_u64(in + MEMD_WIRE_COUNT_SIZE + 8 * i));
    return put_len(o, p, n);
}

/* ALLOC_BANKS payload: alloc_req, bankset, its ids. */
static size_t put_alloc_banks(uint8_t *o)
{
    memd_wire_alloc_req r;
    memd_wire_bankset b;
    fill_alloc_req(&r);
    r.flags = 0; /* a bank-set allocation cannot be SHARED */
    fill_bankset(&b);
    uint8_t *p = memd_wire_alloc_req_put(o, &r);
    return (size_t)(memd_wire_bankset_put(p, &b, IDS) - o);
}

/* The ids a decoder points at, into v[NIDS] (the golden values have no more). */
static int read_ids(const uint8_t *ids, uint32_t count, uint32_t *v)
{
    if (count > NIDS)
        return -E2BIG;
    for (uint32_t i = 0; i < count; i++)
        v[i] = memd_wire_u32(ids + 4 * i);
    return 0;
}

/* An ALLOC_BANKS payload or ALLOC_BATCH_BANKS element as decoded (ids into the input). */
typedef struct banks_elem {
    memd_wire_alloc_req r;
    memd_wire_bankset b;
    const uint8_t *ids;
} banks_elem;

/* e encoded again at *p, which moves past it. */
static int put_banks_elem(uint8_t **p, const banks_elem *e)
{
    uint32_t v[NIDS];
    int rc = read_ids(e->ids, e->b.count, v);
    if (rc < 0)
        return rc;
    *p = memd_wire_bankset_put(memd_wire_alloc_req_put(*p, &e->r), &e->b, v);
    return 0;
}

static int reput_alloc_banks(const uint8_t *in, size_t len, uint8_t *o, size_t *n)
{
    banks_elem e;
    uint8_t *p = o;
    int rc = memd_wire_alloc_banks_get(in, len, &e.r, &e.b, &e.ids);
    if (rc < 0 || (rc = put_banks_elem(&p, &e)) < 0)
        return rc;
    return put_len(o, p, n);
}

/* ALLOC_BATCH_BANKS payload: count 2, an element with a range-lockstep bank set, then a
 * plain element (bankset {0, 0}). */
static size_t put_alloc_batch_banks(uint8_t *o)
{
    memd_wire_alloc_req r;
    memd_wire_bankset b = {.flags = 0, .count = 2};
    fill_alloc_req(&r);
    r.flags = 0;
    uint8_t *p = memd_wire_count_put(o, 2);
    p = memd_wire_alloc_req_put(p, &r);
    p = memd_wire_bankset_put(p, &b, IDS + 1);
    fill_alloc_req2(&r);
    r.flags = MEMD_ALLOC_F_SHARED;
    b.count = 0;
    p = memd_wire_alloc_req_put(p, &r);
    return (size_t)(memd_wire_bankset_put(p, &b, NULL) - o);
}

static int reput_alloc_batch_banks(const uint8_t *in, size_t len, uint8_t *o, size_t *n)
{
    if (len < MEMD_WIRE_COUNT_SIZE)
        return -EBADMSG;
    uint32_t count = memd_wire_u32(in);
    uint8_t *p = memd_wire_count_put(o, count);
    size_t off = MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < count; i++) {
        banks_elem e;
        size_t used;
        int rc = memd_wire_alloc_banks_elem_get(in + off, len - off, &e.r, &e.b, &e.ids, &used);
        if (rc < 0 || (rc = put_banks_elem(&p, &e)) < 0)
            return rc;
        off += used;
    }
    if (off != len)
        return -EBADMSG;
    return put_len(o, p, n);
}

/* SUBDEV_DEFINE payload: the definition and its ids. */
static size_t put_subdev_def(uint8_t *o)
{
    memd_wire_subdev_def d;
    fill_subdev_def(&d);
    return (size_t)(memd_wire_subdev_def_put(o, &d, IDS) - o);
}

static int reput_subdev_def(const uint8_t *in, size_t len, uint8_t *o, size_t *n)
{
    memd_wire_subdev_def d;
    const uint8_t *ids;
    int rc = memd_wire_subdev_def_get(in, len, &d, &ids);
    if (rc < 0)
        return rc;
    uint32_t v[NIDS];
    if ((rc = read_ids(ids, d.count, v)) < 0)
        return rc;
    return put_len(o, memd_wire_subdev_def_put(o, &d, v), n);
}

/* The definition with a window (appended since the recording's subdev_def). */
static size_t put_subdev_def_window(uint8_t *o)
{
    memd_wire_subdev_def d;
    fill_subdev_def(&d);
    d.window = 0x8182838485868788ull;
    return (size_t)(memd_wire_subdev_def_put(o, &d, IDS) - o);
}

/* An encoding of the current form (n bytes at whole) as one from before windows: the
 * 344-byte fixed part, then the ids. */
static size_t cut_window(const uint8_t *whole, size_t n, uint8_t *o)
{
    memcpy(o, whole, MEMD_WIRE_SUBDEV_DEF_V1_SIZE);
    memcpy(o + MEMD_WIRE_SUBDEV_DEF_V1_SIZE, whole + MEMD_WIRE_SUBDEV_DEF_SIZE,
           n - MEMD_WIRE_SUBDEV_DEF_SIZE);
    return n - (MEMD_WIRE_SUBDEV_DEF_SIZE - MEMD_WIRE_SUBDEV_DEF_V1_SIZE);
}

/* SUBDEV_DEFINE from before windows (the recording's subdev_def): reads as no window. */
static size_t put_subdev_def_v1(uint8_t *o)
{
    uint8_t whole[FRAMES_BUF_MAX];
    return cut_window(whole, put_subdev_def(whole), o);
}

static int reput_subdev_def_v1(const uint8_t *in, size_t len, uint8_t *o, size_t *n)
{
    uint8_t whole[FRAMES_BUF_MAX];
    size_t m;
    int rc = reput_subdev_def(in, len, whole, &m);
    if (rc == 0)
        *n = cut_window(whole, m, o);
    return rc;
}

/* SUBDEV_BANKS record: its header and ids. */
static size_t put_subdev_banks(uint8_t *o)
{
    return (size_t)(memd_wire_subdev_banks_put(o, IDS, NIDS) - o);
}

static int reput_subdev_banks(const uint8_t *in, size_t len, uint8_t *o, size_t *n)
{
    uint32_t count;
    const uint8_t *ids;
    int rc = memd_wire_subdev_banks_get(in, len, &count, &ids);
    if (rc < 0)
        return rc;
    uint32_t v[NIDS];
    if ((rc = read_ids(ids, count, v)) < 0)
        return rc;
    return put_len(o, memd_wire_subdev_banks_put(o, v, count), n);
}

/* A DUMP record: its tag, then the record; tag_get must size it exactly. */
static size_t dump_put(uint8_t *o, uint32_t tag, size_t (*put)(uint8_t *))
{
    uint8_t *p = memd_wire_tag_put(o, tag);
    return (size_t)(p - o) + put(p);
}

static int dump_reput(const uint8_t *in, size_t len, uint8_t *o, size_t *n, uint32_t want,
                      int (*reput)(const uint8_t *, size_t, uint8_t *, size_t *))
{
    uint32_t tag;
    size_t size;
    int rc = memd_wire_tag_get(in, len, &tag, &size);
    if (rc < 0)
        return rc;
    if (tag != want || MEMD_WIRE_TAG_SIZE + size != len)
        return -EBADMSG;
    uint8_t *p = memd_wire_tag_put(o, tag);
    rc = reput(in + MEMD_WIRE_TAG_SIZE, size, p, n);
    *n += MEMD_WIRE_TAG_SIZE;
    return rc;
}

#define DUMP(TAG, FILL)                                                                      \
    static size_t put_dump_##FILL(uint8_t *o)                                                \
    {                                                                                        \
        return dump_put(o, TAG, put_##FILL);                                                 \
    }                                                                                        \
    static int reput_dump_##FILL(const uint8_t *in, size_t len, uint8_t *o, size_t *n)       \
    {                                                                                        \
        return dump_reput(in, len, o, n, TAG, reput_##FILL);                                 \
    }

DUMP(MEMD_REC_SERVER, server_rec)
DUMP(MEMD_REC_DEVICE, device_rec)
DUMP(MEMD_REC_GROUP, group_rec)
DUMP(MEMD_REC_REGION, region_rec)
DUMP(MEMD_REC_ALLOC, alloc_info)
DUMP(MEMD_REC_BLOCK, block_rec)
DUMP(MEMD_REC_SESSION, session_rec)
DUMP(MEMD_REC_PLAN, plan_rec)
DUMP(MEMD_REC_MODEL, model_rec)
DUMP(MEMD_REC_INSTANCE, instance_rec)
DUMP(MEMD_REC_SESSION_USE, session_use)
DUMP(MEMD_REC_POOL, pool_rec)
DUMP(MEMD_REC_SUBALLOC, suballoc_rec)
DUMP(MEMD_REC_PAGE, page_rec)
DUMP(MEMD_REC_BANK, bank_rec)
DUMP(MEMD_REC_ALLOC_BANK, alloc_bank_rec)
DUMP(MEMD_REC_SUBDEV, subdev_rec)
DUMP(MEMD_REC_SUBDEV_BANKS, subdev_banks)

#define ENTRY(NAME, FILL) {NAME, put_##FILL, reput_##FILL}

const frames_rec frames_recs[] = {
    {"hdr.request", put_hdr_request, reput_hdr},
    {"hdr.reply", put_hdr_reply, reput_hdr},
    {"hello", put_hello, reput_hello_any},
    {"hello.v1", put_hello_v1, reput_hello_any},
    ENTRY("welcome", welcome),
    {"welcome.v1", put_welcome_v1, reput_welcome_any},
    {"error", put_error_v1, reput_error_any},
    ENTRY("alloc_req", alloc_req),
    ENTRY("buffer", buffer),
    ENTRY("alloc_info", alloc_info),
    ENTRY("handle", handle),
    ENTRY("count", count),
    ENTRY("alloc_banks", alloc_banks),
    ENTRY("alloc_batch_banks", alloc_batch_banks),
    ENTRY("bank_addr", bank_addr),
    {"subdev_def", put_subdev_def_v1, reput_subdev_def_v1},
    {"subdev_def.window", put_subdev_def_window, reput_subdev_def},
    ENTRY("dump_req", dump_req),
    {"dump_req.v1", put_dump_req_v1, reput_dump_req_any},
    ENTRY("stats", stats),
    ENTRY("dump.1.server", dump_server_rec),
    ENTRY("dump.2.device", dump_device_rec),
    ENTRY("dump.3.group", dump_group_rec),
    ENTRY("dump.4.region", dump_region_rec),
    ENTRY("dump.5.alloc", dump_alloc_info),
    ENTRY("dump.6.block", dump_block_rec),
    ENTRY("dump.7.session", dump_session_rec),
    ENTRY("dump.8.plan", dump_plan_rec),
    ENTRY("dump.9.model", dump_model_rec),
    ENTRY("dump.10.instance", dump_instance_rec),
    ENTRY("dump.11.session_use", dump_session_use),
    ENTRY("dump.12.pool", dump_pool_rec),
    ENTRY("dump.13.suballoc", dump_suballoc_rec),
    ENTRY("dump.14.page", dump_page_rec),
    ENTRY("dump.15.bank", dump_bank_rec),
    ENTRY("dump.16.alloc_bank", dump_alloc_bank_rec),
    ENTRY("dump.17.subdev", dump_subdev_rec),
    ENTRY("dump.18.subdev_banks", dump_subdev_banks),
    ENTRY("upload", upload),
    ENTRY("plan_req", plan_req),
    ENTRY("plan_buf", plan_buf),
    ENTRY("plan_info", plan_info),
    {"model_req", put_model_req_v1, reput_model_req_any},
    ENTRY("model_req.page", model_req),
    ENTRY("tensor", tensor),
    ENTRY("model_info", model_info),
    ENTRY("tensor_info", tensor_info),
    ENTRY("ref", ref),
    ENTRY("instance_info", instance_info),
    ENTRY("tensor_addr", tensor_addr),
    ENTRY("events_req", events_req),
    ENTRY("events_info", events_info),
    ENTRY("event", event),
    ENTRY("pool_op", pool_op),
    ENTRY("page_req", page_req),
    ENTRY("page_info", page_info),
};
const size_t frames_nrecs = sizeof frames_recs / sizeof frames_recs[0];

/* Offsets below are those of protocol.h's field order (the layout under test). */
const frames_bad frames_bads[] = {
    {"hdr.bad_magic", "hdr.reply", FRAMES_SET8, 0, 1, 'X'},
    {"hdr.bad_version", "hdr.reply", FRAMES_SET8, 4, 1, MEMD_PROTO_VERSION + 1},
    {"hdr.version_0", "hdr.reply", FRAMES_SET8, 4, 1, 0},
    {"hdr.len_over_limit", "hdr.reply", FRAMES_SET32, 16, 4, MEMD_MAX_REPLY + 1},
    {"hdr.unknown_request_flag", "hdr.request", FRAMES_SET32, 20, 4, 2},
    {"hdr.truncated", "hdr.reply", FRAMES_CUT, MEMD_HDR_SIZE - 1, 0, 0},
    {"hello.min_over_max", "hello", FRAMES_SET8, 0, 1, 2},
    {"hello.name_without_nul", "hello", FRAMES_SET8, 8, 32, 'n'},
    {"hello.between_sizes", "hello", FRAMES_CUT, MEMD_WIRE_HELLO_V1_SIZE + 1, 0, 0},
    {"welcome.bad_version", "welcome", FRAMES_SET8, 0, 1, 0},
    {"welcome.version_without_nul", "welcome", FRAMES_SET8, 16, 32, 'v'},
    {"welcome.between_sizes", "welcome", FRAMES_CUT, MEMD_WIRE_WELCOME_SIZE - 1, 0, 0},
    {"error.positive_status", "error", FRAMES_SET32, 0, 4, 5},
    {"error.bad_detail", "error", FRAMES_SET32, 4, 4, MEMD_ERR_DETAIL_QUOTA + 1},
    {"error.message_without_nul", "error", FRAMES_SET8, 8, 192, 'm'},
    {"error.bad_class", "error", FRAMES_SET8, 244, 1, MEMD_CLASS_COUNT},
    {"error.bad_kind", "error", FRAMES_SET8, 245, 1, MEMD_KIND_COUNT},
    {"error.truncated", "error", FRAMES_CUT, MEMD_WIRE_ERROR_SIZE - 1, 0, 0},
    {"alloc_req.bad_class", "alloc_req", FRAMES_SET8, 4, 1, MEMD_CLASS_COUNT},
    {"alloc_req.bad_scope", "alloc_req", FRAMES_SET8, 5, 1, MEMD_SCOPE_COUNT},
    {"alloc_req.bad_dtype", "alloc_req", FRAMES_SET8, 6, 1, MEMD_DTYPE_COUNT},
    {"alloc_req.ndim_over_max", "alloc_req", FRAMES_SET8, 7, 1, MEMD_MAX_DIMS + 1},
    {"alloc_req.unknown_flag", "alloc_req", FRAMES_SET32, 68, 4, 1u << 2},
    {"alloc_req.name_without_nul", "alloc_req", FRAMES_SET8, 72, 64, 'w'},
    {"alloc_req.truncated", "alloc_req", FRAMES_CUT, MEMD_WIRE_ALLOC_REQ_SIZE - 1, 0, 0},
    {"buffer.bad_kind", "buffer", FRAMES_SET8, 48, 1, MEMD_KIND_COUNT},
    {"buffer.bad_bank_mode", "buffer", FRAMES_SET8, 50, 1, MEMD_BANKS_MODE_COUNT},
    {"alloc_info.bad_scope", "alloc_info", FRAMES_SET8, 61, 1, MEMD_SCOPE_COUNT},
    {"alloc_info.unknown_flag", "alloc_info", FRAMES_SET8, 62, 1, 2},
    {"alloc_info.comm_without_nul", "alloc_info", FRAMES_SET8, 152, 16, 'c'},
    {"count.short", "count", FRAMES_CUT, MEMD_WIRE_COUNT_SIZE + 8, 0, 0},
    {"count.over_max", "count", FRAMES_SET32, 0, 4, MEMD_BANKSET_MAX + 1},
    {"alloc_banks.unknown_flag", "alloc_banks", FRAMES_SET32, 136, 4, 2},
    {"alloc_banks.count_over_max", "alloc_banks", FRAMES_SET32, 140, 4, MEMD_BANKSET_MAX + 1},
    {"alloc_banks.ids_cut", "alloc_banks", FRAMES_CUT, 136 + 8 + 4 * 3, 0, 0},
    {"alloc_batch_banks.unknown_flag", "alloc_batch_banks", FRAMES_SET32, 8 + 136, 4, 4},
    {"subdev_def.bad_kind", "subdev_def", FRAMES_SET8, 68, 1, MEMD_KIND_COUNT},
    {"subdev_def.overlap_without_nul", "subdev_def", FRAMES_SET8, 80 + 64, 64, 'o'},
    {"subdev_def.ids_cut", "subdev_def", FRAMES_CUT, MEMD_WIRE_SUBDEV_DEF_V1_SIZE + 4, 0, 0},
    {"dump_req.unknown_flag", "dump_req", FRAMES_SET32, 4, 4, 1u << 8},
    {"dump_req.cursor_without_paged", "dump_req", FRAMES_SET32, 4, 4, MEMD_DUMP_F_BLOCKS},
    {"dump.unknown_tag", "dump.14.page", FRAMES_SET32, 0, 4, MEMD_REC_SUBDEV_BANKS + 1},
    {"dump.tag_0", "dump.14.page", FRAMES_SET32, 0, 4, 0},
    {"dump.record_cut", "dump.5.alloc", FRAMES_CUT, 4 + MEMD_WIRE_ALLOC_INFO_SIZE - 1, 0, 0},
    {"dump.device.texture_2", "dump.2.device", FRAMES_SET32, 4 + 4, 4, 2},
    {"dump.device.name_without_nul", "dump.2.device", FRAMES_SET8, 4 + 8, 64, 'd'},
    {"dump.group.bad_kind", "dump.3.group", FRAMES_SET8, 4 + 4, 1, MEMD_KIND_COUNT},
    {"dump.region.allocatable_2", "dump.4.region", FRAMES_SET8, 4 + 6, 1, 2},
    {"dump.block.allocated_2", "dump.6.block", FRAMES_SET8, 4 + 6, 1, 2},
    {"dump.plan.unknown_flag", "dump.8.plan", FRAMES_SET32, 4 + 52, 4, 1u << 3},
    {"dump.instance.busy_2", "dump.10.instance", FRAMES_SET32, 4 + 60, 4, 2},
    {"dump.session_use.bad_kind", "dump.11.session_use", FRAMES_SET8, 4 + 8, 1, MEMD_KIND_COUNT},
    {"dump.subdev.bad_kind", "dump.17.subdev", FRAMES_SET8, 4 + 68, 1, MEMD_KIND_COUNT},
    {"dump.subdev_banks.not_increasing", "dump.18.subdev_banks", FRAMES_SET32, 4 + 8 + 4, 4, 3},
    {"dump.subdev_banks.count_over_max", "dump.18.subdev_banks", FRAMES_SET32, 4, 4,
     MEMD_BANKSET_MAX + 1},
    {"upload.id_0", "upload", FRAMES_SET8, 0, 8, 0},
    {"plan_req.unknown_flag", "plan_req", FRAMES_SET32, 4, 4, 2},
    {"plan_buf.unknown_flag", "plan_buf", FRAMES_SET32, 40, 4, 2},
    {"plan_info.unknown_flag", "plan_info", FRAMES_SET32, 44, 4, 1u << 3},
    {"model_req.flag", "model_req", FRAMES_SET32, 12, 4, 1},
    {"model_req.bad_scope", "model_req", FRAMES_SET8, 4, 1, MEMD_SCOPE_COUNT},
    {"page_req.bad_class", "page_req", FRAMES_SET8, 4, 1, MEMD_CLASS_COUNT},
    {"page_req.truncated", "page_req", FRAMES_CUT, MEMD_WIRE_PAGE_REQ_SIZE - 1, 0, 0},
    {"tensor.bad_role", "tensor", FRAMES_SET8, 32, 1, MEMD_TENSOR_ROLE_COUNT},
    {"model_info.unknown_flag", "model_info", FRAMES_SET32, 104, 4, 1u << 3},
    {"tensor_info.bad_role", "tensor_info", FRAMES_SET8, 16, 1, MEMD_TENSOR_ROLE_COUNT},
    {"instance_info.unknown_flag", "instance_info", FRAMES_SET32, 44, 4, 2},
    {"events_req.unknown_flag", "events_req", FRAMES_SET32, 12, 4, 2},
    {"event.type_0", "event", FRAMES_SET32, 16, 4, 0},
    {"event.bad_type", "event", FRAMES_SET32, 16, 4, MEMD_EVENT_TYPE_COUNT},
    {"event.priority_8", "event", FRAMES_SET32, 20, 4, 8},
    {"event.message_without_nul", "event", FRAMES_SET8, 64, 256, 'e'},
    {"pool_op.op_0", "pool_op", FRAMES_SET8, 24, 1, 0},
    {"pool_op.bad_op", "pool_op", FRAMES_SET8, 24, 1, MEMD_POOL_OP_RESET + 1},
};
const size_t frames_nbads = sizeof frames_bads / sizeof frames_bads[0];

const frames_rec *frames_rec_find(const char *name)
{
    for (size_t i = 0; i < frames_nrecs; i++)
        if (strcmp(frames_recs[i].name, name) == 0)
            return &frames_recs[i];
    return NULL;
}

size_t frames_bad_build(const frames_bad *b, uint8_t *buf)
{
    size_t len = frames_rec_find(b->base)->put(buf);
    switch (b->op) {
    case FRAMES_SET8:
        memset(buf + b->off, (int)b->value, b->n);
        break;
    case FRAMES_SET32:
        memd_wire_put_u32(buf + b->off, b->value);
        break;
    case FRAMES_CUT:
        len = b->off;
        break;
    }
    return len;
}

static const struct {
    const char *name;
    int value;
} errnos[] = {
    {"EBADMSG", EBADMSG}, {"EINVAL", EINVAL},     {"EPROTO", EPROTO},
    {"EPROTONOSUPPORT", EPROTONOSUPPORT},         {"EMSGSIZE", EMSGSIZE},
    {"E2BIG", E2BIG},
};

const char *frames_errno_name(int err)
{
    for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
        if (errnos[i].value == err)
            return errnos[i].name;
    return NULL;
}

int frames_errno_value(const char *name)
{
    for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
        if (strcmp(errnos[i].name, name) == 0)
            return errnos[i].value;
    return 0;
}
