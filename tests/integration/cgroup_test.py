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

MEMCTL = os.path.join(BUILD, "tools", "memctl", "memctl")


def cgroup2_mount():
    """The cgroup v2 mount and this process's path in it ("0::" of /proc/self/cgroup)."""
    mnt = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[sep + 1] == "cgroup2":
                mnt = fields[4]
                break
    own = [l.split("::", 1)[1].strip() for l in open("/proc/self/cgroup") if l.startswith("0::")]
    return mnt, own[0] if own else None


mnt, own = cgroup2_mount()
if not mnt or own is None or not os.access(os.path.join(mnt, own.lstrip("/")), os.W_OK):
    print("no writable cgroup v2 mount here (%s): skipped" % mnt)
    sys.exit(77)

failed = 0


def check(cond, what):
    global failed
    print(("ok - " if cond else "not ok - ") + what, flush=True)
    failed += not cond


pod = str(uuid.uuid4())
cid = uuid.uuid4().hex + uuid.uuid4().hex
rel = "/memd-test-%d/kubepods.slice/kubepods-pod%s.slice/cri-containerd-%s.scope" % (
    os.getpid(), pod.replace("-", "_"), cid)
# The path memd reads is relative to its own cgroup namespace root, which is ours.
want = (own.rstrip("/") + rel) if own != "/" else rel
cg = os.path.join(mnt, own.lstrip("/"), rel.lstrip("/"))
os.makedirs(cg)
d = Daemon(os.path.join(BUILD, "daemon", "memd"), os.path.join(SRC, "config", "memd.yaml"),
           memctl=MEMCTL, prefix="memd-cg-")
hold = None
try:
    # The client joins the cgroup before it connects, as a container's process would be.
    hold = subprocess.Popen(["sh", "-c", 'echo $$ > "$1/cgroup.procs" && exec "$2" --socket "$3" '
                             'alloc --device 0 --class constant --size 4MiB --hold',
                             "sh", cg, MEMCTL, d.socket], stdout=subprocess.PIPE, text=True)
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
    # Empty again: remove the test's cgroups, deepest first.
    top = os.path.join(mnt, own.lstrip("/"), "memd-test-%d" % os.getpid())
    for root, dirs, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
        try:
            os.rmdir(root)
        except OSError:
            pass
sys.exit(1 if failed else 0)
