/* Fuzz target: the daemon's whole request path. The input is one client's byte stream,
 * fed in chunks to memd_frames_process against a real engine device; every reply must
 * decode with the wire codec, and when the session closes nothing may stay allocated.
 * A violated invariant aborts, which the fuzzer and the replay driver report. */
#include <stdint.h>
#include <syslog.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "frames.h"
#include "log.h"
#include "session.h"
#include "state.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void make_spec(memd_device_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->id = 0;
    strcpy(spec->name, "fuzz");
    memd_bank_group_spec *d = &spec->groups[MEMD_KIND_DRAM];
    d->banks = 4;
    d->bank_size = 1 << 20;
    d->alignment = 32;
    d->nregions = 3;
    d->regions[0] = (memd_region_spec){"code", 0, 64 << 10, true};
    d->regions[1] = (memd_region_spec){"data", 64 << 10, 896 << 10, true};
    d->regions[2] = (memd_region_spec){"logging", 960 << 10, 64 << 10, true};
    memd_bank_group_spec *s = &spec->groups[MEMD_KIND_SRAM];
    s->banks = 8;
    s->bank_size = 256 << 10;
    s->alignment = 16;
    s->nregions = 1;
    s->regions[0] = (memd_region_spec){"buffers", 0, 256 << 10, true};
    memd_device_spec_default_policy(spec);
    spec->texture = (memd_texture_spec){true, 4096, 4096, 256};
}

/* Every reply in out decodes; error replies carry a well-formed error record. */
static void check_replies(const memd_buf *out)
{
    size_t off = 0;
    while (off < out->len) {
        memd_wire_hdr h;
        if (memd_wire_hdr_get(out->data + off, out->len - off, MEMD_MAX_REPLY, &h) < 0 ||
            out->len - off - MEMD_HDR_SIZE < h.len)
            abort();
        if (h.status < 0) {
            memd_wire_error e;
            /* either size: the session's HELLO may or may not have asked for the whole */
            if (memd_wire_error_get_any(out->data + off + MEMD_HDR_SIZE, h.len, &e) < 0 ||
                e.status != h.status)
                abort();
        }
        off += MEMD_HDR_SIZE + h.len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The daemon's log lines (a session opened, a protocol error, ...) for every input
     * would be most of the work: errors only. */
    memd_log_set_level(LOG_ERR);
    memd_device_spec spec;
    make_spec(&spec);
    memd_config cfg = {.limits = {.max_frame = 1 << 16, .max_sessions = 4,
                                  .max_allocs_per_session = 64, .max_reply_backlog = 1 << 20,
                                  .quota_per_uid = size % 2 ? 256 << 10 : 0,
                                  .max_suballocs_per_pool = size % 3 ? 4 : MEMD_POOL_MAX_SUBALLOCS},
                       .ndevices = 1, .devices = &spec};
    memd_state st;
    memd_error err;
    if (memd_state_init(&st, &cfg, &err) < 0)
        abort();
    memd_session s = {.uid = 1000, .admin = size % 3 == 0};
    memd_session_open(&st, &s);
    memd_buf out = {0};
    /* Chunk sizes come from the input length so reads split frames in varied places. */
    size_t chunk = 1 + size % 97, have = 0, done = 0;
    int rc = 0;
    while (rc == 0 && have < size) {
        have = have + chunk < size ? have + chunk : size;
        size_t used;
        rc = memd_frames_process(&st, &s, data + done, have - done, &out, SIZE_MAX, &used);
        done += used;
        check_replies(&out);
        out.len = 0;
    }
    if (rc == 0 && done < size) {
        memd_frames_truncated(&st, NULL, data + done, size - done, &out);
        check_replies(&out);
    }
    memd_session_close(&st, &s);
    memd_range_stats rs;
    for (int k = 0; k < MEMD_KIND_COUNT; k++)
        if (memd_device_group_stats(st.devs[0].dev, (memd_kind)k, &rs) == 0 && rs.allocated)
            abort(); /* a closed session left memory behind */
    if (st.handles.len != 0 || st.names.len != 0 || st.quota.len != 0)
        abort();
    memd_buf_free(&out);
    memd_state_fini(&st);
    return 0;
}
