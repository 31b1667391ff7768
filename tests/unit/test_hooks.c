/* Change hooks (daemon/core/hooks.c): every event reaches every listener that has its
 * callback, listeners of the allocation path (prepare, alloc_created, alloc_changed)
 * first, each kind in registration order, however the two kinds were registered
 * interleaved; the allocation path's emitters reach all of theirs though they stop
 * early, a refusing prepare ends the walk, and a removed listener hears nothing more. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "hooks.h"
#include "state.h"

/* Which listener heard which event, in order: "B:prepare A:destroy ...". */
static char heard[512];

static void note(void *data, const char *event)
{
    size_t n = strlen(heard);
    snprintf(heard + n, sizeof heard - n, "%s%s:%s", n ? " " : "", (const char *)data, event);
}

static int prepare_ok(void *data, memd_session *s, memd_error *err)
{
    (void)s;
    (void)err;
    note(data, "prepare");
    return 0;
}

static int prepare_full(void *data, memd_session *s, memd_error *err)
{
    (void)s;
    note(data, "prepare");
    return memd_error_set(err, -EIO, "full");
}

static void created(void *data, memd_alloc *a)
{
    (void)a;
    note(data, "created");
}

static void changed(void *data, const memd_alloc *a)
{
    (void)a;
    note(data, "changed");
}

static void closed(void *data, memd_session *s)
{
    (void)s;
    note(data, "closed");
}

static int restore(void *data, const memd_record *r, memd_error *err)
{
    (void)r;
    (void)err;
    note(data, "restore");
    return 0;
}

static void destroyed(void *data)
{
    note(data, "destroy");
}

/* Record-only listeners (as sub-devices, cgroup limits, ranges) and allocation-path
 * ones (as the store), registered interleaved. */
static const memd_state_events records = {.record_restore = restore, .destroy = destroyed};
static const memd_state_events store = {.prepare = prepare_ok, .alloc_created = created,
                                        .alloc_changed = changed, .session_closed = closed};
static const memd_state_events changes = {.alloc_changed = changed, .destroy = destroyed};
static const memd_state_events refusing = {.prepare = prepare_full};

START_TEST(events_reach_their_listeners_in_order)
{
    memd_state st;
    memset(&st, 0, sizeof st);
    memd_hook a, b, c, d;
    memd_hook_add(&st, &a, &records, "A");
    memd_hook_add(&st, &b, &store, "B");
    memd_hook_add(&st, &c, &records, "C");
    memd_hook_add(&st, &d, &changes, "D");
    memd_alloc x;
    memd_error err;
    memd_error_reset(&err);
    memd_record r = {.kind = MEMD_RECORD_PLAN};

    heard[0] = '\0';
    ck_assert_int_eq(memd_hooks_prepare(&st, NULL, &err), 0);
    memd_hooks_alloc_created(&st, &x);
    memd_hooks_alloc_changed(&st, &x);
    ck_assert_str_eq(heard, "B:prepare B:created B:changed D:changed");

    heard[0] = '\0';
    memd_hooks_session_closed(&st, NULL);
    ck_assert_int_eq(memd_hooks_record_restore(&st, &r, &err), 0);
    ck_assert_str_eq(heard, "B:closed A:restore C:restore");

    memd_hook_remove(&st, &b);
    heard[0] = '\0';
    ck_assert_int_eq(memd_hooks_prepare(&st, NULL, &err), 0);
    memd_hooks_alloc_changed(&st, &x);
    memd_hooks_destroy(&st);
    ck_assert_str_eq(heard, "D:changed D:destroy A:destroy C:destroy");
}
END_TEST

START_TEST(a_refusing_prepare_stops_the_request)
{
    memd_state st;
    memset(&st, 0, sizeof st);
    memd_hook a, b, c;
    memd_hook_add(&st, &a, &records, "A");
    memd_hook_add(&st, &b, &refusing, "B");
    memd_hook_add(&st, &c, &store, "C");
    memd_error err;
    memd_error_reset(&err);
    heard[0] = '\0';
    ck_assert_int_eq(memd_hooks_prepare(&st, NULL, &err), -EIO);
    ck_assert_str_eq(err.msg, "full");
    ck_assert_str_eq(heard, "B:prepare"); /* C is not asked once B refused */
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("hooks");
    memd_test_tcase(s, "core", 0, NULL, NULL,
                    (const TTest *const[]){events_reach_their_listeners_in_order,
                                           a_refusing_prepare_stops_the_request, NULL});
    return s;
}
