/* memd.yaml: daemon settings, device entries (descriptor and tt_metal), relative paths,
 * errors with positions in the right file, and `memd --check-config` (table and JSON). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_config.h"
#include "check_main.h"
#include "config.h"
#include "soc_internal.h"
#include "ttmetal.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)

static char *path_in(const char *env, const char *rel)
{
    const char *root = getenv(env);
    ck_assert_msg(root != NULL, "%s is not set", env);
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/%s", root, rel);
    return p;
}

static int load_file(const char *path, memd_config *cfg, char *msg, size_t cap)
{
    memd_error err;
    memset(&err, 0, sizeof(err));
    int rc = memd_config_load(path, cfg, &err);
    msg[0] = '\0';
    if (rc)
        memd_error_format(&err, msg, cap);
    return rc;
}

/* Loads a config whose text is `text`, from a file of its own (removed after). */
static int load_text(const char *text, memd_config *cfg, char *msg, size_t cap)
{
    char dir[] = "/tmp/memd-test-config-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/m.yaml", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_ge(fputs(text, f), 0);
    ck_assert_int_eq(fclose(f), 0);
    int rc = load_file(path, cfg, msg, cap);
    unlink(path);
    rmdir(dir);
    return rc;
}

static const memd_device_spec *by_id(const memd_config *cfg, uint32_t id)
{
    for (uint32_t i = 0; i < cfg->ndevices; i++)
        if (cfg->devices[i].id == id)
            return &cfg->devices[i];
    return NULL;
}

/* ---- the shipped default config ---- */

START_TEST(test_default_config)
{
    char *path = path_in("MEMD_SOURCE_ROOT", "config/memd.yaml");
    memd_config cfg;
    char msg[1024];
    int rc = load_file(path, &cfg, msg, sizeof(msg));
    ck_assert_msg(rc == 0, "%s", msg);
    ck_assert_str_eq(cfg.path, path);
    ck_assert_str_eq(cfg.socket_path, "");
    ck_assert_str_eq(cfg.state_dir, "");
    ck_assert_str_eq(cfg.admin_group, "");
    ck_assert_uint_eq(cfg.limits.max_frame, 1048576);
    ck_assert_uint_eq(cfg.limits.max_sessions, 1024);
    ck_assert_uint_eq(cfg.limits.max_allocs_per_session, 65536);
    ck_assert_uint_eq(cfg.limits.max_reply_backlog, 4 * MiB);
    ck_assert_uint_eq(cfg.limits.quota_per_uid, 0);
    ck_assert_uint_eq(cfg.limits.reclaim_grace_ms, 30000);
    ck_assert_uint_eq(cfg.ndevices, 4);

    const memd_device_spec *wh = by_id(&cfg, 0);
    ck_assert_ptr_nonnull(wh);
    ck_assert_str_eq(wh->name, "wormhole_b0");
    ck_assert_uint_eq(wh->groups[MEMD_KIND_DRAM].banks, 12);
    ck_assert_uint_eq(wh->groups[MEMD_KIND_DRAM].bank_size, GiB);
    ck_assert_uint_eq(wh->groups[MEMD_KIND_SRAM].banks, 64);
    ck_assert_uint_eq(wh->groups[MEMD_KIND_SRAM].bank_size, 1499136 - 160 * KiB);
    ck_assert(!wh->texture.enabled);

    /* Esperanto class: one DRAM bank with code, data and logging */
    const memd_device_spec *et = by_id(&cfg, 1);
    ck_assert_ptr_nonnull(et);
    const memd_bank_group_spec *g = &et->groups[MEMD_KIND_DRAM];
    ck_assert_uint_eq(g->banks, 1);
    ck_assert_uint_eq(et->groups[MEMD_KIND_SRAM].banks, 0);
    ck_assert_uint_eq(g->nregions, 3);
    ck_assert_str_eq(g->regions[0].name, "code");
    ck_assert_str_eq(g->regions[1].name, "data");
    ck_assert_str_eq(g->regions[2].name, "logging");
    ck_assert_uint_eq(g->regions[2].base + g->regions[2].size, g->bank_size);
    ck_assert(et->policy[MEMD_KIND_DRAM][MEMD_CLASS_LOGGING].enabled);
    ck_assert_uint_eq(et->policy[MEMD_KIND_DRAM][MEMD_CLASS_LOGGING].region, 2);

    /* GMEM style: 4 KiB constants */
    const memd_device_spec *gm = by_id(&cfg, 2);
    ck_assert_ptr_nonnull(gm);
    ck_assert_uint_eq(gm->policy[MEMD_KIND_DRAM][MEMD_CLASS_CONSTANT].alignment, 4096);
    ck_assert_int_eq(gm->policy[MEMD_KIND_DRAM][MEMD_CLASS_CONSTANT].dir, MEMD_DIR_BOTTOM_UP);
    ck_assert_int_eq(gm->policy[MEMD_KIND_DRAM][MEMD_CLASS_PLACEHOLDER].dir, MEMD_DIR_TOP_DOWN);

    /* the texture device */
    const memd_device_spec *gpu = by_id(&cfg, 3);
    ck_assert_ptr_nonnull(gpu);
    ck_assert(gpu->texture.enabled);
    ck_assert_uint_eq(gpu->texture.max_width, 16384);
    ck_assert_uint_eq(gpu->texture.pitch_alignment, 256);

    /* every device builds */
    memd_error err = {0};
    for (uint32_t i = 0; i < cfg.ndevices; i++) {
        memd_device *d = NULL;
        ck_assert_int_eq(memd_device_create(&cfg.devices[i], &d, &err), 0);
        memd_device_destroy(d);
    }
    memd_config_free(&cfg);
    memd_config_free(&cfg); /* idempotent */
    free(path);
}
END_TEST

START_TEST(test_relative_paths_and_overrides)
{
    char *path = path_in("MEMD_SOURCE_ROOT", "tests/data/soc/memd-relative.yaml");
    memd_config cfg;
    char msg[1024];
    /* from another working directory: paths still resolve against the config's folder */
    char cwd[4096];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
    ck_assert_int_eq(chdir("/"), 0);
    int rc = load_file(path, &cfg, msg, sizeof(msg));
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_msg(rc == 0, "%s", msg);
    ck_assert_str_eq(cfg.socket_path, "/tmp/memd-test/memd.sock");
    ck_assert_str_eq(cfg.state_dir, "/tmp/memd-test/state");
    ck_assert_str_eq(cfg.admin_group, "memd-admins");
    ck_assert_uint_eq(cfg.limits.max_frame, 64 * KiB);
    ck_assert_uint_eq(cfg.limits.max_sessions, 8);
    ck_assert_uint_eq(cfg.limits.max_allocs_per_session, 100);
    ck_assert_uint_eq(cfg.limits.max_reply_backlog, MiB);
    ck_assert_uint_eq(cfg.limits.quota_per_uid, 256 * KiB);
    ck_assert_uint_eq(cfg.limits.reclaim_grace_ms, 0);
    ck_assert_uint_eq(cfg.ndevices, 2);
    ck_assert_uint_eq(cfg.devices[0].id, 5);
    ck_assert_str_eq(cfg.devices[0].name, "tiny");
    ck_assert_uint_eq(cfg.devices[0].policy[MEMD_KIND_DRAM][MEMD_CLASS_CONSTANT].alignment, 0);
    ck_assert_uint_eq(cfg.devices[1].id, 9);
    ck_assert_str_eq(cfg.devices[1].name, "tiny-gmem");
    ck_assert_uint_eq(cfg.devices[1].policy[MEMD_KIND_DRAM][MEMD_CLASS_CONSTANT].alignment, 4096);
    ck_assert_uint_eq(cfg.devices[1].policy[MEMD_KIND_DRAM][MEMD_CLASS_CONSTANT].region, 1);
    ck_assert_int_eq(cfg.devices[1].groups[MEMD_KIND_DRAM].bank_offsets[1], (int64_t)MiB);
    memd_config_free(&cfg);
    free(path);
}
END_TEST

/* Errors inside a descriptor point into that descriptor, not into memd.yaml. */
START_TEST(test_errors_in_named_files)
{
    static const struct {
        const char *cfg, *file, *want;
    } cases[] = {
        {"memd-overlap.yaml", "devices/overlap.yaml",
         ":9:29: region 'logging' [0x19000, 0x1a000) overlaps region 'data' [0x10000, 0x20000)"},
        {"memd-truncated.yaml", "devices/truncated.yaml",
         ":7:1: invalid YAML: while parsing a flow mapping did not find expected ',' or '}'"},
        {"memd-missing.yaml", "memd-missing.yaml", ":3:17: cannot read '"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char rel[256];
        snprintf(rel, sizeof(rel), "tests/data/soc/%s", cases[i].cfg);
        char *path = path_in("MEMD_SOURCE_ROOT", rel);
        snprintf(rel, sizeof(rel), "tests/data/soc/%s", cases[i].file);
        char *file = path_in("MEMD_SOURCE_ROOT", rel);
        memd_config cfg;
        char msg[2048], want[2048];
        ck_assert_int_eq(load_file(path, &cfg, msg, sizeof(msg)), -EINVAL);
        snprintf(want, sizeof(want), "%s%s", file, cases[i].want);
        ck_assert_msg(strncmp(msg, want, strlen(want)) == 0, "got '%s'\nwant '%s'", msg, want);
        ck_assert_ptr_null(cfg.devices);
        ck_assert_uint_eq(cfg.ndevices, 0);
        free(path);
        free(file);
    }
    /* the missing file is named with its resolved path and the system's reason */
    char *path = path_in("MEMD_SOURCE_ROOT", "tests/data/soc/memd-missing.yaml");
    memd_config cfg;
    char msg[2048];
    load_file(path, &cfg, msg, sizeof(msg));
    ck_assert_msg(strstr(msg, "tests/data/soc/devices/does-not-exist.yaml': No such file or directory"), "%s", msg);
    free(path);
}
END_TEST

START_TEST(test_config_file_errors)
{
    memd_config cfg;
    char msg[1024];
    ck_assert_int_eq(load_file("/nonexistent/memd.yaml", &cfg, msg, sizeof(msg)), -ENOENT);
    ck_assert_str_eq(msg, "/nonexistent/memd.yaml: cannot read the config: No such file or directory");
    ck_assert_int_eq(load_file("/", &cfg, msg, sizeof(msg)), -EINVAL);
    ck_assert_str_eq(msg, "/: cannot read the config: not a regular file");
    char longp[700];
    memset(longp, 'a', sizeof(longp) - 1);
    longp[sizeof(longp) - 1] = '\0';
    ck_assert_int_eq(load_file(longp, &cfg, msg, sizeof(msg)), -ENAMETOOLONG);
}
END_TEST

/* ---- malformed memd.yaml (from a buffer; descriptor paths against tests/data/soc) ---- */

static const struct {
    const char *text, *want;
} bad[] = {
    {"devices: []\n", "m.yaml:1:10: expected at least one device"},
    {"socket: /run/x\n", "m.yaml:1:1: missing key 'devices' in memd.yaml: expected a list of devices"},
    {"sockets: /x\ndevices: []\n", "m.yaml:1:1: unknown key 'sockets' in memd.yaml; expected one of: socket, state_dir, admin_group, log_level, shared_names, limits, devices"},
    {"shared_names: global\nsharednames: 1\n", "m.yaml:2:1: unknown key 'sharednames'"},
    {"socket: \"/run/x\\ey\"\ndevices: []\n", "m.yaml:1:9: byte 6 of the string is a control character (0x1b)"},
    {"shared_names: \"glo\\u0085bal\"\ndevices: []\n", "m.yaml:1:15: byte 3 of the string is a control character (0xc2)"},
    {"shared_names: everyone\ndevices: []\n", "m.yaml:1:15: expected shared_names 'per_uid' or 'global', got 'everyone'"},
    {"log_level: loud\ndevices: []\n", "m.yaml:1:12: expected log_level err, warning, notice, info or debug, got 'loud'"},
    {"socket: memd.sock\n", "m.yaml:1:9: expected the socket as an absolute path, got 'memd.sock'"},
    {"socket: /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
     "m.yaml:1:9: string is too long (110 bytes, at most 107)"},
    {"state_dir: [a]\n", "m.yaml:1:12: expected a string, got a sequence"},
    {"admin_group: 'wheel;rm'\n", "m.yaml:1:14: expected a name of 1 to 63 letters"},
    {"limits: {max_frame: 10}\n", "m.yaml:1:21: expected max_frame between 64 bytes and 4 GiB - 1, got 10"},
    {"limits: {max_frame: 4GiB}\n", "m.yaml:1:21: expected max_frame between 64 bytes and 4 GiB - 1, got 4294967296"},
    {"limits: {max_sessions: 0}\n", "m.yaml:1:24: expected max_sessions > 0, got 0"},
    {"limits: {max_sessions: -3}\n", "m.yaml:1:24: expected a non-negative integer, got '-3'"},
    {"limits: {max_allocs_per_session: 4294967296}\n", "m.yaml:1:34: integer '4294967296' is too large (at most 4294967295)"},
    {"limits: {max_reply_backlog: 0}\n", "m.yaml:1:29: expected max_reply_backlog > 0, got 0"},
    {"limits: {postmortems: 5000}\n", "m.yaml:1:23: expected postmortems at most 4096, got 5000"},
    {"limits: {quota: 1}\n", "m.yaml:1:10: unknown key 'quota' in limits"},
    {"limits: 5\n", "m.yaml:1:9: expected limits (a mapping), got a scalar"},
    {"devices:\n  - id: 0\n    descriptor: devices/tiny.yaml\ncgroup_limits:\n  - {cgroup: a/b, device: 0, max: 1MiB}\n", "m.yaml:5:14: bad cgroup path 'a/b': it must start with '/'"},
    {"devices:\n  - id: 0\n    descriptor: devices/tiny.yaml\ncgroup_limits:\n  - {cgroup: /a/../b, device: 0, max: 1MiB}\n", "m.yaml:5:14: bad cgroup path '/a/../b': it has a '.' or '..' component"},
    {"devices:\n  - id: 0\n    descriptor: devices/tiny.yaml\ncgroup_limits:\n  - {cgroup: /a/, device: 0, max: 1MiB}\n", "m.yaml:5:14: bad cgroup path '/a/': it has an empty component or a trailing '/'"},
    {"devices:\n  - id: 0\n    descriptor: devices/tiny.yaml\ncgroup_limits:\n  - {cgroup: /a, device: 7, max: 1MiB}\n", "m.yaml:5:26: no device 7"},
    {"devices:\n  - id: 0\n    descriptor: devices/tiny.yaml\ncgroup_limits:\n  - {cgroup: /a, device: 0, group: hbm, max: 1MiB}\n", "m.yaml:5:36: expected a bank group: sram (l1) or dram (global)"},
    {"devices:\n  - id: 0\n    descriptor: devices/tiny.yaml\ncgroup_limits:\n  - {cgroup: /a, device: 0}\n", "m.yaml:5:5: missing key 'max' in a cgroup limit"},
    {"devices:\n  - id: 0\n    descriptor: devices/tiny.yaml\ncgroup_limits:\n  - {cgroup: /a, device: 0, max: 1MiB, quota: 1}\n", "m.yaml:5:"},
    {"devices:\n  - id: 0\n    descriptor: devices/tiny.yaml\ncgroup_limits:\n  - {cgroup: /a, device: 0, max: 1MiB}\n  - {cgroup: /a, device: 0, group: dram, max: 2MiB}\n", "m.yaml:6:5: cgroup /a has a limit on device 0 dram already (line 5)"},
    {"devices: {id: 0}\n", "m.yaml:1:10: expected a list of devices (a sequence), got a mapping"},
    {"devices:\n  - descriptor: devices/tiny.yaml\n", "m.yaml:2:5: missing key 'id' in a device entry: expected the device's number"},
    {"devices:\n  - id: x\n    descriptor: devices/tiny.yaml\n", "m.yaml:2:9: expected an integer, got 'x'"},
    {"devices:\n  - id: 4294967296\n    descriptor: devices/tiny.yaml\n", "m.yaml:2:9: integer '4294967296' is too large"},
    {"devices:\n  - id: 1\n", "m.yaml:2:5: a device needs 'descriptor: PATH' (memd's own format) or 'tt_metal: {soc_descriptor, core_descriptor, product, hw_cqs}'"},
    {"devices:\n  - id: 1\n    descriptor: devices/tiny.yaml\n    tt_metal: {}\n", "m.yaml:2:5: a device takes either 'descriptor' or 'tt_metal', not both"},
    {"devices:\n  - id: 1\n    descriptor: devices/tiny.yaml\n  - id: 1\n    name: other\n    descriptor: devices/tiny.yaml\n",
     "m.yaml:4:9: device id 1 is used twice (first at line 2)"},
    {"devices:\n  - id: 1\n    descriptor: devices/tiny.yaml\n  - id: 2\n    descriptor: devices/tiny.yaml\n",
     "m.yaml:4:5: device name 'tiny' is used twice (first at line 2); give each device its own 'name'"},
    {"devices:\n  - id: 1\n    descriptor: devices/tiny.yaml\n    texture: {}\n",
     "m.yaml:4:5: unknown key 'texture' in a descriptor device; expected one of: id, name, descriptor, policy, dram, sram"},
    {"devices:\n  - id: 1\n    descriptor: devices/tiny.yaml\n    sram: {banks: 4}\n",
     "m.yaml:4:12: unknown key 'banks' in a descriptor device's bank group settings; expected one of: page_size"},
    {"devices:\n  - id: 1\n    descriptor: devices/tiny.yaml\n    dram: {page_size: 48}\n",
     "m.yaml:2:5: device 'tiny': dram page_size 48 is not a power of two"},
    {"devices:\n  - id: 1\n    descriptor: [devices/tiny.yaml]\n", "m.yaml:3:17: expected a string, got a sequence"},
    {"devices:\n  - id: 1\n    descriptor: devices/tiny.yaml\n    policy: {dram: {code: {region: buffers}}}\n",
     "m.yaml:4:36: no dram region 'buffers' (regions: code, data)"},
    {"devices:\n  - id: 1\n    descriptor: devices/tiny.yaml\n    name: 'x y'\n", "m.yaml:4:11: expected a name"},
    {"devices:\n  - 7\n", "m.yaml:2:5: expected a device entry (a mapping), got a scalar"},
    /* tt_metal entries (errors found before any file is read) */
    {"devices:\n  - id: 1\n    tt_metal: {soc_descriptor: a, core_descriptor: b, product: P}\n    sram: {reserved: 1}\n",
     "m.yaml:3:15: missing key 'hw_cqs' in tt_metal: expected the number of hardware command queues"},
    {"devices:\n  - id: 1\n    tt_metal: {soc_descriptor: a, core_descriptor: b, product: P, hw_cqs: 0}\n    sram: {reserved: 1}\n",
     "m.yaml:3:75: expected at least 1 hardware command queue, got 0"},
    {"devices:\n  - id: 1\n    tt_metal: {soc_descriptor: a, core_descriptor: b, product: P, hw_cqs: 1, cqs: 1}\n",
     "m.yaml:3:78: unknown key 'cqs' in tt_metal"},
    {"devices:\n  - id: 1\n    tt_metal: {soc_descriptor: a, core_descriptor: b, product: P, hw_cqs: 1}\n",
     "m.yaml:2:5: missing key 'sram' in a tt-metal device: expected {reserved: SIZE} (the L1 bytes firmware keeps)"},
    {"devices:\n  - id: 1\n    tt_metal: {soc_descriptor: a, core_descriptor: b, product: P, hw_cqs: 1}\n    sram: {alignment: 16}\n",
     "m.yaml:4:11: missing key 'reserved' in sram: expected the L1 bytes reserved for firmware and kernels"},
    {"devices:\n  - id: 1\n    tt_metal: {soc_descriptor: a, core_descriptor: b, product: P, hw_cqs: 1}\n    sram: {reserved: 1, banks: 4}\n",
     "m.yaml:4:25: unknown key 'banks' in sram settings of a tt-metal device; expected one of: reserved, alignment, page_size"},
    {"devices:\n  - id: 1\n    tt_metal: {soc_descriptor: a, core_descriptor: b, product: P, hw_cqs: 1}\n    sram: {reserved: -1}\n",
     "m.yaml:4:22: expected a non-negative size, got '-1'"},
    {"devices:\n  - id: 1\n    tt_metal: {soc_descriptor: nope.yaml, core_descriptor: b, product: P, hw_cqs: 1}\n    sram: {reserved: 1}\n",
     "m.yaml:3:32: cannot read '"},
    /* sub_devices (tiny: 2 DRAM banks, 4 SRAM banks) */
#define TINY "devices:\n  - id: 1\n    descriptor: devices/tiny.yaml\nsub_devices:\n"
    {TINY "  - {name: a, device: 1, group: sram}\n",
     "m.yaml:5:5: missing key 'banks' in a sub-device"},
    {TINY "  - {name: a, device: 2, group: sram, banks: 0}\n",
     "m.yaml:5:23: sub-device 'a': no device 2"},
    {TINY "  - {name: a, device: 1, group: hbm, banks: 0}\n",
     "m.yaml:5:33: expected a bank group: sram (l1) or dram (global)"},
    {TINY "  - {name: a, device: 1, group: sram, banks: 0-4}\n",
     "m.yaml:5:46: sub-device 'a': bank 4 is not a bank of sram of device 1 (it has 4)"},
    {TINY "  - {name: a, device: 1, group: sram, banks: '2,1'}\n",
     "m.yaml:5:46: bad bank list '2,1' at character 3"},
    {TINY "  - {name: a, device: 1, group: sram, banks: '0,70000'}\n",
     "m.yaml:5:46: bad bank list '0,70000' at character 3: bank id too large (a bank group has "
     "at most 65536 banks)"},
    {TINY "  - {name: a, device: 1, group: sram, banks: 0-1}\n  - {name: b, device: 1, group: l1, banks: 1-3}\n",
     "m.yaml:6:44: sub-device 'b' shares bank 1 with 'a': list it under 'overlap' to allow that"},
    {TINY "  - {name: a, device: 1, group: sram, banks: 0-1, overlap: [c]}\n",
     "m.yaml:5:61: overlap names no sub-device 'c'"},
    {TINY "  - {name: a, device: 1, group: sram, banks: 0}\n  - {name: a, device: 1, group: dram, banks: 0}\n",
     "m.yaml:6:12: sub-device name 'a' is used twice"},
    {TINY "  - {name: a, device: 1, group: sram, banks: 0, users: [7]}\n  - {name: b, device: 1, group: dram, banks: 0, users: [7]}\n",
     "m.yaml:6:56: sub-device 'b': uid 7 is bound to 'a' already"},
    {TINY "  - {name: a, device: 1, group: sram, banks: 0, budget: lots}\n",
     "m.yaml:5:57: expected a size"},
    {TINY "  - {name: a, device: 1, group: sram, banks: 0, window: wide}\n",
     "m.yaml:5:57: expected a size"},
    {TINY "  - {name: a, device: 1, group: sram, banks: 0-1}\n  - {name: b, device: 1, group: l1, banks: 1-3, overlap: [a], window: 4KiB}\n",
     "m.yaml:6:71: sub-device 'b' shares bank 1 with 'a', and b owns a window: windows share "
     "addresses, so their banks may not be shared"},
    {TINY "  - {name: a, device: 1, group: sram, banks: 0, colour: red}\n",
     "m.yaml:5:49: unknown key 'colour' in a sub-device"},
#undef TINY
};

START_TEST(test_config_malformed)
{
    char *base = path_in("MEMD_SOURCE_ROOT", "tests/data/soc");
    memd_config cfg;
    memd_error err;
    memset(&err, 0, sizeof(err));
    const memd_config_files files = {.base_dir = base};
    int rc = memd_config_load_buffer("m.yaml", bad[_i].text, strlen(bad[_i].text), &files, &cfg, &err);
    char msg[1024];
    memd_error_format(&err, msg, sizeof(msg));
    ck_assert_msg(rc == -EINVAL, "case %d: rc %d", _i, rc);
    ck_assert_msg(strncmp(msg, bad[_i].want, strlen(bad[_i].want)) == 0, "case %d:\n got  '%s'\n want '%s'", _i, msg,
                  bad[_i].want);
    ck_assert_ptr_null(cfg.devices);
    free(base);
}
END_TEST

/* A valid sub_devices list: overlap where named, users and groups kept for the daemon, a
 * window. */
START_TEST(test_sub_devices)
{
    char *base = path_in("MEMD_SOURCE_ROOT", "tests/data/soc");
    const memd_config_files files = {.base_dir = base};
    const char *text = "devices:\n  - id: 1\n    descriptor: devices/tiny.yaml\n"
                       "sub_devices:\n"
                       "  - {name: a, device: 1, group: l1, banks: '0-1,3', budget: 16KiB,\n"
                       "     users: [1000, 1001], groups: [video]}\n"
                       "  - {name: b, device: 1, group: sram, banks: 1-2, overlap: [a]}\n"
                       "  - {name: c, device: 1, group: dram, banks: 0-1, window: 4KiB}\n";
    memd_config cfg;
    memd_error err;
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(memd_config_load_buffer("m.yaml", text, strlen(text), &files, &cfg, &err), 0);
    ck_assert_uint_eq(cfg.nsubdevs, 3);
    const memd_subdev_spec *a = &cfg.subdevs[0];
    ck_assert_int_eq(a->kind, MEMD_KIND_SRAM);
    ck_assert_uint_eq(a->nbanks, 3);
    ck_assert_uint_eq(a->banks[2], 3);
    ck_assert_uint_eq(a->budget, 16384);
    ck_assert_uint_eq(a->nusers, 2);
    ck_assert_uint_eq(a->users[1], 1001);
    ck_assert_str_eq(a->groups[0], "video");
    ck_assert_str_eq(cfg.subdevs[1].overlap[0], "a");
    ck_assert_int_eq(cfg.subdevs[2].kind, MEMD_KIND_DRAM);
    ck_assert_uint_eq(cfg.subdevs[2].window, 4096);
    ck_assert_uint_eq(a->window, 0);
    memd_config_free(&cfg);
    free(base);
}
END_TEST

START_TEST(test_no_base_dir)
{
    const char *text = "devices:\n  - id: 0\n    descriptor: /etc/passwd\n";
    memd_config cfg;
    memd_error err;
    ck_assert_int_eq(memd_config_load_buffer("m.yaml", text, strlen(text), NULL, &cfg, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "descriptor files cannot be read here");
    ck_assert_uint_eq(err.line, 3);
    ck_assert_uint_eq(err.column, 17);
}
END_TEST

/* A reader serves the descriptor files (as fuzzing does): memd.yaml's paths, resolved
 * against base_dir, are what it is asked for; its message names the failure. */
static int mem_read(void *ctx, const char *path, char **buf, size_t *len, char *msg, size_t cap)
{
    const char *const *files = ctx; /* path, text, path, text, ..., NULL */
    for (; files[0]; files += 2) {
        if (strcmp(path, files[0]) == 0) {
            *buf = strdup(files[1]);
            *len = strlen(files[1]);
            return *buf ? 0 : -ENOMEM;
        }
    }
    snprintf(msg, cap, "not served");
    return -ENOENT;
}

START_TEST(test_files_from_reader)
{
    static const char *const served[] = {
        "mem/devices/d.yaml",
        "name: d\ndram: {banks: 2, bank_size: 1MiB, regions: [{name: data}]}\n",
        NULL,
    };
    const memd_config_files files = {.base_dir = "mem", .read = mem_read, .ctx = (void *)served};
    const char *ok = "devices:\n  - {id: 1, descriptor: devices/d.yaml}\n"
                     "  - {id: 2, name: e, descriptor: devices/d.yaml}\n";
    memd_config cfg;
    memd_error err;
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(memd_config_load_buffer("m.yaml", ok, strlen(ok), &files, &cfg, &err), 0);
    ck_assert_uint_eq(cfg.ndevices, 2);
    ck_assert_str_eq(cfg.devices[0].name, "d");
    ck_assert_str_eq(cfg.devices[1].name, "e");
    ck_assert_uint_eq(cfg.devices[1].groups[MEMD_KIND_DRAM].banks, 2);
    memd_config_free(&cfg);

    const char *missing = "devices:\n  - {id: 1, descriptor: /devices/d.yaml}\n";
    ck_assert_int_eq(memd_config_load_buffer("m.yaml", missing, strlen(missing), &files, &cfg, &err), -EINVAL);
    char msg[1024];
    memd_error_format(&err, msg, sizeof(msg));
    ck_assert_str_eq(msg, "m.yaml:2:25: cannot read '/devices/d.yaml': not served");
}
END_TEST

/* ---- tt_metal devices through memd.yaml ---- */

static bool have_shared(void)
{
    const char *d = getenv("MEMD_SHARED_DATA");
    char p[4096];
    if (!d)
        return false;
    snprintf(p, sizeof(p), "%s/soc/tt-metal/soc_wormhole_b0_80_arch.yaml", d);
    return access(p, R_OK) == 0;
}

/* A config written at run time with absolute tt-metal paths from MEMD_SHARED_DATA. */
static char *write_ttmetal_config(const char *extra)
{
    char *dir = strdup("/tmp/memd-test-config-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/memd.yaml", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    const char *sd = getenv("MEMD_SHARED_DATA");
    fprintf(f,
            "devices:\n"
            "  - id: 3\n"
            "    tt_metal:\n"
            "      soc_descriptor: %s/soc/tt-metal/soc_grayskull_120_arch.yaml\n"
            "      core_descriptor: %s/soc/tt-metal/core_grayskull_120_arch.yaml\n"
            "      product: E75\n"
            "      hw_cqs: 2\n"
            "    sram: {reserved: 96KiB, alignment: 32}\n"
            "    dram:\n"
            "      alignment: 64\n"
            "      regions: [{name: code, size: 16MiB}, {name: data}, {name: logging, size: 1MiB}]\n"
            "    texture: {max_width: 8192, max_height: 8192, pitch_alignment: 64}\n"
            "    policy: {l1: {constant: {dir: bottom_up}}}\n"
            "%s",
            sd, sd, extra);
    fclose(f);
    free(dir);
    return path;
}

static void remove_config(char *path)
{
    unlink(path);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    rmdir(path);
    free(path);
}

START_TEST(test_ttmetal_config)
{
    char *path = write_ttmetal_config("");
    memd_config cfg;
    char msg[2048];
    int rc = load_file(path, &cfg, msg, sizeof(msg));
    ck_assert_msg(rc == 0, "%s", msg);
    ck_assert_uint_eq(cfg.ndevices, 1);
    const memd_device_spec *d = &cfg.devices[0];
    ck_assert_uint_eq(d->id, 3);
    ck_assert_str_eq(d->name, "grayskull-e75");
    ck_assert_str_eq(d->arch, "grayskull");
    const memd_bank_group_spec *dr = &d->groups[MEMD_KIND_DRAM], *l1 = &d->groups[MEMD_KIND_SRAM];
    ck_assert_uint_eq(dr->banks, 8);
    ck_assert_uint_eq(dr->bank_size, GiB);
    ck_assert_uint_eq(dr->alignment, 64);
    ck_assert_uint_eq(dr->nregions, 3);
    ck_assert_uint_eq(dr->regions[1].base, 16 * MiB);
    ck_assert_uint_eq(dr->regions[1].size, GiB - 17 * MiB);
    ck_assert_uint_eq(l1->banks, 92); /* E75, 2 CQs: 88 + 4 */
    ck_assert_uint_eq(l1->bank_size, MiB);
    ck_assert_uint_eq(l1->alignment, 32);
    ck_assert_uint_eq(l1->regions[0].size, 96 * KiB); /* E75 banks all start at L1 address 0 */
    ck_assert(d->texture.enabled);
    ck_assert_int_eq(d->policy[MEMD_KIND_SRAM][MEMD_CLASS_CONSTANT].dir, MEMD_DIR_BOTTOM_UP);
    ck_assert_int_eq(d->policy[MEMD_KIND_SRAM][MEMD_CLASS_PLACEHOLDER].dir, MEMD_DIR_TOP_DOWN);
    ck_assert(d->policy[MEMD_KIND_DRAM][MEMD_CLASS_LOGGING].enabled);
    memd_config_free(&cfg);
    remove_config(path);
}
END_TEST

/* A Wormhole galaxy with `remap` in its tt_metal block; with subdevs, also tiny.yaml
 * (no cores) as device 1 and those sub_devices. */
static int galaxy_config(const char *remap, const char *subdevs, memd_config *cfg, char *msg,
                         size_t cap)
{
    const char *sd = getenv("MEMD_SHARED_DATA"), *src = getenv("MEMD_SOURCE_ROOT");
    char text[16384];
    int len = snprintf(text, sizeof text,
                       "devices:\n"
                       "  - id: 0\n"
                       "    tt_metal:\n"
                       "      soc_descriptor: %s/soc/tt-metal/soc_wormhole_b0_80_arch.yaml\n"
                       "      core_descriptor: %s/soc/tt-metal/core_wormhole_b0_80_arch.yaml\n"
                       "      product: galaxy\n"
                       "      hw_cqs: 1\n"
                       "%s"
                       "    sram: {reserved: 160KiB}\n",
                       sd, sd, remap);
    ck_assert(len > 0 && (size_t)len < sizeof text);
    if (subdevs) {
        int more = snprintf(text + len, sizeof text - (size_t)len,
                            "  - id: 1\n"
                            "    descriptor: %s/tests/data/soc/devices/tiny.yaml\n"
                            "sub_devices:\n%s",
                            src ? src : ".", subdevs);
        ck_assert(more > 0 && (size_t)more < sizeof text - (size_t)len);
    }
    return load_text(text, cfg, msg, cap);
}

/* tt_metal.l1_bank_remap: tt-metal's default shuffle unless told (bank 0 is logical core
 * (1, 4) on a Wormhole galaxy grid: see test_banks_ttmetal.c), libstdc++ (the same),
 * libc++ (bank 0 at (2, 6), bank 14 at (0, 0): libc++'s own output, in
 * test_banks_ttmetal.c), identity, or a list; a list that does not fit the device, or a
 * name memd does not know, is reported at its position. */
static int remap_config(const char *remap, memd_config *cfg, char *msg, size_t cap)
{
    return galaxy_config(remap, NULL, cfg, msg, cap);
}

/* sub_devices given by cores: a Wormhole galaxy (default remap) and tiny.yaml (no cores). */
static int subdev_config(const char *subdevs, memd_config *cfg, char *msg, size_t cap)
{
    return galaxy_config("", subdevs, cfg, msg, cap);
}

static bool has_bank(const memd_subdev_spec *d, uint32_t b)
{
    for (uint32_t i = 0; i < d->nbanks; i++)
        if (d->banks[i] == b)
            return true;
    return false;
}

/* Rows 0-3 of the 8 x 8 grid are 32 banks: bank 63 (core 1,0) and 34 (0,0) among them,
 * bank 0 (1,4) not (test_banks_ttmetal.c has these cores from tt-metal's own shuffle);
 * rectangles add up, ids come out increasing; a bank set of both is refused, as are
 * cores on a device without them, an empty pick and bad coordinates, at their place. */
START_TEST(test_subdev_cores)
{
    memd_config cfg;
    char msg[2048];
    int rc = subdev_config("  - {name: top, device: 0, group: l1, cores: {x: 0-7, y: 0-3}}\n"
                           "  - name: two\n"
                           "    device: 0\n"
                           "    group: sram\n"
                           "    cores: [{x: 1, y: 4}, {x: '0,7', y: 7}]\n"
                           "    overlap: [top]\n",
                           &cfg, msg, sizeof msg);
    ck_assert_msg(rc == 0, "%s", msg);
    ck_assert_uint_eq(cfg.nsubdevs, 2);
    const memd_subdev_spec *top = &cfg.subdevs[0], *two = &cfg.subdevs[1];
    const memd_bank_group_spec *l1 = &by_id(&cfg, 0)->groups[MEMD_KIND_SRAM];
    ck_assert_uint_eq(top->nbanks, 32);
    ck_assert(has_bank(top, 63) && has_bank(top, 34) && !has_bank(top, 0));
    for (uint32_t i = 0; i < top->nbanks; i++) {
        ck_assert(l1->cores[top->banks[i]].logical_y <= 3);
        ck_assert(i == 0 || top->banks[i] > top->banks[i - 1]);
    }
    ck_assert_uint_eq(two->nbanks, 3); /* (1,4) = bank 0, (0,7) and (7,7) */
    ck_assert_uint_eq(two->banks[0], 0);
    for (uint32_t i = 1; i < 3; i++)
        ck_assert(l1->cores[two->banks[i]].logical_y == 7 &&
                  (l1->cores[two->banks[i]].logical_x == 0 || l1->cores[two->banks[i]].logical_x == 7));
    memd_config_free(&cfg);

    static const struct {
        const char *yaml, *want;
    } refused[] = {
        {"  - {name: a, device: 0, group: l1, banks: 0-3, cores: {x: 0, y: 0}}\n",
         "m.yaml:12:56: give banks or cores, not both"},
        {"  - {name: a, device: 0, group: l1}\n", "m.yaml:12:5: missing key 'banks' in a "
                                                  "sub-device (or 'cores')"},
        {"  - {name: a, device: 1, group: sram, cores: {x: 0, y: 0}}\n",
         "m.yaml:12:46: sub-device 'a': the sram banks of device 1 have no core coordinates "
         "(tt-metal devices do): give banks"},
        {"  - {name: a, device: 0, group: l1, cores: {x: 20-30, y: 0}}\n",
         "m.yaml:12:44: sub-device 'a': no sram bank of device 0 lies on these cores"},
        {"  - {name: a, device: 0, group: l1, cores: {x: 3-1, y: 0}}\n",
         "m.yaml:12:48: bad core x '3-1' at character 4"},
        {"  - {name: a, device: 0, group: l1, cores: {x: 0}}\n",
         "m.yaml:12:44: missing key 'y' in a core rectangle"},
        {"  - {name: a, device: 0, group: l1, cores: {x: 0, y: 0, z: 1}}\n",
         "m.yaml:12:57: unknown key 'z' in a core rectangle"},
        {"  - {name: a, device: 0, group: l1, cores: []}\n",
         "m.yaml:12:44: an empty list of core rectangles"},
        {"  - {name: a, device: 0, group: l1, cores: {x: 0-7, y: 0-3}}\n"
         "  - {name: b, device: 0, group: l1, cores: {x: 0, y: 3-4}}\n",
         "m.yaml:13:44: sub-device 'b' shares bank"},
        {"  - {name: a, device: 9, group: l1, cores: {x: 0, y: 0}}\n",
         "m.yaml:12:23: sub-device 'a': no device 9"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        ck_assert_int_eq(subdev_config(refused[i].yaml, &cfg, msg, sizeof msg), -EINVAL);
        ck_assert_msg(strstr(msg, refused[i].want), "case %zu: want '%s', got '%s'", i,
                      refused[i].want, msg);
    }
}
END_TEST

START_TEST(test_ttmetal_l1_bank_remap)
{
    memd_config cfg;
    char msg[2048];
    ck_assert_int_eq(remap_config("", &cfg, msg, sizeof msg), 0);
    const memd_bank_group_spec *l1 = &cfg.devices[0].groups[MEMD_KIND_SRAM];
    ck_assert(l1->cores[0].logical_x == 1 && l1->cores[0].logical_y == 4);
    memd_config_free(&cfg);
    ck_assert_int_eq(remap_config("      l1_bank_remap: libstdc++\n", &cfg, msg, sizeof msg), 0);
    l1 = &cfg.devices[0].groups[MEMD_KIND_SRAM];
    ck_assert(l1->cores[0].logical_x == 1 && l1->cores[0].logical_y == 4);
    memd_config_free(&cfg);
    ck_assert_int_eq(remap_config("      l1_bank_remap: libc++\n", &cfg, msg, sizeof msg), 0);
    l1 = &cfg.devices[0].groups[MEMD_KIND_SRAM];
    ck_assert(l1->cores[0].logical_x == 2 && l1->cores[0].logical_y == 6);
    ck_assert(l1->cores[0].noc_x == 3 && l1->cores[0].noc_y == 8);
    ck_assert(l1->cores[14].logical_x == 0 && l1->cores[14].logical_y == 0);
    ck_assert(l1->cores[15].logical_x == 7 && l1->cores[15].logical_y == 7);
    memd_config_free(&cfg);
    ck_assert_int_eq(remap_config("      l1_bank_remap: identity\n", &cfg, msg, sizeof msg), 0);
    l1 = &cfg.devices[0].groups[MEMD_KIND_SRAM];
    ck_assert(l1->cores[0].logical_x == 0 && l1->cores[0].logical_y == 0);
    ck_assert(l1->cores[9].logical_x == 1 && l1->cores[9].logical_y == 1);
    memd_config_free(&cfg);
    char list[512] = "      l1_bank_remap: [";
    for (int i = 63; i >= 0; i--)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%d%s", i, i ? ", " : "]\n");
    ck_assert_int_eq(remap_config(list, &cfg, msg, sizeof msg), 0);
    l1 = &cfg.devices[0].groups[MEMD_KIND_SRAM];
    ck_assert(l1->cores[63].logical_x == 0 && l1->cores[63].logical_y == 0);
    memd_config_free(&cfg);
    ck_assert_int_eq(remap_config("      l1_bank_remap: [0, 1, 2]\n", &cfg, msg, sizeof msg),
                     -EINVAL);
    ck_assert_msg(strstr(msg, "m.yaml:8:22: l1_bank_remap has 3 bank ids; this device has 64"),
                  "%s", msg);
    ck_assert_int_eq(remap_config("      l1_bank_remap: shuffled\n", &cfg, msg, sizeof msg),
                     -EINVAL);
    ck_assert_msg(strstr(msg, "m.yaml:8:22: l1_bank_remap: expected default, libstdc++, libc++, "
                              "identity or a list"),
                  "%s", msg);
    /* Near misses are refused too, not guessed at. */
    ck_assert_int_eq(remap_config("      l1_bank_remap: libcxx\n", &cfg, msg, sizeof msg),
                     -EINVAL);
    ck_assert_msg(strstr(msg, "m.yaml:8:22: l1_bank_remap: expected default, libstdc++, libc++"),
                  "%s", msg);
    ck_assert_int_eq(remap_config("      l1_bank_remap: {lib: libc++}\n", &cfg, msg, sizeof msg),
                     -EINVAL);
    ck_assert_msg(strstr(msg, "m.yaml:8:22: l1_bank_remap: expected default, libstdc++, libc++"),
                  "%s", msg);
    ck_assert_int_eq(remap_config("      l1_bank_remap: [0, x]\n", &cfg, msg, sizeof msg),
                     -EINVAL);
    ck_assert_msg(strstr(msg, "m.yaml:8:26: expected an integer"), "%s", msg);
}
END_TEST

START_TEST(test_ttmetal_config_errors)
{
    /* errors in the tt-metal files point into those files; reserved too big points at
     * memd.yaml's sram.reserved */
    static const struct {
        const char *extra, *want;
    } cases[] = {
        {"  - id: 4\n    tt_metal: {soc_descriptor: /dev/null, core_descriptor: /dev/null, product: E75, hw_cqs: 1}\n    sram: {reserved: 0}\n",
         ":15:32: cannot read '/dev/null': not a regular file"},
        {"  - id: 4\n    name: second\n    tt_metal: {soc_descriptor: SOC, core_descriptor: CORE, product: E99, hw_cqs: 1}\n    sram: {reserved: 0}\n",
         "core_grayskull_120_arch.yaml:8:1: product 'E99' not found in the core descriptor (products: E150, E75)"},
        {"  - id: 4\n    name: second\n    tt_metal: {soc_descriptor: SOC, core_descriptor: CORE, product: E150, hw_cqs: 1}\n    sram: {reserved: 1MiB}\n",
         ":17:22: reserved size 1048576 covers the whole 524288-byte L1 bank of some core: nothing left for buffers"},
        {"  - id: 4\n    name: second\n    tt_metal: {soc_descriptor: SOC, core_descriptor: CORE, product: E150, hw_cqs: 1}\n    sram: {reserved: 0}\n    dram: {banks: 4}\n",
         ":18:12: 'banks' comes from the tt-metal SoC descriptor; only alignment, page_size and regions may be set here"},
        {"  - id: 4\n    name: second\n    tt_metal: {soc_descriptor: SOC, core_descriptor: CORE, product: E150, hw_cqs: 1}\n    sram: {reserved: 0}\n    dram: {regions: [{name: data, size: 2GiB}]}\n",
         ":18:41: region 'data' [0x0, +0x80000000) exceeds the bank (bank_size 0x40000000)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        /* SOC and CORE stand for the absolute paths of the Grayskull pair */
        char extra[2048];
        const char *sd = getenv("MEMD_SHARED_DATA");
        char soc[1024], core[1024];
        snprintf(soc, sizeof(soc), "%s/soc/tt-metal/soc_grayskull_120_arch.yaml", sd);
        snprintf(core, sizeof(core), "%s/soc/tt-metal/core_grayskull_120_arch.yaml", sd);
        const char *e = cases[i].extra, *p;
        size_t n = 0;
        while (*e) {
            if ((p = strstr(e, "SOC")) == e) {
                n += (size_t)snprintf(extra + n, sizeof(extra) - n, "%s", soc);
                e += 3;
            } else if ((p = strstr(e, "CORE")) == e) {
                n += (size_t)snprintf(extra + n, sizeof(extra) - n, "%s", core);
                e += 4;
            } else {
                extra[n++] = *e++;
            }
        }
        extra[n] = '\0';
        char *path = write_ttmetal_config(extra);
        memd_config cfg;
        char msg[4096];
        ck_assert_int_eq(load_file(path, &cfg, msg, sizeof(msg)), -EINVAL);
        ck_assert_msg(strstr(msg, cases[i].want) != NULL, "case %zu: got '%s'\nwant '%s'", i, msg, cases[i].want);
        if (cases[i].want[0] == ':') /* positions in memd.yaml itself */
            ck_assert_msg(strncmp(msg, path, strlen(path)) == 0, "case %zu: %s", i, msg);
        remove_config(path);
    }
}
END_TEST

/* Everything but the id: names, banks, offsets, regions, policy, texture. */
static void assert_same_spec(const memd_device_spec *a, const memd_device_spec *b)
{
    ck_assert_str_eq(a->name, b->name);
    ck_assert_str_eq(a->arch, b->arch);
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        const memd_bank_group_spec *x = &a->groups[k], *y = &b->groups[k];
        ck_assert_uint_eq(x->banks, y->banks);
        ck_assert_uint_eq(x->bank_size, y->bank_size);
        ck_assert_uint_eq(x->alignment, y->alignment);
        ck_assert_int_eq(x->bank_offsets != NULL, y->bank_offsets != NULL);
        for (uint32_t i = 0; x->bank_offsets && i < x->banks; i++)
            ck_assert_int_eq(x->bank_offsets[i], y->bank_offsets[i]);
        ck_assert_uint_eq(x->nregions, y->nregions);
        for (uint32_t i = 0; i < x->nregions; i++) {
            ck_assert_str_eq(x->regions[i].name, y->regions[i].name);
            ck_assert_uint_eq(x->regions[i].base, y->regions[i].base);
            ck_assert_uint_eq(x->regions[i].size, y->regions[i].size);
            ck_assert_int_eq(x->regions[i].allocatable, y->regions[i].allocatable);
        }
        ck_assert_int_eq(memcmp(a->policy[k], b->policy[k], sizeof(a->policy[k])), 0);
    }
    ck_assert_int_eq(memcmp(&a->texture, &b->texture, sizeof(a->texture)), 0);
}

/* The shipped memd-ttmetal.yaml and the shipped memd-format Wormhole descriptor describe
 * the same banks: the descriptor is what the tt-metal rules give. */
START_TEST(test_shipped_ttmetal_matches_descriptor)
{
    char *tpath = path_in("MEMD_SOURCE_ROOT", "config/memd-ttmetal.yaml");
    char *dpath = path_in("MEMD_SOURCE_ROOT", "config/memd.yaml");
    memd_config t, m;
    char msg[2048];
    int rc = load_file(tpath, &t, msg, sizeof(msg));
    ck_assert_msg(rc == 0, "%s", msg);
    ck_assert_int_eq(load_file(dpath, &m, msg, sizeof(msg)), 0);
    assert_same_spec(by_id(&t, 0), by_id(&m, 0));
    const memd_device_spec *gs = by_id(&t, 1);
    ck_assert_uint_eq(gs->groups[MEMD_KIND_SRAM].banks, 128);
    ck_assert_uint_eq(gs->groups[MEMD_KIND_SRAM].bank_size, 524288);
    ck_assert_uint_eq(gs->groups[MEMD_KIND_DRAM].banks, 8);
    memd_config_free(&t);
    memd_config_free(&m);
    free(tpath);
    free(dpath);
}
END_TEST

/* One tt-metal path: a memd.yaml entry gives the same device as memd_ttmetal_device on
 * the same two files with the same options, for both shared pairs, with and without the
 * options memd.yaml can set. */
static const struct {
    const char *pair, *product;
    uint32_t cqs;
    uint64_t reserved;
    const char *yaml; /* the entry's other keys */
    memd_ttmetal_opts o;
} same[] = {
    {"wormhole_b0_80", "galaxy", 1, 160 * KiB, "    sram: {reserved: 160KiB}\n", {0}},
    {"wormhole_b0_80", "nebula_x2", 2, 100000,
     "    sram: {reserved: 100000, alignment: 64}\n    dram: {alignment: 128}\n    arch: wh\n    name: wh-n2\n",
     {.sram_alignment = 64, .dram_alignment = 128, .arch = "wh", .name = "wh-n2"}},
    {"grayskull_120", "E150", 1, 128 * KiB, "    sram: {reserved: 128KiB}\n", {0}},
    {"grayskull_120", "E75", 2, 0, "    sram: {reserved: 0, alignment: 32}\n    arch: gs\n",
     {.sram_alignment = 32, .arch = "gs"}},
};

START_TEST(test_ttmetal_config_is_direct)
{
    const char *sd = getenv("MEMD_SHARED_DATA");
    char soc[1024], core[1024], text[4096], msg[2048];
    snprintf(soc, sizeof(soc), "%s/soc/tt-metal/soc_%s_arch.yaml", sd, same[_i].pair);
    snprintf(core, sizeof(core), "%s/soc/tt-metal/core_%s_arch.yaml", sd, same[_i].pair);
    snprintf(text, sizeof(text),
             "devices:\n  - id: 0\n"
             "    tt_metal: {soc_descriptor: %s, core_descriptor: %s, product: %s, hw_cqs: %u}\n%s",
             soc, core, same[_i].product, same[_i].cqs, same[_i].yaml);
    memd_config cfg;
    memd_error err;
    memset(&err, 0, sizeof(err));
    const memd_config_files files = {.base_dir = "/"};
    int rc = memd_config_load_buffer("memd.yaml", text, strlen(text), &files, &cfg, &err);
    memd_error_format(&err, msg, sizeof(msg));
    ck_assert_msg(rc == 0, "%s", msg);

    char *sb, *cb;
    size_t sl, cl;
    ck_assert_int_eq(memd_soc_read_file(soc, &sb, &sl, msg, sizeof(msg)), 0);
    ck_assert_int_eq(memd_soc_read_file(core, &cb, &cl, msg, sizeof(msg)), 0);
    memd_ttmetal_opts o = same[_i].o;
    o.product = same[_i].product;
    o.hw_cqs = same[_i].cqs;
    o.sram_reserved = same[_i].reserved;
    memd_device_spec d;
    rc = memd_ttmetal_device(soc, sb, sl, core, cb, cl, &o, &d, &err);
    memd_error_format(&err, msg, sizeof(msg));
    ck_assert_msg(rc == 0, "%s", msg);
    ck_assert_int_eq(memd_device_spec_validate(&d, &err), 0);
    assert_same_spec(&cfg.devices[0], &d);
    if (same[_i].o.name)
        ck_assert_str_eq(d.name, same[_i].o.name);
    if (same[_i].o.sram_alignment)
        ck_assert_uint_eq(d.groups[MEMD_KIND_SRAM].alignment, same[_i].o.sram_alignment);
    if (same[_i].o.dram_alignment)
        ck_assert_uint_eq(d.groups[MEMD_KIND_DRAM].alignment, same[_i].o.dram_alignment);
    memd_device_spec_free(&d);
    memd_config_free(&cfg);
    free(sb);
    free(cb);
}
END_TEST

/* ---- check-config ---- */

/* A small JSON reader: enough to prove the output is one well-formed document and to
 * fetch values by path. */
typedef struct jv {
    char type; /* o a s n t f z */
    double num;
    char *str;
    size_t n;
    char **keys;
    struct jv **vals;
} jv;

static void jfree(jv *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        if (v->keys)
            free(v->keys[i]);
        jfree(v->vals[i]);
    }
    free(v->keys);
    free(v->vals);
    free(v->str);
    free(v);
}

static void ws(const char **p)
{
    while (**p == ' ' || **p == '\n' || **p == '\t' || **p == '\r')
        (*p)++;
}

static char *jstring(const char **p)
{
    if (**p != '"')
        return NULL;
    (*p)++;
    char *out = malloc(strlen(*p) + 1);
    size_t n = 0;
    while (**p && **p != '"') {
        if (**p == '\\') {
            (*p)++;
            if (**p == 'u') {
                unsigned c;
                if (sscanf(*p + 1, "%4x", &c) != 1) {
                    free(out);
                    return NULL;
                }
                out[n++] = (char)c;
                *p += 5;
                continue;
            }
        }
        out[n++] = *(*p)++;
    }
    if (**p != '"') {
        free(out);
        return NULL;
    }
    (*p)++;
    out[n] = '\0';
    return out;
}

static jv *jparse(const char **p)
{
    ws(p);
    jv *v = calloc(1, sizeof(*v));
    if (**p == '{' || **p == '[') {
        bool obj = **p == '{';
        v->type = obj ? 'o' : 'a';
        (*p)++;
        ws(p);
        if (**p == (obj ? '}' : ']')) {
            (*p)++;
            return v;
        }
        for (;;) {
            v->vals = realloc(v->vals, (v->n + 1) * sizeof(*v->vals));
            if (obj) {
                v->keys = realloc(v->keys, (v->n + 1) * sizeof(*v->keys));
                ws(p);
                char *k = jstring(p);
                ws(p);
                if (!k || **p != ':') {
                    free(k);
                    v->vals[v->n] = NULL;
                    v->keys[v->n++] = NULL;
                    jfree(v);
                    return NULL;
                }
                (*p)++;
                v->keys[v->n] = k;
            }
            jv *c = jparse(p);
            v->vals[v->n++] = c;
            if (!c) {
                jfree(v);
                return NULL;
            }
            ws(p);
            if (**p == ',') {
                (*p)++;
                continue;
            }
            if (**p == (obj ? '}' : ']')) {
                (*p)++;
                return v;
            }
            jfree(v);
            return NULL;
        }
    }
    if (**p == '"') {
        v->type = 's';
        v->str = jstring(p);
        if (!v->str) {
            jfree(v);
            return NULL;
        }
        return v;
    }
    if (!strncmp(*p, "true", 4) || !strncmp(*p, "false", 5) || !strncmp(*p, "null", 4)) {
        v->type = **p == 't' ? 't' : **p == 'f' ? 'f' : 'z';
        *p += v->type == 'f' ? 5 : 4;
        return v;
    }
    char *end;
    v->num = strtod(*p, &end);
    if (end == *p) {
        jfree(v);
        return NULL;
    }
    v->type = 'n';
    *p = end;
    return v;
}

static const jv *jget(const jv *v, const char *key)
{
    for (size_t i = 0; v && v->type == 'o' && i < v->n; i++)
        if (!strcmp(v->keys[i], key))
            return v->vals[i];
    return NULL;
}

static const jv *jat(const jv *v, size_t i)
{
    return v && v->type == 'a' && i < v->n ? v->vals[i] : NULL;
}

static char *capture_check(const char *path, bool json, int *rc, char **err_text)
{
    char *out = NULL, *err = NULL;
    size_t olen = 0, elen = 0;
    FILE *fo = open_memstream(&out, &olen), *fe = open_memstream(&err, &elen);
    *rc = memd_check_config(path, json, fo, fe);
    fclose(fo);
    fclose(fe);
    *err_text = err;
    return out;
}

START_TEST(test_check_config_table)
{
    char *path = path_in("MEMD_SOURCE_ROOT", "config/memd.yaml");
    int rc;
    char *err;
    char *out = capture_check(path, false, &rc, &err);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(err, "");
    ck_assert_msg(strstr(out, "device 0 'wormhole_b0' arch wormhole_b0\n"), "%s", out);
    ck_assert_msg(strstr(out, "  dram: 12 banks x 0x40000000 (1 GiB), alignment 32\n"), "%s", out);
    ck_assert_msg(strstr(out, "  sram: 64 banks x 0x146000 (1304 KiB), alignment 16\n"), "%s", out);
    ck_assert_msg(strstr(out, "    offsets: 0x28000 (banks 0-63)\n"), "%s", out);
    ck_assert_msg(strstr(out, "    logging      0x000000003f000000 0x0000000001000000 16 MiB       allocatable\n"), "%s", out);
    ck_assert_msg(strstr(out, "    constant     data         bottom_up  first  4096      0\n"), "%s", out); /* GMEM */
    ck_assert_msg(strstr(out, "    internal     data         top_down   first  32        2048\n"), "%s", out); /* Wormhole */
    ck_assert_msg(strstr(out, "  dram.texture: up to 16384 x 16384 texels, pitch alignment 256\n"), "%s", out);
    char last[1024];
    snprintf(last, sizeof(last), "memd: configuration file %s test is successful\n", path);
    ck_assert_msg(strlen(out) >= strlen(last) && !strcmp(out + strlen(out) - strlen(last), last), "%s", out);
    free(out);
    free(err);
    free(path);
}
END_TEST

/* A region name longer than the usual column keeps the table's columns in line. */
START_TEST(test_check_config_long_region_name)
{
    char dir[] = "/tmp/memd-test-config-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cfg[4096], desc[4096];
    snprintf(desc, sizeof desc, "%s/dev.yaml", dir);
    snprintf(cfg, sizeof cfg, "%s/memd.yaml", dir);
    FILE *f = fopen(desc, "w");
    ck_assert_ptr_nonnull(f);
    fputs("name: longnames\ndram:\n  banks: 1\n  bank_size: 1MiB\n  regions:\n"
          "    - {name: a_region_with_a_rather_long_name, size: 64KiB}\n    - {name: data}\n", f);
    fclose(f);
    f = fopen(cfg, "w");
    ck_assert_ptr_nonnull(f);
    fputs("devices:\n  - id: 0\n    descriptor: dev.yaml\n", f);
    fclose(f);
    int rc;
    char *err;
    char *out = capture_check(cfg, false, &rc, &err);
    ck_assert_msg(rc == 0, "%s", err);
    /* The name columns are as wide as the 32-character name, in every row. */
    const char *name = "a_region_with_a_rather_long_name";
    char want[4][160];
    snprintf(want[0], sizeof want[0], "\n    %-32s %-18s %-18s", "region", "base", "size");
    snprintf(want[1], sizeof want[1], "\n    %s 0x0000000000000000 0x0000000000010000 64 KiB", name);
    snprintf(want[2], sizeof want[2], "\n    %-32s 0x0000000000010000 0x00000000000f0000", "data");
    snprintf(want[3], sizeof want[3], "\n    %-12s %-32s %-10s", "class", "region", "dir");
    for (int i = 0; i < 4; i++)
        ck_assert_msg(strstr(out, want[i]), "no '%s' in:\n%s", want[i] + 1, out);
    free(out);
    free(err);
    unlink(desc);
    unlink(cfg);
    rmdir(dir);
}
END_TEST

START_TEST(test_check_config_json)
{
    char *path = path_in("MEMD_SOURCE_ROOT", "config/memd.yaml");
    int rc;
    char *err;
    char *out = capture_check(path, true, &rc, &err);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(err, "");
    const char *p = out;
    jv *doc = jparse(&p);
    ck_assert_msg(doc != NULL, "not JSON: %s", out);
    ws(&p);
    ck_assert_msg(*p == '\0', "trailing text: %s", p);
    ck_assert_str_eq(jget(doc, "config")->str, path);
    ck_assert_double_eq(jget(jget(doc, "limits"), "max_frame")->num, 1048576);
    const jv *devs = jget(doc, "devices");
    ck_assert_int_eq(devs->type, 'a');
    ck_assert_uint_eq(devs->n, 4);
    const jv *wh = jat(devs, 0);
    ck_assert_double_eq(jget(wh, "id")->num, 0);
    ck_assert_str_eq(jget(wh, "name")->str, "wormhole_b0");
    const jv *groups = jget(wh, "bank_groups");
    ck_assert_uint_eq(groups->n, 2);
    const jv *dram = jat(groups, 0), *sram = jat(groups, 1);
    ck_assert_str_eq(jget(dram, "kind")->str, "dram");
    ck_assert_double_eq(jget(dram, "banks")->num, 12);
    ck_assert_double_eq(jget(dram, "bank_size")->num, 1073741824.0);
    ck_assert_uint_eq(jget(dram, "offsets")->n, 12);
    ck_assert_double_eq(jat(jget(dram, "offsets"), 1)->num, 1073741824.0);
    const jv *regions = jget(dram, "regions");
    ck_assert_uint_eq(regions->n, 4);
    ck_assert_str_eq(jget(jat(regions, 2), "name")->str, "data");
    ck_assert_double_eq(jget(jat(regions, 2), "base")->num, 65536 + 33554432);
    ck_assert_double_eq(jget(jat(regions, 2), "size")->num, 1073741824.0 - 65536 - 33554432 - 16777216);
    ck_assert_int_eq(jget(jat(regions, 0), "allocatable")->type, 'f');
    ck_assert_str_eq(jget(sram, "kind")->str, "sram");
    ck_assert_double_eq(jget(sram, "banks")->num, 64);
    ck_assert_double_eq(jget(sram, "bank_size")->num, 1335296);
    const jv *pol = jget(sram, "policy");
    ck_assert_uint_eq(pol->n, 5);
    ck_assert_str_eq(jget(jat(pol, 1), "class")->str, "constant");
    ck_assert_str_eq(jget(jat(pol, 1), "region")->str, "buffers");
    ck_assert_str_eq(jget(jat(pol, 1), "dir")->str, "top_down");
    ck_assert_int_eq(jget(jat(pol, 4), "enabled")->type, 'f');
    ck_assert_int_eq(jget(wh, "texture")->type, 'z');
    const jv *et = jat(devs, 1);
    ck_assert_uint_eq(jget(et, "bank_groups")->n, 1);
    const jv *gpu = jat(devs, 3);
    ck_assert_double_eq(jget(jget(gpu, "texture"), "pitch_alignment")->num, 256);
    jfree(doc);
    free(out);
    free(err);
    free(path);
}
END_TEST

START_TEST(test_check_config_error)
{
    char *path = path_in("MEMD_SOURCE_ROOT", "tests/data/soc/memd-overlap.yaml");
    char *file = path_in("MEMD_SOURCE_ROOT", "tests/data/soc/devices/overlap.yaml");
    for (int json = 0; json < 2; json++) {
        int rc;
        char *err;
        char *out = capture_check(path, json, &rc, &err);
        ck_assert_int_eq(rc, 1);
        if (json) {
            /* --json: the error as a document on stdout too */
            const char *p = out;
            jv *doc = jparse(&p);
            ck_assert_msg(doc != NULL, "not JSON: %s", out);
            const jv *e = jget(doc, "error");
            ck_assert_str_eq(jget(doc, "config")->str, path);
            ck_assert_str_eq(jget(e, "file")->str, file);
            ck_assert_double_eq(jget(e, "line")->num, 9);
            ck_assert_double_eq(jget(e, "column")->num, 29);
            ck_assert_ptr_nonnull(strstr(jget(e, "message")->str, "overlaps region 'data'"));
            jfree(doc);
        } else {
            ck_assert_str_eq(out, "");
        }
        char want[4096];
        snprintf(want, sizeof(want),
                 "%s:9:29: region 'logging' [0x19000, 0x1a000) overlaps region 'data' [0x10000, 0x20000); "
                 "list regions in address order without overlap\nmemd: configuration file %s test failed\n",
                 file, path);
        ck_assert_str_eq(err, want);
        free(out);
        free(err);
    }
    free(path);
    free(file);
}
END_TEST

/* A file that cannot be read, with --json: still one JSON document on stdout. */
START_TEST(test_check_config_missing_json)
{
    int rc;
    char *err;
    char *out = capture_check("/nonexistent/memd.yaml", true, &rc, &err);
    ck_assert_int_eq(rc, 1);
    const char *p = out;
    jv *doc = jparse(&p);
    ck_assert_msg(doc != NULL, "not JSON: %s", out);
    ck_assert_str_eq(jget(doc, "config")->str, "/nonexistent/memd.yaml");
    ck_assert_ptr_nonnull(strstr(jget(jget(doc, "error"), "message")->str, "No such file"));
    ck_assert_ptr_nonnull(strstr(err, "test failed"));
    jfree(doc);
    free(out);
    free(err);
}
END_TEST

/* An admin group the daemon would refuse at start-up fails the check as well. */
START_TEST(test_check_config_unknown_group)
{
    char dir[] = "/tmp/memd-test-config-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[4096];
    snprintf(path, sizeof(path), "%s/memd.yaml", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "admin_group: memd-no-such-group-for-tests\ndevices:\n  - id: 0\n"
               "    descriptor: %s/config/devices/wormhole_b0.yaml\n",
            getenv("MEMD_SOURCE_ROOT"));
    fclose(f);
    int rc;
    char *err;
    char *out = capture_check(path, false, &rc, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_str_eq(out, "");
    /* At the line and column of the value, like every other config error. */
    char want[4200];
    snprintf(want, sizeof want, "%s:1:14: admin_group 'memd-no-such-group-for-tests': no such group",
             path);
    ck_assert_msg(strstr(err, want), "no '%s' in %s", want, err);
    free(out);
    free(err);
    unlink(path);
    rmdir(dir);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, test_default_config);
    tcase_add_test(tc, test_relative_paths_and_overrides);
    tcase_add_test(tc, test_errors_in_named_files);
    tcase_add_test(tc, test_config_file_errors);
    tcase_add_loop_test(tc, test_config_malformed, 0, (int)(sizeof(bad) / sizeof(bad[0])));
    tcase_add_test(tc, test_no_base_dir);
    tcase_add_test(tc, test_sub_devices);
    tcase_add_test(tc, test_files_from_reader);
    tcase_add_test(tc, test_check_config_table);
    tcase_add_test(tc, test_check_config_long_region_name);
    tcase_add_test(tc, test_check_config_json);
    tcase_add_test(tc, test_check_config_error);
    tcase_add_test(tc, test_check_config_missing_json);
    tcase_add_test(tc, test_check_config_unknown_group);
    suite_add_tcase(s, tc);
    if (have_shared()) {
        TCase *tt = tcase_create("tt-metal");
        tcase_add_test(tt, test_ttmetal_config);
        tcase_add_test(tt, test_ttmetal_config_errors);
        tcase_add_test(tt, test_ttmetal_l1_bank_remap);
        tcase_add_test(tt, test_subdev_cores);
        tcase_add_loop_test(tt, test_ttmetal_config_is_direct, 0, (int)(sizeof(same) / sizeof(same[0])));
        /* memd-ttmetal.yaml names ../../shared relative to config/: only with that layout */
        char rel[4096];
        snprintf(rel, sizeof(rel), "%s/../shared/data/soc/tt-metal/core_wormhole_b0_80_arch.yaml",
                 getenv("MEMD_SOURCE_ROOT") ? getenv("MEMD_SOURCE_ROOT") : ".");
        if (access(rel, R_OK) == 0)
            tcase_add_test(tt, test_shipped_ttmetal_matches_descriptor);
        else
            fprintf(stderr, "# skip: %s not found; config/memd-ttmetal.yaml not checked\n", rel);
        suite_add_tcase(s, tt);
    } else {
        fprintf(stderr, "# skip: tt-metal descriptors not found (MEMD_SHARED_DATA); tt_metal config cases not run\n");
    }
    return s;
}
