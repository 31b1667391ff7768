/* memd — container facts from a cgroup path (see cgroup_path.h). */
#include "cgroup_path.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* n hex digits at p, and then not another one. */
static bool hex_run(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)p[i]))
            return false;
    return !isxdigit((unsigned char)p[n]);
}

/* A pod UID at p, dashes or (systemd's escaping) underscores: 8-4-4-4-12 hex digits. */
static bool pod_uid(const char *p, char res[37])
{
    static const size_t groups[] = {8, 4, 4, 4, 12};
    char out[37];
    size_t o = 0;
    for (size_t g = 0; g < 5; g++) {
        for (size_t i = 0; i < groups[g]; i++, p++) {
            if (!isxdigit((unsigned char)*p))
                return false;
            out[o++] = *p;
        }
        if (g < 4) {
            if (*p != '-' && *p != '_')
                return false;
            out[o++] = '-';
            p++;
        }
    }
    out[o] = '\0';
    if (isxdigit((unsigned char)*p))
        return false;
    memcpy(res, out, sizeof out);
    return true;
}

/* "pod<UID>" anywhere in the segment [seg, end). */
static bool find_pod(const char *seg, const char *end, char out[37])
{
    for (const char *p = strstr(seg, "pod"); p && p < end; p = strstr(p + 1, "pod"))
        if (pod_uid(p + 3, out))
            return true;
    return false;
}

void memd_cgroup_parse(const char *path, memd_cgroup_info *out)
{
    static const struct {
        const char *prefix, *runtime;
    } scopes[] = {
        {"cri-containerd-", "containerd"}, {"crio-", "cri-o"}, {"docker-", "docker"},
        {"libpod-", "podman"},
    };
    *out = (memd_cgroup_info){.runtime = ""};
    bool kube = strstr(path, "kubepods") != NULL;
    for (const char *seg = path; seg && *seg; seg = strchr(seg, '/')) {
        while (*seg == '/')
            seg++;
        const char *end = strchr(seg, '/');
        if (kube && find_pod(seg, end ? end : seg + strlen(seg), out->pod_uid))
            continue;
        for (size_t i = 0; i < sizeof scopes / sizeof *scopes; i++) {
            size_t n = strlen(scopes[i].prefix);
            if (!strncmp(seg, scopes[i].prefix, n) && hex_run(seg + n, 64)) {
                memcpy(out->container_id, seg + n, 64);
                out->container_id[64] = '\0';
                out->runtime = scopes[i].runtime;
            }
        }
        /* cgroupfs layouts: the id is a segment of its own (/docker/<ID>,
         * /kubepods/<qos>/pod<UID>/<ID>). */
        if (hex_run(seg, 64) && (!seg[64] || seg[64] == '/')) {
            memcpy(out->container_id, seg, 64);
            out->container_id[64] = '\0';
            if (!kube && strstr(path, "/docker/"))
                out->runtime = "docker";
        }
    }
}

int memd_cgroup_path_check(const char *path, const char **why)
{
    if (path[0] != '/')
        return *why = "it must start with '/'", -EINVAL;
    for (const char *p = path; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return *why = "it has a control character", -EINVAL;
        if (*p != '/')
            continue;
        /* The component after this slash: not empty (unless the path is "/"), not . or .. */
        const char *c = p + 1;
        size_t n = strcspn(c, "/");
        if (n == 0 && !(p == path && !p[1]))
            return *why = "it has an empty component or a trailing '/'", -EINVAL;
        if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return *why = "it has a '.' or '..' component", -EINVAL;
    }
    return 0;
}
