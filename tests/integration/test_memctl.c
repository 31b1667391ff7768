/* memctl, the built binary, against the real daemon: the JSON dump (checked by
 * check_memctl_json.py, including escaping of hostile names), the table, the three CSV
 * reports, Prometheus metrics, alloc --hold / SIGTERM, free, and the exit codes and
 * messages of every failure class (usage 2, cannot connect 3, permission 4, no memory 5),
 * and the command-line forms an operator tried (help's sizes, --socket=PATH anywhere).
 *
 * memctl is $MEMCTL_BIN, else $MEMD_BUILD_ROOT/tools/memctl/memctl. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "memctl_run.h"
#include "test_clock.h"

static memd_fixture f;
static memclient *c;
static char out_path[MEMCTL_PATH_MAX], err_path[MEMCTL_PATH_MAX];
static char *out, *err; /* the last run's output */

/* Runs memctl --socket SOCK args... as uid; output in out/err; returns its exit code. */
static int run_as(uid_t uid, const char *const *args)
{
    return memctl_run(&f, args, uid, out_path, err_path, &out, &err);
}

#define RUN(...) run_as(0, (const char *const[]){__VA_ARGS__, NULL})

static void setup(void)
{
    memctl_suite_start(&f, &c, out_path, err_path);
}

static void teardown(void)
{
    memctl_suite_stop(&f, c, out_path, err_path, &out, &err);
}

static void hex(const char *s, char *buf)
{
    for (; *s; s++, buf += 2)
        sprintf(buf, "%02x", (unsigned char)*s);
    *buf = '\0';
}

START_TEST(dump_json_checks_out)
{
    /* A name with a quote, a backslash, a tab, a control byte and UTF-8. */
    const char *hostile = "w\"ei\\ght caf\xc3\xa9";
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 40000);
    r.name = hostile;
    memclient_buffer b1, b2;
    ck_assert_int_eq(memclient_alloc(c, &r, &b1), 0);
    r = cu_req(MEMD_CLASS_PLACEHOLDER, 1 << 20);
    r.name = "act";
    ck_assert_int_eq(memclient_alloc(c, &r, &b2), 0);
    /* Names with control characters or bytes that are not UTF-8 are refused (issue 14);
     * the JSON writer's escapes for them are checked with a process name
     * (outputs_escape_names). */
    memclient_buffer b3;
    r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    r.name = "bad\xff\xc3name";
    ck_assert_int_eq(memclient_alloc(c, &r, &b3), -EINVAL);
    r.name = "tab\there";
    ck_assert_int_eq(memclient_alloc(c, &r, &b3), -EINVAL);

    ck_assert_int_eq(RUN("dump", "--json"), 0);
    char json_path[200], expect[1400], h1[128], h2[16];
    snprintf(json_path, sizeof json_path, "%s/dump.json", f.dir);
    FILE *fp = fopen(json_path, "w");
    fputs(out, fp);
    fclose(fp);
    hex(hostile, h1);
    hex("act", h2);
    snprintf(expect, sizeof expect,
             "[{\"handle\": %" PRIu64 ", \"name_hex\": \"%s\", \"class\": \"constant\", "
             "\"kind\": \"dram\", \"region\": \"data\", \"device\": 0, \"pid\": %d, \"uid\": 0, "
             "\"min_size\": 40000},"
             " {\"handle\": %" PRIu64 ", \"name_hex\": \"%s\", \"class\": \"placeholder\", "
             "\"kind\": \"dram\", \"region\": \"data\", \"device\": 0, \"min_size\": 1048576}]",
             b1.handle, h1, (int)getpid(), b2.handle, h2);
    char checker[512];
    snprintf(checker, sizeof checker, "%s/tests/integration/check_memctl_json.py",
             memd_fixture_source_root());
    const char *py[] = {"python3", checker, json_path, expect, NULL};
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execvp("python3", (char *const *)py);
        _exit(127);
    }
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "check_memctl_json.py failed on:\n%s",
                  out);
    unlink(json_path);

    /* One device only. */
    ck_assert_int_eq(RUN("dump", "--json", "--device", "1"), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"schema_version\": 1"));
    ck_assert_ptr_null(strstr(out, "\"id\": 0,"));
    ck_assert_ptr_nonnull(strstr(out, "\"id\": 1,"));
    /* --detailed adds the blocks. */
    ck_assert_int_eq(RUN("dump", "--json", "--detailed"), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"blocks\": ["));
}
END_TEST

START_TEST(dump_table_and_reports)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 123456);
    r.name = "table-test";
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    char handle[32];
    snprintf(handle, sizeof handle, "%" PRIu64, b.handle);

    ck_assert_int_eq(RUN("dump"), 0);
    ck_assert_ptr_nonnull(strstr(out, "device 0: wormhole_b0"));
    /* Devices after the first follow an empty line (not an escaped newline). */
    ck_assert_msg(strstr(out, "\n\ndevice 1: ") && !strstr(out, "\\x0a"), "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "table-test"));
    ck_assert_ptr_nonnull(strstr(out, "dram/data"));
    ck_assert_ptr_nonnull(strstr(out, "LARGEST"));
    ck_assert_int_eq(RUN("devices"), 0);
    ck_assert_msg(strstr(out, "\n\ndevice 1: ") && !strstr(out, "\\x0a"), "%s", out);
    ck_assert_int_eq(RUN("dump", "--detailed"), 0);
    ck_assert_ptr_nonnull(strstr(out, "blocks:"));
    ck_assert_ptr_nonnull(strstr(out, "sessions:"));

    ck_assert_int_eq(RUN("dump", "--csv", "--report", "memory_usage_summary"), 0);
    ck_assert_msg(!strncmp(out, "device,buffer_type,num_banks,bank_size_bytes,", 45), "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "\n0,DRAM,12,1073741824,"));
    ck_assert_ptr_nonnull(strstr(out, "\n0,L1,64,"));
    ck_assert_int_eq(RUN("dump", "--csv", "--report", "l1_usage_summary"), 0);
    ck_assert_msg(!strncmp(out, "device,num_banks,largest_contiguous_free_block_bytes_per_bank,",
                           62), "%s", out);
    ck_assert_int_eq(RUN("dump", "--csv", "--report", "detailed_memory_usage"), 0);
    ck_assert(!strncmp(out, "device,buffer_type,region,address,size_bytes,status,", 51));
    char row[128];
    snprintf(row, sizeof row, ",allocated,%s,constant,%d,table-test\n", handle, (int)getpid());
    ck_assert_msg(strstr(out, row), "no row '%s' in:\n%.2000s", row, out);
    ck_assert_ptr_nonnull(strstr(out, ",free,,,,\n"));

    ck_assert_int_eq(RUN("dump", "--csv"), 2);
    ck_assert_ptr_nonnull(strstr(err, "--report"));
    ck_assert_int_eq(RUN("dump", "--csv", "--report", "nope"), 2);
    ck_assert_int_eq(RUN("dump", "--json", "--csv", "--report", "l1_usage_summary"), 2);
    ck_assert_int_eq(RUN("dump", "--device", "-1"), 2);
    ck_assert_int_eq(RUN("dump", "--device", "99999999999"), 2);
    ck_assert_int_eq(RUN("dump", "--watch", "0"), 2);
    ck_assert_int_eq(RUN("dump", "--bogus"), 2);
    ck_assert_int_eq(RUN("dump", "--device", "77"), 1);
    ck_assert_ptr_nonnull(strstr(err, "77"));
}
END_TEST

/* The line of text that contains needle (a copy, in buf), or NULL. */
static const char *line_with(const char *text, const char *needle, char *buf, size_t len)
{
    const char *p = strstr(text, needle);
    if (!p)
        return NULL;
    while (p > text && p[-1] != '\n')
        p--;
    snprintf(buf, len, "%.*s", (int)strcspn(p, "\n"), p);
    return buf;
}

/* Columns sized to the longest name: a 63-byte name does not shift the columns of the
 * other rows, and the right-aligned last column (AGE) ends every line at one place. */
START_TEST(table_columns_line_up)
{
    char longname[MEMD_NAME_MAX];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    r.name = "a";
    memclient_buffer b1, b2;
    ck_assert_int_eq(memclient_alloc(c, &r, &b1), 0);
    r.name = longname;
    ck_assert_int_eq(memclient_alloc(c, &r, &b2), 0);
    ck_assert_int_eq(RUN("dump"), 0);
    char head[512], shortrow[512], longrow[512];
    ck_assert_ptr_nonnull(line_with(out, "HANDLE", head, sizeof head));
    ck_assert_ptr_nonnull(line_with(out, longname, longrow, sizeof longrow));
    ck_assert_ptr_nonnull(line_with(out, " a ", shortrow, sizeof shortrow));
    ck_assert_msg(strlen(head) == strlen(longrow) && strlen(head) == strlen(shortrow),
                  "ragged table:\n%s\n%s\n%s", head, shortrow, longrow);
    size_t name_col = (size_t)(strstr(head, "NAME") - head);
    ck_assert_msg(strstr(longrow, longname) - longrow == (ptrdiff_t)name_col &&
                  strstr(shortrow, " a ") + 1 - shortrow == (ptrdiff_t)name_col,
                  "NAME column moved:\n%s\n%s\n%s", head, shortrow, longrow);
}
END_TEST

/* A process name is whatever a client set (prctl), escape sequences included: every
 * output escapes it (issue 14), so none reaches the operator's terminal or breaks a
 * row. */
START_TEST(outputs_escape_names)
{
    char old[16] = "";
    ck_assert_int_eq(prctl(PR_GET_NAME, old), 0);
    ck_assert_int_eq(prctl(PR_SET_NAME, "\x1b[31mred\n\x07"), 0);
    memclient *evil = cu_connect(&f); /* memd reads the name at connect */
    ck_assert_int_eq(prctl(PR_SET_NAME, old), 0);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    r.name = "plain";
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(evil, &r, &b), 0);
    /* the CSV report has no process column: the allocation's name stands in for it */
    memclient_alloc_req rn = cu_req(MEMD_CLASS_CONSTANT, 4096);
    rn.name = "a\\b,\"c\" \xc3\xa4 [31mred";
    memclient_buffer bn;
    ck_assert_int_eq(memclient_alloc(evil, &rn, &bn), 0);
    const char *const views[][4] = {{"dump", NULL, NULL, NULL},
                                    {"dump", "--csv", "--report", "detailed_memory_usage"},
                                    {"dump", "--json", NULL, NULL},
                                    {"sessions", NULL, NULL, NULL}};
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
        const char *args[5] = {views[i][0], views[i][1], views[i][2], views[i][3], NULL};
        ck_assert_msg(run_as(0, args) == 0, "memctl %s: %s", views[i][0], err);
        ck_assert_msg(!strchr(out, '\x1b') && !strchr(out, '\x07'),
                      "memctl %s %s printed a control character:\n%s", views[i][0],
                      views[i][1] ? views[i][1] : "", out);
        ck_assert_msg(strstr(out, "[31mred"), "memctl %s: no process name in\n%s", views[i][0],
                      out);
    }
    memclient_disconnect(evil);
}
END_TEST

/* An idle group of several regions is not fragmented: FRAG is per region, and the
 * group's figure is over each region's largest block (it was 1 - largest region / all
 * free: 4.7 % for an empty Wormhole DRAM). */
START_TEST(idle_group_is_not_fragmented)
{
    ck_assert_int_eq(RUN("dump", "--device", "0"), 0);
    char row[512];
    ck_assert_ptr_nonnull(line_with(out, "  dram ", row, sizeof row));
    ck_assert_msg(strstr(row, " 0.0% "), "group row: %s", row);
    ck_assert_int_eq(RUN("dump", "--json", "--device", "0"), 0);
    ck_assert_msg(!strstr(out, "\"fragmentation_pct\": 4.") && strstr(out, "\"fragmentation_pct\": 0.00"),
                  "%s", out);
}
END_TEST

/* Fragmentation per bank: three 64 KiB pieces in L1 bank 7 alone, the middle one freed,
 * leave bank 7 two free blocks; its row and its JSON entry give 1 - largest / free, the
 * other banks 0 %. */
START_TEST(per_bank_fragmentation)
{
    memclient_snapshot *s = cu_dump(c, 0);
    uint64_t region = cu_region(s, MEMD_KIND_SRAM, "buffers")->size;
    memclient_snapshot_free(s);
    uint32_t seven = 7;
    memclient_alloc_req r = cu_sram(65536);
    r.bank_set = &seven;
    r.nbank_set = 1;
    r.per_bank = 1;
    memclient_buffer b[3];
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(memclient_alloc(c, &r, &b[i]), 0);
    ck_assert_int_eq(memclient_free(c, b[1].handle), 0);
    uint64_t free = region - 2 * 65536, largest = region - 3 * 65536;
    double pct = 100.0 * (1.0 - (double)largest / (double)free);

    ck_assert_int_eq(RUN("dump", "--device", "0"), 0);
    char row[512], want[64];
    ck_assert_ptr_nonnull(line_with(out, "  sram/buffers  7 ", row, sizeof row));
    snprintf(want, sizeof want, " %.1f%% ", pct);
    ck_assert_msg(strstr(row, want) && strstr(row, "128.0 KiB"), "want '%s' in: %s", want, row);
    ck_assert_ptr_nonnull(line_with(out, "  sram/buffers  8-63 ", row, sizeof row));
    ck_assert_msg(strstr(row, " 0.0% "), "%s", row);
    ck_assert_int_eq(RUN("dump", "--json", "--device", "0"), 0);
    const char *l1 = strstr(out, "\"kind\": \"sram\"");
    ck_assert_ptr_nonnull(l1);
    char entry[256];
    snprintf(entry, sizeof entry,
             "{\"bank\": 7, \"core\": null, \"allocated\": 131072, \"free\": %" PRIu64
             ", \"largest_free\": %" PRIu64 ", \"free_blocks\": 2, \"allocations\": 2, "
             "\"fragmentation_pct\": %.2f}", free, largest, pct);
    ck_assert_msg(strstr(l1, entry), "no '%s' in %s", entry, l1);
    ck_assert_int_eq(memclient_free(c, b[0].handle), 0);
    ck_assert_int_eq(memclient_free(c, b[2].handle), 0);
}
END_TEST

START_TEST(devices_sessions_metrics)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1 << 20);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_int_eq(RUN("devices"), 0);
    ck_assert_ptr_nonnull(strstr(out, "wormhole_b0"));
    ck_assert_ptr_nonnull(strstr(out, "etsoc1"));
    ck_assert_int_eq(RUN("sessions"), 0);
    ck_assert_ptr_nonnull(strstr(out, "memctl")); /* itself, at least */
    ck_assert_int_eq(RUN("devices", "extra"), 2);

    ck_assert_int_eq(RUN("metrics"), 0);
    ck_assert_ptr_nonnull(strstr(out, "# TYPE memd_requests_total counter\n"));
    ck_assert_ptr_nonnull(strstr(out, "# HELP memd_region_allocated_bytes "));
    ck_assert_ptr_nonnull(strstr(out, "# TYPE memd_region_allocated_bytes gauge\n"));
    memclient_snapshot *s = cu_dump(c, 0);
    char line[160];
    snprintf(line, sizeof line,
             "memd_region_allocated_bytes{device=\"0\",group=\"dram\",region=\"data\"} %" PRIu64 "\n",
             cu_region(s, MEMD_KIND_DRAM, "data")->stats.allocated);
    memclient_snapshot_free(s);
    ck_assert_msg(strstr(out, line), "no '%s' in metrics", line);
    /* Every sample line belongs to a family announced with # TYPE before it. */
    char *save = NULL, *copy = strdup(out), family[128] = "";
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(l, "# TYPE ", 7)) {
            sscanf(l + 7, "%127s", family);
            continue;
        }
        if (l[0] == '#')
            continue;
        ck_assert_msg(!strncmp(l, family, strlen(family)) &&
                      (l[strlen(family)] == '{' || l[strlen(family)] == ' '),
                      "sample '%s' outside its family '%s'", l, family);
        ck_assert_msg(!strncmp(l, "memd_", 5), "metric '%s' without the memd_ prefix", l);
    }
    free(copy);
}
END_TEST

/* A client pool in every view: the table and the JSON list its sub-allocations with name,
 * offset, size and "as of" time; metrics count its pooled bytes for this process. */
START_TEST(pools_in_dump_and_metrics)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_INTERNAL, 1 << 20);
    r.name = "rt.pool";
    memclient_pool *p;
    ck_assert_int_eq(memclient_pool_create(c, &r, &p), 0);
    memclient_pool_buffer a, b, gone;
    ck_assert_int_eq(memclient_pool_alloc(p, 4096, 0, "conv1.out", &a), 0);
    ck_assert_int_eq(memclient_pool_alloc(p, 100, 256, "relu1.out", &b), 0);
    ck_assert_int_eq(memclient_pool_alloc(p, 64, 0, "gone", &gone), 0);
    ck_assert_int_eq(memclient_pool_flush(p), 0);
    ck_assert_int_eq(memclient_pool_free(p, gone.handle), 0);
    ck_assert_int_eq(memclient_pool_flush(p), 0);

    ck_assert_int_eq(RUN("dump"), 0);
    char line[256];
    snprintf(line, sizeof line, "pool %" PRIu64 " rt.pool (pid %d ", a.lease, (int)getpid());
    ck_assert_msg(strstr(out, line), "no '%s' in:\n%s", line, out);
    ck_assert_ptr_nonnull(strstr(out, "2 sub-allocations, 4.1 KiB of 1.0 MiB pooled, as of "));
    ck_assert_ptr_nonnull(strstr(out, "rt.pool [pool]"));
    ck_assert_ptr_nonnull(strstr(out, "conv1.out"));
    ck_assert_ptr_nonnull(strstr(out, "relu1.out"));
    ck_assert_ptr_null(strstr(out, "gone"));

    ck_assert_int_eq(RUN("dump", "--json"), 0);
    char json_path[200];
    snprintf(json_path, sizeof json_path, "%s/pools.json", f.dir);
    FILE *fp = fopen(json_path, "w");
    fputs(out, fp);
    fclose(fp);
    char script[1024];
    snprintf(script, sizeof script,
             "import json,sys; d=json.load(open(sys.argv[1])); p=d['pools']; "
             "assert len(p)==1, p; p=p[0]; "
             "assert p['handle']==%" PRIu64 " and p['name']=='rt.pool' and p['pid']==%d, p; "
             "assert p['pooled_bytes']==4096+128 and p['suballocation_count']==2, p; "
             "assert p['as_of_ns']>0 and 0<=p['as_of_age_s']<60, p; "
             "s=p['suballocations']; assert [x['name'] for x in s]==['conv1.out','relu1.out'], s; "
             "assert s[0]['offset']==%" PRIu64 " and s[0]['size']==4096, s; "
             "assert s[1]['offset']==%" PRIu64 " and s[1]['size']==128, s; "
             "assert s[1]['address']==p['address']+s[1]['offset'], s; "
             "a=[x for x in d['allocations'] if x['handle']==p['handle']]; "
             "assert a and a[0]['pool'] is True, a",
             a.lease, (int)getpid(), a.offset, b.offset);
    ck_assert_msg(cu_python(script, json_path) == 0, "pools JSON wrong:\n%s", out);
    unlink(json_path);

    ck_assert_int_eq(RUN("metrics"), 0);
    snprintf(line, sizeof line, "memd_pooled_bytes{pid=\"%d\",", (int)getpid());
    char *at = strstr(out, line);
    ck_assert_msg(at, "no '%s' in metrics", line);
    ck_assert_ptr_nonnull(strstr(at, "} 4224\n"));
    snprintf(line, sizeof line, "memd_pool_bytes{pid=\"%d\",", (int)getpid());
    ck_assert_msg((at = strstr(out, line)) && strstr(at, "} 1048576\n"), "%s", out);
    snprintf(line, sizeof line, "memd_pool_suballocations{pid=\"%d\",", (int)getpid());
    ck_assert_msg((at = strstr(out, line)) && strstr(at, "} 2\n"), "%s", out);
    ck_assert_int_eq(memclient_pool_destroy(p), 0);
    ck_assert_int_eq(RUN("metrics"), 0);
    snprintf(line, sizeof line, "memd_pooled_bytes{pid=\"%d\",", (int)getpid());
    ck_assert_ptr_null(strstr(out, line));
}
END_TEST

/* Starts `memctl alloc ... --hold` and waits for the buffer line (key=value, or with
 * --json one object); returns the handle. */
static uint64_t start_hold(const char *const *args, pid_t *pid)
{
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    *pid = memctl_spawn(&f, args, 0, o, e);
    close(o);
    close(e);
    uint64_t handle = 0;
    for (int i = 0; i < 500 && !handle; i++) {
        memd_test_sleep_ms(10);
        char *text = memctl_slurp(out_path);
        const char *h = strstr(text, "handle=");
        const char *j = strstr(text, "{\"handle\": ");
        if (h && strchr(h, '\n'))
            handle = strtoull(h + 7, NULL, 10);
        else if (j && strchr(j, '\n'))
            handle = strtoull(j + 11, NULL, 10);
        free(text);
    }
    ck_assert_msg(handle, "memctl alloc printed no handle");
    return handle;
}

static void stop_hold(pid_t pid, uint64_t handle)
{
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "memctl alloc status %d", ws);
    memclient_alloc_info info;
    ck_assert_int_eq(memclient_query(c, handle, &info), -ENOENT);
    char *log = memctl_slurp(err_path);
    ck_assert_ptr_nonnull(strstr(log, "freed handle"));
    free(log);
}

START_TEST(alloc_hold_then_sigterm)
{
    pid_t pid;
    uint64_t handle = start_hold((const char *const[]){"alloc", "--device", "0", "--class",
                                                       "placeholder", "--size", "3MiB", "--name",
                                                       "held", "--hold", NULL}, &pid);
    char *text = memctl_slurp(out_path);
    ck_assert_ptr_nonnull(strstr(text, " kind=dram region=data "));
    ck_assert_ptr_nonnull(strstr(text, " size_per_bank=3145728 "));
    free(text);
    memclient_alloc_info info;
    ck_assert_int_eq(memclient_query(c, handle, &info), 0);
    ck_assert_str_eq(info.name, "held");
    ck_assert_uint_eq(info.pid, (uint32_t)pid);
    ck_assert_int_eq(info.cls, MEMD_CLASS_PLACEHOLDER);
    stop_hold(pid, handle);

    /* Shape + dtype, SRAM scope by its alias. */
    handle = start_hold((const char *const[]){"alloc", "--device", "0", "--class", "internal",
                                              "--scope", "l1", "--dtype", "bf16", "--shape",
                                              "16x256", "--page-size", "2KiB", "--hold", NULL},
                        &pid);
    ck_assert_int_eq(memclient_query(c, handle, &info), 0);
    ck_assert_int_eq(info.scope, MEMD_SCOPE_SRAM);
    ck_assert_int_eq(info.buf.kind, MEMD_KIND_SRAM);
    ck_assert_uint_eq(info.buf.page_size, 2048);
    /* 8 KiB in 2 KiB pages over the SRAM banks: at least one page in each bank used. */
    ck_assert_uint_ge(info.buf.size_per_bank * info.buf.banks, 16 * 256 * 2);
    stop_hold(pid, handle);
}
END_TEST

/* --bank-set and --per-bank; the dump's per-bank views; a bad bank list. */
START_TEST(alloc_bank_sets)
{
    pid_t pid, pid2;
    uint64_t handle = start_hold((const char *const[]){"alloc", "--device", "0", "--class",
                                                       "constant", "--scope", "sram", "--size",
                                                       "4KiB", "--bank-set", "0-3,8", "--hold",
                                                       NULL}, &pid);
    char *text = memctl_slurp(out_path);
    ck_assert_msg(strstr(text, " banks=5 ") && strstr(text, " mode=range bank_addrs=0:0x"),
                  "%s", text);
    ck_assert_ptr_nonnull(strstr(text, ",8:0x"));
    free(text);
    uint64_t h2 = start_hold((const char *const[]){"alloc", "--device", "0", "--class",
                                                   "constant", "--scope", "sram", "--size",
                                                   "4KiB", "--bank-set", "2-5", "--per-bank",
                                                   "--hold", NULL}, &pid2);
    text = memctl_slurp(out_path);
    ck_assert_msg(strstr(text, " mode=per-bank bank_addrs=2:0x"), "%s", text);
    free(text);
    /* --json: the dump's keys for the banks. */
    pid_t pid3;
    uint64_t h3 = start_hold((const char *const[]){"alloc", "--device", "0", "--class",
                                                   "constant", "--scope", "sram", "--size",
                                                   "4KiB", "--bank-set", "6,9", "--per-bank",
                                                   "--hold", "--json", NULL}, &pid3);
    text = memctl_slurp(out_path);
    ck_assert_msg(strstr(text, "\"bank_mode\": \"per_bank\", \"bank_ids\": [6, 9], "
                               "\"bank_addresses\": [{\"bank\": 6, \"address\": ") &&
                  strstr(text, "{\"bank\": 9, \"address\": ") && strstr(text, "}]}\n"),
                  "%s", text);
    free(text);
    stop_hold(pid3, h3);
    /* --mode: tt-metal's names of the bank-set modes. */
    h3 = start_hold((const char *const[]){"alloc", "--device", "0", "--class", "constant",
                                          "--scope", "sram", "--size", "4KiB", "--bank-set", "6,9",
                                          "--mode", "range_lockstep", "--hold", NULL}, &pid3);
    text = memctl_slurp(out_path);
    ck_assert_msg(strstr(text, " mode=range-lockstep bank_addrs=6:0x"), "%s", text);
    free(text);
    stop_hold(pid3, h3);
    h3 = start_hold((const char *const[]){"alloc", "--device", "0", "--class", "constant",
                                          "--scope", "sram", "--size", "4KiB", "--bank-set", "6,9",
                                          "--mode", "per_core", "--hold", "--json", NULL}, &pid3);
    text = memctl_slurp(out_path);
    ck_assert_msg(strstr(text, "\"bank_mode\": \"per_bank\""), "%s", text);
    free(text);
    stop_hold(pid3, h3);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "1",
                         "--bank-set", "6", "--mode", "sideways", "--hold"), 2);
    text = memctl_slurp(err_path);
    ck_assert_msg(strstr(text, "uniform_per_core, range_lockstep or per_core"), "%s", text);
    free(text);
    ck_assert_int_eq(RUN("dump"), 0);
    text = memctl_slurp(out_path);
    /* The tables (memctl_table): per-bank use, then which banks each buffer spans. */
    ck_assert_msg(strstr(text, "per-bank use") && strstr(text, "HANDLE  MODE") &&
                  strstr(text, "  0-3,8\n") && strstr(text, "(per bank)  2:0x"), "%s", text);
    char row[64];
    snprintf(row, sizeof row, "%" PRIu64 "  range ", handle);
    ck_assert_msg(strstr(text, row), "%s", text);
    free(text);
    ck_assert_int_eq(RUN("dump", "--json"), 0);
    text = memctl_slurp(out_path);
    ck_assert_msg(strstr(text, "\"bank_mode\": \"range\"") &&
                  strstr(text, "\"bank_ids\": [0, 1, 2, 3, 8]") &&
                  strstr(text, "\"bank_mode\": \"per_bank\"") &&
                  strstr(text, "\"bank_addresses\": [") && strstr(text, "\"banks\": ["),
                  "%s", text);
    free(text);
    /* The logs were overwritten since: check the exits and the frees only. */
    pid_t pids[] = {pid, pid2};
    uint64_t handles[] = {handle, h2};
    for (int i = 0; i < 2; i++) {
        int ws;
        ck_assert_int_eq(kill(pids[i], SIGTERM), 0);
        ck_assert_int_eq(waitpid(pids[i], &ws, 0), pids[i]);
        ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
        memclient_alloc_info info;
        ck_assert_int_eq(memclient_query(c, handles[i], &info), -ENOENT);
    }
    /* Usage errors: decreasing, reversed range, junk, and a bank the device lacks. */
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "1",
                         "--bank-set", "8,0-3", "--hold"), 2);
    char *log = memctl_slurp(err_path);
    ck_assert_ptr_nonnull(strstr(log, "increasing bank ids"));
    free(log);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "1",
                         "--bank-set", "3-1", "--hold"), 2);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "1",
                         "--bank-set", "1,x", "--hold"), 2);
    log = memctl_slurp(err_path);
    ck_assert_msg(strstr(log, "'1,x': expected increasing bank ids and ranges like 0-3,8 at "
                              "offset 2"), "%s", log);
    free(log);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "1",
                         "--bank-set", "2,99999999999999999999", "--hold"), 2);
    log = memctl_slurp(err_path);
    ck_assert_msg(strstr(log, "bank id too large at offset 2 (ids are below 65536"), "%s", log);
    free(log);
    ck_assert_int_ne(RUN("alloc", "--device", "0", "--class", "constant", "--scope", "sram",
                         "--size", "1", "--bank-set", "64", "--hold"), 0);
    log = memctl_slurp(err_path);
    ck_assert_msg(strstr(log, "bank set: no bank 64 (banks 0-63)"), "%s", log);
    free(log);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--scope", "sram",
                         "--size", "1", "--per-bank", "--banks", "4", "--hold"), 1);
    log = memctl_slurp(err_path);
    ck_assert_msg(strstr(log, "banks 4 would leave the others unused"), "%s", log);
    free(log);
}
END_TEST

/* --sizes: tt-metal's DifferentSizesPerCore (test_per_core_allocation.cpp) by hand: 1, 2, 3
 * and 4 KiB on banks 0-3, each piece at its own address (internal: top-down from the SRAM
 * buffers region's top, 0x146000); the count must match the set's. */
START_TEST(alloc_sizes_per_core)
{
    pid_t pid;
    uint64_t handle = start_hold((const char *const[]){"alloc", "--device", "0", "--class",
                                                       "internal", "--scope", "sram",
                                                       "--bank-set", "0-3", "--per-bank", "--sizes",
                                                       "1KiB,2KiB,3KiB,4KiB", "--hold", NULL},
                                 &pid);
    char *text = memctl_slurp(out_path);
    ck_assert_msg(strstr(text, " size_per_bank=4096 banks=4 ") &&
                  strstr(text, " mode=per-bank bank_addrs=0:0x145c00,1:0x145800,2:0x145400,"
                               "3:0x145000\n"), "%s", text);
    free(text);
    memclient_bank banks[4];
    ck_assert_int_eq(memclient_bank_info(c, handle, banks, 4), 4);
    ck_assert_uint_eq(banks[3].address, 0x145000);
    stop_hold(pid, handle);
    /* What the bank set cannot take: a size too few, an empty field, with --size. */
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "internal", "--scope", "sram",
                         "--bank-set", "0-3", "--per-bank", "--sizes", "1KiB,2KiB,3KiB",
                         "--hold"), 2);
    ck_assert_msg(strstr(err, "--sizes gives 3 sizes for a --bank-set of 4 banks"), "%s", err);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "internal", "--scope", "sram",
                         "--bank-set", "0-1", "--per-bank", "--sizes", "1KiB,,2KiB", "--hold"), 2);
    ck_assert_msg(strstr(err, "bad value for --sizes: '1KiB,,2KiB'"), "%s", err);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "internal", "--scope", "sram",
                         "--bank-set", "0-1", "--per-bank", "--sizes", "1KiB,2KiB", "--size",
                         "1KiB", "--hold"), 2);
    ck_assert_msg(strstr(err, "or --sizes (without --page-size)"), "%s", err);
    /* Without per-bank: the client library says why. */
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "internal", "--scope", "sram",
                         "--bank-set", "0-1", "--sizes", "1KiB,2KiB", "--hold"), 1);
    ck_assert_msg(strstr(err, "sizes (per-core shard sizes) need per_bank"), "%s", err);
}
END_TEST

START_TEST(alloc_and_free_failures)
{
    /* Usage errors: 2, with the reason. */
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "4KiB"), 2);
    ck_assert_ptr_nonnull(strstr(err, "--hold"));
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "12XB",
                         "--hold"), 2);
    ck_assert_ptr_nonnull(strstr(err, "12XB"));
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size",
                         "99999999999999999999999", "--hold"), 2);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "16EiB",
                         "--hold"), 2);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "weights", "--size", "1",
                         "--hold"), 2);
    ck_assert_int_eq(RUN("alloc", "--class", "constant", "--size", "1", "--hold"), 2);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "1",
                         "--shared", "--hold"), 2);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "1",
                         "--align", "3", "--hold"), 2);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--dtype", "f32",
                         "--hold"), 2);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--dtype", "f32",
                         "--shape", "2xx3", "--hold"), 2);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "64",
                         "--dtype", "f32", "--shape", "4", "--hold"), 2);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--dtype", "f33",
                         "--shape", "4", "--hold"), 2);
    ck_assert_int_eq(RUN("free", "12abc"), 2);
    ck_assert_int_eq(RUN("free"), 2);

    /* No memory: 5, with the region's state. A 1 MiB buffer at the bottom of the data
     * region leaves less than (size - 512 KiB) in one piece. */
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1 << 20);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    memclient_snapshot *s = cu_dump(c, 0);
    char size[32];
    snprintf(size, sizeof size, "%" PRIu64, cu_region(s, MEMD_KIND_DRAM, "data")->size - (512u << 10));
    memclient_snapshot_free(s);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", size,
                         "--hold"), 5);
    ck_assert_ptr_nonnull(strstr(err, "out of memory"));
    ck_assert_ptr_nonnull(strstr(err, "largest free block"));
    ck_assert_ptr_nonnull(strstr(err, size));

    /* An alignment (2^63) no bank address meets: invalid (1), not out of memory (5). */
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "1",
                         "--align", "9223372036854775808", "--hold"), 1);
    ck_assert_ptr_nonnull(strstr(err, "invalid"));
    ck_assert_ptr_nonnull(strstr(err, "alignment 9223372036854775808"));

    /* No such handle: 1. */
    ck_assert_int_eq(RUN("free", "987654321"), 1);
    ck_assert_ptr_nonnull(strstr(err, "987654321"));
    ck_assert_msg(strstr(err, "no such allocation") && !strstr(err, "socket"), "%s", err);

    /* Permission: 4 (nobody frees root's buffer). */
    cu_open_socket_to_all(&f);
    char handle[32];
    snprintf(handle, sizeof handle, "%" PRIu64, b.handle);
    ck_assert_int_eq(run_as(CU_NOBODY, (const char *const[]){"free", handle, NULL}), 4);
    ck_assert_ptr_nonnull(strstr(err, "permission"));
    /* Root (admin) may free it. */
    ck_assert_int_eq(RUN("free", handle), 0);
    ck_assert_ptr_nonnull(strstr(out, "freed handle"));
}
END_TEST

/* Every size alloc --help lists is taken as a size (the daemon then refuses 13 banks:
 * exit 1, not the usage error 2). */
START_TEST(help_sizes_are_sizes)
{
    ck_assert_int_eq(RUN("alloc", "--help"), 0);
    const char *sizes = strstr(out, "\n  sizes:"); /* the line of examples, not --sizes */
    ck_assert_ptr_nonnull(sizes);
    sizes += strcspn(sizes, ":") + 1;
    char list[128];
    snprintf(list, sizeof list, "%.*s", (int)strcspn(sizes, "(.\n"), sizes);
    int n = 0;
    for (char *save, *tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        ck_assert_msg(RUN("alloc", "--device", "0", "--class", "constant", "--size", tok,
                          "--banks", "13", "--hold") == 1, "--size %s: %s", tok, err);
        n++;
    }
    ck_assert_int_ge(n, 3);
}
END_TEST

START_TEST(banks_over_the_device_name_its_limit)
{
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--size", "4KiB",
                         "--banks", "13", "--hold"), 1);
    ck_assert_msg(strstr(err, "13 banks requested, but dram of device 'wormhole_b0' has 12"),
                  "%s", err);
}
END_TEST

/* --socket=PATH, and --socket in either form after the command. */
START_TEST(socket_option_forms)
{
    char opt[200];
    snprintf(opt, sizeof opt, "--socket=%s", f.socket_path);
    ck_assert_int_eq(RUN(opt, "devices"), 0);
    ck_assert_ptr_nonnull(strstr(out, "wormhole_b0"));
    ck_assert_int_eq(RUN("devices", opt), 0);
    ck_assert_int_eq(RUN("--socket=/nonexistent/a.sock", "devices"), 3);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/a.sock"));
    ck_assert_int_eq(RUN("devices", "--socket", "/nonexistent/b.sock"), 3);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/b.sock"));
    ck_assert_int_eq(RUN("devices", "--socket"), 2);
}
END_TEST

/* model check --help is help, not a file name; other options are usage errors. */
START_TEST(model_subcommand_help)
{
    ck_assert_int_eq(RUN("model", "check", "--help"), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: memctl model check"));
    ck_assert_int_eq(RUN("model", "list", "-h"), 0);
    ck_assert_int_eq(RUN("model", "check", "--bogus"), 2);
}
END_TEST

/* A socket this user may not use: exit 4 (permission), and the message says whose the
 * socket really is and what would help; it used to exit 3 and always blame group memd. */
START_TEST(permission_denied_names_the_real_owner)
{
    const char *const devices[] = {"devices", NULL};
    cu_open_socket_to_all(&f);
    /* root's alone. */
    ck_assert_int_eq(chmod(f.socket_path, 0600), 0);
    ck_assert_int_eq(run_as(CU_NOBODY, devices), 4);
    ck_assert_msg(strstr(err, "Permission denied") && strstr(err, "socket root:root mode 0600") &&
                  strstr(err, "only root may connect") && !strstr(err, "group memd"), "%s", err);
    /* Group access for a group nobody is not in: join that group. */
    struct group *gr = getgrgid(1);
    ck_assert_ptr_nonnull(gr);
    char name[64], want[320];
    snprintf(name, sizeof name, "%s", gr->gr_name);
    ck_assert_int_eq(chown(f.socket_path, 0, 1), 0);
    ck_assert_int_eq(chmod(f.socket_path, 0660), 0);
    ck_assert_int_eq(run_as(CU_NOBODY, devices), 4);
    snprintf(want, sizeof want, "socket root:%s mode 0660: add nobody to group %s (usermod -aG %s nobody)",
             name, name, name);
    ck_assert_msg(strstr(err, want), "no '%s' in: %s", want, err);
    /* A folder on the way that nobody may enter. */
    ck_assert_int_eq(chmod(f.socket_path, 0666), 0);
    ck_assert_int_eq(chmod(f.dir, 0700), 0);
    ck_assert_int_eq(run_as(CU_NOBODY, devices), 4);
    snprintf(want, sizeof want, "folder %s is root:root mode 0700: this user may not enter it", f.dir);
    ck_assert_msg(strstr(err, want), "no '%s' in: %s", want, err);
    cu_open_socket_to_all(&f);
    ck_assert_int_eq(run_as(CU_NOBODY, devices), 0);
}
END_TEST

START_TEST(cannot_connect_names_the_path)
{
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = memctl_spawn(
        NULL, (const char *const[]){"--socket", "/nonexistent/dir/memd.sock", "dump", NULL}, 0, o,
        e);
    close(o);
    close(e);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert_int_eq(WEXITSTATUS(ws), 3);
    char *text = memctl_slurp(err_path);
    ck_assert_msg(strstr(text, "/nonexistent/dir/memd.sock"), "%s", text);
    ck_assert_ptr_nonnull(strstr(text, "No such file or directory"));
    free(text);
}
END_TEST

START_TEST(dump_watch_repeats_until_interrupted)
{
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = memctl_spawn(&f, (const char *const[]){"dump", "--json", "--watch", "0.1", NULL},
                             0, o, e);
    close(o);
    close(e);
    memd_test_sleep_ms(450);
    ck_assert_int_eq(kill(pid, SIGINT), 0);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d", ws);
    char *text = memctl_slurp(out_path);
    int docs = 0;
    for (const char *p = text; (p = strstr(p, "\"schema_version\": 1")); p++)
        docs++;
    free(text);
    ck_assert_int_ge(docs, 2);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("memctl");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, dump_json_checks_out);
    tcase_add_test(tc, dump_table_and_reports);
    tcase_add_test(tc, table_columns_line_up);
    tcase_add_test(tc, outputs_escape_names);
    tcase_add_test(tc, idle_group_is_not_fragmented);
    tcase_add_test(tc, per_bank_fragmentation);
    tcase_add_test(tc, devices_sessions_metrics);
    tcase_add_test(tc, pools_in_dump_and_metrics);
    tcase_add_test(tc, alloc_hold_then_sigterm);
    tcase_add_test(tc, alloc_bank_sets);
    tcase_add_test(tc, alloc_sizes_per_core);
    tcase_add_test(tc, alloc_and_free_failures);
    tcase_add_test(tc, help_sizes_are_sizes);
    tcase_add_test(tc, banks_over_the_device_name_its_limit);
    tcase_add_test(tc, socket_option_forms);
    tcase_add_test(tc, model_subcommand_help);
    tcase_add_test(tc, permission_denied_names_the_real_owner);
    tcase_add_test(tc, cannot_connect_names_the_path);
    tcase_add_test(tc, dump_watch_repeats_until_interrupted);
    suite_add_tcase(s, tc);
    return s;
}
