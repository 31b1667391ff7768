"""memd's exporter as an operator runs it, scraped by a real Prometheus.

A private memd serves the bundled config; a workload holds a named DRAM buffer. Then:
- `memctl metrics` passes `promtool check metrics` (exposition format and naming lint),
  and its label sets follow one convention (device/group/region; pid/comm/client);
- memd-metrics.service's own ExecStart (read from the unit meson installs) runs under
  socket activation on a loopback port (systemd-socket-activate passes the socket as
  memd-metrics.socket would), only the memctl path and memd's socket mapped to this
  build and daemon;
- Debian's prometheus scrapes it every second, and its query API answers for memd's
  series with the bytes the dump shows;
- where a writable cgroup v2 mount exists: a container (a child of a pod's cgroup)
  goes over the device memory limit set on its pod, and Prometheus answers what the
  pod uses and that one allocation was refused for the limit.

usage: prometheus_test.py BUILD_DIR SOURCE_DIR   (exit 77: prometheus not installed)"""
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

BUILD, SRC = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SRC, "tests", "common"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memd_daemon import Daemon  # noqa: E402
from tap import check, done  # noqa: E402
from cgroup_util import Cgroups  # noqa: E402

for tool in ("prometheus", "promtool", "systemd-socket-activate"):
    if not shutil.which(tool):
        print("%s not installed (tools/deps installs it): skipped" % tool)
        sys.exit(77)

MEMCTL = os.path.join(BUILD, "tools", "memctl", "memctl")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def hold(size, cgroup_dir=None):
    """memctl alloc --hold (cgroup_util.Cgroups.hold), killed at the end."""
    p, line = cgs.hold(MEMCTL, d.socket, size, cgroup_dir)
    procs.append(p)
    return p, line


def query(web, q, deadline_s=90, want=None):
    """The Prometheus query's result once it has one (and, with want, once a sample
    equals it), or the last result at the deadline."""
    res = None
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            r = json.loads(get("http://127.0.0.1:%d/api/v1/query?query=%s"
                               % (web, urllib.parse.quote(q))))
            if r["status"] == "success" and r["data"]["result"]:
                res = r["data"]["result"]
                if want is None or int(float(res[0]["value"][1])) == want:
                    break
        except OSError:
            pass
        time.sleep(0.5)
    print("# query: %s\n# answer: %s" % (q, json.dumps(res)))
    return res


procs = []
cgs = Cgroups(required=False)
d = Daemon(os.path.join(BUILD, "daemon", "memd"), os.path.join(SRC, "config", "memd.yaml"),
           memctl=MEMCTL, prefix="memd-prom-")
try:
    holder, line = hold("48MiB")
    check("handle=" in line, "a workload holds 48 MiB of DRAM")
    dram = [g for g in d.dump()["devices"][0]["bank_groups"] if g["kind"] == "dram"][0]
    pod = None
    if cgs.ok:
        # A pod's cgroup with a limit of 8 MiB per bank; its container holds 4, then asks
        # for 5 more: refused by the pod's limit.
        pod, _ = cgs.make("/kubepods.slice/kubepods-podprom.slice")
        _, ctr_fs = cgs.make("/kubepods.slice/kubepods-podprom.slice/cri-containerd-c1.scope")
        d.memctl("limit", "set", "--cgroup", pod, "--device", "0",
                 "--max", str(8 * (1 << 20) * dram["banks"]))
        _, line = hold("4MiB", ctr_fs)
        check("handle=" in line, "the container holds 4 MiB per bank")
        over, err = hold("5MiB", ctr_fs)
        check(over.returncode == 5 and "limit" in err,
              "the container goes over its pod's limit: exit %s, %s" % (over.returncode,
                                                                         err.strip()))
    else:
        print("# no writable cgroup v2 mount: the pod-limit part is not run")

    text = d.memctl("metrics").stdout
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
          "promtool check metrics: clean (%s%s)" % (r.stdout.strip(), r.stderr.strip()))
    # One label convention: device-related families carry device; a process is
    # pid, comm, client everywhere.
    samples = [l for l in text.splitlines() if l and not l.startswith("#")]
    for l in samples:
        name, labels = re.match(r"(\w+)(?:\{(.*)\})? ", l).groups()
        keys = re.findall(r'(\w+)="', labels or "")
        if "pid" in keys:
            check(keys[:3] == ["pid", "comm", "client"] and "device" in keys,
                  "%s: a process is pid, comm, client, on a device" % name)
        if any(k in keys for k in ("group", "region")):
            check(keys[0] == "device", "%s: device first" % name)
        check("kind" not in keys and "process" not in keys, "%s: no old label names" % name)
    check(not any(l.startswith("memd_process_bytes{pid=\"%d\"" % os.getpid()) for l in samples),
          "no series for the scraper itself")
    # Peaks (issue 25): the held 48 MiB is the most there has been, on the device, in its
    # region and for its process.
    def value(series):
        m = re.search(r"^%s (\d+)$" % re.escape(series), text, re.M)
        return int(m.group(1)) if m else None
    dev_peak = value('memd_device_peak_bytes{device="0",group="dram"}')
    used = value('memd_device_used_bytes{device="0",group="dram"}')
    check(dev_peak is not None and dev_peak == used and dev_peak >= 48 << 20,
          "memd_device_peak_bytes is the bytes held: %s, %s" % (dev_peak, used))
    check(value('memd_region_peak_bytes{device="0",group="dram",region="data"}') == dev_peak,
          "memd_region_peak_bytes of data is the device's")
    proc = re.search(r'^memd_process_bytes\{pid="%d",(.*)\} (\d+)$' % holder.pid, text, re.M)
    check(proc is not None and value('memd_process_peak_bytes{pid="%d",%s}' % (holder.pid, proc.group(1)))
          == int(proc.group(2)), "memd_process_peak_bytes of the holder is what it holds")
    sessions = int(re.search(r"^memd_sessions (\d+)$", text, re.M).group(1))
    check(sessions == (2 if pod else 1),
          "memd_sessions counts the workloads, not the scraper: %d" % sessions)

    # The exporter exactly as memd-metrics.service starts it.
    unit = open(os.path.join(BUILD, "systemd", "memd-metrics.service")).read()
    cmd = shlex.split(re.search(r"^ExecStart=(.*)$", unit, re.M).group(1))
    check(os.path.basename(cmd[0]) == "memctl" and cmd[-2:] == ["--listen", "systemd"],
          "the unit runs memctl metrics --listen systemd: %s" % cmd)
    cmd[0] = MEMCTL
    cmd[cmd.index("--socket") + 1] = d.socket
    port = free_port()
    exporter = subprocess.Popen(["systemd-socket-activate", "-l", "127.0.0.1:%d" % port, "--"]
                                + cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
    procs.append(exporter)
    body = ""
    for _ in range(100):
        try:
            body = get("http://127.0.0.1:%d/metrics" % port)
            break
        except OSError:
            time.sleep(0.1)
    check("memd_build_info{" in body, "the socket-activated exporter answers /metrics")

    prom_dir = os.path.join(d.dir, "prometheus")
    os.makedirs(prom_dir)
    with open(os.path.join(prom_dir, "prometheus.yml"), "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: memd\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % port)
    web = free_port()
    prom = subprocess.Popen(["prometheus", "--config.file", os.path.join(prom_dir, "prometheus.yml"),
                             "--storage.tsdb.path", os.path.join(prom_dir, "data"),
                             "--web.listen-address", "127.0.0.1:%d" % web],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(prom_dir, "log"), "w"))
    procs.append(prom)
    dump = d.dump()
    dram = [g for g in dump["devices"][0]["bank_groups"] if g["kind"] == "dram"][0]
    want = [r for r in dram["regions"] if r["name"] == "data"][0]["allocated"]
    answer = query(web, 'memd_region_allocated_bytes{job="memd",device="0",group="dram",'
                   'region="data"}', want=want)
    check(answer is not None and len(answer) == 1, "Prometheus answers the query")
    if answer:
        check(int(float(answer[0]["value"][1])) == want,
              "with the bytes the dump shows: %s == %d" % (answer[0]["value"][1], want))
    if pod:
        use = 4 * (1 << 20) * dram["banks"]
        answer = query(web, 'memd_cgroup_usage_bytes{job="memd",device="0",group="dram",'
                       'cgroup="%s"}' % pod, want=use)
        check(answer and int(float(answer[0]["value"][1])) == use,
              "Prometheus: the pod's cgroup uses what its container holds (%d)" % use)
        answer = query(web, 'memd_allocation_failures_total{job="memd",device="0",'
                       'reason="limit"}', want=1)
        check(answer and answer[0]["value"][1] == "1",
              "Prometheus: one allocation refused for the limit")
    up = json.loads(get("http://127.0.0.1:%d/api/v1/query?query=up" % web))["data"]["result"]
    check(up and up[0]["value"][1] == "1", "the target is up")
finally:
    for p in reversed(procs):
        p.terminate()
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
    d.stop()
    d.cleanup()
    cgs.cleanup()
done()
