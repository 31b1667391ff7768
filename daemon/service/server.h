/* memd daemon — the single-threaded libuv service loop: listener, connections,
 * signals (SIGHUP reloads the config), the systemd watchdog.
 *
 * One loop pass, the way Redis does it in beforeSleep: every readable connection's frames
 * are dispatched, their replies gathered in the connection's out buffer but not written;
 * then, before the loop sleeps again (a uv_prepare handle), the state store commits once
 * for the whole pass and every gathered reply is written. */
#ifndef MEMD_DAEMON_SERVER_H
#define MEMD_DAEMON_SERVER_H

#include <stdbool.h>
#include <uv.h>

#include "buf.h"
#include "state.h"

typedef struct memd_conn memd_conn;

typedef struct memd_server {
    uv_loop_t *loop;
    memd_state *st;
    uv_pipe_t listener;
    const char *config_path;  /* re-read on SIGHUP */
    uv_signal_t sigterm, sigint, sighup;
    uv_timer_t watchdog;
    uv_timer_t drain;         /* shutdown: gives clients a moment to take their replies */
    uv_timer_t store_tick;    /* state store: orphans to release, a failed flush to retry */
    uv_prepare_t pass_end;    /* before the loop sleeps: commit, then write (conn.c) */
    uv_timer_t hello_tick;    /* closes connections whose first request is late (conn.c) */
    uv_timer_t trim_tick;     /* gives freed heap back to the system after many frees */
    uv_timer_t events_tick;   /* waiting EVENTS requests whose wait ran out (conn.c) */
    uint64_t events_seen;     /* the event log's next_seq when parked requests last looked */
    uint64_t trimmed_at;      /* ctr.frees + ctr.subs_released at the last trim */
    bool store_tick_on;
    bool watchdog_on;
    bool stopping;
    memd_conn *conns;         /* every open connection, sessions or not */
    uint32_t nconns;          /* how many */
    uint32_t fd_budget;       /* connections the descriptor limit leaves room for */
    memd_conn *queue;         /* connections with replies (or a close) for the next commit */
    memd_conn *sending;       /* those of the commit just made, being written */
    size_t out_high;          /* unsent reply bytes at which a client stops being read */
    int exit_code;
} memd_server;

/* One client connection. */
struct memd_conn {
    uv_pipe_t pipe;           /* pipe.data == this */
    memd_server *srv;
    memd_session sess;
    bool has_session;
    bool reading;
    bool writing;             /* wbuf is owned by a uv_write in flight */
    bool close_after_flush;   /* malformed input, rejected, EOF or shutdown */
    bool closing;
    bool greeted;             /* a first complete request came (hello_timeout_ms) */
    uint64_t accepted_ms;     /* uv_now at accept: monotonic */
    bool held;                /* a frame waits for room in the reply backlog (MEMD_DEFER) */
    uint8_t deferred;         /* MEMD_CONN_DEFER_*: EOF or shutdown met a planning job */
    bool queued;              /* on srv->queue or srv->sending (queue_next) */
    size_t changed_at;        /* out offset of the first reply that waits for the commit
                               * of a change (SIZE_MAX: none) */
    memd_buf in;              /* received bytes not yet dispatched */
    memd_buf out;             /* replies not yet handed to the kernel */
    memd_buf wbuf;            /* replies being written by wreq */
    uv_write_t wreq;
    memd_conn *prev, *next;
    memd_conn *queue_next;
};

/* Runs the loop on an already listening fd until SIGTERM/SIGINT, reloading
 * config_path on SIGHUP; returns the exit code. on_ready is called once the loop is
 * about to serve (readiness). */
int memd_server_run(memd_state *st, const char *config_path, int listen_fd,
                    const char *socket_path, void (*on_ready)(void *), void *ready_ctx);

/* conn.c */
void memd_conn_accept(memd_server *srv);
void memd_conn_shutdown(memd_conn *c);  /* finish in-flight replies, then close */
void memd_conn_close(memd_conn *c);     /* now */
/* A planning job's reply was appended (model.h): dispatch what waited, write it, and
 * finish an EOF or shutdown that came meanwhile. */
void memd_conn_resume(memd_conn *c);
/* Answers the parked EVENTS requests (handlers/events.c) that have an event now, or
 * whose wait ended by now_ms (monotonic), and dispatches what waited behind them. */
void memd_conn_answer_events(memd_server *srv, uint64_t now_ms);
/* The end of a loop pass: commits the state store once, then writes every queued
 * connection's replies (those of connections whose changes failed to commit become
 * -EIO errors, and the connection closes). */
void memd_conn_pass_end(memd_server *srv);
/* Answers -ETIMEDOUT and closes every session whose first request has not come within
 * limits.hello_timeout_ms of its connect; run from a timer. */
void memd_conn_expire_silent(memd_server *srv);
enum { MEMD_CONN_DEFER_NONE, MEMD_CONN_DEFER_EOF, MEMD_CONN_DEFER_SHUTDOWN };

#endif
