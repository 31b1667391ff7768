/* memd — daemon configuration (memd.yaml) and the device descriptors it names.
 * Loading is done with libyaml; every error carries file, line and column. */
#ifndef MEMD_SOC_CONFIG_H
#define MEMD_SOC_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "device.h"
#include "error.h"

#define MEMD_POSTMORTEMS_MAX 4096

typedef struct memd_limits {
    uint32_t max_frame;              /* bytes of payload per frame (default 1 MiB) */
    uint32_t max_sessions;           /* default 1024 */
    uint32_t max_allocs_per_session; /* default 65536 */
    uint64_t max_reply_backlog;      /* bytes of unsent replies before reading stops (default 4 MiB) */
    uint64_t quota_per_uid;          /* bytes per bank per uid per device, 0 = unlimited */
    uint32_t reclaim_grace_ms;       /* after restart, how long sessions may be reclaimed (default 30000) */
    uint32_t max_sessions_per_uid;   /* connections of one non-admin uid (default 256) */
    uint32_t admin_sessions;         /* of max_sessions, kept for admins (default 4) */
    uint32_t hello_timeout_ms;       /* a connection's first request must arrive in time
                                        (default 10000, 0 = no limit) */
    uint32_t history_events;         /* flight recorder records kept (default 1 Mi), 0: off */
    uint32_t max_suballocs_per_pool; /* live sub-allocations in one pool's books
                                        (default and most MEMD_POOL_MAX_SUBALLOCS) */
    uint64_t plan_cache_bytes;       /* the plan cache's unreferenced plans are evicted past
                                        this many bytes (default 128 MiB) */
    uint32_t events_per_uid;         /* events one uid may add to the event log a second
                                        (default 100, 0 = no limit) */
    uint32_t postmortems;            /* out-of-memory post-mortems kept (default 64, at most
                                        MEMD_POSTMORTEMS_MAX), 0: off */
    uint32_t postmortem_interval_ms; /* at most one per uid this often (default 1000) */
    uint32_t postmortems_per_minute; /* at most this many a minute in all (default 20, 0: no cap) */
} memd_limits;

/* A sub-device (partition): a named subset of one bank group's banks, optionally with a
 * byte budget; sessions of the listed users and groups are bound to it and allocate only
 * inside it. Two sub-devices may share banks only when one lists the other under
 * `overlap` (tt-metal's overlapped sub-device allocators). */
#define MEMD_SUBDEV_MAX 64
#define MEMD_SUBDEV_MAX_LIST 16 /* overlap names, users, groups */

typedef struct memd_subdev_spec {
    char name[MEMD_NAME_MAX];
    uint32_t device;                 /* device id */
    memd_kind kind;                  /* its bank group */
    uint32_t nbanks;
    uint32_t *banks;                 /* nbanks ids, strictly increasing; owned */
    uint64_t budget;                 /* bytes over all its banks; 0: none */
    uint64_t window;                 /* bytes per bank it owns at the bottom of its group's
                                        first allocatable region (tt-metal's local L1); 0: none */
    uint32_t noverlap, nusers, ngroups;
    char overlap[MEMD_SUBDEV_MAX_LIST][MEMD_NAME_MAX];
    uint32_t users[MEMD_SUBDEV_MAX_LIST];  /* uids */
    char groups[MEMD_SUBDEV_MAX_LIST][64]; /* group names or gids, resolved by the daemon */
} memd_subdev_spec;

/* The checks a sub-device must pass against the devices and the sub-devices before it
 * (config and the admin's SUBDEV_DEFINE alike): 0, or -EINVAL with a message and, in
 * *key (may be NULL), the config key at fault. */
int memd_subdev_validate(const memd_subdev_spec *sd, const memd_device_spec *devs, uint32_t ndevs,
                         const memd_subdev_spec *const *others, uint32_t nothers, char *msg,
                         size_t cap, const char **key);
void memd_subdev_spec_free(memd_subdev_spec *sd);

/* A device memory limit on a cgroup (`cgroup_limits`), the dmem controller's dmem.max. */
typedef struct memd_cglimit_spec {
    char cgroup[256];                /* absolute cgroup v2 path (common/cgroup_path.h) */
    uint32_t device;                 /* device id */
    memd_kind kind;                  /* its bank group */
    uint64_t max;                    /* bytes on the device */
} memd_cglimit_spec;

typedef struct memd_config {
    char path[512];                  /* the config file that was loaded */
    char socket_path[108];           /* "" = built-in default */
    char state_dir[512];             /* "" = directory of the socket */
    char admin_group[64];            /* "" = only root is admin */
    unsigned admin_group_line, admin_group_column; /* where it is set, for errors */
    int log_level;                   /* syslog priority: LOG_ERR (3) .. LOG_DEBUG (7), default LOG_INFO */
    bool shared_names_global;        /* shared_names: global (default per_uid: each uid
                                        has its own namespace of shared names) */
    memd_limits limits;
    uint32_t ndevices;
    memd_device_spec *devices;       /* ndevices entries, ids unique */
    uint32_t nsubdevs;
    memd_subdev_spec *subdevs;       /* `sub_devices`, names unique */
    uint32_t ncglimits;
    memd_cglimit_spec *cglimits;     /* `cgroup_limits`, (cgroup, device, group) unique */
} memd_config;

/* Loads the config and every descriptor it names (relative paths resolve against the
 * config file's folder). Returns 0, or a negative errno with *err filled. */
int memd_config_load(const char *path, memd_config *cfg, memd_error *err);
void memd_config_free(memd_config *cfg);

/* Where the descriptor files memd.yaml names come from. */
typedef struct memd_config_files {
    const char *base_dir; /* relative paths resolve against it */
    /* Reads a whole file into a malloc'd buffer: 0, or -errno with msg set. NULL: the
     * file system. Fuzzing serves files from memory here. */
    int (*read)(void *ctx, const char *path, char **buf, size_t *len, char *msg, size_t msglen);
    void *ctx;
} memd_config_files;

/* The same from a buffer (fuzzing, tests); name is used in errors; files gives the
 * descriptors (NULL: naming a file is an error). memd_config_load comes here too. */
int memd_config_load_buffer(const char *name, const char *buf, size_t len,
                            const memd_config_files *files, memd_config *cfg, memd_error *err);

/* Loaders for one descriptor (also used by the fuzz targets). Buffers are not
 * NUL-terminated; name is used in error messages only. */
int memd_soc_load_memd_device(const char *name, const char *buf, size_t len,
                              memd_device_spec *out, memd_error *err);

#endif
