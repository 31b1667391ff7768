/* memd daemon — short names for the model records' layout (model_internal.h), for the
 * two files that write and read them: model_save.c and model_restore.c. */
#ifndef MEMD_DAEMON_MODEL_RECORD_H
#define MEMD_DAEMON_MODEL_RECORD_H

#include "model_internal.h"

#define VERSION MEMD_MODELS_RECORD_VERSION
#define PLAN_HEAD MEMD_MODELS_PLAN_HEAD
#define PLAN_BUF MEMD_MODELS_PLAN_BUF
#define MODEL_HEAD MEMD_MODELS_MODEL_HEAD
#define MODEL_TENSOR MEMD_MODELS_MODEL_TENSOR
#define INST_HEAD MEMD_MODELS_INST_HEAD
#define INST_PH MEMD_MODELS_INST_PH

#endif
