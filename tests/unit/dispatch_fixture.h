/* What the dispatch suites (test_dispatch.c, test_dispatch_frames.c) share: a daemon
 * state on one hand-built device (DEV), its reply buffer, three sessions, and requests
 * sent as frames through memd_frames_process with their replies decoded. */
#ifndef MEMD_TESTS_DISPATCH_FIXTURE_H
#define MEMD_TESTS_DISPATCH_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "reply.h"
#include "session.h"
#include "state.h"
#include "wire.h"
#include "wire_frame.h"

#define KIB 1024ull
/* DEV: DRAM 4 banks x 1 MiB, code [0,64K) data [64K,960K) logging [960K,1M); SRAM 8 banks
 * x 256K, reserved [0,16K) (not allocatable) buffers [16K,256K). */
#define DEV 7 /* a non-zero id catches index/id mix-ups */

extern memd_state st;
extern memd_buf out;                /* replies, popped by pop() */
extern memd_session sa, sb, sroot;  /* uids 1001 and 1002; root, admin */

memd_limits default_limits(void);
/* The config start() runs: DEV as spec (which must outlive cfg) and lim. */
void make_config(memd_config *cfg, memd_device_spec *spec, memd_limits lim);
void open_session(memd_session *s, uint32_t uid, bool admin);
void start(memd_limits lim); /* the state on DEV, sessions sa, sb, sroot open */
/* Check fixture hooks: start(default_limits()), and everything freed. */
void setup(void);
void teardown(void);

typedef struct reply {
    memd_wire_hdr h;
    uint8_t p[8192];
    memd_wire_error err;
    int rc; /* memd_frames_process result */
} reply;

/* Pops the first reply frame from out; an error reply's record is decoded into r->err. */
void pop(reply *r);
/* Sends raw bytes as one read; expects exactly one reply. */
void send_raw(memd_session *s, const uint8_t *buf, size_t len, reply *r);
/* Sends one frame (a fresh id); expects exactly one reply, echoing id and opcode. */
void req(memd_session *s, uint16_t op, const void *payload, uint32_t len, reply *r);
memd_wire_alloc_req dram(uint8_t cls, uint64_t bytes);
int do_alloc(memd_session *s, const memd_wire_alloc_req *a, memd_wire_buffer *b, reply *r);
uint64_t must_alloc(memd_session *s, uint8_t cls, uint64_t bytes);
int handle_op(memd_session *s, uint16_t op, uint64_t handle, reply *r);
uint64_t dram_allocated(void); /* bytes allocated per bank in DEV's DRAM */

#endif
