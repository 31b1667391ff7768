/* common/cgroup_path.h: pod UIDs and container ids from the cgroup paths Kubernetes
 * (both cgroup drivers), containerd, CRI-O, Docker and Podman make. */
#include <string.h>

#include "cgroup_path.h"
#include "check_main.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "8f2f4ac4-6e3e-4d0c-9a43-4d9d2b6a1f10"
#define UID_ "8f2f4ac4_6e3e_4d0c_9a43_4d9d2b6a1f10"

static void expect(const char *path, const char *pod, const char *id, const char *rt)
{
    memd_cgroup_info c;
    memd_cgroup_parse(path, &c);
    ck_assert_msg(!strcmp(c.pod_uid, pod), "%s: pod '%s', want '%s'", path, c.pod_uid, pod);
    ck_assert_msg(!strcmp(c.container_id, id), "%s: id '%s', want '%s'", path,
                  c.container_id, id);
    ck_assert_msg(!strcmp(c.runtime, rt), "%s: runtime '%s', want '%s'", path, c.runtime, rt);
}

START_TEST(kubernetes)
{
    expect("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
           ".slice/cri-containerd-" ID ".scope", UID, ID, "containerd");
    expect("/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" ID ".scope", UID, ID, "cri-o");
    expect("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
           ".slice/docker-" ID ".scope", UID, ID, "docker");
    expect("/kubepods/burstable/pod" UID "/" ID, UID, ID, "");
    expect("/kubepods/pod" UID "/" ID, UID, ID, "");
    /* The pod's own cgroup (a process in no container yet). */
    expect("/kubepods.slice/kubepods-pod" UID_ ".slice", UID, "", "");
}
END_TEST

START_TEST(containers)
{
    expect("/system.slice/docker-" ID ".scope", "", ID, "docker");
    expect("/docker/" ID, "", ID, "docker");
    expect("/machine.slice/libpod-" ID ".scope", "", ID, "podman");
    expect("/system.slice/cri-containerd-" ID ".scope/init", "", ID, "containerd");
}
END_TEST

START_TEST(not_containers)
{
    expect("", "", "", "");
    expect("/", "", "", "");
    expect("/user.slice/user-1000.slice/session-2.scope", "", "", "");
    expect("/system.slice/memd.service", "", "", "");
    /* Near misses: a short id, a pod word outside kubepods, a UID one digit short. */
    expect("/system.slice/docker-0123abcd.scope", "", "", "");
    expect("/podman/pod" UID, "", "", "");
    expect("/kubepods/pod8f2f4ac4-6e3e-4d0c-9a43-4d9d2b6a1f1/x", "", "", "");
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("cgroup-path");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, kubernetes);
    tcase_add_test(tc, containers);
    tcase_add_test(tc, not_containers);
    suite_add_tcase(s, tc);
    return s;
}
