/* memd daemon — the planning runner: jobs go to libuv's thread pool (uv_queue_work);
 * the engine is pure and each job owns a private copy of its problem, so the worker
 * touches no daemon state. Completion runs on the loop: it caches the plan, appends the
 * reply and lets the waiting connection go on with its next frames. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "log.h"
#include "dispatch.h"
#include "model.h"
#include "model_work.h"

typedef struct work {
    uv_work_t req;
    memd_server *srv;
    memd_model_job *job;
} work;

static void run(uv_work_t *r)
{
    work *w = r->data;
    memd_model_job_execute(w->job);
}

static void done(uv_work_t *r, int status)
{
    (void)status; /* never cancelled: every job completes, detached or not */
    work *w = r->data;
    memd_session *s = NULL;
    int rc = memd_model_job_complete(w->srv->st, w->job, &s);
    free(w);
    if (!s)
        return;
    /* Sessions live inside their connection (server.h). */
    memd_conn *c = (memd_conn *)(void *)((char *)s - offsetof(memd_conn, sess));
    if (rc < 0) {
        memd_log(LOG_ERR, "session %u: out of memory building a plan reply; closing it", s->id);
        memd_conn_close(c);
        return;
    }
    memd_conn_resume(c);
}

static int queue(void *ctx, memd_model_job *job)
{
    memd_server *srv = ctx;
    work *w = malloc(sizeof *w);
    if (!w)
        return -ENOMEM; /* the job then runs inline */
    w->srv = srv;
    w->job = job;
    w->req.data = w;
    int rc = uv_queue_work(srv->loop, &w->req, run, done);
    if (rc < 0) {
        free(w);
        return rc;
    }
    return 0;
}

int memd_model_work_attach(memd_server *srv)
{
    return memd_models_set_runner(srv->st, queue, srv);
}

void memd_model_work_detach(memd_server *srv)
{
    (void)memd_models_set_runner(srv->st, NULL, NULL);
}
