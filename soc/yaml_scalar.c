/* memd soc — typed access to YAML nodes: maps, sizes, integers, booleans, names.
 * Every failure says what was expected and what was found, at the node's position. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "text.h"
#include "units.h"
#include "yaml_doc.h"

static const char *type_name(const memd_ynode *n)
{
    switch (n->type) {
    case MEMD_Y_MAP:
        return "a mapping";
    case MEMD_Y_SEQ:
        return "a sequence";
    default:
        return n->len ? "a scalar" : "an empty value";
    }
}

const memd_ynode *memd_yaml_get(const memd_ynode *map, const char *key)
{
    if (!map || map->type != MEMD_Y_MAP)
        return NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < map->n; i++) {
        const memd_ynode *k = memd_yaml_key(map, i);
        if (k->len == kl && memcmp(k->str, key, kl) == 0)
            return memd_yaml_val(map, i);
    }
    return NULL;
}

int memd_yaml_expect_map(const char *file, const memd_ynode *n, const char *what, memd_error *err)
{
    if (n->type == MEMD_Y_MAP)
        return 0;
    return memd_yaml_error(err, file, n, "expected %s (a mapping), got %s", what, type_name(n));
}

int memd_yaml_expect_seq(const char *file, const memd_ynode *n, const char *what, memd_error *err)
{
    if (n->type == MEMD_Y_SEQ)
        return 0;
    return memd_yaml_error(err, file, n, "expected %s (a sequence), got %s", what, type_name(n));
}

int memd_yaml_check_keys(const char *file, const memd_ynode *map, const char *what,
                         const char *const *allowed, memd_error *err)
{
    int rc = memd_yaml_expect_map(file, map, what, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < map->n; i++) {
        const memd_ynode *k = memd_yaml_key(map, i);
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strlen(*a) == k->len && memcmp(*a, k->str, k->len) == 0;
        if (ok)
            continue;
        char list[256] = "";
        size_t used = 0;
        for (const char *const *a = allowed; *a; a++) {
            int w = snprintf(list + used, sizeof(list) - used, "%s%s", a == allowed ? "" : ", ", *a);
            if (w < 0 || (size_t)w >= sizeof(list) - used)
                break;
            used += (size_t)w;
        }
        return memd_yaml_error(err, file, k, "unknown key '%s' in %s; expected one of: %s",
                               k->str, what, list);
    }
    return 0;
}

/* A scalar as text, for messages: shortened and without control characters. */
static const char *shown(const memd_ynode *n, char *buf, size_t cap)
{
    size_t j = 0;
    for (size_t i = 0; i < n->len && j + 4 < cap; i++) {
        unsigned char c = (unsigned char)n->str[i];
        buf[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (j + 4 >= cap && n->len > j)
        buf[j++] = '.', buf[j++] = '.', buf[j++] = '.';
    buf[j] = '\0';
    return buf;
}

static int expect_scalar(const char *file, const memd_ynode *n, const char *what, memd_error *err)
{
    if (n->type == MEMD_Y_SCALAR && n->len > 0)
        return 0;
    return memd_yaml_error(err, file, n, "expected %s, got %s", what, type_name(n));
}

#define SIZE_EXPECTED "a size (an integer such as 4096 or 0x1000, optionally with a suffix " \
                      "B, KiB, MiB, GiB, TiB or K, M, G, T)"

/* neg_ok: accept a leading '-' (returned in *neg). */
static int parse_size(const char *file, const memd_ynode *n, bool neg_ok, bool *neg,
                      uint64_t *out, memd_error *err)
{
    char buf[48];
    int rc = expect_scalar(file, n, SIZE_EXPECTED, err);
    if (rc)
        return rc;
    if (strlen(n->str) != n->len)
        return memd_yaml_error(err, file, n, "expected " SIZE_EXPECTED ", got a value with a NUL byte");
    const char *p = n->str;
    *neg = false;
    if (*p == '-') {
        if (!neg_ok)
            return memd_yaml_error(err, file, n, "expected a non-negative size, got '%s'",
                                   shown(n, buf, sizeof(buf)));
        *neg = true;
        p++;
    }
    const char *bad_suffix = NULL;
    rc = memd_parse_size(p, out, &bad_suffix);
    if (rc == -EINVAL)
        return memd_yaml_error(err, file, n, "expected " SIZE_EXPECTED ", got '%s'",
                               shown(n, buf, sizeof(buf)));
    if (rc == -ENOENT)
        return memd_yaml_error(err, file, n,
                               "expected " SIZE_EXPECTED ", got '%s' (unknown suffix '%s')",
                               shown(n, buf, sizeof(buf)), bad_suffix);
    if (rc == -ERANGE)
        return memd_yaml_error(err, file, n, "size '%s' does not fit in 64 bits",
                               shown(n, buf, sizeof(buf)));
    return 0;
}

int memd_yaml_size(const char *file, const memd_ynode *n, uint64_t *out, memd_error *err)
{
    bool neg = false;
    return parse_size(file, n, false, &neg, out, err);
}

int memd_yaml_ssize(const char *file, const memd_ynode *n, int64_t *out, memd_error *err)
{
    bool neg = false;
    uint64_t v;
    char buf[48];
    int rc = parse_size(file, n, true, &neg, &v, err);
    if (rc)
        return rc;
    if (v > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
        return memd_yaml_error(err, file, n, "size '%s' does not fit in a signed 64-bit offset",
                               shown(n, buf, sizeof(buf)));
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

static int parse_int(const char *file, const memd_ynode *n, bool neg_ok, bool *neg,
                     uint64_t *out, memd_error *err)
{
    char buf[48];
    int rc = expect_scalar(file, n, "an integer", err);
    if (rc)
        return rc;
    const char *p = n->str;
    *neg = false;
    if (*p == '-') {
        if (!neg_ok)
            return memd_yaml_error(err, file, n, "expected a non-negative integer, got '%s'",
                                   shown(n, buf, sizeof(buf)));
        *neg = true;
        p++;
    }
    rc = memd_parse_digits(&p, out);
    if (rc == -EINVAL || (size_t)(p - n->str) != n->len)
        return memd_yaml_error(err, file, n, "expected an integer, got '%s'",
                               shown(n, buf, sizeof(buf)));
    if (rc == -ERANGE)
        return memd_yaml_error(err, file, n, "integer '%s' does not fit in 64 bits",
                               shown(n, buf, sizeof(buf)));
    return 0;
}

int memd_yaml_uint(const char *file, const memd_ynode *n, uint64_t max, uint64_t *out,
                   memd_error *err)
{
    bool neg = false;
    uint64_t v;
    char buf[48];
    int rc = parse_int(file, n, false, &neg, &v, err);
    if (rc)
        return rc;
    if (v > max)
        return memd_yaml_error(err, file, n, "integer '%s' is too large (at most %" PRIu64 ")",
                               shown(n, buf, sizeof(buf)), max);
    *out = v;
    return 0;
}

int memd_yaml_int(const char *file, const memd_ynode *n, int64_t *out, memd_error *err)
{
    bool neg = false;
    uint64_t v;
    char buf[48];
    int rc = parse_int(file, n, true, &neg, &v, err);
    if (rc)
        return rc;
    if (v > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
        return memd_yaml_error(err, file, n, "integer '%s' does not fit in 64 bits",
                               shown(n, buf, sizeof(buf)));
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

int memd_yaml_bool(const char *file, const memd_ynode *n, bool *out, memd_error *err)
{
    char buf[48];
    int rc = expect_scalar(file, n, "true or false", err);
    if (rc)
        return rc;
    if (strcmp(n->str, "true") == 0 && n->len == 4)
        *out = true;
    else if (strcmp(n->str, "false") == 0 && n->len == 5)
        *out = false;
    else
        return memd_yaml_error(err, file, n, "expected true or false, got '%s'",
                               shown(n, buf, sizeof(buf)));
    return 0;
}

int memd_yaml_string(const char *file, const memd_ynode *n, char *out, size_t cap,
                     memd_error *err)
{
    int rc = expect_scalar(file, n, "a string", err);
    if (rc)
        return rc;
    if (strlen(n->str) != n->len)
        return memd_yaml_error(err, file, n, "expected a string without NUL bytes");
    size_t at;
    const char *why;
    if (memd_text_check(n->str, &at, &why) < 0) /* e.g. "\e[2J" in double quotes */
        return memd_yaml_error(err, file, n, "byte %zu of the string is %s (0x%02x)", at, why,
                               (unsigned char)n->str[at]);
    if (n->len >= cap)
        return memd_yaml_error(err, file, n, "string is too long (%zu bytes, at most %zu)",
                               n->len, cap - 1);
    memcpy(out, n->str, n->len + 1);
    return 0;
}

int memd_yaml_name(const char *file, const memd_ynode *n, char *out, size_t cap,
                   memd_error *err)
{
    char buf[48];
    int rc = expect_scalar(file, n, "a name", err);
    if (rc)
        return rc;
    bool ok = n->len < cap && n->len < MEMD_NAME_MAX;
    for (size_t i = 0; ok && i < n->len; i++) {
        char c = n->str[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '_' || c == '-';
    }
    if (!ok)
        return memd_yaml_error(err, file, n,
                               "expected a name of 1 to %d letters, digits, '.', '_' or '-', got '%s'",
                               (int)(cap < MEMD_NAME_MAX ? cap - 1 : MEMD_NAME_MAX - 1),
                               shown(n, buf, sizeof(buf)));
    memcpy(out, n->str, n->len + 1);
    return 0;
}
