/* memd — what a cgroup path says about the container it names. Pure: a string in, the
 * pieces out. The patterns (doc/cluster.md lists them with examples):
 *   Kubernetes, systemd driver  .../kubepods-<qos>-pod<UID, _ for ->.slice/<rt>-<ID>.scope
 *   Kubernetes, cgroupfs driver .../kubepods/<qos>/pod<UID>/<ID>
 *   Docker                      .../docker-<ID>.scope or /docker/<ID>
 *   containerd, CRI-O, Podman   .../cri-containerd-<ID>.scope, crio-<ID>.scope,
 *                               libpod-<ID>.scope
 * where ID is a container id of 64 hex digits and rt the runtime's prefix. */
#ifndef MEMD_COMMON_CGROUP_PATH_H
#define MEMD_COMMON_CGROUP_PATH_H

typedef struct memd_cgroup_info {
    char pod_uid[37];      /* Kubernetes pod UID (8-4-4-4-12), "" when none */
    char container_id[65]; /* 64 hex digits, "" when none */
    const char *runtime;   /* "containerd", "cri-o", "docker", "podman" or "" */
} memd_cgroup_info;

/* Fills out from path (never fails: what is not found stays empty). */
void memd_cgroup_parse(const char *path, memd_cgroup_info *out);

/* A cgroup path a limit may name: absolute, no empty, "." or ".." component, no
 * trailing slash ("/" itself is the root), printable. 0, or -EINVAL with why. */
int memd_cgroup_path_check(const char *path, const char **why);

#endif
