/* memctl's operator views against the real daemon: status (the default command), sessions
 * and processes with the bytes they hold (table and --json), devices --json, per-process
 * metrics and metrics --listen over HTTP, events (text, --json, --follow). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "memctl_run.h"
#include "test_clock.h"

static memd_fixture f;
static memclient *c;
static char comm[16]; /* this process's name as the daemon sees it (valgrind changes it) */
static char out_path[MEMCTL_PATH_MAX], err_path[MEMCTL_PATH_MAX];
static char *out, *err;

static int run(const char *const *args)
{
    return memctl_run(&f, args, 0, out_path, err_path, &out, &err);
}

#define RUN(...) run((const char *const[]){__VA_ARGS__, NULL})

static void setup(void)
{
    FILE *fp = fopen("/proc/self/comm", "r");
    ck_assert_ptr_nonnull(fp);
    ck_assert_ptr_nonnull(fgets(comm, sizeof comm, fp));
    fclose(fp);
    comm[strcspn(comm, "\n")] = '\0';
    memctl_suite_start(&f, &c, out_path, err_path);
}

static void teardown(void)
{
    memctl_suite_stop(&f, c, out_path, err_path, &out, &err);
}

/* Writes text to DIR/name; the path in path. */
static void write_file(const char *name, const char *text, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", f.dir, name);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(text, fp);
    fclose(fp);
}

/* A JSON document must parse. */
static void assert_json(const char *doc)
{
    char path[200];
    write_file("doc.json", doc, path, sizeof path);
    ck_assert_msg(cu_python("import json, sys\njson.load(open(sys.argv[1]))\n", path) == 0,
                  "not JSON:\n%.3000s", doc);
    unlink(path);
}

/* 1 MiB + 3 MiB of DRAM constants on device 0 (12 banks, one page: each reserves the
 * buffer in every bank), and 64 KiB of L1 (64 banks). */
static uint64_t hold_some(void)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1u << 20);
    memclient_buffer b1, b2, b3;
    ck_assert_int_eq(memclient_alloc(c, &r, &b1), 0);
    r.bytes = 3u << 20;
    ck_assert_int_eq(memclient_alloc(c, &r, &b2), 0);
    r = (memclient_alloc_req){.device = 0, .cls = MEMD_CLASS_INTERNAL, .scope = MEMD_SCOPE_SRAM,
                              .bytes = 64u << 10};
    ck_assert_int_eq(memclient_alloc(c, &r, &b3), 0);
    return (b1.size_per_bank + b2.size_per_bank) * 12 + b3.size_per_bank * 64;
}

START_TEST(sessions_and_processes_say_bytes)
{
    uint64_t held = hold_some();
    char want[200];
    ck_assert_int_eq(RUN("sessions", "--json"), 0);
    assert_json(out);
    /* The client name: the program's, libmemclient's default. */
    snprintf(want, sizeof want, "\"pid\": %d, \"uid\": %d, \"process\": \"%s\", "
             "\"client\": \"test-memctl-views\", \"sessions\": 1, \"allocations\": 3, "
             "\"bytes\": %" PRIu64 ",", (int)getpid(), (int)getuid(), comm, held);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
    snprintf(want, sizeof want, "{\"device\": 0, \"kind\": \"dram\", \"allocations\": 2, "
             "\"bytes\": %" PRIu64, (uint64_t)(4u << 20) * 12);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
    ck_assert_ptr_nonnull(strstr(out, "\"connected_ns_str\": \""));

    ck_assert_int_eq(RUN("sessions"), 0);
    ck_assert_ptr_nonnull(strstr(out, "PER DEVICE"));
    ck_assert_ptr_nonnull(strstr(out, "processes: "));
    ck_assert_ptr_nonnull(strstr(out, "52.0 MiB")); /* 48 MiB DRAM + 4 MiB L1 */
    ck_assert_int_eq(RUN("sessions", "extra"), 2);

    /* The dump has them too: the table's sessions and processes, the JSON's usage. */
    ck_assert_int_eq(RUN("dump"), 0);
    ck_assert_ptr_nonnull(strstr(out, "processes: "));
    ck_assert_int_eq(RUN("dump", "--json"), 0);
    assert_json(out);
    snprintf(want, sizeof want, "\"bytes\": %" PRIu64 ", \"shared_bytes\": 0, \"use\": [", held);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%.3000s", want, out);
    ck_assert_ptr_nonnull(strstr(out, "\"processes\": ["));
    ck_assert_ptr_nonnull(strstr(out, "\"handle_str\": \""));
}
END_TEST

START_TEST(status_is_the_default)
{
    hold_some();
    ck_assert_int_eq(RUN("status", "--json"), 0);
    assert_json(out);
    /* DRAM: 4 MiB in each of 12 banks; L1: 64 KiB in each of 64. */
    char want[160];
    snprintf(want, sizeof want, "{\"kind\": \"dram\", \"banks\": 12, \"bank_size\": 1073741824, "
             "\"used\": %llu, ", (unsigned long long)(4ull << 20) * 12);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
    snprintf(want, sizeof want, "\"used_per_bank\": %llu", 4ull << 20);
    ck_assert_ptr_nonnull(strstr(out, want));
    snprintf(want, sizeof want, "{\"kind\": \"sram\", \"banks\": 64, \"bank_size\": 1335296, "
             "\"used\": %llu, ", (unsigned long long)(64ull << 10) * 64);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);

    ck_assert_int_eq(RUN("status"), 0);
    ck_assert_ptr_nonnull(strstr(out, "USED / TOTAL (ALL BANKS)"));
    ck_assert_ptr_nonnull(strstr(out, "48.0 MiB / 12.0 GiB"));
    ck_assert_ptr_nonnull(strstr(out, "4.0 MiB / 1023.9 MiB"));
    ck_assert_ptr_nonnull(strstr(out, comm));
    /* No command at all: the same view (the session ids and ages aside). */
    const char *argv[] = {NULL};
    ck_assert_int_eq(run(argv), 0);
    ck_assert_ptr_nonnull(strstr(out, "48.0 MiB / 12.0 GiB"));
    ck_assert_int_eq(RUN("--json"), 0);
    assert_json(out);
    ck_assert_int_eq(RUN("status", "--bogus"), 2);
}
END_TEST

/* top --json, the batch mode: the view without a terminal, one document per line. */
START_TEST(top_json_batch)
{
    uint64_t held = hold_some();
    ck_assert_int_eq(RUN("top", "--json", "--iterations", "2", "--interval", "0.05",
                         "--limit", "2"), 0);
    char path[200], arg[260];
    write_file("top.jsonl", out, path, sizeof path);
    snprintf(arg, sizeof arg, "%s %d %" PRIu64, path, (int)getpid(), held);
    static const char check[] =
        "import json, sys\n"
        "path, pid, held = sys.argv[1].split()\n"
        "docs = [json.loads(l) for l in open(path)]\n"
        "assert len(docs) == 2, len(docs)\n"
        "d = docs[0]\n"
        "assert d['schema_version'] == 1 and d['sort'] == 'bytes' and not d['reverse']\n"
        "assert str(d['now_ns']) == d['now_ns_str'] and docs[1]['now_ns'] > d['now_ns']\n"
        "me = [p for p in d['processes'] if p['pid'] == int(pid)]\n"
        "assert me and me[0]['bytes'] == int(held) and me[0]['allocations'] == 3, me\n"
        "b = d['buffers']\n"
        "assert d['buffers_matching'] == 3 and len(b) == 2, d\n"
        "assert [x['bytes_per_bank'] for x in b] == [3 << 20, 1 << 20], b\n"
        "assert b[0]['bytes'] == 12 * (3 << 20) and b[0]['class'] == 'constant'\n"
        "assert b[0]['handle_str'] == str(b[0]['handle']) and b[0]['kind'] == 'dram'\n"
        "g = {(x['device'], x['kind']): x for x in d['bank_groups']}\n"
        "assert g[(0, 'sram')]['used'] == 64 * (64 << 10) and g[(0, 'dram')]['banks'] == 12\n";
    ck_assert_msg(cu_python(check, arg) == 0, "top --json:\n%.3000s", out);
    /* Filters and the sort key apply as in the live view. */
    ck_assert_int_eq(RUN("top", "--json", "--iterations", "1", "--class", "internal",
                         "--sort", "name", "--reverse"), 0);
    write_file("top1.json", out, path, sizeof path);
    static const char check1[] =
        "import json, sys\n"
        "d = json.load(open(sys.argv[1]))\n"
        "assert d['sort'] == 'name' and d['reverse'] and d['buffers_matching'] == 1, d\n"
        "assert d['buffers'][0]['class'] == 'internal' and d['buffers'][0]['kind'] == 'sram'\n";
    ck_assert_msg(cu_python(check1, path) == 0, "top --json --class:\n%.3000s", out);
    ck_assert_int_eq(RUN("top", "--json", "--limit", "0"), 2);
    ck_assert_int_eq(RUN("top", "--sort", "size"), 2);
    /* Without --json and without a terminal: a usage error that names the batch mode. */
    ck_assert_int_eq(RUN("top"), 2);
    ck_assert_ptr_nonnull(strstr(err, "--json"));
}
END_TEST

/* Bank subsets make banks differ: the views sum each bank's own use and count a buffer's
 * set, never size x every bank. On Wormhole's 64-bank L1: 100 KiB per bank in banks 0-3,
 * 200 KiB in bank 8 alone, 10 KiB lockstep in all 64. */
START_TEST(views_count_bank_sets)
{
    uint32_t four[] = {0, 1, 2, 3}, eight[] = {8};
    memclient_alloc_req r = {.device = 0, .cls = MEMD_CLASS_INTERNAL, .scope = MEMD_SCOPE_SRAM,
                             .bytes = 100u << 10, .bank_set = four, .nbank_set = 4,
                             .per_bank = true};
    memclient_buffer pb, one, all;
    ck_assert_int_eq(memclient_alloc(c, &r, &pb), 0);
    r = (memclient_alloc_req){.device = 0, .cls = MEMD_CLASS_INTERNAL, .scope = MEMD_SCOPE_SRAM,
                              .bytes = 200u << 10, .bank_set = eight, .nbank_set = 1};
    ck_assert_int_eq(memclient_alloc(c, &r, &one), 0);
    r = (memclient_alloc_req){.device = 0, .cls = MEMD_CLASS_INTERNAL, .scope = MEMD_SCOPE_SRAM,
                              .bytes = 10u << 10};
    ck_assert_int_eq(memclient_alloc(c, &r, &all), 0);
    uint64_t held = pb.size_per_bank * 4 + one.size_per_bank + all.size_per_bank * 64;
    uint64_t fullest = one.size_per_bank + all.size_per_bank, emptiest = all.size_per_bank;

    char want[200];
    ck_assert_int_eq(RUN("status", "--json"), 0);
    snprintf(want, sizeof want, "\"kind\": \"sram\", \"banks\": 64, \"bank_size\": 1335296, "
             "\"used\": %" PRIu64 ", ", held);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
    snprintf(want, sizeof want, "\"used_per_bank\": %" PRIu64 ", \"used_per_bank_min\": %" PRIu64,
             fullest, emptiest);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
    ck_assert_msg(strstr(out, "\"allocations\": 3, "), "not 3 allocations:\n%s", out);
    ck_assert_int_eq(RUN("status"), 0);
    ck_assert_msg(strstr(out, "10.0 KiB-210.0 KiB / 1.3 MiB"), "no per-bank range:\n%s", out);
    ck_assert_int_eq(RUN("sessions", "--json"), 0);
    snprintf(want, sizeof want, "\"bytes\": %" PRIu64 ",", held);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
    ck_assert_int_eq(RUN("metrics"), 0);
    snprintf(want, sizeof want, "memd_device_used_bytes{device=\"0\",group=\"sram\"} %" PRIu64 "\n",
             held);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
    ck_assert_int_eq(RUN("top", "--json", "--iterations", "1"), 0);
    snprintf(want, sizeof want, "\"bytes_per_bank\":%" PRIu64 ",\"bytes\":%" PRIu64 ",",
             pb.size_per_bank, pb.size_per_bank * 4);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
    snprintf(want, sizeof want, "\"kind\":\"sram\",\"banks\":64,\"used\":%" PRIu64 ",", held);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
}
END_TEST

START_TEST(devices_json)
{
    ck_assert_int_eq(RUN("devices", "--json"), 0);
    assert_json(out);
    ck_assert_ptr_nonnull(strstr(out, "\"name\": \"wormhole_b0\""));
    ck_assert_ptr_nonnull(strstr(out, "\"allocations\": []"));
}
END_TEST

/* This process's memd_process_bytes series on device 0: pid, comm, client, cgroup (its
 * value: tests/integration/cgroup_test.py), uid, device. */
static void expect_process_series(const char *text, uint64_t held)
{
    char head[120], tail[120];
    snprintf(head, sizeof head, "memd_process_bytes{pid=\"%d\",comm=\"%s\",client=\"",
             (int)getpid(), comm);
    snprintf(tail, sizeof tail, ",uid=\"%d\",device=\"0\"} %" PRIu64 "\n", (int)getuid(), held);
    const char *at = strstr(text, head), *end = at ? strchr(at, '\n') : NULL;
    const char *t = at ? strstr(at, tail) : NULL;
    ck_assert_msg(t && t + strlen(tail) == end + 1, "no '%s...%s' in:\n%s", head, tail, text);
}

START_TEST(metrics_per_process)
{
    uint64_t held = hold_some();
    ck_assert_int_eq(RUN("metrics"), 0);
    char want[200];
    expect_process_series(out, held);
    ck_assert_ptr_nonnull(strstr(out, "# TYPE memd_process_bytes gauge\n"));
    ck_assert_ptr_nonnull(strstr(out, "memd_process_other_bytes{device=\"0\"} 0\n"));
    snprintf(want, sizeof want, "memd_device_used_bytes{device=\"0\",group=\"dram\"} %llu\n",
             (unsigned long long)(4ull << 20) * 12);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);

    /* --json: the same families, types, help and samples, read by a JSON parser and
     * compared with the text (the counters of requests and bytes move between the two
     * runs: memctl's own requests). */
    char text[200], json[200];
    write_file("metrics.txt", out, text, sizeof text);
    ck_assert_int_eq(RUN("metrics", "--json"), 0);
    write_file("metrics.json", out, json, sizeof json);
    static const char check[] =
        "import json, re, sys\n"
        "doc = json.load(open(sys.argv[1] + '.json'))\n"
        "assert doc['schema_version'] == 1\n"
        "moving = {'memd_requests_total', 'memd_received_bytes_total', 'memd_sent_bytes_total',\n"
        "          'memd_sessions_opened_total', 'memd_process_bytes', 'memd_processes'}\n"
        "fams, samples = [], set()\n"
        "for line in open(sys.argv[1] + '.txt'):\n"
        "    m = re.match(r'# TYPE (\\S+) (\\S+)', line)\n"
        "    if m: fams.append((m[1], m[2])); continue\n"
        "    if line.startswith('#'): continue\n"
        "    m = re.match(r'(\\w+)(?:\\{(.*)\\})? (\\S+)$', line.strip())\n"
        "    labels = tuple(re.findall(r'(\\w+)=\"((?:[^\"\\\\]|\\\\.)*)\"', m[2] or ''))\n"
        "    if m[1] not in moving: samples.add((m[1], labels, float(m[3])))\n"
        "assert [(f['name'], f['type']) for f in doc['metrics']] == fams, fams\n"
        "got = {(f['name'], tuple(s['labels'].items()), float(s['value']))\n"
        "       for f in doc['metrics'] for s in f['samples'] if f['name'] not in moving}\n"
        "assert got == samples, got ^ samples\n"
        "assert all(f['help'] for f in doc['metrics'])\n";
    text[strlen(text) - 4] = '\0'; /* the common stem: DIR/metrics */
    ck_assert_msg(cu_python(check, text) == 0, "metrics --json differs from the text:\n%.3000s",
                  out);
    ck_assert_int_eq(RUN("metrics", "--json", "--listen", "127.0.0.1:0"), 2);
}
END_TEST

/* A GET of path on 127.0.0.1:port; the whole response, malloc'd. */
static char *http_get(unsigned port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                     path);
    ck_assert_int_eq(write(fd, req, (size_t)n), n);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ssize_t got;
    while ((got = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)got;
        if (cap - len - 1 == 0)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    close(fd);
    return buf;
}

START_TEST(metrics_listen_serves_http)
{
    uint64_t held = hold_some();
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = memctl_spawn(&f, (const char *const[]){"metrics", "--listen", "127.0.0.1:0", NULL},
                             0, pfd[1], e);
    close(pfd[1]);
    close(e);
    /* "memctl metrics: serving http://127.0.0.1:PORT/metrics" */
    char line[256] = "";
    size_t n = 0;
    struct pollfd p = {.fd = pfd[0], .events = POLLIN};
    while (n < sizeof line - 1 && !strchr(line, '\n') && poll(&p, 1, 10000) == 1) {
        ssize_t got = read(pfd[0], line + n, sizeof line - 1 - n);
        if (got <= 0)
            break;
        n += (size_t)got;
        line[n] = '\0';
    }
    unsigned port = 0;
    ck_assert_msg(sscanf(line, "memctl metrics: serving http://127.0.0.1:%u/metrics", &port) == 1,
                  "got '%s'", line);
    ck_assert_uint_gt(port, 0);
    char *resp = http_get(port, "/metrics");
    ck_assert_msg(!strncmp(resp, "HTTP/1.1 200", 12), "%.300s", resp);
    ck_assert_ptr_nonnull(strstr(resp, "text/plain; version=0.0.4"));
    expect_process_series(resp, held);
    free(resp);
    /* Twice: the connection to memd is kept and reused. */
    resp = http_get(port, "/metrics");
    ck_assert_msg(!strncmp(resp, "HTTP/1.1 200", 12), "%.300s", resp);
    free(resp);
    resp = http_get(port, "/nope");
    ck_assert_msg(!strncmp(resp, "HTTP/1.1 404", 12), "%.300s", resp);
    free(resp);
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    close(pfd[0]);
    ck_assert_int_eq(RUN("metrics", "--listen", "nohost"), 2);
    ck_assert_int_eq(RUN("metrics", "--listen", "localhost:80"), 2); /* numeric only */
}
END_TEST

START_TEST(events_command)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 600u << 20);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ENOMEM);
    ck_assert_int_eq(RUN("events"), 0);
    ck_assert_ptr_nonnull(strstr(out, " alloc_fail "));
    ck_assert_ptr_nonnull(strstr(out, "no room for"));
    ck_assert_ptr_nonnull(strstr(out, " session_open "));
    ck_assert_int_eq(RUN("events", "--json"), 0);
    /* One object per line, each a document. */
    char *save = NULL, *copy = strdup(out);
    int lines = 0;
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save), lines++)
        assert_json(l);
    free(copy);
    ck_assert_int_gt(lines, 2);
    ck_assert_ptr_nonnull(strstr(out, "\"type\": \"alloc_fail\""));
    ck_assert_ptr_nonnull(strstr(out, "\"time_ns_str\": \""));
    ck_assert_int_eq(RUN("events", "--since", "x"), 2);

    /* --follow prints what happens after it started, until SIGINT. */
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = memctl_spawn(&f, (const char *const[]){"events", "--follow", NULL}, 0, o, e);
    close(o);
    close(e);
    memd_test_sleep_ms(300);
    memclient *late = cu_connect(&f);
    memclient_disconnect(late);
    bool seen = false;
    for (int i = 0; i < 100 && !seen; i++) {
        memd_test_sleep_ms(50);
        char *text = memctl_slurp(out_path);
        seen = strstr(text, " session_close ") && strstr(text, "released 0 allocation holds");
        free(text);
    }
    ck_assert(seen);
    ck_assert_int_eq(kill(pid, SIGINT), 0);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
}
END_TEST

/* Views tell processes apart by client name, and leave out memctl's own sessions that
 * hold nothing (each memctl command is one) and their events unless --all. */
START_TEST(views_name_clients_not_memctl)
{
    memclient *named;
    ck_assert_int_eq(memclient_connect_named(f.socket_path, "decoder-7", &named), 0);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1u << 20);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(named, &r, &b), 0);

    ck_assert_int_eq(RUN("status"), 0);
    ck_assert_msg(strstr(out, " CLIENT ") && strstr(out, " decoder-7 "), "no client:\n%s", out);
    ck_assert_int_eq(RUN("status", "--json"), 0);
    assert_json(out);
    ck_assert_msg(strstr(out, "\"client\": \"decoder-7\""), "no client:\n%s", out);
    ck_assert_int_eq(RUN("top", "--json", "--iterations", "1"), 0);
    ck_assert_msg(strstr(out, "\"client\":\"decoder-7\""), "no client:\n%s", out);

    /* This memctl's session is memctl's: out of the tables and the session count. The
     * fixture's client and the named one remain. */
    ck_assert_int_eq(RUN("sessions", "--json"), 0);
    ck_assert_msg(!strstr(out, "\"client\": \"memctl\""), "memctl listed:\n%s", out);
    ck_assert_int_eq(RUN("status"), 0);
    ck_assert_msg(strstr(out, ", 2 sessions"), "not 2 sessions:\n%s", out);
    ck_assert_int_eq(RUN("--all", "sessions", "--json"), 0);
    ck_assert_msg(strstr(out, "\"client\": \"memctl\""), "--all: no memctl:\n%s", out);
    ck_assert_int_eq(RUN("status", "--all"), 0);
    ck_assert_msg(strstr(out, ", 3 sessions"), "--all: not 3 sessions:\n%s", out);

    /* The event log: memctl's comings and goings only with --all. */
    ck_assert_int_eq(RUN("events"), 0);
    ck_assert_msg(strstr(out, "(decoder") || strstr(out, comm), "no client events:\n%s", out);
    ck_assert_msg(!strstr(out, "(memctl)"), "memctl's sessions in events:\n%s", out);
    ck_assert_int_eq(RUN("--all", "events"), 0);
    ck_assert_msg(strstr(out, "(memctl)"), "--all: no memctl sessions in events:\n%s", out);

    /* A shared buffer is every holder's: both sessions count it, marked shared. */
    cu_share(named, c, 2u << 20, "weights.shared");
    ck_assert_int_eq(RUN("dump"), 0);
    ck_assert_msg(strstr(out, "weights.shared [shared by 2]"), "not shared:\n%s", out);
    ck_assert_int_eq(RUN("sessions", "--json"), 0); /* per session: both hold it */
    char want[120];
    snprintf(want, sizeof want, "\"shared_bytes\": %llu", (unsigned long long)(2ull << 20) * 12);
    const char *first = strstr(out, want);
    ck_assert_msg(first && strstr(first + 1, want), "not twice '%s':\n%s", want, out);
    memclient_disconnect(named);
}
END_TEST

/* events --follow starts at the tail (what happened before it is not printed again);
 * --from-start replays the log first. */
START_TEST(events_follow_from_tail)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 600u << 20);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ENOMEM); /* an alloc_fail before */
    const char *const modes[][4] = {{"events", "--follow", NULL}, {"events", "--follow",
                                                                    "--from-start", NULL}};
    for (int m = 0; m < 2; m++) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        pid_t pid = memctl_spawn(&f, modes[m], 0, o, e);
        close(o);
        close(e);
        memd_test_sleep_ms(300);
        memclient_disconnect(cu_connect(&f)); /* an event after it started */
        bool seen = false;
        char *text = NULL;
        for (int i = 0; i < 100 && !seen; i++) {
            memd_test_sleep_ms(50);
            free(text);
            text = memctl_slurp(out_path);
            seen = strstr(text, " session_close ") != NULL;
        }
        ck_assert_msg(seen, "%s: no new event:\n%s", modes[m][2] ? "--from-start" : "tail", text);
        bool old = strstr(text, " alloc_fail ") != NULL;
        ck_assert_msg(old == (m == 1), "%s: the earlier alloc_fail %s:\n%s",
                      m ? "--from-start" : "tail", old ? "printed" : "missing", text);
        free(text);
        ck_assert_int_eq(kill(pid, SIGINT), 0);
        int ws;
        ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
        ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    }
}
END_TEST

/* The SVG parses as XML, and has what an operator looks for: a drawing per bank group
 * and region, a box per allocation with its details (title), the legend, the hostile
 * name escaped. */
static const char svg_check[] =
    "import sys, xml.etree.ElementTree as ET\n"
    "ns = '{http://www.w3.org/2000/svg}'\n"
    "root = ET.parse(sys.argv[1]).getroot()\n"
    "assert root.tag == ns + 'svg', root.tag\n"
    "texts = [t.text or '' for t in root.iter(ns + 'text')]\n"
    "titles = [t.text or '' for t in root.iter(ns + 'title')]\n"
    "def has(lst, s):\n"
    "    assert any(s in x for x in lst), (s, lst[:40])\n"
    "has(texts, 'device 0 wormhole_b0: dram, 12 x 1.0 GiB banks')\n"
    "has(texts, 'device 0 wormhole_b0: sram, 64 x')\n"
    "for r in ('reserved', 'code', 'data', 'logging', 'buffers'): has(texts, r)\n"
    "for c in ('code', 'constant', 'placeholder', 'internal', 'logging', 'free'): has(texts, c)\n"
    "has(titles, 'bad<name>&\"q\"')\n"
    "has(titles, ' free')\n"
    "has(titles, 'bank 63: ')\n"
    "import re\n"
    "held = {int(h) for t in titles for h in re.findall(r', handle (\\d+)', t)}\n"
    "assert len(held) == 31, sorted(held)  # every buffer held has its box\n"
    "assert root.find(ns + 'defs') is not None\n";

START_TEST(dump_svg_and_html)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1u << 20);
    r.name = "bad<name>&\"q\""; /* control characters are refused at the protocol border */
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    for (int i = 0; i < 40; i++) { /* L1 buffers of several classes, with gaps */
        memclient_alloc_req l = {.device = 0, .cls = (memd_class)(1 + i % 3),
                                 .scope = MEMD_SCOPE_SRAM, .bytes = 4096u * (1 + i % 4),
                                 .page_size = 1024};
        ck_assert_int_eq(memclient_alloc(c, &l, &b), 0);
        if (i % 4 == 0)
            ck_assert_int_eq(memclient_free(c, b.handle), 0);
    }
    char svg[200], html[200];
    snprintf(svg, sizeof svg, "%s/map.svg", f.dir);
    snprintf(html, sizeof html, "%s/map.html", f.dir);
    ck_assert_int_eq(RUN("dump", "--svg", svg), 0);
    ck_assert_msg(cu_python(svg_check, svg) == 0, "SVG check failed");
    ck_assert_int_eq(RUN("dump", "--html", html, "--class", "internal"), 0);
    char *page = memctl_slurp(html);
    ck_assert_ptr_nonnull(strstr(page, "<!DOCTYPE html>"));
    ck_assert_ptr_nonnull(strstr(page, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    ck_assert_ptr_nonnull(strstr(page, "<h2>Largest allocations (10 of 10)</h2>"));
    ck_assert_ptr_null(strstr(page, "bad<name>")); /* escaped, and filtered out of the table */
    free(page);
    ck_assert_int_eq(RUN("dump", "--svg", svg, "--json"), 2);
    ck_assert_int_eq(RUN("dump", "--svg", "/nonexistent/dir/x.svg"), 1);
    ck_assert_ptr_nonnull(strstr(err, "cannot write /nonexistent/dir/x.svg"));
    unlink(svg);
    unlink(html);
}
END_TEST

/* Each filter keeps exactly the allocations that match, in the table and the JSON. */
START_TEST(dump_filters)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    r.name = "weights.a";
    memclient_buffer w, p, other;
    ck_assert_int_eq(memclient_alloc(c, &r, &w), 0);
    r = cu_req(MEMD_CLASS_PLACEHOLDER, 8192);
    r.name = "act.b";
    ck_assert_int_eq(memclient_alloc(c, &r, &p), 0);
    memclient *c2 = cu_connect(&f);
    r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    r.name = "weights.c";
    r.device = 2;
    ck_assert_int_eq(memclient_alloc(c2, &r, &other), 0);
    memclient_snapshot *s = cu_dump(c2, 0);
    uint32_t sid2 = 0;
    for (size_t i = 0; i < s->nallocs; i++)
        if (s->allocs[i].buf.handle == other.handle)
            sid2 = s->allocs[i].session_id;
    memclient_snapshot_free(s);
    char sid[16];
    snprintf(sid, sizeof sid, "%u", sid2);

    ck_assert_int_eq(RUN("dump", "--json", "--name", "weights*"), 0);
    assert_json(out);
    ck_assert_ptr_nonnull(strstr(out, "\"weights.a\""));
    ck_assert_ptr_nonnull(strstr(out, "\"weights.c\""));
    ck_assert_ptr_null(strstr(out, "\"act.b\""));
    ck_assert_int_eq(RUN("dump", "--json", "--class", "placeholder"), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"act.b\""));
    ck_assert_ptr_null(strstr(out, "\"weights.a\""));
    ck_assert_int_eq(RUN("dump", "--json", "--session", sid), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"weights.c\""));
    ck_assert_ptr_null(strstr(out, "\"weights.a\""));
    ck_assert_int_eq(RUN("dump", "--device", "2"), 0);
    ck_assert_ptr_nonnull(strstr(out, "weights.c"));
    ck_assert_ptr_null(strstr(out, "weights.a"));
    ck_assert_ptr_null(strstr(out, "wormhole_b0"));
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    ck_assert_int_eq(RUN("dump", "--pid", pid, "--name", "*.b"), 0);
    ck_assert_ptr_nonnull(strstr(out, "act.b"));
    ck_assert_ptr_nonnull(strstr(out, "allocations: 1\n"));
    ck_assert_int_eq(RUN("dump", "--pid", "1"), 0);
    ck_assert_ptr_nonnull(strstr(out, "allocations: 0\n"));
    ck_assert_int_eq(RUN("dump", "--class", "weights"), 2);
    ck_assert_int_eq(RUN("dump", "--pid", "x"), 2);
    memclient_disconnect(c2);
}
END_TEST

START_TEST(alloc_and_free_json)
{
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = memctl_spawn(&f, (const char *const[]){"alloc", "--device", "0", "--class",
                             "constant", "--size", "64KiB", "--hold", "--json", NULL}, 0, o, e);
    close(o);
    close(e);
    char *text = NULL;
    for (int i = 0; i < 200; i++) {
        free(text);
        text = memctl_slurp(out_path);
        if (strchr(text, '\n'))
            break;
        memd_test_sleep_ms(20);
    }
    assert_json(text);
    ck_assert_ptr_nonnull(strstr(text, "\"handle_str\": \""));
    ck_assert_ptr_nonnull(strstr(text, "\"size_per_bank\": 65536"));
    free(text);
    kill(pid, SIGTERM);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    char h[32];
    snprintf(h, sizeof h, "%llu", (unsigned long long)b.handle);
    ck_assert_int_eq(RUN("free", h, "--json"), 0);
    assert_json(out);
    ck_assert_ptr_nonnull(strstr(out, "\"freed\": "));
    ck_assert_int_eq(RUN("free", "--json"), 2);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("memctl-views");
    TCase *tc = tcase_create("views");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, sessions_and_processes_say_bytes);
    tcase_add_test(tc, status_is_the_default);
    tcase_add_test(tc, devices_json);
    tcase_add_test(tc, top_json_batch);
    tcase_add_test(tc, views_count_bank_sets);
    tcase_add_test(tc, metrics_per_process);
    tcase_add_test(tc, metrics_listen_serves_http);
    tcase_add_test(tc, events_command);
    tcase_add_test(tc, views_name_clients_not_memctl);
    tcase_add_test(tc, events_follow_from_tail);
    tcase_add_test(tc, dump_svg_and_html);
    tcase_add_test(tc, dump_filters);
    tcase_add_test(tc, alloc_and_free_json);
    suite_add_tcase(s, tc);
    return s;
}
