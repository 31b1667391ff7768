/* memd model descriptions in YAML (see model_yaml.h). libyaml's document API gives every
 * node its position, so each error names file:line:column. Names are resolved through a
 * sorted index (O(n log n) for big graphs); sizes of lists are bounded before anything
 * is allocated for them. */
#include "text.h"
#include "model_yaml.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "units.h"
#include "memd/protocol.h"

#define MAX_REFS (1u << 24) /* op inputs + outputs in one model */
#define MAX_FILE (256u << 20)

typedef struct ctx {
    const char *file;
    memd_error *err;
    yaml_document_t *doc;
} ctx;

static int errat(ctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int errat(ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    memd_error_at(c->err, c->file, n ? (unsigned)n->start_mark.line + 1 : 0,
                  n ? (unsigned)n->start_mark.column + 1 : 0);
    va_list ap;
    va_start(ap, fmt);
    int rc = memd_error_vset(c->err, -EINVAL, fmt, ap);
    va_end(ap);
    return rc;
}

static yaml_node_t *node(ctx *c, int id)
{
    return yaml_document_get_node(c->doc, id);
}

static size_t seq_len(const yaml_node_t *n)
{
    return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static int scalar(ctx *c, const yaml_node_t *n, const char *what, const char **out)
{
    *out = NULL; /* errat's -EINVAL is out of the optimizer's sight: never leave *out unset */
    if (!n || n->type != YAML_SCALAR_NODE)
        return errat(c, n, "%s: expected a single value", what);
    const char *v = (const char *)n->data.scalar.value;
    if (strlen(v) != n->data.scalar.length)
        return errat(c, n, "%s: contains a NUL byte", what);
    size_t at;
    const char *why;
    if (memd_text_check(v, &at, &why) < 0) /* "\e[..." in double quotes reaches here */
        return errat(c, n, "%s: byte %zu is %s (0x%02x)", what, at, why,
                     (unsigned char)v[at]);
    *out = v;
    return 0;
}

/* Sizes and integers use memd's one syntax (common/units.h), as in the config files. */
static int parse_u64(const char *s, bool units, uint64_t *out)
{
    return units ? memd_parse_size(s, out, NULL) : memd_parse_u64(s, out);
}

static int number(ctx *c, const yaml_node_t *n, const char *what, bool units, uint64_t max,
                  uint64_t *out)
{
    const char *s;
    int rc = scalar(c, n, what, &s);
    if (rc < 0)
        return rc;
    rc = parse_u64(s, units, out);
    if (rc < 0 || *out > max)
        return errat(c, n, "%s: '%s' is not %s%s", what, s,
                     units ? "a size in bytes (e.g. 4096 or 4KiB)" : "an unsigned integer",
                     rc == 0 ? " in range" : "");
    return 0;
}

static int alignment(ctx *c, const yaml_node_t *n, const char *what, uint64_t *out)
{
    int rc = number(c, n, what, true, 1ull << 32, out);
    if (rc == 0 && (*out == 0 || (*out & (*out - 1))))
        return errat(c, n, "%s: %llu is not a power of two", what, (unsigned long long)*out);
    return rc;
}

static int boolean(ctx *c, const yaml_node_t *n, const char *what, int *out)
{
    const char *s;
    int rc = scalar(c, n, what, &s);
    if (rc < 0)
        return rc;
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "yes"))
        *out = 1;
    else if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "no"))
        *out = 0;
    else
        return errat(c, n, "%s: '%s' is not true or false", what, s);
    return 0;
}

static const char *const role_names[] = {"activation", "weight", "input", "output", "inout",
                                         "alias"};

const char *memd_model_yaml_role_name(memclient_tensor_role r)
{
    return (unsigned)r < sizeof role_names / sizeof role_names[0] ? role_names[r] : "?";
}

static int role(ctx *c, const yaml_node_t *n, memclient_tensor_role *out)
{
    const char *s;
    int rc = scalar(c, n, "role", &s);
    if (rc < 0)
        return rc;
    for (int i = 0; i <= MEMCLIENT_TENSOR_INOUT; i++) {
        if (!strcmp(s, role_names[i])) {
            *out = (memclient_tensor_role)i;
            return 0;
        }
    }
    if (!strcmp(s, "constant")) {
        *out = MEMCLIENT_TENSOR_WEIGHT;
        return 0;
    }
    return errat(c, n, "role: '%s' is not activation, weight, input, output or inout", s);
}

/* Checks a mapping's keys against the allowed ones (each at most once). */
static int keys(ctx *c, const yaml_node_t *map, const char *what, const char *const *allowed,
                size_t nallowed, const yaml_node_t **vals)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return errat(c, map, "%s: expected a mapping of keys to values", what);
    for (size_t i = 0; i < nallowed; i++)
        vals[i] = NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = node(c, p->key);
        const char *ks;
        int rc = scalar(c, k, "key", &ks);
        if (rc < 0)
            return rc;
        size_t i = 0;
        while (i < nallowed && strcmp(ks, allowed[i]))
            i++;
        if (i == nallowed) {
            char list[256] = "";
            for (size_t j = 0; j < nallowed; j++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "",
                         allowed[j]);
            return errat(c, k, "%s: unknown key '%s' (known: %s)", what, ks, list);
        }
        if (vals[i])
            return errat(c, k, "%s: key '%s' given twice", what, ks);
        vals[i] = node(c, p->value);
    }
    return 0;
}

/* Tensor names, sorted, for lookups by name. */
typedef struct name_ix {
    const char *name;
    uint32_t idx;
} name_ix;

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const name_ix *)a)->name, ((const name_ix *)b)->name);
}

static int lookup(ctx *c, const name_ix *ix, size_t n, const yaml_node_t *ref, const char *what,
                  uint32_t *out)
{
    const char *s;
    int rc = scalar(c, ref, what, &s);
    if (rc < 0)
        return rc;
    name_ix key = {.name = s};
    const name_ix *hit = bsearch(&key, ix, n, sizeof *ix, cmp_name);
    if (!hit)
        return errat(c, ref, "%s: no tensor named '%s' (declare it under tensors)", what, s);
    *out = hit->idx;
    return 0;
}

static bool default_inplace(const char *type)
{
    static const char *const t[] = {"reshape", "view", "squeeze", "unsqueeze", "flatten",
                                    "expand_dims", "bitcast"};
    for (size_t i = 0; type && i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(type, t[i]))
            return true;
    return false;
}

static char *str_dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

enum { T_NAME, T_ROLE, T_SIZE, T_SHAPE, T_DTYPE, T_ALIGN, T_ALIGNMENT, T_NKEYS };
static const char *const tensor_keys[] = {"name", "role", "size", "shape", "dtype", "align",
                                          "alignment"};

static int tensor(ctx *c, const yaml_node_t *n, size_t i, uint64_t def_align,
                  memclient_tensor_desc *t)
{
    const yaml_node_t *v[T_NKEYS];
    char what[48];
    snprintf(what, sizeof what, "tensor %zu", i);
    int rc = keys(c, n, what, tensor_keys, T_NKEYS, v);
    if (rc < 0)
        return rc;
    const char *s;
    if (!v[T_NAME])
        return errat(c, n, "%s: needs a name", what);
    if ((rc = scalar(c, v[T_NAME], "name", &s)) < 0)
        return rc;
    if (!*s)
        return errat(c, v[T_NAME], "name: empty");
    if (!(t->name = str_dup(s)))
        return -ENOMEM;
    t->role = MEMCLIENT_TENSOR_ACTIVATION;
    if (v[T_ROLE] && (rc = role(c, v[T_ROLE], &t->role)) < 0)
        return rc;
    if (v[T_ALIGN] && v[T_ALIGNMENT])
        return errat(c, v[T_ALIGNMENT], "%s: align and alignment are the same key", t->name);
    const yaml_node_t *al = v[T_ALIGN] ? v[T_ALIGN] : v[T_ALIGNMENT];
    t->alignment = def_align;
    if (al && (rc = alignment(c, al, "align", &t->alignment)) < 0)
        return rc;
    if (v[T_SIZE]) {
        if (v[T_SHAPE] || v[T_DTYPE])
            return errat(c, v[T_SIZE], "tensor '%s': give size, or shape and dtype, not both",
                         t->name);
        if ((rc = number(c, v[T_SIZE], "size", true, UINT64_MAX, &t->bytes)) < 0)
            return rc;
        if (t->bytes == 0)
            return errat(c, v[T_SIZE], "tensor '%s': size 0", t->name);
        t->dtype = MEMD_DTYPE_NONE;
        return 0;
    }
    if (!v[T_SHAPE] || !v[T_DTYPE])
        return errat(c, n, "tensor '%s': needs size, or shape and dtype", t->name);
    if ((rc = scalar(c, v[T_DTYPE], "dtype", &s)) < 0)
        return rc;
    if (memclient_dtype_parse(s, &t->dtype) < 0 || t->dtype == MEMD_DTYPE_NONE)
        return errat(c, v[T_DTYPE], "dtype: '%s' is not one of u8 i8 u16 i16 f16 bf16 u32 i32 "
                     "f32 u64 i64 f64", s);
    const yaml_node_t *sh = v[T_SHAPE];
    if (sh->type != YAML_SEQUENCE_NODE || seq_len(sh) == 0 || seq_len(sh) > MEMD_MAX_DIMS)
        return errat(c, sh, "shape: expected a list of 1..%d dimensions", MEMD_MAX_DIMS);
    t->ndim = (uint32_t)seq_len(sh);
    for (uint32_t d = 0; d < t->ndim; d++) {
        const yaml_node_t *dn = node(c, sh->data.sequence.items.start[d]);
        if ((rc = number(c, dn, "shape", false, UINT64_MAX, &t->shape[d])) < 0)
            return rc;
        if (t->shape[d] == 0)
            return errat(c, dn, "shape: dimension %u is 0", d);
    }
    return 0;
}

enum { O_NAME, O_TYPE, O_INPUTS, O_OUTPUTS, O_INPLACE, O_NKEYS };
static const char *const op_keys[] = {"name", "type", "inputs", "outputs", "inplace"};

static int refs(ctx *c, const yaml_node_t *n, const char *what, const name_ix *ix, size_t nt,
                uint32_t *dst, uint32_t *count)
{
    *count = 0;
    if (!n)
        return 0;
    if (n->type != YAML_SEQUENCE_NODE)
        return errat(c, n, "%s: expected a list of tensor names", what);
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        int rc = lookup(c, ix, nt, node(c, *it), what, &dst[*count]);
        if (rc < 0)
            return rc;
        (*count)++;
    }
    return 0;
}

enum { R_MODEL, R_DEVICE, R_SCOPE, R_CODE, R_ALIGNMENT, R_TENSORS, R_OPS, R_PAGE, R_NKEYS };
static const char *const root_keys[] = {"model", "device", "scope", "code", "alignment",
                                        "tensors", "ops", "page_size"};

/* model, device, scope, code, page size and the default alignment. */
static int header(ctx *c, const yaml_node_t *root, const yaml_node_t *const *v,
                  memd_model_yaml *m, uint64_t *def_align)
{
    memclient_model_desc *d = &m->desc;
    const char *s;
    int rc;
    if (!v[R_MODEL])
        return errat(c, root, "the description needs 'model: NAME'");
    if ((rc = scalar(c, v[R_MODEL], "model", &s)) < 0)
        return rc;
    size_t sl = strlen(s);
    if (sl == 0 || sl > MEMD_MODEL_NAME_MAX)
        return errat(c, v[R_MODEL], "model: the name has 1..%d characters", MEMD_MODEL_NAME_MAX);
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return errat(c, v[R_MODEL], "model: '%s' may only use A-Z a-z 0-9 . _ -", s);
    if (!(d->name = str_dup(s)))
        return -ENOMEM;
    uint64_t u;
    if (v[R_DEVICE]) {
        if ((rc = number(c, v[R_DEVICE], "device", false, UINT32_MAX - 1, &u)) < 0)
            return rc;
        d->device = (uint32_t)u;
        m->has_device = true;
    }
    d->scope = MEMD_SCOPE_DRAM;
    if (v[R_SCOPE]) {
        if ((rc = scalar(c, v[R_SCOPE], "scope", &s)) < 0)
            return rc;
        if (memclient_scope_parse(s, &d->scope) < 0 || d->scope == MEMD_SCOPE_DRAM_TEXTURE)
            return errat(c, v[R_SCOPE], "scope: '%s' is not dram (global) or sram (l1)", s);
    }
    if (v[R_CODE] && (rc = number(c, v[R_CODE], "code", true, UINT64_MAX, &d->code_bytes)) < 0)
        return rc;
    /* page_size: 0 is one page; absent, the device's default (desc.page_size 0). */
    if (v[R_PAGE]) {
        if ((rc = number(c, v[R_PAGE], "page_size", true, 1ull << 62, &u)) < 0)
            return rc;
        if (u & (u - 1))
            return errat(c, v[R_PAGE], "page_size: %llu is not a power of two (0: one page)",
                         (unsigned long long)u);
        d->page_size = u ? u : MEMCLIENT_MODEL_ONE_PAGE;
    }
    *def_align = 0;
    if (v[R_ALIGNMENT] && (rc = alignment(c, v[R_ALIGNMENT], "alignment", def_align)) < 0)
        return rc;
    return 0;
}

/* The graph's nodes while it is built: where each tensor and op was written (errors
 * point there) and the tensor names, sorted. */
typedef struct graph {
    const yaml_node_t **tnodes, **onodes;
    name_ix *ix;
    size_t nt, no;
} graph;

/* Every tensor, then the name index; a name declared twice is reported at the later one. */
static int tensors(ctx *c, const yaml_node_t *tn, uint64_t def_align, memd_model_yaml *m,
                   graph *g)
{
    for (size_t i = 0; i < g->nt; i++) {
        g->tnodes[i] = node(c, tn->data.sequence.items.start[i]);
        int rc = tensor(c, g->tnodes[i], i, def_align, &m->tensors[i]);
        if (rc < 0)
            return rc;
        g->ix[i] = (name_ix){.name = m->tensors[i].name, .idx = (uint32_t)i};
    }
    qsort(g->ix, g->nt, sizeof *g->ix, cmp_name);
    for (size_t i = 1; i < g->nt; i++) {
        if (!strcmp(g->ix[i - 1].name, g->ix[i].name)) {
            uint32_t later = g->ix[i - 1].idx > g->ix[i].idx ? g->ix[i - 1].idx : g->ix[i].idx;
            return errat(c, g->tnodes[later], "tensor '%s' is declared twice", g->ix[i].name);
        }
    }
    return 0;
}

/* Checks every op's keys and counts its tensor references, so one array holds them all. */
static int count_refs(ctx *c, const yaml_node_t *on, graph *g, size_t *nrefs)
{
    const yaml_node_t *ov[O_NKEYS];
    *nrefs = 0;
    for (size_t k = 0; k < g->no; k++) {
        g->onodes[k] = node(c, on->data.sequence.items.start[k]);
        char what[32];
        snprintf(what, sizeof what, "op %zu", k);
        int rc = keys(c, g->onodes[k], what, op_keys, O_NKEYS, ov);
        if (rc < 0)
            return rc;
        if (ov[O_INPUTS] && ov[O_INPUTS]->type == YAML_SEQUENCE_NODE)
            *nrefs += seq_len(ov[O_INPUTS]);
        if (ov[O_OUTPUTS] && ov[O_OUTPUTS]->type == YAML_SEQUENCE_NODE)
            *nrefs += seq_len(ov[O_OUTPUTS]);
        if (*nrefs > MAX_REFS)
            return errat(c, g->onodes[k], "ops: more than %u tensor references in all", MAX_REFS);
    }
    return 0;
}

/* Op k (keys checked by count_refs); its inputs and outputs go to *next onwards. */
static int parse_op(ctx *c, const graph *g, size_t k, memclient_op_desc *op, uint32_t **next)
{
    const yaml_node_t *ov[O_NKEYS];
    (void)keys(c, g->onodes[k], "op", op_keys, O_NKEYS, ov);
    const char *s, *type = NULL;
    int rc;
    if (ov[O_NAME]) {
        if ((rc = scalar(c, ov[O_NAME], "name", &s)) < 0)
            return rc;
        if (!(op->name = str_dup(s)))
            return -ENOMEM;
    }
    if (ov[O_TYPE] && (rc = scalar(c, ov[O_TYPE], "type", &type)) < 0)
        return rc;
    op->inplace = default_inplace(type);
    if (ov[O_INPLACE] && (rc = boolean(c, ov[O_INPLACE], "inplace", &op->inplace)) < 0)
        return rc;
    op->inputs = *next;
    if ((rc = refs(c, ov[O_INPUTS], "inputs", g->ix, g->nt, *next, &op->ninputs)) < 0)
        return rc;
    *next += op->ninputs;
    op->outputs = *next;
    if ((rc = refs(c, ov[O_OUTPUTS], "outputs", g->ix, g->nt, *next, &op->noutputs)) < 0)
        return rc;
    *next += op->noutputs;
    if (op->noutputs == 0)
        return errat(c, g->onodes[k], "op %zu%s%s%s: writes no tensor (outputs: [...])", k,
                     op->name ? " '" : "", op->name ? op->name : "", op->name ? "'" : "");
    return 0;
}

static int ops(ctx *c, const yaml_node_t *on, graph *g, memd_model_yaml *m)
{
    size_t nrefs;
    int rc = count_refs(c, on, g, &nrefs);
    if (rc < 0)
        return rc;
    if (!(m->idx = calloc(nrefs ? nrefs : 1, sizeof *m->idx)))
        return -ENOMEM;
    uint32_t *next = m->idx;
    for (size_t k = 0; k < g->no; k++)
        if ((rc = parse_op(c, g, k, &m->ops[k], &next)) < 0)
            return rc;
    return 0;
}

/* Lifetimes and aliases, with a graph error reported at its op or tensor. */
static int lifetimes(ctx *c, const yaml_node_t *root, const graph *g, memd_model_yaml *m)
{
    if (!(m->life = calloc(g->nt, sizeof *m->life)))
        return -ENOMEM;
    memclient_model_error me;
    if (memclient_model_lifetimes(&m->desc, m->life, &me) == 0)
        return 0;
    const yaml_node_t *at = me.op < g->no ? g->onodes[me.op]
                            : me.tensor < g->nt ? g->tnodes[me.tensor] : root;
    return errat(c, at, "%s", me.message);
}

static int build(ctx *c, const yaml_node_t *root, memd_model_yaml *m)
{
    const yaml_node_t *v[R_NKEYS];
    uint64_t def_align;
    int rc = keys(c, root, "model description", root_keys, R_NKEYS, v);
    if (rc < 0 || (rc = header(c, root, v, m, &def_align)) < 0)
        return rc;
    const yaml_node_t *tn = v[R_TENSORS], *on = v[R_OPS];
    if (!tn || tn->type != YAML_SEQUENCE_NODE || seq_len(tn) == 0)
        return errat(c, tn ? tn : root, "tensors: expected a non-empty list");
    if (!on || on->type != YAML_SEQUENCE_NODE)
        return errat(c, on ? on : root, "ops: expected a list (in execution order)");
    graph g = {.nt = seq_len(tn), .no = seq_len(on)};
    if (g.nt > MEMD_MODEL_MAX_TENSORS)
        return errat(c, tn, "tensors: %zu of them, at most %u", g.nt, MEMD_MODEL_MAX_TENSORS);
    if (g.no >= UINT32_MAX)
        return errat(c, on, "ops: too many");

    m->tensors = calloc(g.nt, sizeof *m->tensors);
    m->ops = calloc(g.no ? g.no : 1, sizeof *m->ops);
    g.ix = calloc(g.nt, sizeof *g.ix);
    g.tnodes = calloc(g.nt, sizeof *g.tnodes);
    g.onodes = calloc(g.no ? g.no : 1, sizeof *g.onodes);
    if (!m->tensors || !m->ops || !g.ix || !g.tnodes || !g.onodes) {
        rc = -ENOMEM;
    } else {
        m->desc.tensors = m->tensors;
        m->desc.ntensors = g.nt;
        m->desc.ops = m->ops;
        m->desc.nops = g.no;
        if ((rc = tensors(c, tn, def_align, m, &g)) == 0 && (rc = ops(c, on, &g, m)) == 0)
            rc = lifetimes(c, root, &g, m);
    }
    free(g.ix);
    free(g.tnodes);
    free(g.onodes);
    return rc;
}

void memd_model_yaml_free(memd_model_yaml *m)
{
    if (!m)
        return;
    for (size_t i = 0; m->tensors && i < m->desc.ntensors; i++)
        free((char *)m->tensors[i].name);
    for (size_t k = 0; m->ops && k < m->desc.nops; k++)
        free((char *)m->ops[k].name);
    free((char *)m->desc.name);
    free(m->tensors);
    free(m->ops);
    free(m->life);
    free(m->idx);
    memset(m, 0, sizeof *m);
}

static int parser_error(ctx *c, const yaml_parser_t *p)
{
    if (p->error == YAML_MEMORY_ERROR)
        return -ENOMEM;
    memd_error_at(c->err, c->file, (unsigned)p->problem_mark.line + 1,
                  (unsigned)p->problem_mark.column + 1);
    return memd_error_set(c->err, -EINVAL, "%s%s%s", p->problem ? p->problem : "YAML syntax error",
                          p->context ? " " : "", p->context ? p->context : "");
}

int memd_model_yaml_parse(const char *name, const char *buf, size_t len, memd_model_yaml *out,
                          memd_error *err)
{
    memset(out, 0, sizeof *out);
    ctx c = {.file = name ? name : "<model>", .err = err};
    yaml_parser_t p;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&p))
        return -ENOMEM;
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
    if (!yaml_parser_load(&p, &doc)) {
        int rc = parser_error(&c, &p);
        yaml_parser_delete(&p);
        return rc;
    }
    c.doc = &doc;
    int rc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        rc = errat(&c, NULL, "empty document: expected a model description");
    } else {
        rc = build(&c, root, out);
        if (rc == 0) {
            /* One description per file: a second document is a mistake, not ignored. */
            yaml_document_t doc2;
            if (!yaml_parser_load(&p, &doc2)) {
                rc = parser_error(&c, &p);
            } else {
                yaml_node_t *r2 = yaml_document_get_root_node(&doc2);
                if (r2)
                    rc = errat(&c, r2, "a second YAML document: one model per file");
                yaml_document_delete(&doc2);
            }
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    if (rc < 0) {
        if (rc == -ENOMEM)
            memd_error_set(memd_error_at(err, c.file, 0, 0), rc, "out of memory");
        memd_model_yaml_free(out);
    }
    return rc;
}

int memd_model_yaml_read(const char *path, memd_model_yaml *out, memd_error *err)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return memd_error_set(memd_error_at(err, path, 0, 0), -e, "%s", strerror(e));
    }
    struct stat sb;
    int e = fstat(fd, &sb) < 0 ? errno : !S_ISREG(sb.st_mode) ? EINVAL
                                       : sb.st_size > (off_t)MAX_FILE ? EFBIG : 0;
    if (e) {
        close(fd);
        return memd_error_set(memd_error_at(err, path, 0, 0), -e,
                              "not a readable regular file of at most %u bytes (%s)", MAX_FILE,
                              strerror(e));
    }
    size_t len = (size_t)sb.st_size;
    char *buf = malloc(len ? len : 1);
    if (!buf) {
        close(fd);
        return memd_error_set(memd_error_at(err, path, 0, 0), -ENOMEM, "out of memory");
    }
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            e = r < 0 ? errno : EIO;
            free(buf);
            close(fd);
            return memd_error_set(memd_error_at(err, path, 0, 0), -e, "%s", strerror(e));
        }
        got += (size_t)r;
    }
    close(fd);
    int rc = memd_model_yaml_parse(path, buf, len, out, err);
    free(buf);
    return rc;
}
