/* memd soc — parsers for the parts of a device that memd's own descriptor format and
 * memd.yaml's device entries share. Each fills part of a memd_device_spec and reports
 * errors at the offending node. */
#ifndef MEMD_SOC_INTERNAL_H
#define MEMD_SOC_INTERNAL_H

#include "yaml_doc.h"

#define MEMD_DEFAULT_DRAM_ALIGNMENT 32 /* tt-metal's DRAM_ALIGNMENT (Grayskull, Wormhole) */
#define MEMD_DEFAULT_SRAM_ALIGNMENT 16 /* tt-metal's L1_ALIGNMENT */

/* A bank group in memd's own format: banks, bank_size, alignment, offsets, regions. */
int memd_soc_parse_group(const char *file, const memd_ynode *n, memd_kind kind,
                         memd_bank_group_spec *g, memd_error *err);

/* Lays out the `regions` sequence of a group whose bank_size is set (see doc/configuration.md):
 * regions in address order, base defaults to the end of the previous one, at most one
 * region without size takes what its neighbours leave. */
int memd_soc_parse_regions(const char *file, const memd_ynode *seq, memd_kind kind,
                           memd_bank_group_spec *g, memd_error *err);

/* A power-of-two size (alignments). */
int memd_soc_parse_pow2(const char *file, const memd_ynode *n, uint64_t *out, memd_error *err);

int memd_soc_parse_texture(const char *file, const memd_ynode *n, memd_device_spec *spec,
                           memd_error *err);

/* Applies `policy:` overrides on top of spec->policy (call after the regions exist). */
int memd_soc_parse_policy(const char *file, const memd_ynode *n, memd_device_spec *spec,
                          memd_error *err);

/* The engine's own validation, reported at node. */
int memd_soc_validate(const char *file, const memd_ynode *node, const memd_device_spec *spec,
                      memd_error *err);

/* Lower-cases src into dst (a name), mapping characters outside [a-z0-9._-] to '_'. */
void memd_soc_name_from(char *dst, size_t cap, const char *src);

/* ---- memd.yaml (config.c, config_device.c) ---- */

#define MEMD_SOC_MAX_FILE (16u << 20) /* no descriptor or config is anywhere near this */

/* Reads a whole regular file into a malloc'd buffer. 0, or -errno with msg set. */
int memd_soc_read_file(const char *path, char **buf, size_t *len, char *msg, size_t msglen);

/* base_dir + "/" + rel unless rel is absolute; -ENAMETOOLONG if it does not fit. */
int memd_soc_resolve(const char *base_dir, const char *rel, char *out, size_t cap);

/* One entry of `devices:` -> spec. files gives the descriptors it names (NULL: the entry
 * may not name files at all). */
/* config_subdev.c: the `sub_devices` list, after the devices (config.h). */
struct memd_config;
int memd_soc_config_subdevs(const char *file, const memd_ynode *list, struct memd_config *cfg,
                            memd_error *err);
/* config_cglimit.c: the `cgroup_limits` list, after the devices (config.h). */
int memd_soc_config_cglimits(const char *file, const memd_ynode *list, struct memd_config *cfg,
                             memd_error *err);
int memd_soc_config_device(const char *file, const memd_ynode *entry,
                           const memd_config_files *files, memd_device_spec *out, memd_error *err);

#endif
