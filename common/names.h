/* memd engine — names of the vocabulary in <memd/types.h>: kinds, classes, scopes,
 * dtypes, directions and fits. One table per enum, shared by the daemon, the config
 * loader and libmemclient (which compiles names.c in), so printing and parsing never
 * disagree anywhere. Parsing accepts aliases ("global", "l1", "float32"); printing gives
 * the canonical name, or "unknown". Parse functions return 0 or -EINVAL. */
#ifndef MEMD_ENGINE_NAMES_H
#define MEMD_ENGINE_NAMES_H

#include <stdint.h>

#include "memd/types.h"

const char *memd_kind_name(memd_kind k);
const char *memd_class_name(memd_class c);
const char *memd_scope_name(memd_scope s);
const char *memd_dtype_name(memd_dtype t);
const char *memd_dir_name(memd_dir d); /* "bottom_up", "top_down" */
const char *memd_fit_name(memd_fit f); /* "first", "best" */
/* "all", "range", "per_bank", "range_lockstep"; parsing also takes tt-metal's names:
 * "lockstep", "uniform_per_core", "per_core". */
const char *memd_bank_mode_name(memd_bank_mode m);
int memd_kind_parse(const char *s, memd_kind *out);
int memd_class_parse(const char *s, memd_class *out);
int memd_scope_parse(const char *s, memd_scope *out);
int memd_dtype_parse(const char *s, memd_dtype *out);
int memd_dir_parse(const char *s, memd_dir *out);
int memd_fit_parse(const char *s, memd_fit *out);
int memd_bank_mode_parse(const char *s, memd_bank_mode *out);
uint32_t memd_dtype_size(memd_dtype t); /* bytes per element, 0 for NONE */

#endif
