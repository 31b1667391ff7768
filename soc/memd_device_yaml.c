/* memd soc — memd's own device descriptor:
 *
 *   name: NAME            (required)      arch: NAME (optional)
 *   dram: GROUP           sram: GROUP     (at least one)
 *   texture: {max_width: N, max_height: N, pitch_alignment: SIZE}   (optional)
 *   policy: {dram|sram: {CLASS: {region, dir, fit, alignment, enabled}}}   (optional)
 *
 * GROUP is {banks, bank_size, alignment, offsets, regions}; see doc/configuration.md for the layout
 * rules. Unknown keys are errors: a typo must not silently change a memory map. */
#include <errno.h>
#include <string.h>

#include "soc_internal.h"

static int load_root(const char *file, const memd_ynode *root, memd_device_spec *out,
                     memd_error *err)
{
    static const char *const keys[] = {"name", "arch", "dram", "sram", "texture", "policy", NULL};
    int rc = memd_yaml_check_keys(file, root, "a device descriptor", keys, err);
    if (rc)
        return rc;
    const memd_ynode *v = memd_yaml_get(root, "name");
    if (!v)
        return memd_yaml_error(err, file, root, "missing key 'name' in a device descriptor: expected the device's name");
    if ((rc = memd_yaml_name(file, v, out->name, sizeof(out->name), err)))
        return rc;
    if ((v = memd_yaml_get(root, "arch")) && (rc = memd_yaml_name(file, v, out->arch, sizeof(out->arch), err)))
        return rc;
    const memd_ynode *dram = memd_yaml_get(root, "dram"), *sram = memd_yaml_get(root, "sram");
    if (!dram && !sram)
        return memd_yaml_error(err, file, root, "a device descriptor needs 'dram', 'sram' or both");
    if (dram && (rc = memd_soc_parse_group(file, dram, MEMD_KIND_DRAM, &out->groups[MEMD_KIND_DRAM], err)))
        return rc;
    if (sram && (rc = memd_soc_parse_group(file, sram, MEMD_KIND_SRAM, &out->groups[MEMD_KIND_SRAM], err)))
        return rc;
    if ((v = memd_yaml_get(root, "texture")) && (rc = memd_soc_parse_texture(file, v, out, err)))
        return rc;
    memd_device_spec_default_policy(out);
    if ((v = memd_yaml_get(root, "policy")) && (rc = memd_soc_parse_policy(file, v, out, err)))
        return rc;
    return memd_soc_validate(file, root, out, err);
}

int memd_soc_load_memd_device(const char *name, const char *buf, size_t len,
                              memd_device_spec *out, memd_error *err)
{
    memset(out, 0, sizeof(*out));
    memd_ynode *root;
    int rc = memd_yaml_parse(name, buf, len, &root, err);
    if (rc)
        return rc;
    rc = load_root(name, root, out, err);
    memd_yaml_free(root);
    if (rc) {
        memd_device_spec_free(out);
        memset(out, 0, sizeof(*out));
    }
    return rc;
}
