/* memctl model — model descriptions (YAML, see doc/models.md) with the daemon:
 *   memctl model check FILE.yaml [--json]     parse and derive lifetimes, offline
 *   memctl model load FILE.yaml [--device N] [--budget-ms MS] [--seed S] [--page-size B]
 *                                [--instances K] [--hold] [--json]
 *   memctl model list [--json]                models (ready or filling), plans and instances
 *   memctl model import FILE.onnx [-o OUT.yaml] [--dims NAME=N,...]   (memctl_model_import.c)
 * The YAML is read here, never by the daemon. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "plan.h"
#include "memctl_model.h"
#include "memctl_table.h"
#include "model_yaml.h"

#define USAGE                                                                               \
    "usage: memctl model check FILE.yaml [--json]\n"                                        \
    "       memctl model load FILE.yaml [--device N] [--budget-ms MS] [--seed S]\n"         \
    "                                   [--page-size B] [--instances K] [--hold] [--json]\n" \
    "       memctl model list [--json]      (STATE: ready, or filling by whom)\n"          \
    "       memctl model import FILE.onnx [-o OUT.yaml] [--dims NAME=N,...] [--name NAME]\n"   \
    "                                    [--json]\n"

static void print_tensors(const memd_model_yaml *y, const memclient_tensor_info *ti)
{
    static const char *const head[] = {"INDEX", "NAME", "ROLE", "BYTES", "ALIGN", "LIFETIME",
                                       "STORAGE", "VALUE"};
    const memclient_model_desc *d = &y->desc;
    memctl_table *t = memctl_table_new(ti ? 8 : 7, head, "rllrrlll");
    for (size_t i = 0; t && i < d->ntensors; i++) {
        const memclient_tensor_life *l = &y->life[i];
        memctl_table_cell(t, "%zu", i);
        memctl_table_cell(t, "%s", d->tensors[i].name);
        memctl_table_cell(t, "%s", memd_model_yaml_role_name(d->tensors[i].role));
        memctl_table_cell(t, "%" PRIu64, l->size);
        memctl_table_cell(t, "%" PRIu64, l->alignment);
        memctl_table_cell(t, "[%" PRIu64 ",%" PRIu64 ")", l->lower, l->upper);
        if (l->alias_of != MEMCLIENT_NO_TENSOR)
            memctl_table_cell(t, "alias of %s", d->tensors[l->alias_of].name);
        else
            memctl_table_cell(t, "own");
        if (ti && (ti[i].role == MEMCLIENT_TENSOR_WEIGHT ||
                   (ti[i].role == MEMCLIENT_TENSOR_ALIAS && l->alias_of != MEMCLIENT_NO_TENSOR &&
                    d->tensors[l->alias_of].role == MEMCLIENT_TENSOR_WEIGHT)))
            memctl_table_cell(t, "address 0x%" PRIx64, ti[i].value);
        else if (ti && d->tensors[i].role == MEMCLIENT_TENSOR_ACTIVATION)
            memctl_table_cell(t, "arena offset %" PRIu64, ti[i].value);
        memctl_table_end_row(t);
    }
    if (t)
        memctl_table_print(t, stdout, "  ");
    memctl_table_free(t);
}

/* The same rows as print_tensors, as a JSON array ("tensors": [...]). */
static void json_tensors(const memd_model_yaml *y, const memclient_tensor_info *ti)
{
    const memclient_model_desc *d = &y->desc;
    fputs(", \"tensors\": [", stdout);
    for (size_t i = 0; i < d->ntensors; i++) {
        const memclient_tensor_life *l = &y->life[i];
        printf("%s\n    {\"index\": %zu, \"name\": ", i ? "," : "", i);
        memd_json_str(stdout, d->tensors[i].name);
        printf(", \"role\": \"%s\", \"bytes\": %" PRIu64 ", \"alignment\": %" PRIu64
               ", \"lower\": %" PRIu64 ", \"upper\": %" PRIu64 ", \"alias_of\": ",
               memd_model_yaml_role_name(d->tensors[i].role), l->size, l->alignment, l->lower,
               l->upper);
        if (l->alias_of != MEMCLIENT_NO_TENSOR)
            memd_json_str(stdout, d->tensors[l->alias_of].name);
        else
            fputs("null", stdout);
        if (ti) /* an address for weights, an arena offset for activations */
            printf(", \"value\": %" PRIu64 ", \"value_str\": \"%" PRIu64 "\"", ti[i].value,
                   ti[i].value);
        fputc('}', stdout);
    }
    fputs("\n  ]", stdout);
}

static int cmd_check(int argc, char **argv)
{
    const char *file = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (argv[i][0] == '-' || file) {
            fputs(USAGE, stderr);
            return MEMCTL_EXIT_USAGE;
        } else {
            file = argv[i];
        }
    }
    if (!file) {
        fputs(USAGE, stderr);
        return MEMCTL_EXIT_USAGE;
    }
    memd_model_yaml y;
    memd_error err = {0};
    if (memd_model_yaml_read(file, &y, &err) < 0) {
        memctl_print_error("memctl model: ", &err);
        return MEMCTL_EXIT_FAIL;
    }
    const memclient_model_desc *d = &y.desc;
    /* The activations' plan problem, as the daemon will get it. */
    size_t n = 0;
    memd_plan_buffer *b = calloc(d->ntensors, sizeof *b);
    uint64_t lb = 0, weights = 0, placeholders = 0;
    for (size_t i = 0; b && i < d->ntensors; i++) {
        const memclient_tensor_life *l = &y.life[i];
        if (l->alias_of != MEMCLIENT_NO_TENSOR)
            continue;
        if (d->tensors[i].role == MEMCLIENT_TENSOR_ACTIVATION)
            b[n++] = (memd_plan_buffer){.lower = l->lower, .upper = l->upper, .size = l->size,
                                        .align = l->alignment};
        else if (d->tensors[i].role == MEMCLIENT_TENSOR_WEIGHT)
            weights += l->size;
        else
            placeholders += l->size;
    }
    if (!b || memd_plan_lower_bound(b, n, &lb) < 0) {
        fprintf(stderr, "memctl model: %s: the activations' sizes overflow\n", file);
        free(b);
        memd_model_yaml_free(&y);
        return MEMCTL_EXIT_FAIL;
    }
    if (json) {
        fputs("{\"schema_version\": 1, \"model\": ", stdout);
        memd_json_str(stdout, d->name);
        printf(", \"ops\": %zu, \"activations\": %zu, \"lower_bound\": %" PRIu64
               ", \"weights_bytes\": %" PRIu64 ", \"placeholders_bytes\": %" PRIu64,
               d->nops, n, lb, weights, placeholders);
        json_tensors(&y, NULL);
        fputs("}\n", stdout);
    } else {
        printf("model %s: %zu tensors, %zu ops; %zu activations (lower bound %" PRIu64
               " bytes), weights %" PRIu64 " bytes, placeholders %" PRIu64 " bytes\n",
               d->name, d->ntensors, d->nops, n, lb, weights, placeholders);
        print_tensors(&y, NULL);
    }
    free(b);
    memd_model_yaml_free(&y);
    return 0;
}

typedef struct load_opts {
    const char *file;
    uint32_t device;
    bool has_device, hold, json, has_page;
    uint64_t instances, page_size;
    memclient_plan_opts plan;
} load_opts;

static int parse_load(int argc, char **argv, load_opts *o)
{
    const char *cmd = "model load";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--device")) {
            if (!(v = memctl_optarg(cmd, argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            if (memctl_parse_u32(v, &o->device) < 0 || o->device == UINT32_MAX)
                return memctl_bad_value(cmd, a, v, "a device id");
            o->has_device = true;
        } else if (!strcmp(a, "--budget-ms")) {
            if (!(v = memctl_optarg(cmd, argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            if (memctl_parse_budget(cmd, a, v, &o->plan.budget_ms) < 0)
                return MEMCTL_EXIT_USAGE;
        } else if (!strcmp(a, "--seed")) {
            if (!(v = memctl_optarg(cmd, argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            if (memctl_parse_u64(v, &o->plan.seed) < 0)
                return memctl_bad_value(cmd, a, v, "an unsigned integer");
        } else if (!strcmp(a, "--page-size")) {
            if (!(v = memctl_optarg(cmd, argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            if (memctl_parse_size(v, &o->page_size) < 0 || (o->page_size & (o->page_size - 1)))
                return memctl_bad_value(cmd, a, v, "a power of two in bytes, or 0 for one page");
            o->has_page = true;
        } else if (!strcmp(a, "--instances")) {
            if (!(v = memctl_optarg(cmd, argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            if (memctl_parse_u64(v, &o->instances) < 0 || o->instances > 1024)
                return memctl_bad_value(cmd, a, v, "0..1024");
        } else if (!strcmp(a, "--hold")) {
            o->hold = true;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "memctl model load: unknown option '%s'\n", a);
            return MEMCTL_EXIT_USAGE;
        } else if (!o->file) {
            o->file = a;
        } else {
            fprintf(stderr, "memctl model load: one FILE.yaml only ('%s')\n", a);
            return MEMCTL_EXIT_USAGE;
        }
    }
    if (!o->file) {
        fputs(USAGE, stderr);
        return MEMCTL_EXIT_USAGE;
    }
    return 0;
}

static void json_instance(const memd_model_yaml *y, const memclient_instance *in,
                          const memclient_tensor_addr *ta, bool first)
{
    printf("%s\n    {\"instance_id\": %" PRIu64 ", \"instance_id_str\": \"%" PRIu64
           "\", \"reused\": %s, \"arena_handle\": %" PRIu64 ", \"arena_handle_str\": \"%"
           PRIu64 "\", \"arena_address\": %" PRIu64 ", \"arena_bytes\": %" PRIu64
           ", \"tensors\": [", first ? "" : ",", in->instance_id, in->instance_id,
           in->reused ? "true" : "false", in->arena_handle, in->arena_handle, in->arena_address,
           in->arena_bytes);
    for (size_t i = 0; i < y->desc.ntensors; i++) {
        printf("%s{\"name\": ", i ? ", " : "");
        memd_json_str(stdout, y->desc.tensors[i].name);
        printf(", \"address\": %" PRIu64 ", \"handle\": %" PRIu64 "}", ta[i].address,
               ta[i].handle);
    }
    fputs("]}", stdout);
}

static void print_instance(const memd_model_yaml *y, const memclient_instance *in,
                           const memclient_tensor_addr *ta)
{
    printf("instance %" PRIu64 "%s: arena handle %" PRIu64 " address 0x%" PRIx64 " bytes %" PRIu64
           "\n", in->instance_id, in->reused ? " (reused)" : "", in->arena_handle,
           in->arena_address, in->arena_bytes);
    static const char *const head[] = {"TENSOR", "ADDRESS", "HANDLE"};
    memctl_table *t = memctl_table_new(3, head, "lrr");
    for (size_t i = 0; t && i < y->desc.ntensors; i++) {
        memctl_table_cell(t, "%s", y->desc.tensors[i].name);
        memctl_table_cell(t, "0x%" PRIx64, ta[i].address);
        memctl_table_cell(t, "%" PRIu64, ta[i].handle);
    }
    if (t)
        memctl_table_print(t, stdout, "  ");
    memctl_table_free(t);
}

/* The model's plan as `memctl plan` prints one; the buffer count and planning time come
 * from the daemon's plan record when it still has it. */
static void print_plan(memclient *c, const memd_model_yaml *y, const memclient_model_info *mi,
                       bool json)
{
    memctl_plan_summary sum = {.plan_id = mi->plan_id, .arena = mi->arena,
                               .lower_bound = mi->lower_bound, .strategy = mi->strategy,
                               .optimal = mi->plan_optimal, .cached = mi->plan_cached,
                               .validated = mi->plan_precomputed, .plan_ms = -1,
                               .first_ms = -1};
    for (size_t i = 0; i < y->desc.ntensors; i++)
        sum.buffers += y->desc.tensors[i].role == MEMCLIENT_TENSOR_ACTIVATION &&
                       y->life[i].alias_of == MEMCLIENT_NO_TENSOR;
    memclient_snapshot *s = NULL;
    if (memclient_dump(c, mi->device, MEMCLIENT_DUMP_MODELS, &s) == 0) {
        for (size_t i = 0; i < s->nplans; i++) {
            if (s->plans[i].plan_id == mi->plan_id) {
                sum.buffers = s->plans[i].buffers;
                sum.plan_ms = (double)s->plans[i].plan_us / 1000.0;
            }
        }
    }
    memclient_snapshot_free(s);
    memctl_plan_print(stdout, &sum, json);
}

static void print_loaded(memclient *c, const memd_model_yaml *y, const memclient_model_info *mi,
                         const memclient_tensor_info *ti)
{
    printf("model %s: id %" PRIu64 " on device %" PRIu32 ", %s, %" PRIu32 " session%s\n",
           mi->name, mi->model_id, mi->device,
           mi->created ? "loaded" : "shared with another session", mi->users,
           mi->users == 1 ? "" : "s");
    print_plan(c, y, mi, false);
    printf("code: handle %" PRIu64 " address 0x%" PRIx64 " bytes %" PRIu64 "\n", mi->code_handle,
           mi->code_address, mi->code_bytes);
    printf("constants: handle %" PRIu64 " address 0x%" PRIx64 " bytes %" PRIu64 "\n",
           mi->const_handle, mi->const_address, mi->const_bytes);
    printf("pages: %" PRIu64 " bytes (constants, arenas, placeholders; 0: one page)\n",
           mi->page_size);
    print_tensors(y, ti);
}

/* The same as print_loaded, as the head of one JSON document; "instances" follow. */
static void print_loaded_json(memclient *c, const memd_model_yaml *y,
                              const memclient_model_info *mi, const memclient_tensor_info *ti)
{
    fputs("{\"schema_version\": 1, \"model\": ", stdout);
    memd_json_str(stdout, mi->name);
    printf(", \"model_id\": %" PRIu64 ", \"model_id_str\": \"%" PRIu64 "\", \"device\": %"
           PRIu32 ", \"created\": %s, \"users\": %" PRIu32 ",\n  \"plan\": ", mi->model_id,
           mi->model_id, mi->device, mi->created ? "true" : "false", mi->users);
    print_plan(c, y, mi, true); /* ends its line: the next member leads with the comma */
    printf("  , \"code\": {\"handle\": %" PRIu64 ", \"handle_str\": \"%" PRIu64
           "\", \"address\": %" PRIu64 ", \"bytes\": %" PRIu64 "},\n", mi->code_handle,
           mi->code_handle, mi->code_address, mi->code_bytes);
    printf("  \"constants\": {\"handle\": %" PRIu64 ", \"handle_str\": \"%" PRIu64
           "\", \"address\": %" PRIu64 ", \"bytes\": %" PRIu64 "},\n  \"page_size\": %" PRIu64,
           mi->const_handle, mi->const_handle, mi->const_address, mi->const_bytes,
           mi->page_size);
    json_tensors(y, ti);
    fputs(",\n  \"instances\": [", stdout);
}

static int cmd_load(const memctl_globals *g, int argc, char **argv)
{
    load_opts o = {0};
    int r = parse_load(argc, argv, &o);
    if (r)
        return r;
    memd_model_yaml y;
    memd_error err = {0};
    if (memd_model_yaml_read(o.file, &y, &err) < 0) {
        memctl_print_error("memctl model: ", &err);
        return MEMCTL_EXIT_FAIL;
    }
    if (o.has_device)
        y.desc.device = o.device;
    if (o.has_page) /* over the YAML's page_size */
        y.desc.page_size = o.page_size ? o.page_size : MEMCLIENT_MODEL_ONE_PAGE;
    /* Signals wait for sigwait (--hold) so the release is always clean. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    if (o.hold)
        sigprocmask(SIG_BLOCK, &set, NULL);
    memclient *c;
    if ((r = memctl_connect_flags(g, o.hold ? MEMCLIENT_CONNECT_RECONNECT : 0, &c)) != 0) {
        memd_model_yaml_free(&y);
        return r;
    }
    size_t n = y.desc.ntensors;
    memclient_tensor_info *ti = calloc(n, sizeof *ti);
    memclient_tensor_addr *ta = calloc(n, sizeof *ta);
    memclient_model_info mi;
    int code = 0;
    if (!ti || !ta) {
        fprintf(stderr, "memctl model load: out of memory\n");
        code = MEMCTL_EXIT_FAIL;
        goto out;
    }
    if ((r = memclient_model_load(c, &y.desc, &o.plan, &mi, ti)) < 0) {
        char what[128];
        snprintf(what, sizeof what, "cannot load %.100s", o.file);
        code = memctl_fail(c, "model load", what, r);
        goto out;
    }
    if (o.json)
        print_loaded_json(c, &y, &mi, ti);
    else
        print_loaded(c, &y, &mi, ti);
    for (uint64_t k = 0; k < o.instances; k++) {
        memclient_instance in;
        if ((r = memclient_instance_create(c, mi.model_id, &in, ta, n)) < 0) {
            code = memctl_fail(c, "model load", "cannot create an instance", r);
            goto out;
        }
        if (o.json)
            json_instance(&y, &in, ta, k == 0);
        else
            print_instance(&y, &in, ta);
    }
    if (o.json) /* the document is whole only when every instance was made */
        fputs("\n  ]}\n", stdout);
    fflush(stdout);
    if (o.hold) {
        fprintf(stderr, "memctl model load: holding model %s; SIGINT or SIGTERM releases it\n",
                mi.name);
        int sig = memctl_hold(c, &set, "model load");
        if (sig < 0) {
            code = MEMCTL_EXIT_CONNECT;
            goto out;
        }
        r = memclient_model_unload(c, mi.model_id, MEMCLIENT_MODEL_FORCE);
        if (r < 0)
            code = memctl_fail(NULL, "model load", "unloading", r);
        else
            fprintf(stderr, "memctl model load: %s: unloaded %s\n", strsignal(sig), mi.name);
    }
out:
    free(ti);
    free(ta);
    memclient_disconnect(c);
    memd_model_yaml_free(&y);
    return code;
}

static int cmd_list(const memctl_globals *g, int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else {
            fprintf(stderr, "memctl model list: unknown option '%s'\n", argv[i]);
            return MEMCTL_EXIT_USAGE;
        }
    }
    memclient_snapshot *s;
    int r = memctl_fetch(g, "model list", MEMCLIENT_DUMP_MODELS | MEMCLIENT_DUMP_MODEL_STATE, &s);
    if (r)
        return r;
    if (json) {
        printf("{\n  \"schema_version\": 1");
        memd_report_models_json(stdout, s);
        printf("\n}\n");
    } else {
        memctl_models_table(stdout, s);
    }
    memclient_snapshot_free(s);
    return 0;
}

int memctl_cmd_model(const memctl_globals *g, int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(USAGE, argc < 2 ? stderr : stdout);
        return argc < 2 ? MEMCTL_EXIT_USAGE : 0;
    }
    /* import has its own help; the others share this one (check must not take --help
     * for a file name). */
    for (int i = 2; strcmp(argv[1], "import") && i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(USAGE, stdout);
            return 0;
        }
    if (!strcmp(argv[1], "check"))
        return cmd_check(argc - 1, argv + 1);
    if (!strcmp(argv[1], "load"))
        return cmd_load(g, argc - 1, argv + 1);
    if (!strcmp(argv[1], "list"))
        return cmd_list(g, argc - 1, argv + 1);
    if (!strcmp(argv[1], "import"))
        return memctl_model_import(argc - 1, argv + 1);
    fprintf(stderr, "memctl model: unknown subcommand '%s'\n%s", argv[1], USAGE);
    return MEMCTL_EXIT_USAGE;
}
