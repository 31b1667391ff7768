/* memd model descriptions in YAML (see doc/models.md): the file a runtime writes
 * about a model graph, parsed on the client side into a memclient_model_desc (the daemon
 * never opens a path a client names). Parsing also derives every tensor's lifetime
 * (memclient_model_lifetimes), so a graph error is reported at the op or tensor that
 * causes it.
 *
 *   model: NAME              # [A-Za-z0-9._-], at most 48 bytes
 *   device: N                # optional, default 0
 *   scope: dram              # optional: dram (global), sram (l1)
 *   code: 64KiB              # optional code buffer size
 *   alignment: 64            # optional default tensor alignment (bytes, power of two)
 *   tensors:                 # every tensor, once
 *     - {name: x, role: input, shape: [1, 3, 32, 32], dtype: f16}
 *     - {name: w, role: weight, size: 1728}         # or size in bytes (units allowed)
 *     - {name: y, shape: [1, 16], dtype: f32, align: 256}   # role activation (default)
 *   ops:                     # execution order
 *     - {name: conv, type: conv2d, inputs: [x, w], outputs: [y]}
 *     - {type: reshape, inputs: [y], outputs: [z]}  # in place: z aliases y
 *
 * Roles: activation (default), weight (alias: constant), input, output, inout. An op is
 * in place with `inplace: true`, or by default when its type is reshape, view, squeeze,
 * unsqueeze, flatten, expand_dims or bitcast (`inplace: false` overrides). Unknown keys
 * are errors. */
#ifndef MEMD_PARSERS_MODEL_YAML_H
#define MEMD_PARSERS_MODEL_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "memd/client.h"

typedef struct memd_model_yaml {
    memclient_model_desc desc;   /* points into the arrays below */
    memclient_tensor_desc *tensors;
    memclient_op_desc *ops;
    memclient_tensor_life *life; /* derived, desc.ntensors entries */
    bool has_device;             /* `device:` was given */
    uint32_t *idx;               /* owned: every op's inputs and outputs */
} memd_model_yaml;

/* Parses buf[0..len) (not NUL-terminated). name is used in messages. 0 on success;
 * -EINVAL with err's file (name), line, column and message set (memd_error_format:
 * "name:line:col: what"), or -ENOMEM. On error *out holds nothing to free. */
int memd_model_yaml_parse(const char *name, const char *buf, size_t len, memd_model_yaml *out,
                          memd_error *err);

/* Reads a file and parses it; file system errors are -errno with err naming the file. */
int memd_model_yaml_read(const char *path, memd_model_yaml *out, memd_error *err);

void memd_model_yaml_free(memd_model_yaml *m);

/* The role's name in the format ("activation", "weight", ...); "alias" for ALIAS. */
const char *memd_model_yaml_role_name(memclient_tensor_role r);

#endif
