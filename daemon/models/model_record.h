/* memd daemon — short names for the model records' layout (model_internal.h) and their
 * field tables, for the files that write and read them: model_save.c and
 * model_restore.c. */
#ifndef MEMD_DAEMON_MODEL_RECORD_H
#define MEMD_DAEMON_MODEL_RECORD_H

#include "le.h"
#include "model_internal.h"

#define VERSION MEMD_MODELS_RECORD_VERSION
#define PLAN_HEAD MEMD_MODELS_PLAN_HEAD
#define PLAN_BUF MEMD_MODELS_PLAN_BUF
#define MODEL_HEAD MEMD_MODELS_MODEL_HEAD
#define MODEL_TENSOR MEMD_MODELS_MODEL_TENSOR
#define INST_HEAD MEMD_MODELS_INST_HEAD
#define INST_PH MEMD_MODELS_INST_PH

/* model_record.c: the integer fields of each record's fixed part (model_save.c's layout),
 * read and written by memd_le_fields_get/put; the rest is by hand. */
#define MEMD_MODELS_PLAN_NFIELDS 7
#define MEMD_MODELS_PLAN_BUF_NFIELDS 5
#define MEMD_MODELS_MODEL_NFIELDS 11
#define MEMD_MODELS_TENSOR_NFIELDS 7
#define MEMD_MODELS_INST_NFIELDS 5
extern const memd_le_field memd_models_plan_fields[MEMD_MODELS_PLAN_NFIELDS];
extern const memd_le_field memd_models_plan_buf_fields[MEMD_MODELS_PLAN_BUF_NFIELDS];
extern const memd_le_field memd_models_model_fields[MEMD_MODELS_MODEL_NFIELDS];
extern const memd_le_field memd_models_tensor_fields[MEMD_MODELS_TENSOR_NFIELDS];
extern const memd_le_field memd_models_inst_fields[MEMD_MODELS_INST_NFIELDS];

#endif
