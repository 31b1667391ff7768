/* Interleaved pages with the real daemon and libmemclient, on the shipped config's
 * device 0 (Wormhole B0 in memd's format: 12 DRAM banks, 2 KiB default page): a model
 * reserves about its own size, memclient_locate follows tt-metal's page-to-bank rule,
 * a model's page size can be chosen and bad ones are refused with a clear message. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "client_util.h"
#include "memctl_run.h"

CU_DEFAULT_FIXTURE

#define BANKS 12u
#define PAGE 2048u
#define GIB (1ull << 30)

/* A small CNN: weights of uneven sizes (most not a multiple of a page), activations of
 * a chain, one input and one output. */
enum { IN, W0, W1, W2, W3, W4, A0, A1, A2, OUT, NT };
static const memclient_tensor_desc tensors[NT] = {
    [IN] = {.name = "in", .role = MEMCLIENT_TENSOR_INPUT, .bytes = 150528},
    [W0] = {.name = "w0", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 37632},
    [W1] = {.name = "w1", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 1179648},
    [W2] = {.name = "w2", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 2359300},
    [W3] = {.name = "w3", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 8192000},
    [W4] = {.name = "w4", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 4000},
    [A0] = {.name = "a0", .role = MEMCLIENT_TENSOR_ACTIVATION, .bytes = 3211264},
    [A1] = {.name = "a1", .role = MEMCLIENT_TENSOR_ACTIVATION, .bytes = 802817},
    [A2] = {.name = "a2", .role = MEMCLIENT_TENSOR_ACTIVATION, .bytes = 401408},
    [OUT] = {.name = "out", .role = MEMCLIENT_TENSOR_OUTPUT, .bytes = 4000},
};
static const uint32_t i0[] = {IN, W0}, o0[] = {A0}, i1[] = {A0, W1}, o1[] = {A1},
                      i2[] = {A1, W2}, o2[] = {A2}, i3[] = {A2, W3, W4}, o3[] = {OUT};
static const memclient_op_desc ops[] = {
    {.name = "conv0", .inputs = i0, .ninputs = 2, .outputs = o0, .noutputs = 1},
    {.name = "conv1", .inputs = i1, .ninputs = 2, .outputs = o1, .noutputs = 1},
    {.name = "conv2", .inputs = i2, .ninputs = 2, .outputs = o2, .noutputs = 1},
    {.name = "fc", .inputs = i3, .ninputs = 3, .outputs = o3, .noutputs = 1},
};

static memclient_model_desc model(const char *name, uint64_t page_size)
{
    return (memclient_model_desc){.name = name, .scope = MEMD_SCOPE_DRAM, .tensors = tensors,
                                  .ntensors = NT, .ops = ops, .nops = 4,
                                  .page_size = page_size};
}

static memclient_buffer buffer_of(memclient *c, uint64_t handle)
{
    memclient_alloc_info ai;
    ck_assert_int_eq(memclient_query(c, handle, &ai), 0);
    return ai.buf;
}

/* What a buffer reserves over all its banks is at most 1.05 x its data plus one page in
 * each bank (the last row of pages). */
static void assert_reserves_about(const memclient_buffer *b, uint64_t data, const char *what)
{
    uint64_t reserved = b->size_per_bank * b->banks;
    ck_assert_msg(reserved * 100 <= data * 105 + 100ull * b->page_size * b->banks,
                  "%s: %llu bytes of data reserve %llu (%llu per bank x %u banks, pages of %llu)",
                  what, (unsigned long long)data, (unsigned long long)reserved,
                  (unsigned long long)b->size_per_bank, b->banks,
                  (unsigned long long)b->page_size);
}

START_TEST(model_on_12_banks_reserves_about_its_size)
{
    memclient *c = cu_connect(&f);
    uint64_t page, align;
    uint32_t banks;
    ck_assert_int_eq(memclient_page_size(c, 0, MEMD_SCOPE_DRAM, MEMD_CLASS_INTERNAL, &page, &align,
                                         &banks), 0);
    ck_assert_uint_eq(page, PAGE);
    ck_assert_uint_eq(align, 32);
    ck_assert_uint_eq(banks, BANKS);
    ck_assert_int_eq(memclient_page_size(c, 0, MEMD_SCOPE_SRAM, MEMD_CLASS_INTERNAL, &page, NULL,
                                         NULL), 0);
    ck_assert_uint_eq(page, 0); /* the shipped L1 has no default: one page */

    memclient_model_desc d = model("pages-cnn", 0);
    memclient_model_info mi;
    memclient_tensor_info ti[NT];
    ck_assert_int_eq(memclient_model_load(c, &d, NULL, &mi, ti), 0);
    ck_assert_uint_eq(mi.page_size, PAGE);
    uint64_t weights = 0;
    for (int t = W0; t <= W4; t++) {
        weights += tensors[t].bytes;
        ck_assert_uint_eq((ti[t].value - mi.const_address) % PAGE, 0); /* on a page */
    }
    for (int t = A0; t <= A2; t++)
        ck_assert_uint_eq(ti[t].value % PAGE, 0);
    memclient_buffer cb = buffer_of(c, mi.const_handle);
    ck_assert_uint_eq(cb.page_size, PAGE);
    ck_assert_uint_eq(cb.banks, BANKS);
    assert_reserves_about(&cb, weights, "constants");

    memclient_instance in;
    memclient_tensor_addr ta[NT];
    ck_assert_int_eq(memclient_instance_create(c, mi.model_id, &in, ta, NT), NT);
    memclient_buffer ab = buffer_of(c, in.arena_handle);
    ck_assert_uint_eq(ab.page_size, PAGE);
    assert_reserves_about(&ab, mi.arena, "arena");
    memclient_buffer pb = buffer_of(c, ta[IN].handle);
    ck_assert_uint_eq(pb.page_size, PAGE);
    assert_reserves_about(&pb, tensors[IN].bytes, "input");

    /* Before pages every bank reserved the whole constants buffer: 12x. */
    memclient_model_desc one = model("pages-cnn-one", MEMCLIENT_MODEL_ONE_PAGE);
    memclient_model_info m1;
    ck_assert_int_eq(memclient_model_load(c, &one, NULL, &m1, NULL), 0);
    ck_assert_uint_eq(m1.page_size, 0);
    memclient_buffer ob = buffer_of(c, m1.const_handle);
    ck_assert_uint_ge(ob.size_per_bank, weights);
    ck_assert_uint_eq(ob.page_size, ob.size_per_bank);
    memclient_disconnect(c);
}
END_TEST

/* tt-metal's rule for interleaved buffers (tt_metal/hw/inc/dataflow_api_addrgen.h,
 * interleaved_addr_gen: get_bank_offset_index = id / NUM_DRAM_BANKS, get_bank_index =
 * id - that * NUM_DRAM_BANKS; InterleavedAddrGen::get_addr = bank base address +
 * bank_offset_index * aligned page size + offset + bank_to_dram_offset[bank_index]),
 * written out on its own: the shipped descriptor's DRAM banks are 12 of 1 GiB, two per
 * channel, so bank i's offset is (i % 2) GiB. */
static void ttmetal_addr(uint64_t base, uint64_t aligned_page, uint32_t page_id,
                         uint64_t offset, uint32_t *bank, uint64_t *addr, uint64_t *abs)
{
    uint32_t bank_offset_index = page_id / BANKS;
    uint32_t bank_index = page_id - bank_offset_index * BANKS;
    *bank = bank_index;
    *addr = base + (uint64_t)bank_offset_index * aligned_page + offset;
    *abs = *addr + (bank_index % 2) * GIB;
}

START_TEST(locate_follows_ttmetal_interleaving)
{
    memclient *c = cu_connect(&f);
    static const uint64_t pages[] = {2048, 4096, 32};
    for (size_t k = 0; k < sizeof pages / sizeof pages[0]; k++) {
        memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 100 * pages[k] + 17);
        r.page_size = pages[k];
        memclient_buffer b;
        ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
        memclient_bank banks[BANKS];
        ck_assert_int_eq(memclient_bank_info(c, b.handle, banks, BANKS), (int)BANKS);
        for (uint32_t p = 0; p < 101; p++) {
            uint64_t in_page[] = {0, 1, pages[k] - 1};
            for (int j = 0; j < 3; j++) {
                memclient_location loc;
                uint64_t off = p * pages[k] + in_page[j];
                ck_assert_int_eq(memclient_locate(&b, banks, BANKS, off, &loc), 0);
                uint32_t bank;
                uint64_t addr, abs;
                ttmetal_addr(b.address, pages[k], p, in_page[j], &bank, &addr, &abs);
                ck_assert_uint_eq(loc.page, p);
                ck_assert_uint_eq(loc.bank, bank);
                ck_assert_uint_eq(loc.address, addr);
                ck_assert_uint_eq(loc.absolute, abs);
                ck_assert_uint_eq(loc.noc_x, MEMD_NO_CORE); /* memd's format names no cores */
            }
        }
        /* 101 pages over 12 banks: 9 rows; offsets past them are not the buffer's. */
        memclient_location loc;
        ck_assert_int_eq(memclient_locate(&b, banks, BANKS, 9 * BANKS * pages[k] - 1, &loc), 0);
        ck_assert_int_eq(memclient_locate(&b, banks, BANKS, 9 * BANKS * pages[k], &loc), -ERANGE);
        ck_assert_int_eq(memclient_locate(&b, banks, BANKS - 1, 0, &loc), -EINVAL);
        ck_assert_int_eq(memclient_free(c, b.handle), 0);
    }
    /* One page: the whole buffer in the first bank, at the buffer's address. */
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 5000);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    memclient_bank banks[BANKS];
    ck_assert_int_eq(memclient_bank_info(c, b.handle, banks, BANKS), (int)BANKS);
    memclient_location loc;
    ck_assert_int_eq(memclient_locate(&b, banks, BANKS, 4999, &loc), 0);
    ck_assert_uint_eq(loc.bank, 0);
    ck_assert_uint_eq(loc.page, 0);
    ck_assert_uint_eq(loc.address, b.address + 4999);
    memclient_disconnect(c);
}
END_TEST

START_TEST(model_tensors_located_page_by_page)
{
    memclient *c = cu_connect(&f);
    memclient_model_desc d = model("pages-loc", 4096); /* an override of the default */
    memclient_model_info mi;
    memclient_tensor_info ti[NT];
    ck_assert_int_eq(memclient_model_load(c, &d, NULL, &mi, ti), 0);
    ck_assert_uint_eq(mi.page_size, 4096);
    memclient_buffer cb = buffer_of(c, mi.const_handle);
    ck_assert_uint_eq(cb.page_size, 4096);
    memclient_bank banks[BANKS];
    ck_assert_int_eq(memclient_bank_info(c, cb.handle, banks, BANKS), (int)BANKS);
    /* Weight w2 starts on a page: its page j is the buffer's page first + j. */
    uint64_t start = ti[W2].value - mi.const_address;
    uint32_t first = (uint32_t)(start / 4096);
    for (uint32_t j = 0; j < 30; j++) {
        memclient_location loc;
        ck_assert_int_eq(memclient_locate(&cb, banks, BANKS, start + j * 4096ull + 8, &loc), 0);
        uint32_t bank;
        uint64_t addr, abs;
        ttmetal_addr(cb.address, 4096, first + j, 8, &bank, &addr, &abs);
        ck_assert_uint_eq(loc.bank, bank);
        ck_assert_uint_eq(loc.address, addr);
    }
    memclient_disconnect(c);
}
END_TEST

/* The message the last call left. */
static const char *last_message(void)
{
    static memclient_error e;
    memclient_last_error(&e);
    return e.message;
}

START_TEST(bad_page_sizes_refused)
{
    memclient *c = cu_connect(&f);
    memclient_model_info mi;
    memclient_model_desc d = model("pages-bad", 3000);
    ck_assert_int_eq(memclient_model_load(c, &d, NULL, &mi, NULL), -EINVAL);
    ck_assert_msg(strstr(last_message(), "page size 3000 is not a power of two"), "%s",
                  last_message());
    d.page_size = 16; /* below the 32-byte DRAM alignment */
    ck_assert_int_eq(memclient_model_load(c, &d, NULL, &mi, NULL), -EINVAL);
    ck_assert_msg(strstr(last_message(), "page size 16 is below the group's alignment"), "%s",
                  last_message());
    d.page_size = 2 * GIB; /* over a 1 GiB bank */
    ck_assert_int_eq(memclient_model_load(c, &d, NULL, &mi, NULL), -EINVAL);
    ck_assert_msg(strstr(last_message(), "is larger than a bank"), "%s", last_message());
    ck_assert_int_eq(memclient_page_size(c, 0, MEMD_SCOPE_DRAM, MEMD_CLASS_COUNT, NULL, NULL,
                                         NULL), -EINVAL);
    ck_assert_int_eq(memclient_page_size(c, 99, MEMD_SCOPE_DRAM, MEMD_CLASS_CONSTANT, NULL, NULL,
                                         NULL), -ENODEV);
    /* Nothing was loaded by the refused requests. */
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_MODELS);
    ck_assert_uint_eq(s->nmodels, 0);
    memclient_snapshot_free(s);
    memclient_disconnect(c);
}
END_TEST

/* memctl model load --page-size: over the YAML's and the device's, 0 for one page. */
START_TEST(memctl_page_size)
{
    char model[1024], out[16384];
    snprintf(model, sizeof model, "%s/config/models/tiny_cnn.yaml", memd_fixture_source_root());
    ck_assert_int_eq(memctl_capture(&f, MEMCTL_ARGS("model", "load", model), out, sizeof out), 0);
    ck_assert_msg(strstr(out, "pages: 2048 bytes"), "%s", out);
    ck_assert_int_eq(memctl_capture(&f, MEMCTL_ARGS("model", "load", model, "--page-size", "0",
                                                    "--json"), out, sizeof out), 0);
    ck_assert_msg(strstr(out, "\"page_size\": 0,"), "%s", out);
    ck_assert_int_eq(memctl_capture(&f, MEMCTL_ARGS("model", "load", model, "--page-size",
                                                    "8KiB"), out, sizeof out), 0);
    ck_assert_msg(strstr(out, "pages: 8192 bytes"), "%s", out);
    ck_assert_int_eq(memctl_capture(&f, MEMCTL_ARGS("model", "load", model, "--page-size",
                                                    "3000"), out, sizeof out), 2);
    ck_assert_msg(strstr(out, "a power of two in bytes, or 0 for one page"), "%s", out);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-pages");
    TCase *tc = tcase_create("daemon");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, model_on_12_banks_reserves_about_its_size);
    tcase_add_test(tc, locate_follows_ttmetal_interleaving);
    tcase_add_test(tc, model_tensors_located_page_by_page);
    tcase_add_test(tc, bad_page_sizes_refused);
    tcase_add_test(tc, memctl_page_size);
    suite_add_tcase(s, tc);
    return s;
}
