/* Model descriptions: the YAML parser (client/parsers/model_yaml.c) and the lifetime
 * derivation (memclient_model_lifetimes), with lifetimes checked against hand-derived
 * values, in-place aliases, graph errors reported at their op or tensor, and malformed
 * YAML reported at line:column. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "model_yaml.h"

static memd_model_yaml y;
static char err[512];

/* Parses text as m.yaml; err gets the error as users see it (memd_error_format). */
static int parse(const char *text)
{
    memd_error e = {0};
    int rc = memd_model_yaml_parse("m.yaml", text, strlen(text), &y, &e);
    memd_error_format(&e, err, sizeof err);
    return rc;
}

static size_t tix(const char *name)
{
    for (size_t i = 0; i < y.desc.ntensors; i++)
        if (!strcmp(y.tensors[i].name, name))
            return i;
    ck_abort_msg("no tensor %s", name);
    return 0;
}

#define LIFE(name, lo, up)                                                                  \
    do {                                                                                    \
        const memclient_tensor_life *l_ = &y.life[tix(name)];                               \
        ck_assert_msg(l_->lower == (lo) && l_->upper == (up), "%s: [%llu,%llu), expected "  \
                      "[%llu,%llu)", name, (unsigned long long)l_->lower,                   \
                      (unsigned long long)l_->upper, (unsigned long long)(lo),              \
                      (unsigned long long)(up));                                            \
    } while (0)

#define EXPECT_ERR(text, where, what)                                                       \
    do {                                                                                    \
        ck_assert_int_eq(parse(text), -EINVAL);                                             \
        ck_assert_msg(strstr(err, where) == err, "error '%s' does not start with '%s'", err, \
                      where);                                                               \
        ck_assert_msg(strstr(err, what), "error '%s' does not say '%s'", err, what);       \
    } while (0)

/* A chain with a branch (residual): x -> a -> b -> c, a also read by add at the end. */
static const char *const residual =
    "model: res\n"
    "code: 4KiB\n"
    "tensors:\n"
    "  - {name: x, role: input, size: 1024}\n"
    "  - {name: w, role: weight, shape: [16, 16], dtype: f32}\n"
    "  - {name: a, size: 100}\n"
    "  - {name: b, shape: [2, 3], dtype: bf16, align: 256}\n"
    "  - {name: c, size: 1 KiB}\n"
    "  - {name: y, role: output, size: 64}\n"
    "ops:\n"
    "  - {name: mm, inputs: [x, w], outputs: [a]}\n"
    "  - {name: act, inputs: [a], outputs: [b]}\n"
    "  - {name: norm, inputs: [b], outputs: [c]}\n"
    "  - {name: add, inputs: [a, c], outputs: [y]}\n";

START_TEST(lifetimes_hand_checked)
{
    ck_assert_int_eq(parse(residual), 0);
    ck_assert_str_eq(y.desc.name, "res");
    ck_assert_uint_eq(y.desc.code_bytes, 4096);
    ck_assert_uint_eq(y.desc.page_size, 0); /* no page_size: the device's default */
    ck_assert_uint_eq(y.desc.ntensors, 6);
    ck_assert_uint_eq(y.desc.nops, 4);
    ck_assert(!y.has_device);
    /* a: written by op 0, last read by op 3 -> [0,4); b: [1,3); c: [2,4). */
    LIFE("a", 0, 4);
    LIFE("b", 1, 3);
    LIFE("c", 2, 4);
    /* weights and placeholders: the whole run */
    LIFE("x", 0, 4);
    LIFE("w", 0, 4);
    LIFE("y", 0, 4);
    ck_assert_uint_eq(y.life[tix("w")].size, 16 * 16 * 4);
    ck_assert_uint_eq(y.life[tix("b")].size, 2 * 3 * 2);
    ck_assert_uint_eq(y.life[tix("b")].alignment, 256);
    ck_assert_uint_eq(y.life[tix("a")].alignment, MEMCLIENT_MODEL_DEFAULT_ALIGN);
    ck_assert_uint_eq(y.life[tix("c")].size, 1024);
    ck_assert_uint_eq(y.life[tix("a")].producer, 0);
    ck_assert_uint_eq(y.life[tix("a")].last_use, 3);
    ck_assert_uint_eq(y.life[tix("x")].producer, MEMCLIENT_NO_TENSOR);
    for (size_t i = 0; i < y.desc.ntensors; i++)
        ck_assert_uint_eq(y.life[i].alias_of, MEMCLIENT_NO_TENSOR);
    memd_model_yaml_free(&y);
}
END_TEST

/* page_size: a size, 0 for one page; anything but a power of two is refused. */
START_TEST(page_size_key)
{
    char text[1024];
    snprintf(text, sizeof text, "page_size: 8KiB\n%s", residual);
    ck_assert_int_eq(parse(text), 0);
    ck_assert_uint_eq(y.desc.page_size, 8192);
    memd_model_yaml_free(&y);
    snprintf(text, sizeof text, "page_size: 0\n%s", residual);
    ck_assert_int_eq(parse(text), 0);
    ck_assert_uint_eq(y.desc.page_size, MEMCLIENT_MODEL_ONE_PAGE);
    memd_model_yaml_free(&y);
    snprintf(text, sizeof text, "page_size: 3000\n%s", residual);
    EXPECT_ERR(text, "m.yaml:1:12:", "page_size: 3000 is not a power of two (0: one page)");
    snprintf(text, sizeof text, "page_size: 2 pages\n%s", residual);
    EXPECT_ERR(text, "m.yaml:1:12:", "'2 pages' is not a size");
}
END_TEST

START_TEST(unread_activation_lives_one_step)
{
    ck_assert_int_eq(parse("model: m\ndevice: 3\nscope: l1\nalignment: 128\ntensors:\n"
                           "  - {name: x, role: input, size: 8}\n"
                           "  - {name: dead, size: 8}\n"
                           "  - {name: y, role: output, size: 8}\n"
                           "ops:\n"
                           "  - {inputs: [x], outputs: [dead, y]}\n"
                           "  - {inputs: [x], outputs: [y]}\n"), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "already written"));
    ck_assert_int_eq(parse("model: m\ndevice: 3\nscope: l1\nalignment: 128\ntensors:\n"
                           "  - {name: x, role: input, size: 8}\n"
                           "  - {name: dead, size: 8}\n"
                           "  - {name: y, role: output, size: 8}\n"
                           "ops:\n"
                           "  - {inputs: [x], outputs: [y]}\n"
                           "  - {inputs: [x], outputs: [dead]}\n"), 0);
    ck_assert(y.has_device);
    ck_assert_uint_eq(y.desc.device, 3);
    ck_assert_int_eq(y.desc.scope, MEMD_SCOPE_SRAM);
    LIFE("dead", 1, 2);
    ck_assert_uint_eq(y.life[tix("dead")].alignment, 128);
    memd_model_yaml_free(&y);
}
END_TEST

/* In-place ops: reshape (implicitly) and an explicit inplace op alias their input; chains
 * resolve to the tensor holding the data, whose lifetime covers its aliases' uses. */
START_TEST(aliases)
{
    ck_assert_int_eq(parse("model: alias\ntensors:\n"
                           "  - {name: x, role: input, size: 64}\n"
                           "  - {name: a, size: 64}\n"
                           "  - {name: r1, size: 64}\n"
                           "  - {name: r2, size: 32}\n"
                           "  - {name: b, size: 64}\n"
                           "  - {name: c, size: 64}\n"
                           "  - {name: y, role: output, size: 64}\n"
                           "ops:\n"
                           "  - {inputs: [x], outputs: [a]}\n"                    /* 0 */
                           "  - {type: reshape, inputs: [a], outputs: [r1]}\n"    /* 1 */
                           "  - {inputs: [x], outputs: [b]}\n"                    /* 2 */
                           "  - {type: mystery, inplace: true, inputs: [r1], outputs: [r2]}\n"
                           "  - {inputs: [b], outputs: [c]}\n"                    /* 4 */
                           "  - {inputs: [r2, c], outputs: [y]}\n"), 0);         /* 5 */
    size_t a = tix("a");
    ck_assert_uint_eq(y.life[tix("r1")].alias_of, a);
    ck_assert_uint_eq(y.life[tix("r2")].alias_of, a); /* not r1: the data's holder */
    /* a is written at 0 and its alias r2 read at 5: [0,6); the aliases report it too. */
    LIFE("a", 0, 6);
    LIFE("r1", 0, 6);
    LIFE("r2", 0, 6);
    LIFE("b", 2, 5);
    LIFE("c", 4, 6);
    memd_model_yaml_free(&y);

    /* inplace: false makes a reshape a copy with its own storage. */
    ck_assert_int_eq(parse("model: copy\ntensors:\n"
                           "  - {name: x, role: input, size: 64}\n"
                           "  - {name: a, size: 64}\n"
                           "  - {name: r, size: 64}\n"
                           "  - {name: y, role: output, size: 64}\n"
                           "ops:\n"
                           "  - {inputs: [x], outputs: [a]}\n"
                           "  - {type: reshape, inplace: false, inputs: [a], outputs: [r]}\n"
                           "  - {inputs: [r], outputs: [y]}\n"), 0);
    ck_assert_uint_eq(y.life[tix("r")].alias_of, MEMCLIENT_NO_TENSOR);
    LIFE("a", 0, 2);
    LIFE("r", 1, 3);
    memd_model_yaml_free(&y);
}
END_TEST

/* A graph output produced in place from an activation keeps that activation to the end;
 * an alias of an input is stored in the input. */
START_TEST(alias_outputs_and_inputs)
{
    ck_assert_int_eq(parse("model: out\ntensors:\n"
                           "  - {name: x, role: input, size: 64}\n"
                           "  - {name: xv, size: 64}\n"
                           "  - {name: a, size: 64}\n"
                           "  - {name: y, role: output, size: 64}\n"
                           "  - {name: z, role: output, size: 8}\n"
                           "ops:\n"
                           "  - {type: view, inputs: [x], outputs: [xv]}\n"
                           "  - {inputs: [xv], outputs: [a]}\n"
                           "  - {type: view, inputs: [a], outputs: [y]}\n"
                           "  - {inputs: [x], outputs: [z]}\n"), 0);
    ck_assert_uint_eq(y.life[tix("xv")].alias_of, tix("x"));
    ck_assert_uint_eq(y.life[tix("y")].alias_of, tix("a"));
    LIFE("a", 1, 4); /* to the end (4 ops), not just to op 2 */
    memd_model_yaml_free(&y);
}
END_TEST

START_TEST(inout_updated_in_place)
{
    ck_assert_int_eq(parse("model: kv\ntensors:\n"
                           "  - {name: x, role: input, size: 64}\n"
                           "  - {name: cache, role: inout, size: 4096}\n"
                           "  - {name: y, role: output, size: 64}\n"
                           "ops:\n"
                           "  - {type: append, inplace: true, inputs: [cache, x], outputs: [cache]}\n"
                           "  - {inputs: [cache], outputs: [y]}\n"), 0);
    ck_assert_uint_eq(y.life[tix("cache")].alias_of, MEMCLIENT_NO_TENSOR);
    ck_assert_uint_eq(y.life[tix("cache")].producer, 0);
    memd_model_yaml_free(&y);
}
END_TEST

START_TEST(example_file_parses)
{
    const char *root = getenv("MEMD_SOURCE_ROOT");
    ck_assert_ptr_nonnull(root);
    char path[1024];
    snprintf(path, sizeof path, "%s/config/models/tiny_cnn.yaml", root);
    memd_error e = {0};
    ck_assert_msg(memd_model_yaml_read(path, &y, &e) == 0, "%s", e.msg);
    ck_assert_str_eq(y.desc.name, "tiny-cnn");
    ck_assert_uint_eq(y.desc.nops, 8);
    /* pool2.out [5,8): flat, its reshape, is read by fc (op 7). */
    LIFE("pool2.out", 5, 8);
    ck_assert_uint_eq(y.life[tix("flat")].alias_of, tix("pool2.out"));
    LIFE("conv1.out", 0, 2);
    LIFE("relu1.out", 1, 3);
    ck_assert_uint_eq(y.life[tix("fc.w")].alignment, 4096);
    memd_model_yaml_free(&y);
    ck_assert_int_eq(memd_model_yaml_read("/nonexistent/m.yaml", &y, &e), -ENOENT);
    memd_error_format(&e, err, sizeof err);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/m.yaml"));
}
END_TEST

START_TEST(malformed_yaml_line_col)
{
    /* YAML syntax: the flow sequence never closes. */
    EXPECT_ERR("model: m\ntensors: [\n", "m.yaml:3:1:", "");
    /* A tab where indentation is expected. */
    EXPECT_ERR("model: m\ntensors:\n\t- {name: x}\n", "m.yaml:3:", "");
    EXPECT_ERR("", "m.yaml:", "empty document");
    EXPECT_ERR("- 1\n", "m.yaml:1:1:", "expected a mapping");
    EXPECT_ERR("model: m\nmodle: x\n", "m.yaml:2:1:", "unknown key 'modle'");
    EXPECT_ERR("model: m\nmodel: n\n", "m.yaml:2:1:", "given twice");
    EXPECT_ERR("model: 'bad name'\n", "m.yaml:1:8:", "A-Z a-z 0-9");
    EXPECT_ERR("model: m\ntensors: []\nops: []\n", "m.yaml:2:10:", "non-empty list");
    EXPECT_ERR("model: m\ntensors:\n  - {name: x, size: 12x}\nops: []\n", "m.yaml:3:21:",
               "'12x' is not a size");
    EXPECT_ERR("model: m\ntensors:\n  - {name: x, shape: [2, 0], dtype: f16}\nops: []\n",
               "m.yaml:3:26:", "dimension 1 is 0");
    EXPECT_ERR("model: m\ntensors:\n  - {name: x, shape: [2], dtype: f13}\nops: []\n",
               "m.yaml:3:34:", "dtype: 'f13'");
    EXPECT_ERR("model: m\ntensors:\n  - {name: x, size: 4, role: bias}\nops: []\n",
               "m.yaml:3:30:", "role: 'bias'");
    EXPECT_ERR("model: m\ntensors:\n  - {name: x, size: 4, align: 3}\nops: []\n",
               "m.yaml:3:31:", "not a power of two");
    EXPECT_ERR("model: m\ntensors:\n  - {name: x, size: 4}\n  - {name: x, size: 8}\nops: []\n",
               "m.yaml:4:5:", "declared twice");
    EXPECT_ERR("model: m\ntensors:\n  - {size: 4}\nops: []\n", "m.yaml:3:5:", "needs a name");
    /* names are text: escapes in double quotes cannot smuggle control bytes (issue 14) */
    EXPECT_ERR("model: m\ntensors:\n  - {name: \"x\\e[2J\", size: 4}\nops: []\n", "m.yaml:3:12:",
               "name: byte 1 is a control character (0x1b)");
    EXPECT_ERR("model: \"m\\x85\"\ntensors:\n  - {name: x, size: 4}\nops: []\n", "m.yaml:1:8:",
               "byte 1 is a control character (0xc2)");
    EXPECT_ERR("model: m\ntensors:\n  - {name: x, size: 4, shape: [1], dtype: u8}\nops: []\n",
               "m.yaml:3:21:", "not both");
    EXPECT_ERR("model: m\ntensors:\n  - {name: x, role: input, size: 4}\n"
               "ops:\n  - {inputs: [x], outputs: [nope]}\n",
               "m.yaml:5:29:", "no tensor named 'nope'");
    EXPECT_ERR("model: m\ntensors:\n  - {name: x, role: input, size: 4}\n"
               "ops:\n  - {inputs: [x], outputs: [x], inplace: maybe}\n",
               "m.yaml:5:42:", "not true or false");
    EXPECT_ERR("model: m\ntensors:\n  - {name: x, role: input, size: 4}\nops: []\n---\nmodel: n\n",
               "m.yaml:6:1:", "second YAML document");
}
END_TEST

/* Graph errors point at the op (or tensor) that causes them. */
START_TEST(graph_errors_at_their_op)
{
    static const char *const head = "model: g\ntensors:\n"
                                    "  - {name: x, role: input, size: 64}\n"
                                    "  - {name: w, role: weight, size: 64}\n"
                                    "  - {name: a, size: 64}\n"
                                    "  - {name: big, size: 128}\n"
                                    "  - {name: y, role: output, size: 64}\n"
                                    "ops:\n";
    char text[1024];
#define GRAPH(ops, where, what)                                                             \
    do {                                                                                    \
        snprintf(text, sizeof text, "%s%s", head, ops);                                     \
        EXPECT_ERR(text, where, what);                                                      \
    } while (0)
    GRAPH("  - {inputs: [x], outputs: [y]}\n  - {name: late, inputs: [a], outputs: [big]}\n"
          "  - {inputs: [x], outputs: [a]}\n",
          "m.yaml:10:5:", "op 'late' (#1) reads tensor 'a' before any op writes it");
    GRAPH("  - {inputs: [x], outputs: [a]}\n  - {inputs: [a], outputs: [w]}\n",
          "m.yaml:10:5:", "writes tensor 'w', a graph weight");
    GRAPH("  - {inputs: [w], outputs: [x]}\n", "m.yaml:9:5:", "a graph input");
    GRAPH("  - {inputs: [x], outputs: [a]}\n  - {inputs: [x], outputs: [a, y]}\n",
          "m.yaml:10:5:", "already written by op #0");
    GRAPH("  - {inputs: [x], outputs: [a]}\n  - {type: view, inputs: [a], outputs: [big]}\n"
          "  - {inputs: [big], outputs: [y]}\n",
          "m.yaml:10:5:", "larger than its source");
    GRAPH("  - {inputs: [x], outputs: [a]}\n  - {inputs: [a], outputs: [big]}\n",
          "m.yaml:7:5:", "graph output 'y' is never written");
    GRAPH("  - {inputs: [x], outputs: [y]}\n  - {inputs: [x], outputs: [big]}\n",
          "m.yaml:5:5:", "activation 'a' is never written");
    GRAPH("  - {inputs: [x], outputs: []}\n", "m.yaml:9:5:", "writes no tensor");
    GRAPH("  - {inputs: [x], outputs: [a]}\n  - {type: reshape, inputs: [a], outputs: [w]}\n",
          "m.yaml:10:5:", "a graph weight");
#undef GRAPH
}
END_TEST

/* The derivation by itself, as a runtime without YAML calls it. */
START_TEST(lifetimes_api)
{
    uint32_t in0[] = {0}, out0[] = {1}, in1[] = {1}, out1[] = {2};
    memclient_tensor_desc t[] = {
        {.name = "x", .role = MEMCLIENT_TENSOR_INPUT, .bytes = 16},
        {.name = "h", .role = MEMCLIENT_TENSOR_ACTIVATION, .dtype = MEMD_DTYPE_F16, .ndim = 2,
         .shape = {3, 5}, .alignment = 8},
        {.name = "y", .role = MEMCLIENT_TENSOR_OUTPUT, .bytes = 16},
    };
    memclient_op_desc ops[] = {
        {.inputs = in0, .ninputs = 1, .outputs = out0, .noutputs = 1},
        {.inputs = in1, .ninputs = 1, .outputs = out1, .noutputs = 1},
    };
    memclient_model_desc d = {.name = "api", .tensors = t, .ntensors = 3, .ops = ops, .nops = 2};
    memclient_tensor_life l[3];
    memclient_model_error e;
    ck_assert_int_eq(memclient_model_lifetimes(&d, l, &e), 0);
    ck_assert_uint_eq(l[1].size, 30);
    ck_assert_uint_eq(l[1].alignment, 8);
    ck_assert_uint_eq(l[1].lower, 0);
    ck_assert_uint_eq(l[1].upper, 2);
    /* An index out of range names the op. */
    uint32_t bad[] = {7};
    ops[1].inputs = bad;
    ck_assert_int_eq(memclient_model_lifetimes(&d, l, &e), -EINVAL);
    ck_assert_uint_eq(e.op, 1);
    ck_assert_ptr_nonnull(strstr(e.message, "tensor #7"));
    ops[1].inputs = in1;
    t[1].alignment = 12;
    ck_assert_int_eq(memclient_model_lifetimes(&d, l, &e), -EINVAL);
    ck_assert_uint_eq(e.tensor, 1);
    t[1].alignment = 8;
    t[1].shape[0] = UINT64_MAX / 2;
    ck_assert_int_eq(memclient_model_lifetimes(&d, l, &e), -EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "overflows"));
    ck_assert_int_eq(memclient_model_lifetimes(NULL, l, &e), -EINVAL);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("model-yaml");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, lifetimes_hand_checked);
    tcase_add_test(tc, page_size_key);
    tcase_add_test(tc, unread_activation_lives_one_step);
    tcase_add_test(tc, aliases);
    tcase_add_test(tc, alias_outputs_and_inputs);
    tcase_add_test(tc, inout_updated_in_place);
    tcase_add_test(tc, example_file_parses);
    tcase_add_test(tc, malformed_yaml_line_col);
    tcase_add_test(tc, graph_errors_at_their_op);
    tcase_add_test(tc, lifetimes_api);
    suite_add_tcase(s, tc);
    return s;
}
