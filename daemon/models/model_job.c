/* memd daemon — freeing a PLAN job (model_plan.c): on its own, so the models' state
 * (model_state.c), which frees jobs left at shutdown, does not depend on model_plan.c,
 * which depends on it. */
#include <stdlib.h>

#include "model_internal.h"

void memd_model_job_free(memd_model_job *j)
{
    free(j->doc);
    free(j->bufs);
    free(j->offsets);
    free(j->rec);
    free(j->reply.data);
    free(j);
}
