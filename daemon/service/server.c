/* memd daemon — the service loop (see server.h). */
#include "server.h"
#include "postmortem_files.h"

#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "event.h"
#include "history.h"
#include "log.h"
#include "model_work.h"
#include "notify.h"
#include "reply.h"
#include "reload.h"
#include "store.h"

#define DRAIN_MS 5000 /* how long stopping waits for clients to take their replies */
/* Descriptors memd keeps for itself besides connections: stdio, listener, loop, signal
 * pipes, notify socket, the store's files, model files being read. */
#define FD_RESERVE 32

static void on_connection(uv_stream_t *l, int status)
{
    memd_server *srv = l->data;
    if (status < 0) {
        memd_log(LOG_WARNING, "accept: %s", uv_strerror(status));
        return;
    }
    memd_conn_accept(srv);
}

static void on_watchdog(uv_timer_t *t)
{
    (void)t;
    memd_notify("WATCHDOG=1");
}

static void on_hello_tick(uv_timer_t *t)
{
    memd_conn_expire_silent(t->data);
}

/* Checks late first requests a few times per timeout (at most once a second): a
 * connection is closed between 1 and 1.25 timeouts after its connect. */
static void hello_tick_arm(memd_server *srv)
{
    uint32_t ms = srv->st->limits.hello_timeout_ms;
    uv_timer_stop(&srv->hello_tick);
    if (ms == 0)
        return;
    uint32_t every = ms / 4 < 1000 ? ms / 4 : 1000;
    every = every ? every : 1;
    uv_timer_start(&srv->hello_tick, on_hello_tick, every, every);
    uv_unref((uv_handle_t *)&srv->hello_tick); /* it does not keep the loop alive */
}

/* Connections fit under RLIMIT_NOFILE: raise the soft limit towards max_sessions (up to
 * the hard limit); what still does not fit is the budget conn.c refuses beyond, with an
 * answer, instead of libuv closing new connections unanswered at EMFILE. */
static uint32_t fd_budget(const memd_state *st)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return UINT32_MAX;
    rlim_t want = (rlim_t)st->limits.max_sessions + FD_RESERVE;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
        (void)getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
        return UINT32_MAX;
    uint32_t room = rl.rlim_cur > FD_RESERVE ? (uint32_t)(rl.rlim_cur - FD_RESERVE) : 0;
    memd_log(LOG_WARNING, "RLIMIT_NOFILE %llu leaves room for %u connections, fewer than "
                          "max_sessions %u: raise LimitNOFILE",
             (unsigned long long)rl.rlim_cur, room, st->limits.max_sessions);
    return room;
}

#define TRIM_MS 2000          /* how often to look */
#define TRIM_FREES 65536u     /* records let go since the last trim that make one worth it */

/* The records of freed allocations go back to their slabs and the slabs to malloc
 * (pool.h), and pool books' sub-allocation records straight to malloc; glibc keeps what
 * was freed inside its heap until told. After many records went (allocations, or a
 * pool's sub-allocations: issue 27, five killed pool clients left 200 MB), and only then
 * (a trim walks the heap), it is told. */
static void on_trim_tick(uv_timer_t *t)
{
    memd_server *srv = t->data;
    uint64_t let_go = srv->st->ctr.frees + srv->st->ctr.subs_released;
    if (let_go - srv->trimmed_at < TRIM_FREES)
        return;
    srv->trimmed_at = let_go;
    malloc_trim(0);
}

static void on_store_tick(uv_timer_t *t)
{
    memd_server *srv = t->data;
    (void)memd_store_tick(srv->st);
}

/* libuv runs prepare handles after timers and the completions of writes, right before
 * it polls (and possibly sleeps): the one point after which nothing more is dispatched
 * until new input arrives, Redis's beforeSleep. A check handle would run right after
 * the poll's read callbacks, but replies queued by timers or write completions (frames
 * that backpressure held back) would then wait through a poll that may sleep. */
static void on_pass_end(uv_prepare_t *p)
{
    memd_server *srv = p->data;
    memd_conn_pass_end(srv);
    /* After the replies: an out-of-memory's client is not kept waiting for its file. */
    memd_pm_files_flush(srv->st);
}

/* EVENTS requests waiting for an event end after MEMD_EVENTS_WAIT_MS with an empty page,
 * MODEL_WAITs after their timeout:
 * checked 4 times a second, when there are any. */
#define EVENTS_TICK_MS 250

static void on_events_tick(uv_timer_t *t)
{
    memd_conn_answer_events(t->data, memd_mono_ms());
}

static void on_drain_timeout(uv_timer_t *t)
{
    memd_server *srv = t->data;
    memd_log(LOG_WARNING, "clients did not take their last replies in %d ms; closing",
             DRAIN_MS);
    while (srv->conns)
        memd_conn_close(srv->conns);
}

static void stop(memd_server *srv, int signum)
{
    if (srv->stopping)
        return;
    srv->stopping = true;
    memd_event(srv->st, NULL, MEMD_EVENT_DAEMON, LOG_INFO, UINT32_MAX, 0,
               "%s: stopping with %u sessions", strsignal(signum), srv->st->nsessions);
    memd_notify("STOPPING=1\nSTATUS=stopping");
    /* The sessions the shutdown closes stay in the state store for the next memd. */
    memd_store_stopping(srv->st);
    if (srv->store_tick_on)
        uv_close((uv_handle_t *)&srv->store_tick, NULL);
    uv_close((uv_handle_t *)&srv->listener, NULL);
    uv_close((uv_handle_t *)&srv->sigterm, NULL);
    uv_close((uv_handle_t *)&srv->sigint, NULL);
    /* Not closed until the loop is done: closing the last SIGHUP watcher would give the
     * signal its default action back, and a SIGHUP while the last replies drain would
     * kill the daemon. Unreferenced, it does not keep the loop alive. */
    uv_unref((uv_handle_t *)&srv->sighup);
    if (srv->watchdog_on)
        uv_close((uv_handle_t *)&srv->watchdog, NULL);
    uv_close((uv_handle_t *)&srv->hello_tick, NULL);
    uv_close((uv_handle_t *)&srv->trim_tick, NULL);
    uv_close((uv_handle_t *)&srv->events_tick, NULL);
    if (!srv->conns) {
        uv_close((uv_handle_t *)&srv->drain, NULL);
        return;
    }
    uv_timer_start(&srv->drain, on_drain_timeout, DRAIN_MS, 0);
    /* memd_conn_shutdown may close (and unlink) the connection it is given. */
    for (memd_conn *c = srv->conns, *next; c; c = next) {
        next = c->next;
        memd_conn_shutdown(c);
    }
}

static void on_signal(uv_signal_t *h, int signum)
{
    stop(h->data, signum);
}

/* SIGHUP: re-read the config the daemon started with. A config that does not load, or
 * would change what cannot change at run time, is logged and the running one kept. */
static void on_reload(uv_signal_t *h, int signum)
{
    (void)signum;
    memd_server *srv = h->data;
    if (srv->stopping) {
        memd_log(LOG_NOTICE, "SIGHUP while stopping: nothing reloaded");
        return;
    }
    memd_config cfg = {0};
    memd_error e;
    memd_error_reset(&e);
    char msg[1200];
    /* systemd matches RELOADING=1 to the reload it started by this timestamp. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    memd_notifyf("RELOADING=1\nMONOTONIC_USEC=%llu",
                 (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000);
    int rc = memd_config_load(srv->config_path, &cfg, &e);
    if (rc == 0)
        rc = memd_state_reload(srv->st, &cfg, &e);
    if (rc < 0) {
        memd_error_format(&e, msg, sizeof msg);
        memd_event(srv->st, NULL, MEMD_EVENT_DAEMON, LOG_ERR, UINT32_MAX, 0,
                   "reload refused, keeping the running config: %s", msg);
    } else {
        srv->out_high = memd_reply_backlog(srv->st);
        srv->fd_budget = fd_budget(srv->st);
        hello_tick_arm(srv);
        memd_event(srv->st, NULL, MEMD_EVENT_DAEMON, LOG_INFO, UINT32_MAX, 0,
                   "reloaded %s (limits, quotas, admin group, log level)", srv->config_path);
    }
    memd_config_free(&cfg);
    memd_notify("READY=1");
}

int memd_server_run(memd_state *st, const char *config_path, int listen_fd,
                    const char *socket_path, void (*on_ready)(void *), void *ready_ctx)
{
    memd_server srv = {.st = st, .config_path = config_path, .exit_code = 0};
    uv_loop_t loop;
    int rc = uv_loop_init(&loop);
    if (rc < 0) {
        memd_log(LOG_ERR, "event loop: %s", uv_strerror(rc));
        return 1;
    }
    srv.loop = &loop;
    if (memd_model_work_attach(&srv) < 0)
        memd_log(LOG_WARNING, "no memory for the planning runner: plans run on the loop");
    srv.out_high = memd_reply_backlog(st);
    srv.fd_budget = fd_budget(st);
    signal(SIGPIPE, SIG_IGN); /* a vanished client is an error value, not a signal */

    uv_pipe_init(&loop, &srv.listener, 0);
    srv.listener.data = &srv;
    rc = uv_pipe_open(&srv.listener, listen_fd);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&srv.listener, SOMAXCONN, on_connection);
    if (rc < 0) {
        memd_log(LOG_ERR, "listen on %s: %s", socket_path, uv_strerror(rc));
        uv_close((uv_handle_t *)&srv.listener, NULL);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        return 1;
    }
    uv_signal_init(&loop, &srv.sigterm);
    uv_signal_init(&loop, &srv.sigint);
    uv_signal_init(&loop, &srv.sighup);
    srv.sigterm.data = srv.sigint.data = srv.sighup.data = &srv;
    uv_signal_start(&srv.sigterm, on_signal, SIGTERM);
    uv_signal_start(&srv.sigint, on_signal, SIGINT);
    uv_signal_start(&srv.sighup, on_reload, SIGHUP);
    uv_timer_init(&loop, &srv.drain);
    srv.drain.data = &srv;
    uv_timer_init(&loop, &srv.hello_tick);
    srv.hello_tick.data = &srv;
    hello_tick_arm(&srv);
    uv_timer_init(&loop, &srv.trim_tick);
    srv.trim_tick.data = &srv;
    uv_timer_start(&srv.trim_tick, on_trim_tick, TRIM_MS, TRIM_MS);
    uv_unref((uv_handle_t *)&srv.trim_tick);
    uv_timer_init(&loop, &srv.events_tick);
    srv.events_tick.data = &srv;
    uv_timer_start(&srv.events_tick, on_events_tick, EVENTS_TICK_MS, EVENTS_TICK_MS);
    uv_unref((uv_handle_t *)&srv.events_tick);
    /* Always armed but unreferenced: it does not keep the loop alive by itself. */
    uv_prepare_init(&loop, &srv.pass_end);
    srv.pass_end.data = &srv;
    uv_prepare_start(&srv.pass_end, on_pass_end);
    uv_unref((uv_handle_t *)&srv.pass_end);
    memd_store_defer(st, true); /* session closes are committed by the pass end */

    if (st->store) {
        uint32_t ms = memd_store_tick_ms(st);
        uv_timer_init(&loop, &srv.store_tick);
        srv.store_tick.data = &srv;
        uv_timer_start(&srv.store_tick, on_store_tick, ms, ms);
        srv.store_tick_on = true;
    }

    uint64_t wd = memd_notify_watchdog_usec();
    if (wd) {
        /* Ping at half the interval, from the loop itself: a stuck loop stops pinging. */
        uint64_t ms = wd / 2000 ? wd / 2000 : 1;
        uv_timer_init(&loop, &srv.watchdog);
        uv_timer_start(&srv.watchdog, on_watchdog, ms, ms);
        srv.watchdog_on = true;
    }

    if (memd_history_prepare(st) < 0)
        memd_log(LOG_WARNING, "no memory for the flight recorder yet (history_events %u): "
                              "tried again at the first allocation", st->limits.history_events);
    memd_event(st, NULL, MEMD_EVENT_DAEMON, LOG_INFO, UINT32_MAX, 0, "serving %u device%s on %s",
               st->ndevs, st->ndevs == 1 ? "" : "s", socket_path);
    memd_notifyf("READY=1\nSTATUS=serving %u device%s on %s\nMAINPID=%ld", st->ndevs,
                 st->ndevs == 1 ? "" : "s", socket_path, (long)getpid());
    if (on_ready)
        on_ready(ready_ctx);

    uv_run(&loop, UV_RUN_DEFAULT);
    memd_store_defer(st, false);
    uv_close((uv_handle_t *)&srv.pass_end, NULL);
    uv_close((uv_handle_t *)&srv.sighup, NULL); /* main() ignores SIGHUP from here on */
    uv_run(&loop, UV_RUN_DEFAULT);
    memd_model_work_detach(&srv);
    rc = uv_loop_close(&loop);
    if (rc < 0) {
        memd_log(LOG_ERR, "event loop did not close cleanly: %s", uv_strerror(rc));
        srv.exit_code = 1;
    }
    memd_log(LOG_INFO, "stopped");
    return srv.exit_code;
}
