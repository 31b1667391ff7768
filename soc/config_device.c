/* memd soc — one device entry of memd.yaml:
 *
 *   - id: N
 *     descriptor: PATH          memd's own format; `name` and `policy` may override it
 *   - id: N
 *     tt_metal: {soc_descriptor: PATH, core_descriptor: PATH, product: KEY, hw_cqs: N}
 *     dram: {alignment, regions}   sram: {reserved (required), alignment}
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
static int read_named_file(const char *file, const memd_ynode *n, const char *base_dir,
                           char *path, size_t cap, char **buf, size_t *len, memd_error *err)
{
    char rel[PATH_MAX];
    int rc = memd_yaml_string(file, n, rel, sizeof(rel), err);
    if (rc)
        return rc;
    if (!base_dir)
        return memd_yaml_error(err, file, n, "descriptor files cannot be read here");
    if (memd_soc_resolve(base_dir, rel, path, cap))
        return memd_yaml_error(err, file, n, "path '%s' is too long", rel);
    char msg[256];
    if (memd_soc_read_file(path, buf, len, msg, sizeof(msg)))
        return memd_yaml_error(err, file, n, "cannot read '%s': %s", path, msg);
    return 0;
}

static int descriptor_device(const char *file, const memd_ynode *entry, const char *base_dir,
                             memd_device_spec *out, memd_error *err)
{
    static const char *const keys[] = {"id", "name", "descriptor", "policy", NULL};
    int rc = memd_yaml_check_keys(file, entry, "a descriptor device", keys, err);
    if (rc)
        return rc;
    char path[PATH_MAX], *buf;
    size_t len;
    if ((rc = read_named_file(file, memd_yaml_get(entry, "descriptor"), base_dir, path,
                              sizeof(path), &buf, &len, err)))
        return rc;
    rc = memd_soc_load_memd_device(path, buf, len, out, err);
    free(buf);
    if (rc)
        return rc;
    const memd_ynode *v;
    if ((v = memd_yaml_get(entry, "name")) && (rc = memd_yaml_name(file, v, out->name, sizeof(out->name), err)))
        return rc;
    if ((v = memd_yaml_get(entry, "policy")) && (rc = memd_soc_parse_policy(file, v, out, err)))
        return rc;
    return 0;
}

/* memd.yaml's `dram:` beside tt_metal: the geometry comes from the SoC descriptor. */
static int ttmetal_dram(const char *file, const memd_ynode *n, memd_bank_group_spec *g,
                        memd_error *err)
{
    int rc = memd_yaml_expect_map(file, n, "dram settings", err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n->n; i++) {
        const memd_ynode *k = memd_yaml_key(n, i);
        if (!strcmp(k->str, "banks") || !strcmp(k->str, "bank_size") || !strcmp(k->str, "offsets"))
            return memd_yaml_error(err, file, k,
                                   "'%s' comes from the tt-metal SoC descriptor; only alignment and regions may be set here",
                                   k->str);
    }
    static const char *const keys[] = {"alignment", "regions", NULL};
    if ((rc = memd_yaml_check_keys(file, n, "dram settings of a tt-metal device", keys, err)))
        return rc;
    const memd_ynode *v;
    if ((v = memd_yaml_get(n, "alignment")) && (rc = memd_soc_parse_pow2(file, v, &g->alignment, err)))
        return rc;
    if ((v = memd_yaml_get(n, "regions")))
        return memd_soc_parse_regions(file, v, MEMD_KIND_DRAM, g, err);
    return 0;
}

static int ttmetal_device(const char *file, const memd_ynode *entry, const char *base_dir,
                          memd_device_spec *out, memd_error *err)
{
    static const char *const keys[] = {"id", "name", "arch", "tt_metal", "dram", "sram",
                                       "texture", "policy", NULL};
    static const char *const tkeys[] = {"soc_descriptor", "core_descriptor", "product", "hw_cqs", NULL};
    static const char *const skeys[] = {"reserved", "alignment", NULL};
    int rc = memd_yaml_check_keys(file, entry, "a tt-metal device", keys, err);
    if (rc)
        return rc;
    const memd_ynode *tt = memd_yaml_get(entry, "tt_metal"), *v;
    if ((rc = memd_yaml_check_keys(file, tt, "tt_metal", tkeys, err)))
        return rc;
    for (int i = 0; tkeys[i]; i++)
        if (!memd_yaml_get(tt, tkeys[i]))
            return memd_yaml_error(err, file, tt, "missing key '%s' in tt_metal: expected %s", tkeys[i],
                                   i < 2 ? "a path" : i == 2 ? "the product key of the core descriptor (e.g. E150, galaxy)"
                                                             : "the number of hardware command queues");
    char product[MEMD_NAME_MAX];
    uint64_t cqs;
    if ((rc = memd_yaml_string(file, memd_yaml_get(tt, "product"), product, sizeof(product), err)))
        return rc;
    v = memd_yaml_get(tt, "hw_cqs");
    if ((rc = memd_yaml_uint(file, v, 64, &cqs, err)))
        return rc;
    if (cqs == 0)
        return memd_yaml_error(err, file, v, "expected at least 1 hardware command queue, got 0");

    const memd_ynode *sram = memd_yaml_get(entry, "sram");
    if (!sram)
        return memd_yaml_error(err, file, entry,
                               "missing key 'sram' in a tt-metal device: expected {reserved: SIZE} (the L1 bytes firmware keeps)");
    if ((rc = memd_yaml_check_keys(file, sram, "sram settings of a tt-metal device", skeys, err)))
        return rc;
    const memd_ynode *res_n = memd_yaml_get(sram, "reserved");
    uint64_t reserved, l1_align = MEMD_DEFAULT_SRAM_ALIGNMENT;
    if (!res_n)
        return memd_yaml_error(err, file, sram, "missing key 'reserved' in sram: expected the L1 bytes reserved for firmware and kernels");
    if ((rc = memd_yaml_size(file, res_n, &reserved, err)))
        return rc;
    if ((v = memd_yaml_get(sram, "alignment")) && (rc = memd_soc_parse_pow2(file, v, &l1_align, err)))
        return rc;

    /* Read both descriptors. */
    char soc_path[PATH_MAX], core_path[PATH_MAX], *soc_buf = NULL, *core_buf = NULL;
    size_t soc_len, core_len;
    memd_ttmetal_soc soc;
    memset(&soc, 0, sizeof(soc));
    memd_ttmetal_core core;
    if ((rc = read_named_file(file, memd_yaml_get(tt, "soc_descriptor"), base_dir, soc_path,
                              sizeof(soc_path), &soc_buf, &soc_len, err)))
        goto out;
    if ((rc = read_named_file(file, memd_yaml_get(tt, "core_descriptor"), base_dir, core_path,
                              sizeof(core_path), &core_buf, &core_len, err)))
        goto out;
    if ((rc = memd_ttmetal_parse_soc(soc_path, soc_buf, soc_len, &soc, err)))
        goto out;
    if ((rc = memd_ttmetal_parse_core(core_path, core_buf, core_len, product, (uint32_t)cqs,
                                      soc.worker_l1_size, &core, err)))
        goto out;

    memd_bank_group_spec *d = &out->groups[MEMD_KIND_DRAM];
    if ((rc = memd_ttmetal_dram_group(&soc, MEMD_DEFAULT_DRAM_ALIGNMENT, d))) {
        memd_yaml_error(err, file, entry, "out of memory");
        goto out;
    }
    if ((v = memd_yaml_get(entry, "dram")) && (rc = ttmetal_dram(file, v, d, err)))
        goto out;
    if (d->nregions == 0) { /* no regions given: the whole bank is data */
        snprintf(d->regions[0].name, MEMD_NAME_MAX, "data");
        d->regions[0].size = d->bank_size;
        d->regions[0].allocatable = true;
        d->nregions = 1;
    }
    char msg[256];
    if ((rc = memd_ttmetal_l1_group(&soc, &core, reserved, l1_align, &out->groups[MEMD_KIND_SRAM],
                                    msg, sizeof(msg)))) {
        memd_yaml_error(err, file, res_n, "%s", rc == -ENOMEM ? "out of memory" : msg);
        rc = -EINVAL;
        goto out;
    }

    snprintf(out->arch, sizeof(out->arch), "%s", soc.arch);
    if ((v = memd_yaml_get(entry, "arch")) && (rc = memd_yaml_name(file, v, out->arch, sizeof(out->arch), err)))
        goto out;
    char name[2 * MEMD_NAME_MAX + 2];
    snprintf(name, sizeof(name), "%s-%s", out->arch[0] ? out->arch : "tt", product);
    memd_soc_name_from(out->name, sizeof(out->name), name);
    if ((v = memd_yaml_get(entry, "name")) && (rc = memd_yaml_name(file, v, out->name, sizeof(out->name), err)))
        goto out;
    if ((v = memd_yaml_get(entry, "texture")) && (rc = memd_soc_parse_texture(file, v, out, err)))
        goto out;
    memd_device_spec_default_policy(out);
    if ((v = memd_yaml_get(entry, "policy")) && (rc = memd_soc_parse_policy(file, v, out, err)))
        goto out;
out:
    free(soc_buf);
    free(core_buf);
    memd_ttmetal_soc_free(&soc);
    return rc;
}

int memd_soc_config_device(const char *file, const memd_ynode *entry, const char *base_dir,
                           memd_device_spec *out, memd_error *err)
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
        rc = descriptor_device(file, entry, base_dir, out, err);
    else if (tt)
        rc = ttmetal_device(file, entry, base_dir, out, err);
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
