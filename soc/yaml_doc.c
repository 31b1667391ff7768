/* memd soc — YAML text -> node tree with positions (see yaml_doc.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "yaml_doc.h"

static void verror_at(memd_error *err, const char *file, unsigned line, unsigned col,
                      const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
static void verror_at(memd_error *err, const char *file, unsigned line, unsigned col,
                      const char *fmt, va_list ap)
{
    if (err)
        memd_error_vset(memd_error_at(err, file, line, col), -EINVAL, fmt, ap);
}

static int error_at(memd_error *err, const char *file, unsigned line, unsigned col,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int error_at(memd_error *err, const char *file, unsigned line, unsigned col,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror_at(err, file, line, col, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

int memd_yaml_error(memd_error *err, const char *file, const memd_ynode *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror_at(err, file, n ? n->line : 0, n ? n->col : 0, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

void memd_yaml_free(memd_ynode *n)
{
    if (!n)
        return;
    size_t cnt = n->type == MEMD_Y_MAP ? 2 * n->n + n->key_pending : n->n;
    for (size_t i = 0; i < cnt; i++)
        memd_yaml_free(n->items[i]);
    free(n->items);
    free(n->str);
    free(n);
}

/* ---- building the tree from events ---- */

typedef struct builder {
    const char *file;
    memd_error *err;
    memd_ynode *root;
    memd_ynode *stack[MEMD_YAML_MAX_DEPTH];
    int depth;
    int documents;
} builder;

static memd_ynode *new_node(memd_ytype t, yaml_mark_t m)
{
    memd_ynode *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    n->type = t;
    n->line = (unsigned)m.line + 1;
    n->col = (unsigned)m.column + 1;
    return n;
}

/* Adds child to the node on top of the stack (or makes it the root). Maps collect
 * key, value, key, value...: an odd count means a key waits for its value. */
static int attach(builder *b, memd_ynode *child)
{
    if (b->depth == 0) {
        if (b->root) {
            memd_yaml_free(child);
            return error_at(b->err, b->file, child->line, child->col,
                            "expected a single YAML document");
        }
        b->root = child;
        return 0;
    }
    memd_ynode *p = b->stack[b->depth - 1];
    /* p->n counts complete pairs for maps; a pending key is the extra item. */
    size_t used = p->type == MEMD_Y_MAP ? 2 * p->n + p->key_pending : p->n;
    if (p->type == MEMD_Y_MAP && !p->key_pending) {
        /* child is a key */
        if (child->type != MEMD_Y_SCALAR) {
            int rc = error_at(b->err, b->file, child->line, child->col,
                              "expected a scalar mapping key, got a %s",
                              child->type == MEMD_Y_MAP ? "mapping" : "sequence");
            memd_yaml_free(child);
            return rc;
        }
        for (size_t i = 0; i < p->n; i++) {
            const memd_ynode *k = p->items[2 * i];
            if (k->len == child->len && memcmp(k->str, child->str, k->len) == 0) {
                int rc = error_at(b->err, b->file, child->line, child->col,
                                  "duplicate key '%s' (first at line %u, column %u)",
                                  child->str, k->line, k->col);
                memd_yaml_free(child);
                return rc;
            }
        }
    }
    if (used == p->cap) {
        size_t nc = p->cap ? 2 * p->cap : 8;
        memd_ynode **ni = realloc(p->items, nc * sizeof(*ni));
        if (!ni) {
            memd_yaml_free(child);
            return error_at(b->err, b->file, child->line, child->col, "out of memory");
        }
        p->items = ni;
        p->cap = nc;
    }
    p->items[used] = child;
    if (p->type == MEMD_Y_MAP) {
        if (p->key_pending)
            p->n++;
        p->key_pending = !p->key_pending;
    } else {
        p->n++;
    }
    return 0;
}

static int on_event(builder *b, const yaml_event_t *ev)
{
    memd_ynode *n;
    int rc;
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++b->documents > 1)
            return error_at(b->err, b->file, (unsigned)ev->start_mark.line + 1,
                            (unsigned)ev->start_mark.column + 1,
                            "expected a single YAML document");
        return 0;
    case YAML_ALIAS_EVENT:
        return error_at(b->err, b->file, (unsigned)ev->start_mark.line + 1,
                        (unsigned)ev->start_mark.column + 1,
                        "YAML aliases (*%s) are not supported", (const char *)ev->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        n = new_node(MEMD_Y_SCALAR, ev->start_mark);
        if (n)
            n->str = malloc(ev->data.scalar.length + 1);
        if (!n || !n->str) {
            memd_yaml_free(n);
            return error_at(b->err, b->file, 0, 0, "out of memory");
        }
        memcpy(n->str, ev->data.scalar.value, ev->data.scalar.length);
        n->str[ev->data.scalar.length] = '\0';
        n->len = ev->data.scalar.length;
        n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        return attach(b, n);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if (b->depth == MEMD_YAML_MAX_DEPTH)
            return error_at(b->err, b->file, (unsigned)ev->start_mark.line + 1,
                            (unsigned)ev->start_mark.column + 1,
                            "nesting deeper than %d levels", MEMD_YAML_MAX_DEPTH);
        n = new_node(ev->type == YAML_MAPPING_START_EVENT ? MEMD_Y_MAP : MEMD_Y_SEQ,
                     ev->start_mark);
        if (!n)
            return error_at(b->err, b->file, 0, 0, "out of memory");
        rc = attach(b, n);
        if (rc)
            return rc;
        b->stack[b->depth++] = n;
        return 0;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (b->depth > 0)
            b->depth--;
        return 0;
    default:
        return 0;
    }
}

/* libyaml puts "end of input" on a line of its own even when the text does not end
 * with a newline; point just past the last character instead, where the text stops. */
static void end_position(const char *buf, size_t len, unsigned *line, unsigned *col)
{
    unsigned l = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\n') {
            l++;
            line_start = i + 1;
        }
    *line = l;
    *col = (unsigned)(len - line_start) + 1;
}

int memd_yaml_parse(const char *name, const char *buf, size_t len, memd_ynode **root,
                    memd_error *err)
{
    *root = NULL;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return error_at(err, name, 0, 0, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);

    builder b;
    memset(&b, 0, sizeof(b));
    b.file = name;
    b.err = err;
    int rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            const char *what = parser.problem ? parser.problem : "malformed YAML";
            unsigned line = (unsigned)parser.problem_mark.line + 1;
            unsigned col = (unsigned)parser.problem_mark.column + 1;
            if (parser.problem_mark.index >= len)
                end_position(buf, len, &line, &col);
            if (parser.context)
                rc = error_at(err, name, line, col, "invalid YAML: %s %s", parser.context, what);
            else
                rc = error_at(err, name, line, col, "invalid YAML: %s", what);
            break;
        }
        bool done = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(&b, &ev);
        yaml_event_delete(&ev);
        if (rc || done)
            break;
    }
    yaml_parser_delete(&parser);
    if (rc == 0 && !b.root)
        rc = error_at(err, name, 1, 1, "the file is empty: expected a YAML mapping");
    if (rc) {
        memd_yaml_free(b.root);
        return rc;
    }
    *root = b.root;
    return 0;
}
