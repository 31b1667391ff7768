/* memd soc — memd.yaml: daemon settings, limits and the device list.
 *
 *   socket: /run/memd/memd.sock   state_dir: /run/memd   admin_group: memd
 *   shared_names: per_uid | global
 *   limits: {max_frame, max_sessions, max_allocs_per_session, max_reply_backlog,
 *            quota_per_uid, reclaim_grace_ms, max_sessions_per_uid, admin_sessions,
 *            hello_timeout_ms}
 *   devices: [ENTRY, ...]          (see config_device.c)
 *
 * Every key is optional except devices; unknown keys are errors. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memd/protocol.h"
#include "soc_internal.h"

int memd_soc_read_file(const char *path, char **buf, size_t *len, char *msg, size_t msglen)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(msg, msglen, "%s", strerror(e));
        return -e;
    }
    struct stat st;
    int rc = 0;
    char *b = NULL;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
        snprintf(msg, msglen, "%s", strerror(-rc));
    } else if (!S_ISREG(st.st_mode)) {
        rc = -EINVAL;
        snprintf(msg, msglen, "not a regular file");
    } else if ((uint64_t)st.st_size > MEMD_SOC_MAX_FILE) {
        rc = -EFBIG;
        snprintf(msg, msglen, "larger than %u bytes", MEMD_SOC_MAX_FILE);
    } else if (!(b = malloc((size_t)st.st_size + 1))) {
        rc = -ENOMEM;
        snprintf(msg, msglen, "out of memory");
    }
    size_t got = 0;
    while (rc == 0 && got < (size_t)st.st_size) {
        ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = r < 0 ? -errno : -EIO;
            snprintf(msg, msglen, "%s", r < 0 ? strerror(errno) : "file shrank while reading");
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    if (rc) {
        free(b);
        return rc;
    }
    b[got] = '\0';
    *buf = b;
    *len = got;
    return 0;
}

int memd_soc_resolve(const char *base_dir, const char *rel, char *out, size_t cap)
{
    int w = rel[0] == '/' ? snprintf(out, cap, "%s", rel) : snprintf(out, cap, "%s/%s", base_dir, rel);
    return (w < 0 || (size_t)w >= cap) ? -ENAMETOOLONG : 0;
}

static int parse_limits(const char *file, const memd_ynode *n, memd_limits *l, memd_error *err)
{
    static const char *const keys[] = {"max_frame", "max_sessions", "max_allocs_per_session",
                                       "max_reply_backlog", "quota_per_uid", "reclaim_grace_ms",
                                       "max_sessions_per_uid", "admin_sessions", "hello_timeout_ms",
                                       "max_suballocs_per_pool", "history_events", "events_per_uid",
                                       "plan_cache_bytes", "postmortems",
                                       "postmortem_interval_ms", "postmortems_per_minute",
                                       NULL};
    int rc = memd_yaml_check_keys(file, n, "limits", keys, err);
    if (rc)
        return rc;
    const memd_ynode *v;
    uint64_t x;
    if ((v = memd_yaml_get(n, "max_frame"))) {
        if ((rc = memd_yaml_size(file, v, &x, err)))
            return rc;
        if (x < 64 || x > UINT32_MAX)
            return memd_yaml_error(err, file, v, "expected max_frame between 64 bytes and 4 GiB - 1, got %" PRIu64, x);
        l->max_frame = (uint32_t)x;
    }
    static const struct {
        const char *key;
        size_t off;
        bool zero_ok;
    } u32s[] = {
        {"max_sessions", offsetof(memd_limits, max_sessions), false},
        {"max_allocs_per_session", offsetof(memd_limits, max_allocs_per_session), false},
        {"reclaim_grace_ms", offsetof(memd_limits, reclaim_grace_ms), true},
        {"max_sessions_per_uid", offsetof(memd_limits, max_sessions_per_uid), false},
        {"admin_sessions", offsetof(memd_limits, admin_sessions), true},
        {"hello_timeout_ms", offsetof(memd_limits, hello_timeout_ms), true},
        {"max_suballocs_per_pool", offsetof(memd_limits, max_suballocs_per_pool), false},
        {"history_events", offsetof(memd_limits, history_events), true},
        {"events_per_uid", offsetof(memd_limits, events_per_uid), true},
        {"postmortems", offsetof(memd_limits, postmortems), true},
        {"postmortem_interval_ms", offsetof(memd_limits, postmortem_interval_ms), true},
        {"postmortems_per_minute", offsetof(memd_limits, postmortems_per_minute), true},
    };
    for (size_t i = 0; i < sizeof(u32s) / sizeof(u32s[0]); i++) {
        if (!(v = memd_yaml_get(n, u32s[i].key)))
            continue;
        if ((rc = memd_yaml_uint(file, v, UINT32_MAX, &x, err)))
            return rc;
        if (x == 0 && !u32s[i].zero_ok)
            return memd_yaml_error(err, file, v, "expected %s > 0, got 0", u32s[i].key);
        if (u32s[i].off == offsetof(memd_limits, max_suballocs_per_pool) &&
            x > MEMD_POOL_MAX_SUBALLOCS)
            return memd_yaml_error(err, file, v, "expected max_suballocs_per_pool at most %u, "
                                   "got %" PRIu64, MEMD_POOL_MAX_SUBALLOCS, x);
        /* Their list is one reply and one array: bounded well inside the reply limit. */
        if (u32s[i].off == offsetof(memd_limits, postmortems) && x > MEMD_POSTMORTEMS_MAX)
            return memd_yaml_error(err, file, v, "expected postmortems at most %u, got %" PRIu64,
                                   MEMD_POSTMORTEMS_MAX, x);
        uint32_t y = (uint32_t)x;
        memcpy((char *)l + u32s[i].off, &y, sizeof(y));
    }
    if ((v = memd_yaml_get(n, "max_reply_backlog"))) {
        if ((rc = memd_yaml_size(file, v, &l->max_reply_backlog, err)))
            return rc;
        if (l->max_reply_backlog == 0)
            return memd_yaml_error(err, file, v, "expected max_reply_backlog > 0, got 0");
    }
    if ((v = memd_yaml_get(n, "quota_per_uid")) && (rc = memd_yaml_size(file, v, &l->quota_per_uid, err)))
        return rc;
    if ((v = memd_yaml_get(n, "plan_cache_bytes"))) {
        if ((rc = memd_yaml_size(file, v, &l->plan_cache_bytes, err)))
            return rc;
        if (l->plan_cache_bytes == 0)
            return memd_yaml_error(err, file, v, "expected plan_cache_bytes > 0, got 0");
    }
    return 0;
}

static int parse_abs_path(const char *file, const memd_ynode *n, const char *what, char *out,
                          size_t cap, memd_error *err)
{
    int rc = memd_yaml_string(file, n, out, cap, err);
    if (rc)
        return rc;
    if (out[0] != '/')
        return memd_yaml_error(err, file, n, "expected %s as an absolute path, got '%s'", what, out);
    return 0;
}

/* log_level: the syslog names, as journalctl -p takes them. */
static int parse_log_level(const char *file, const memd_ynode *n, memd_config *cfg,
                           memd_error *err)
{
    static const char *const names[] = {"err", "warning", "notice", "info", "debug"};
    char s[16];
    int rc = memd_yaml_string(file, n, s, sizeof s, err);
    if (rc)
        return rc;
    for (int i = 0; i < 5; i++) {
        if (!strcmp(s, names[i])) {
            cfg->log_level = 3 + i; /* LOG_ERR .. LOG_DEBUG */
            return 0;
        }
    }
    return memd_yaml_error(err, file, n, "expected log_level err, warning, notice, info or "
                                         "debug, got '%s'", s);
}

static int load_tree(const char *file, const memd_ynode *root, const memd_config_files *files,
                     memd_config *cfg, memd_error *err)
{
    static const char *const keys[] = {"socket", "state_dir", "admin_group", "log_level", "shared_names",
                                       "limits", "devices", "sub_devices", "cgroup_limits",
                                       NULL};
    int rc = memd_yaml_check_keys(file, root, "memd.yaml", keys, err);
    if (rc)
        return rc;
    const memd_ynode *v;
    if ((v = memd_yaml_get(root, "socket")) &&
        (rc = parse_abs_path(file, v, "the socket", cfg->socket_path, sizeof(cfg->socket_path), err)))
        return rc;
    if ((v = memd_yaml_get(root, "state_dir")) &&
        (rc = parse_abs_path(file, v, "the state directory", cfg->state_dir, sizeof(cfg->state_dir), err)))
        return rc;
    if ((v = memd_yaml_get(root, "admin_group"))) {
        if ((rc = memd_yaml_name(file, v, cfg->admin_group, sizeof(cfg->admin_group), err)))
            return rc;
        /* The group is looked up when the daemon sets up (it may not exist): its error
         * points here. */
        cfg->admin_group_line = v->line;
        cfg->admin_group_column = v->col;
    }
    if ((v = memd_yaml_get(root, "shared_names"))) {
        char mode[16];
        if ((rc = memd_yaml_string(file, v, mode, sizeof mode, err)))
            return rc;
        if (strcmp(mode, "global") != 0 && strcmp(mode, "per_uid") != 0)
            return memd_yaml_error(err, file, v, "expected shared_names 'per_uid' or 'global', got '%s'",
                                   mode);
        cfg->shared_names_global = strcmp(mode, "global") == 0;
    }
    if ((v = memd_yaml_get(root, "log_level")) && (rc = parse_log_level(file, v, cfg, err)))
        return rc;
    if ((v = memd_yaml_get(root, "limits")) && (rc = parse_limits(file, v, &cfg->limits, err)))
        return rc;

    const memd_ynode *devs = memd_yaml_get(root, "devices");
    if (!devs)
        return memd_yaml_error(err, file, root, "missing key 'devices' in memd.yaml: expected a list of devices");
    if ((rc = memd_yaml_expect_seq(file, devs, "a list of devices", err)))
        return rc;
    if (devs->n == 0)
        return memd_yaml_error(err, file, devs, "expected at least one device");
    if (devs->n > 1024)
        return memd_yaml_error(err, file, devs, "at most 1024 devices");
    cfg->devices = calloc(devs->n, sizeof(*cfg->devices));
    if (!cfg->devices)
        return memd_yaml_error(err, file, devs, "out of memory");
    for (size_t i = 0; i < devs->n; i++) {
        const memd_ynode *e = devs->items[i];
        memd_device_spec *d = &cfg->devices[i];
        if ((rc = memd_soc_config_device(file, e, files, d, err)))
            return rc;
        cfg->ndevices++;
        for (size_t j = 0; j < i; j++) {
            const memd_device_spec *o = &cfg->devices[j];
            if (o->id == d->id)
                return memd_yaml_error(err, file, memd_yaml_get(e, "id"),
                                       "device id %" PRIu32 " is used twice (first at line %u)", d->id,
                                       devs->items[j]->line);
            if (strcmp(o->name, d->name) == 0) {
                const memd_ynode *nn = memd_yaml_get(e, "name");
                return memd_yaml_error(err, file, nn ? nn : e,
                                       "device name '%s' is used twice (first at line %u); give each device its own 'name'",
                                       d->name, devs->items[j]->line);
            }
        }
    }
    if ((v = memd_yaml_get(root, "sub_devices")) &&
        (rc = memd_soc_config_subdevs(file, v, cfg, err)))
        return rc;
    if ((v = memd_yaml_get(root, "cgroup_limits")))
        return memd_soc_config_cglimits(file, v, cfg, err);
    return 0;
}

static void config_defaults(memd_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->limits.max_frame = 1u << 20;
    cfg->limits.max_sessions = 1024;
    cfg->limits.max_allocs_per_session = 65536;
    cfg->limits.max_reply_backlog = 4u << 20;
    cfg->limits.quota_per_uid = 0;
    cfg->limits.reclaim_grace_ms = 30000;
    cfg->limits.max_sessions_per_uid = 256;
    cfg->limits.admin_sessions = 4;
    cfg->limits.hello_timeout_ms = 10000;
    cfg->limits.max_suballocs_per_pool = MEMD_POOL_MAX_SUBALLOCS;
    cfg->limits.history_events = 1u << 20;
    cfg->limits.events_per_uid = 100;
    cfg->limits.postmortems = 64;
    cfg->limits.postmortem_interval_ms = 1000;
    cfg->limits.postmortems_per_minute = 20;
    cfg->limits.plan_cache_bytes = 128u << 20;
    cfg->log_level = 6; /* LOG_INFO */
}

int memd_config_load_buffer(const char *name, const char *buf, size_t len,
                            const memd_config_files *files, memd_config *cfg, memd_error *err)
{
    config_defaults(cfg);
    snprintf(cfg->path, sizeof(cfg->path), "%s", name);
    memd_ynode *root;
    int rc = memd_yaml_parse(name, buf, len, &root, err);
    if (rc)
        return rc;
    rc = load_tree(name, root, files, cfg, err);
    memd_yaml_free(root);
    if (rc)
        memd_config_free(cfg);
    return rc;
}

int memd_config_load(const char *path, memd_config *cfg, memd_error *err)
{
    config_defaults(cfg);
    if (strlen(path) >= sizeof(cfg->path))
        return memd_error_set(memd_error_at(err, path, 0, 0), -ENAMETOOLONG,
                              "the config path is too long");
    char *buf;
    size_t len;
    char msg[256];
    int rc = memd_soc_read_file(path, &buf, &len, msg, sizeof(msg));
    if (rc) {
        memd_yaml_error(err, path, NULL, "cannot read the config: %s", msg);
        return rc;
    }
    /* Relative descriptor paths resolve against the config's folder. */
    char base[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(base, sizeof(base), ".");
    else if (slash == path)
        snprintf(base, sizeof(base), "/");
    else
        snprintf(base, sizeof(base), "%.*s", (int)(slash - path), path);
    const memd_config_files files = {.base_dir = base};
    rc = memd_config_load_buffer(path, buf, len, &files, cfg, err);
    free(buf);
    return rc;
}

void memd_config_free(memd_config *cfg)
{
    if (!cfg)
        return;
    for (uint32_t i = 0; i < cfg->ndevices; i++)
        memd_device_spec_free(&cfg->devices[i]);
    free(cfg->devices);
    cfg->devices = NULL;
    cfg->ndevices = 0;
    for (uint32_t i = 0; i < cfg->nsubdevs; i++)
        memd_subdev_spec_free(&cfg->subdevs[i]);
    free(cfg->subdevs);
    cfg->subdevs = NULL;
    cfg->nsubdevs = 0;
    free(cfg->cglimits);
    cfg->cglimits = NULL;
    cfg->ncglimits = 0;
}
