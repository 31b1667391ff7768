/* memd soc — one device entry of memd.yaml:
 *
 *   - id: N
 *     descriptor: PATH          memd's own format; `name`, `policy` and the groups' page
 *     dram: {page_size}         sizes may override it
 *     sram: {page_size}
 *   - id: N
 *     tt_metal: {soc_descriptor: PATH, core_descriptor: PATH, product: KEY, hw_cqs: N}
 *     dram: {alignment, page_size, regions}   sram: {reserved (required), alignment, page_size}
 *     name, arch, texture, policy
 *
 * Relative paths resolve against the config file's folder. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soc_internal.h"
#include "ttmetal.h"

/* A path value, resolved and read. Errors point at the value node in memd.yaml. */
static int read_named_file(const char *file, const memd_ynode *n, const memd_config_files *files,
                           char *path, size_t cap, char **buf, size_t *len, memd_error *err)
{
    char rel[PATH_MAX];
    int rc = memd_yaml_string(file, n, rel, sizeof(rel), err);
    if (rc)
        return rc;
    if (!files)
        return memd_yaml_error(err, file, n, "descriptor files cannot be read here");
    if (memd_soc_resolve(files->base_dir, rel, path, cap))
        return memd_yaml_error(err, file, n, "path '%s' is too long", rel);
    char msg[256];
    rc = files->read ? files->read(files->ctx, path, buf, len, msg, sizeof(msg))
                     : memd_soc_read_file(path, buf, len, msg, sizeof(msg));
    if (rc)
        return memd_yaml_error(err, file, n, "cannot read '%s': %s", path, msg);
    return 0;
}

/* The page_size of an entry's dram: and sram: settings over the built device's (the
 * spec's check sees them once the device is whole). */
static int group_pages(const char *file, const memd_ynode *entry, memd_device_spec *out,
                       memd_error *err)
{
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        const memd_ynode *g = memd_yaml_get(entry, memd_kind_name((memd_kind)k)), *v;
        int rc;
        if (g && (v = memd_yaml_get(g, "page_size")) &&
            (rc = memd_yaml_size(file, v, &out->groups[k].page_size, err)))
            return rc;
    }
    return 0;
}

static int descriptor_device(const char *file, const memd_ynode *entry,
                             const memd_config_files *files, memd_device_spec *out, memd_error *err)
{
    static const char *const keys[] = {"id", "name", "descriptor", "policy", "dram", "sram",
                                       NULL};
    static const char *const group_keys[] = {"page_size", NULL};
    int rc = memd_yaml_check_keys(file, entry, "a descriptor device", keys, err);
    if (rc)
        return rc;
    char path[PATH_MAX], *buf;
    size_t len;
    if ((rc = read_named_file(file, memd_yaml_get(entry, "descriptor"), files, path,
                              sizeof(path), &buf, &len, err)))
        return rc;
    rc = memd_soc_load_memd_device(path, buf, len, out, err);
    free(buf);
    if (rc)
        return rc;
    const memd_ynode *v;
    for (int k = 0; k < MEMD_KIND_COUNT; k++)
        if ((v = memd_yaml_get(entry, memd_kind_name((memd_kind)k))) &&
            (rc = memd_yaml_check_keys(file, v, "a descriptor device's bank group settings",
                                       group_keys, err)))
            return rc;
    if ((rc = group_pages(file, entry, out, err)))
        return rc;
    if ((v = memd_yaml_get(entry, "name")) && (rc = memd_yaml_name(file, v, out->name, sizeof(out->name), err)))
        return rc;
    if ((v = memd_yaml_get(entry, "policy")) && (rc = memd_soc_parse_policy(file, v, out, err)))
        return rc;
    return 0;
}

/* memd.yaml's side of a tt_metal entry: the options beside the two files. */
typedef struct ttmetal_entry {
    memd_ttmetal_opts o;
    char product[MEMD_NAME_MAX], arch[MEMD_NAME_MAX], name[MEMD_NAME_MAX];
    uint32_t *remap;            /* l1_bank_remap as a list, owned */
} ttmetal_entry;

/* l1_bank_remap names: tt-metal's own shuffle, what a runtime gets without passing a
 * remap to CreateDevice, depends on the C++ library tt-metal was built with (`default`
 * and `libstdc++` are GCC's, `libc++` is LLVM's); `identity` is scan order. */
static const struct {
    const char *name;
    int remap;
} remap_names[] = {
    {"default", MEMD_TTMETAL_REMAP_DEFAULT},
    {"libstdc++", MEMD_TTMETAL_REMAP_DEFAULT},
    {"libc++", MEMD_TTMETAL_REMAP_LIBCXX},
    {"identity", MEMD_TTMETAL_REMAP_IDENTITY},
};

/* l1_bank_remap: one of remap_names, or the list a runtime passes (bank id per scan
 * position). Whether the list fits the device is checked once it is built. */
static int ttmetal_remap(const char *file, const memd_ynode *v, ttmetal_entry *t, memd_error *err)
{
    t->o.remap_file = file;
    t->o.remap_node = v;
    for (size_t i = 0; v->type == MEMD_Y_SCALAR && i < sizeof remap_names / sizeof *remap_names; i++)
        if (!strcmp(v->str, remap_names[i].name)) {
            t->o.remap = remap_names[i].remap;
            return 0;
        }
    if (v->type != MEMD_Y_SEQ)
        return memd_yaml_error(err, file, v, "l1_bank_remap: expected default, libstdc++, libc++, "
                               "identity or a list of L1 bank ids (one per bank, in tt-metal's "
                               "scan order)");
    if (v->n == 0 || v->n > MEMD_MAX_BANKS)
        return memd_yaml_error(err, file, v, "l1_bank_remap: expected 1 to %u bank ids, got %zu",
                               MEMD_MAX_BANKS, v->n);
    if (!(t->remap = malloc(sizeof(uint32_t) * v->n)))
        return memd_yaml_error(err, file, v, "out of memory");
    for (size_t i = 0; i < v->n; i++) {
        uint64_t id;
        int rc = memd_yaml_uint(file, v->items[i], MEMD_MAX_BANKS - 1, &id, err);
        if (rc)
            return rc;
        t->remap[i] = (uint32_t)id;
    }
    t->o.remap = MEMD_TTMETAL_REMAP_LIST;
    t->o.remap_list = t->remap;
    t->o.nremap = (uint32_t)v->n;
    return 0;
}

/* tt_metal: {soc_descriptor, core_descriptor, product, hw_cqs}: all four required. */
static int ttmetal_keys(const char *file, const memd_ynode *tt, ttmetal_entry *t, memd_error *err)
{
    static const char *const keys[] = {"soc_descriptor", "core_descriptor", "product", "hw_cqs",
                                       "l1_bank_remap", NULL};
    int rc = memd_yaml_check_keys(file, tt, "tt_metal", keys, err);
    if (rc)
        return rc;
    for (int i = 0; i < 4; i++)
        if (!memd_yaml_get(tt, keys[i]))
            return memd_yaml_error(err, file, tt, "missing key '%s' in tt_metal: expected %s", keys[i],
                                   i < 2 ? "a path" : i == 2 ? "the product key of the core descriptor (e.g. E150, galaxy)"
                                                             : "the number of hardware command queues");
    if ((rc = memd_yaml_string(file, memd_yaml_get(tt, "product"), t->product, sizeof(t->product), err)))
        return rc;
    const memd_ynode *v = memd_yaml_get(tt, "hw_cqs");
    uint64_t cqs;
    if ((rc = memd_yaml_uint(file, v, 64, &cqs, err)))
        return rc;
    if (cqs == 0)
        return memd_yaml_error(err, file, v, "expected at least 1 hardware command queue, got 0");
    t->o.product = t->product;
    t->o.hw_cqs = (uint32_t)cqs;
    if ((v = memd_yaml_get(tt, "l1_bank_remap")))
        return ttmetal_remap(file, v, t, err);
    return 0;
}

/* sram: {reserved (required), alignment, page_size (read by ttmetal_device)}. */
static int ttmetal_sram(const char *file, const memd_ynode *entry, ttmetal_entry *t, memd_error *err)
{
    static const char *const keys[] = {"reserved", "alignment", "page_size", NULL};
    const memd_ynode *sram = memd_yaml_get(entry, "sram"), *v;
    if (!sram)
        return memd_yaml_error(err, file, entry,
                               "missing key 'sram' in a tt-metal device: expected {reserved: SIZE} (the L1 bytes firmware keeps)");
    int rc = memd_yaml_check_keys(file, sram, "sram settings of a tt-metal device", keys, err);
    if (rc)
        return rc;
    if (!(v = memd_yaml_get(sram, "reserved")))
        return memd_yaml_error(err, file, sram, "missing key 'reserved' in sram: expected the L1 bytes reserved for firmware and kernels");
    if ((rc = memd_yaml_size(file, v, &t->o.sram_reserved, err)))
        return rc;
    t->o.reserved_file = file;
    t->o.reserved_node = v;
    if ((v = memd_yaml_get(sram, "alignment")) && (rc = memd_soc_parse_pow2(file, v, &t->o.sram_alignment, err)))
        return rc;
    return 0;
}

/* dram: {alignment, page_size, regions}: the geometry comes from the SoC descriptor. The regions
 * need the bank size, so they are laid out once the device is built. */
static int ttmetal_dram(const char *file, const memd_ynode *n, ttmetal_entry *t, memd_error *err)
{
    int rc = memd_yaml_expect_map(file, n, "dram settings", err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n->n; i++) {
        const memd_ynode *k = memd_yaml_key(n, i);
        if (!strcmp(k->str, "banks") || !strcmp(k->str, "bank_size") || !strcmp(k->str, "offsets"))
            return memd_yaml_error(err, file, k,
                                   "'%s' comes from the tt-metal SoC descriptor; only alignment, page_size and regions may be set here",
                                   k->str);
    }
    static const char *const keys[] = {"alignment", "page_size", "regions", NULL};
    if ((rc = memd_yaml_check_keys(file, n, "dram settings of a tt-metal device", keys, err)))
        return rc;
    const memd_ynode *v = memd_yaml_get(n, "alignment");
    if (v && (rc = memd_soc_parse_pow2(file, v, &t->o.dram_alignment, err)))
        return rc;
    return 0;
}

/* Everything memd.yaml says about a tt_metal entry besides the files. */
static int ttmetal_entry_read(const char *file, const memd_ynode *entry, ttmetal_entry *t,
                              memd_error *err)
{
    static const char *const keys[] = {"id", "name", "arch", "tt_metal", "dram", "sram",
                                       "texture", "policy", NULL};
    memset(t, 0, sizeof(*t));
    int rc = memd_yaml_check_keys(file, entry, "a tt-metal device", keys, err);
    if (rc || (rc = ttmetal_keys(file, memd_yaml_get(entry, "tt_metal"), t, err)) ||
        (rc = ttmetal_sram(file, entry, t, err)))
        return rc;
    const memd_ynode *v;
    if ((v = memd_yaml_get(entry, "dram")) && (rc = ttmetal_dram(file, v, t, err)))
        return rc;
    if ((v = memd_yaml_get(entry, "arch"))) {
        if ((rc = memd_yaml_name(file, v, t->arch, sizeof(t->arch), err)))
            return rc;
        t->o.arch = t->arch;
    }
    if ((v = memd_yaml_get(entry, "name"))) {
        if ((rc = memd_yaml_name(file, v, t->name, sizeof(t->name), err)))
            return rc;
        t->o.name = t->name;
    }
    return 0;
}

/* Reads both descriptors and builds the device with memd_ttmetal_device, as tests and
 * fuzzing do. */
static int ttmetal_build(const char *file, const memd_ynode *tt, const memd_config_files *files,
                         const memd_ttmetal_opts *o, memd_device_spec *out, memd_error *err)
{
    char soc_path[PATH_MAX], core_path[PATH_MAX], *soc_buf = NULL, *core_buf = NULL;
    size_t soc_len, core_len;
    int rc = read_named_file(file, memd_yaml_get(tt, "soc_descriptor"), files, soc_path,
                             sizeof(soc_path), &soc_buf, &soc_len, err);
    if (rc == 0)
        rc = read_named_file(file, memd_yaml_get(tt, "core_descriptor"), files, core_path,
                             sizeof(core_path), &core_buf, &core_len, err);
    if (rc == 0)
        rc = memd_ttmetal_device(soc_path, soc_buf, soc_len, core_path, core_buf, core_len, o, out, err);
    free(soc_buf);
    free(core_buf);
    return rc;
}

static int ttmetal_device(const char *file, const memd_ynode *entry,
                          const memd_config_files *files, memd_device_spec *out, memd_error *err)
{
    ttmetal_entry t;
    int rc = ttmetal_entry_read(file, entry, &t, err);
    if (rc == 0)
        rc = ttmetal_build(file, memd_yaml_get(entry, "tt_metal"), files, &t.o, out, err);
    free(t.remap);
    if (rc)
        return rc;
    const memd_ynode *dram = memd_yaml_get(entry, "dram"), *v;
    if (dram && (v = memd_yaml_get(dram, "regions"))) {
        if ((rc = memd_soc_parse_regions(file, v, MEMD_KIND_DRAM, &out->groups[MEMD_KIND_DRAM], err)))
            return rc;
        memd_device_spec_default_policy(out); /* the defaults follow the regions */
    }
    if ((rc = group_pages(file, entry, out, err)))
        return rc;
    if ((v = memd_yaml_get(entry, "texture")) && (rc = memd_soc_parse_texture(file, v, out, err)))
        return rc;
    if ((v = memd_yaml_get(entry, "policy")) && (rc = memd_soc_parse_policy(file, v, out, err)))
        return rc;
    return 0;
}

int memd_soc_config_device(const char *file, const memd_ynode *entry,
                           const memd_config_files *files, memd_device_spec *out, memd_error *err)
{
    memset(out, 0, sizeof(*out));
    int rc = memd_yaml_expect_map(file, entry, "a device entry", err);
    if (rc)
        return rc;
    const memd_ynode *id = memd_yaml_get(entry, "id");
    if (!id)
        return memd_yaml_error(err, file, entry, "missing key 'id' in a device entry: expected the device's number");
    uint64_t v;
    if ((rc = memd_yaml_uint(file, id, UINT32_MAX, &v, err)))
        return rc;

    const memd_ynode *desc = memd_yaml_get(entry, "descriptor"), *tt = memd_yaml_get(entry, "tt_metal");
    if (desc && tt)
        return memd_yaml_error(err, file, entry, "a device takes either 'descriptor' or 'tt_metal', not both");
    if (desc)
        rc = descriptor_device(file, entry, files, out, err);
    else if (tt)
        rc = ttmetal_device(file, entry, files, out, err);
    else
        rc = memd_yaml_error(err, file, entry,
                             "a device needs 'descriptor: PATH' (memd's own format) or 'tt_metal: {soc_descriptor, core_descriptor, product, hw_cqs}'");
    out->id = (uint32_t)v;
    if (rc == 0)
        rc = memd_soc_validate(file, entry, out, err);
    if (rc) {
        memd_device_spec_free(out);
        memset(out, 0, sizeof(*out));
    }
    return rc;
}
