"""Containers as memd sees them: a client moved into a real cgroup (made under the
writable cgroup v2 mount, named as Kubernetes' systemd driver names a containerd
container) connects and holds memory; memd reads its cgroup at connect and
`memctl sessions` (table and JSON: path, pod UID, container id, runtime), `memctl status`
and `memctl metrics` (the cgroup label and memd_cgroup_bytes) show it.

usage: cgroup_test.py BUILD_DIR SOURCE_DIR   (exit 77: no writable cgroup v2 mount)"""
import json
import os
import re
import subprocess
import sys
import uuid

BUILD, SRC = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SRC, "tests", "common"))
from memd_daemon import Daemon  # noqa: E402
from tap import check, done  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cgroup_util import Cgroups  # noqa: E402

MEMCTL = os.path.join(BUILD, "tools", "memctl", "memctl")


cg_tree = Cgroups()


pod = str(uuid.uuid4())
cid = uuid.uuid4().hex + uuid.uuid4().hex
want, cg = cg_tree.make("/kubepods.slice/kubepods-pod%s.slice/cri-containerd-%s.scope" % (
    pod.replace("-", "_"), cid))
d = Daemon(os.path.join(BUILD, "daemon", "memd"), os.path.join(SRC, "config", "memd.yaml"),
           memctl=MEMCTL, prefix="memd-cg-")
hold = None
try:
    # The client joins the cgroup before it connects, as a container's process would be.
    hold = cg_tree.spawn(cg, [MEMCTL, "--socket", d.socket, "alloc", "--device", "0", "--class",
                              "constant", "--size", "4MiB", "--hold"],
                         stdout=subprocess.PIPE, text=True)
    check("handle=" in hold.stdout.readline(), "a client in the cgroup holds 4 MiB")
    sess = json.loads(d.memctl("sessions", "--json").stdout)["sessions"]
    mine = [x for x in sess if x["pid"] == hold.pid]
    check(len(mine) == 1, "its session is listed")
    if mine:
        x = mine[0]
        check(x["cgroup"] == want, "its cgroup: %s (want %s)" % (x["cgroup"], want))
        check(x["pod_uid"] == pod, "the pod UID from the path: %s" % x["pod_uid"])
        check(x["container_id"] == cid and x["container_runtime"] == "containerd",
              "the container id and runtime")
    table = d.memctl("sessions").stdout
    check(("pod %s/%s" % (pod[:8], cid[:12])) in table, "the table names pod and container")
    status = json.loads(d.memctl("status", "--json").stdout)
    check(any(x["pid"] == hold.pid and x.get("cgroup") == want and x.get("pod_uid") == pod
              for x in status["processes"]), "memctl status --json too (per process)")
    dump = d.dump()
    text = d.memctl("metrics").stdout
    line = [l for l in text.splitlines() if l.startswith('memd_cgroup_bytes{device="0",group="dram",'
                                                         'cgroup="%s"}' % want)]
    banks = [g for g in dump["devices"][0]["bank_groups"] if g["kind"] == "dram"][0]["banks"]
    check(len(line) == 1 and line[0].endswith(" %d" % ((4 << 20) * banks)),
          "memd_cgroup_bytes: 4 MiB x %d banks: %s" % (banks, line))
    proc = [l for l in text.splitlines()
            if l.startswith("memd_process_bytes{pid=\"%d\"" % hold.pid)]
    check(proc and ('cgroup="%s"' % want) in proc[0], "the process series carry the cgroup")
    # memctl itself runs outside the test cgroup: its own session shows its own cgroup.
    check(all(re.match(r"^/", x["cgroup"]) or x["cgroup"] == "" for x in sess),
          "every cgroup is a path or unknown")
finally:
    if hold:
        hold.terminate()
        hold.wait(timeout=20)
    d.stop()
    d.cleanup()
    cg_tree.cleanup()
done()
