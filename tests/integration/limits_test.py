"""Device memory limits per cgroup, against a real daemon with real cgroups (made under
the writable cgroup v2 mount; skipped where there is none): a limit on a parent bounds a
client in a child cgroup, the refusal names the limit, `memctl limit list` shows usage
and peak, a free uncharges, non-admins may not set limits, a limit set by request
survives a restart, memd.yaml's `cgroup_limits` are replaced on SIGHUP, and the
metrics carry the limit, usage, peak and the refusal counted under reason "limit".

usage: limits_test.py BUILD_DIR SOURCE_DIR   (exit 77: no writable cgroup v2 mount)"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

BUILD, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(SRC, "tests", "common"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memd_daemon import Daemon  # noqa: E402
from tap import check, done  # noqa: E402
from cgroup_util import Cgroups  # noqa: E402

MEMCTL = os.path.join(BUILD, "tools", "memctl", "memctl")
MiB = 1 << 20
NOBODY = 65534


cgs = Cgroups()
# A pod and one of its containers, named as Kubernetes' systemd driver names them.
POD = "/kubepods.slice/kubepods-pod%s.slice" % str(uuid.uuid4()).replace("-", "_")
pod, pod_fs = cgs.make(POD)
ctr, ctr_fs = cgs.make(POD + "/cri-containerd-%s.scope" % (uuid.uuid4().hex + uuid.uuid4().hex))
other, _ = cgs.make("/other")
later, _ = cgs.make("/later")

# memd.yaml with a `cgroup_limits` list (rewritten for the SIGHUP case).
conf_dir = tempfile.mkdtemp(prefix="memd-limits-conf-")
conf = os.path.join(conf_dir, "memd.yaml")
base = open(os.path.join(SRC, "config", "memd.yaml")).read().replace(
    "descriptor: devices/", "descriptor: %s/" % os.path.join(SRC, "config", "devices"))


def write_config(cgroup, size):
    with open(conf + ".new", "w") as f:
        f.write(base + "\ncgroup_limits:\n  - cgroup: %s\n    device: 0\n    group: dram\n"
                "    max: %s\n" % (cgroup, size))
    os.replace(conf + ".new", conf)


def limits(d):
    return json.loads(d.memctl("limit", "list", "--json").stdout)


def limit_of(d, cgroup):
    got = [l for l in limits(d) if l["cgroup"] == cgroup]
    return got[0] if got else None


def hold(fs, size):
    """memctl alloc --hold (cgroup_util.Cgroups.hold), killed at the end."""
    p, line = cgs.hold(MEMCTL, d.socket, size, fs)
    holds.append(p)
    return p, line


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


write_config(other, "1MiB")
d = Daemon(os.path.join(BUILD, "daemon", "memd"), conf, memctl=MEMCTL, prefix="memd-limits-")
holds = []
try:
    dram = [g for g in d.dump()["devices"][0]["bank_groups"] if g["kind"] == "dram"][0]
    banks = dram["banks"]
    # A limit on the parent of 8 MiB per bank, in bytes on the device.
    mx = 8 * MiB * banks
    d.memctl("limit", "set", "--cgroup", pod, "--device", "0", "--max", str(mx))
    first, line = hold(ctr_fs, "4MiB")
    check("handle=" in line, "a client in the child cgroup holds 4 MiB/bank")
    l = limit_of(d, pod)
    check(l and l["current"] == 4 * MiB * banks and l["peak"] == 4 * MiB * banks and
          l["max"] == mx and l["source"] == "set", "the parent's limit counts it: %s" % l)
    # 4 + 5 MiB per bank would pass the parent's 8: refused, naming the parent.
    over, err = hold(ctr_fs, "5MiB")
    check(over.returncode == 5, "over the limit: exit 5 (out of device memory), got %d"
          % over.returncode)
    # The message keeps a long path's end (the pod), cut at the front.
    check(("%s on device 0 dram: max %d bytes, %d in use" % (pod[-77:], mx, 4 * MiB * banks)
           in err) and "over a cgroup's device memory limit" in err,
          "the refusal names the limit, its max and usage: %s" % err.strip())
    # A client outside the limited subtree is not bound by it.
    _, line = hold(None, "5MiB")
    check("handle=" in line, "a client outside the cgroup holds 5 MiB/bank")
    # The table names it too.
    table = d.memctl("limit", "list").stdout
    check(pod in table and "CURRENT" in table and "set" in table, "memctl limit list: table")
    # Metrics: limit, usage, peak, and the refusal under reason "limit".
    text = d.memctl("metrics").stdout
    lab = 'device="0",group="dram",cgroup="%s"' % pod
    for fam, v in (("memd_cgroup_limit_bytes", mx), ("memd_cgroup_usage_bytes", 4 * MiB * banks),
                   ("memd_cgroup_peak_bytes", 4 * MiB * banks)):
        check("%s{%s} %d" % (fam, lab, v) in text.splitlines(), "%s of the parent" % fam)
    check('memd_allocation_failures_total{device="0",reason="limit"} 1' in text.splitlines(),
          "memd_allocation_failures_total counts the refusal under reason limit")
    if shutil.which("promtool"):
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=60)
        check(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
              "promtool check metrics with limits and failures: clean (%s%s)"
              % (r.stdout.strip(), r.stderr.strip()))
    else:
        print("# promtool not installed (tools/deps installs it): lint not run")
    # The free uncharges; the peak stays.
    first.terminate()
    first.wait(timeout=20)
    holds.remove(first)
    l = limit_of(d, pod)
    check(l and l["current"] == 0 and l["peak"] == 4 * MiB * banks,
          "after the client ends: current 0, peak kept: %s" % l)
    # Non-admins may read (the test's socket is root's: let uid 65534 reach it) the limits but not set or clear them.
    os.chmod(d.dir, 0o711)
    os.chmod(d.socket, 0o666)
    r = subprocess.run([MEMCTL, "--socket", d.socket, "limit", "set", "--cgroup", pod, "--device",
                        "0", "--max", "1GiB"], capture_output=True, text=True,
                       preexec_fn=as_nobody, timeout=30)
    check(r.returncode == 4 and "admins only" in r.stderr,
          "uid %d: limit set refused (exit %d): %s" % (NOBODY, r.returncode, r.stderr.strip()))
    r = subprocess.run([MEMCTL, "--socket", d.socket, "limit", "list", "--json"],
                       capture_output=True, text=True, preexec_fn=as_nobody, timeout=30)
    check(r.returncode == 0 and any(x["cgroup"] == pod for x in json.loads(r.stdout or "[]")),
          "uid %d: limit list works" % NOBODY)
    # Bad input is refused with a clear message.
    r = d.memctl("limit", "set", "--cgroup", "/a/../b", "--device", "0", "--max", "1MiB",
                 check=False)
    check(r.returncode != 0 and "'..'" in r.stderr, "a '..' path is refused: %s" % r.stderr.strip())
    # The config's limit is listed as such.
    l = limit_of(d, other)
    check(l and l["max"] == MiB and l["source"] == "config", "memd.yaml's limit: %s" % l)
    # Restart: the limit set by request comes back from the state store.
    check(d.stop() == 0, "memd stops cleanly")
    d.start()
    l = limit_of(d, pod)
    check(l and l["max"] == mx and l["source"] == "set", "after a restart: %s" % l)
    # SIGHUP: the config's limits are replaced; the one set by request stays.
    write_config(later, "2MiB")
    d.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not limit_of(d, later):
        time.sleep(0.1)
    check(limit_of(d, later) and not limit_of(d, other) and limit_of(d, pod),
          "after SIGHUP: %s" % [x["cgroup"] for x in limits(d)])
    # Clear.
    d.memctl("limit", "clear", "--cgroup", pod)
    r = d.memctl("limit", "clear", "--cgroup", pod, check=False)
    check(not limit_of(d, pod) and r.returncode != 0 and "has no limit" in r.stderr,
          "clear removes it; a second clear: %s" % r.stderr.strip())
finally:
    for h in holds:
        h.terminate()
        h.wait(timeout=20)
    d.stop()
    d.cleanup()
    cgs.cleanup()
    shutil.rmtree(conf_dir, ignore_errors=True)
done()
