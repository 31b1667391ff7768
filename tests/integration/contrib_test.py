"""contrib/ checked against what memd really exports and loads:
- every query of the Grafana dashboard (contrib/grafana) names only metric families
  `memctl metrics` exports;
- the Kubernetes manifest (contrib/kubernetes/memd.yaml): its ConfigMap's memd.yaml loads
  with `memd --check-config` (the tt-metal paths mapped onto the real descriptor pair),
  the scrape annotations name the exporter's port, the exporter runs memctl metrics.

usage: contrib_test.py BUILD_DIR SOURCE_DIR SHARED_DATA"""
import json
import os
import re
import subprocess
import sys
import tempfile

BUILD, SRC, SHARED = sys.argv[1:4]
sys.path.insert(0, os.path.join(SRC, "tests", "common"))
from memd_daemon import Daemon  # noqa: E402
from tap import check, done  # noqa: E402

MEMD = os.path.join(BUILD, "daemon", "memd")
MEMCTL = os.path.join(BUILD, "tools", "memctl", "memctl")


d = Daemon(MEMD, os.path.join(SRC, "config", "memd.yaml"), memctl=MEMCTL, prefix="memd-contrib-")
try:
    exported = {m["name"] for m in json.loads(d.memctl("metrics", "--json").stdout)["metrics"]}
finally:
    d.stop()
    d.cleanup()

dash = json.load(open(os.path.join(SRC, "contrib", "grafana", "memd-dashboard.json")))
exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
exprs += [v["query"] for v in dash["templating"]["list"] if v["type"] == "query"]
check(len(exprs) >= 8, "the dashboard has its queries (%d)" % len(exprs))
for e in exprs:
    names = set(re.findall(r"\bmemd_\w+", e))
    check(names and names <= exported, "%s: uses exported families (unknown: %s)"
          % (e, sorted(names - exported)))

k8s = open(os.path.join(SRC, "contrib", "kubernetes", "memd.yaml")).read()
# The ConfigMap's memd.yaml: the indented block after `memd.yaml: |`.
m = re.search(r"^(\s*)memd\.yaml: \|\n((?:\1  .*\n|\s*\n)+)", k8s, re.M)
check(m is not None, "the ConfigMap carries memd.yaml")
if m:
    ind = len(m.group(1)) + 2
    cfg = "".join(l[ind:] + "\n" for l in m.group(2).splitlines())
    with tempfile.TemporaryDirectory() as tree:
        # /opt/tt-metal as a tt-metal tree holding the real descriptor pair.
        for kind in ("soc", "core"):
            os.makedirs(os.path.join(tree, "tt_metal", kind + "_descriptors"))
            for f in os.listdir(os.path.join(SHARED, "soc", "tt-metal")):
                if f.startswith(kind + "_"):
                    os.symlink(os.path.join(SHARED, "soc", "tt-metal", f),
                               os.path.join(tree, "tt_metal", kind + "_descriptors",
                                            f[len(kind) + 1:]))
        path = os.path.join(tree, "memd.yaml")
        with open(path, "w") as f:
            f.write(cfg.replace("/opt/tt-metal", tree))
        r = subprocess.run([MEMD, "--check-config", path], capture_output=True, text=True,
                           timeout=60)
        check(r.returncode == 0, "the ConfigMap's memd.yaml loads: %s" % r.stdout[-300:])
port = re.search(r'prometheus\.io/port: "(\d+)"', k8s)
check(port and ('"--listen", ":%s"' % port.group(1)) in k8s and
      re.search(r"containerPort: %s\b" % port.group(1), k8s),
      "scrape annotation, exporter --listen and containerPort agree")
check('"/usr/bin/memctl", "--socket", "/run/memd/memd.sock", "metrics"' in k8s,
      "the exporter container runs memctl metrics on memd's socket")
done()
