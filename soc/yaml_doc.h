/* memd soc — a small YAML node tree that keeps every node's line and column, so the
 * loaders can walk a document and point at the exact place of each error.
 *
 * Built from libyaml's event stream: one document, no aliases (nothing memd or tt-metal
 * writes needs them, and refusing them keeps walking linear), scalar keys only, and
 * duplicate keys rejected where they occur. */
#ifndef MEMD_SOC_YAML_DOC_H
#define MEMD_SOC_YAML_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define MEMD_YAML_MAX_DEPTH 64

typedef enum memd_ytype {
    MEMD_Y_SCALAR,
    MEMD_Y_SEQ,
    MEMD_Y_MAP,
} memd_ytype;

typedef struct memd_ynode memd_ynode;
struct memd_ynode {
    memd_ytype type;
    unsigned line, col;  /* 1-based start of the node */
    char *str;           /* scalar: NUL-terminated copy of the value */
    size_t len;          /* scalar: length of str (it may contain NUL bytes) */
    bool quoted;         /* scalar: written quoted rather than plain */
    size_t n;            /* seq: items; map: key/value pairs */
    size_t cap;
    bool key_pending;    /* map under construction: a key waits for its value */
    memd_ynode **items;  /* seq: n items; map: 2n nodes, key then value */
};

/* Parses buf (not NUL-terminated). The root may be any node type; an empty document
 * gives an error. name is the file name used in errors. */
int memd_yaml_parse(const char *name, const char *buf, size_t len, memd_ynode **root,
                    memd_error *err);
void memd_yaml_free(memd_ynode *n);

/* Map access: value of key (NULL if absent); i-th key / value. */
const memd_ynode *memd_yaml_get(const memd_ynode *map, const char *key);
static inline const memd_ynode *memd_yaml_key(const memd_ynode *map, size_t i)
{
    return map->items[2 * i];
}
static inline const memd_ynode *memd_yaml_val(const memd_ynode *map, size_t i)
{
    return map->items[2 * i + 1];
}

/* Sets err to "file:line:col: message" at node n (n may be NULL: no position). */
int memd_yaml_error(memd_error *err, const char *file, const memd_ynode *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Fails unless n is a map whose keys are all in the NULL-terminated list `allowed`
 * (what: "device descriptor", used in the message). */
int memd_yaml_check_keys(const char *file, const memd_ynode *map, const char *what,
                         const char *const *allowed, memd_error *err);

/* Type checks with "expected <what>" messages. */
int memd_yaml_expect_map(const char *file, const memd_ynode *n, const char *what, memd_error *err);
int memd_yaml_expect_seq(const char *file, const memd_ynode *n, const char *what, memd_error *err);

/* Scalars. All return 0 or -EINVAL with err set at the node.
 * size: decimal or 0x-hex integer with an optional binary suffix B, K/KiB, M/MiB, G/GiB,
 *       T/TiB (all powers of 1024), e.g. 4096, 0x1000, 64KiB, 1 GiB.
 * ssize: a size with an optional leading '-'.
 * uint: decimal or 0x-hex integer without suffix, at most max.
 * int: uint with an optional leading '-', within int64.
 * string: any non-empty scalar up to cap - 1 bytes without NUL bytes.
 * name: 1..63 of [A-Za-z0-9._-]. */
int memd_yaml_size(const char *file, const memd_ynode *n, uint64_t *out, memd_error *err);
int memd_yaml_ssize(const char *file, const memd_ynode *n, int64_t *out, memd_error *err);
int memd_yaml_uint(const char *file, const memd_ynode *n, uint64_t max, uint64_t *out,
                   memd_error *err);
int memd_yaml_int(const char *file, const memd_ynode *n, int64_t *out, memd_error *err);
int memd_yaml_bool(const char *file, const memd_ynode *n, bool *out, memd_error *err);
int memd_yaml_string(const char *file, const memd_ynode *n, char *buf, size_t cap,
                     memd_error *err);
int memd_yaml_name(const char *file, const memd_ynode *n, char *buf, size_t cap,
                   memd_error *err);

#endif
