/* memd daemon — the integer fields of the model records' fixed parts (layout in
 * model_save.c), one table each for both directions. */
#include "model_record.h"

const memd_le_field memd_models_plan_fields[MEMD_MODELS_PLAN_NFIELDS] = {
    MEMD_LE_FIELD(4, memd_plan_entry, n),
    MEMD_LE_FIELD(8, memd_plan_entry, arena),
    MEMD_LE_FIELD(16, memd_plan_entry, lower_bound),
    MEMD_LE_FIELD(24, memd_plan_entry, iterations),
    MEMD_LE_FIELD(32, memd_plan_entry, plan_us),
    MEMD_LE_FIELD(40, memd_plan_entry, created_ns),
    MEMD_LE_FIELD(48, memd_plan_entry, hits),
};

/* pinned (at 40) is a bool: written and checked by hand */
const memd_le_field memd_models_plan_buf_fields[MEMD_MODELS_PLAN_BUF_NFIELDS] = {
    MEMD_LE_FIELD(0, memd_plan_buffer, lower),
    MEMD_LE_FIELD(8, memd_plan_buffer, upper),
    MEMD_LE_FIELD(16, memd_plan_buffer, size),
    MEMD_LE_FIELD(24, memd_plan_buffer, align),
    MEMD_LE_FIELD(32, memd_plan_buffer, offset),
};

const memd_le_field memd_models_model_fields[MEMD_MODELS_MODEL_NFIELDS] = {
    MEMD_LE_FIELD(0, memd_model, hash),
    MEMD_LE_FIELD(8, memd_model, created_ns),
    MEMD_LE_FIELD(24, memd_model, code_bytes),
    MEMD_LE_FIELD(32, memd_model, const_bytes),
    MEMD_LE_FIELD(40, memd_model, const_align),
    MEMD_LE_FIELD(48, memd_model, arena_align),
    MEMD_LE_FIELD(56, memd_model, code_handle),
    MEMD_LE_FIELD(64, memd_model, const_handle),
    MEMD_LE_FIELD(76, memd_model, n),
    MEMD_LE_FIELD(80, memd_model, nph),
    MEMD_LE_FIELD(88, memd_model, scope),
};

const memd_le_field memd_models_tensor_fields[MEMD_MODELS_TENSOR_NFIELDS] = {
    MEMD_LE_FIELD(0, memd_model_tensor, size),
    MEMD_LE_FIELD(8, memd_model_tensor, align),
    MEMD_LE_FIELD(16, memd_model_tensor, lower),
    MEMD_LE_FIELD(24, memd_model_tensor, upper),
    MEMD_LE_FIELD(32, memd_model_tensor, off),
    MEMD_LE_FIELD(40, memd_model_tensor, ref),
    MEMD_LE_FIELD(44, memd_model_tensor, role),
};

/* busy and reused (48, 49) are bools: written and checked by hand */
const memd_le_field memd_models_inst_fields[MEMD_MODELS_INST_NFIELDS] = {
    MEMD_LE_FIELD(8, memd_instance, arena_handle),
    MEMD_LE_FIELD(16, memd_instance, arena_address),
    MEMD_LE_FIELD(24, memd_instance, arena_bytes),
    MEMD_LE_FIELD(32, memd_instance, ph_bytes),
    MEMD_LE_FIELD(56, memd_instance, req),
};
