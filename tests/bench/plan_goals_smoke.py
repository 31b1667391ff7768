#!/usr/bin/env python3
"""plan_goals.py on three small shared files with short budgets: a row per file with a
cell per goal, a line per goal and the summary line, exit 0 or 1 (goals met or not: with
20 ms budgets that depends on the machine); a missing file, data directory or build is a
clear error (exit 2), before any table.
usage: plan_goals_smoke.py BUILD_DIR DATA_DIR"""
import os, re, subprocess, sys

build, data = sys.argv[1], sys.argv[2]
script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plan_goals.py")
files = [os.path.join(data, "plans", d, f) for d, f in (
    ("challenging", "A.1048576.csv"), ("real", "iree_mobilenet.csv"),
    ("generated", "resnet50_b1.csv"))]


def goals(*args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


r = goals(build, data, "--budgets", "20,40", *files)
assert r.returncode in (0, 1), r.stdout + r.stderr
rows = [l for l in r.stdout.splitlines() if re.match(r"\| (challenging|real|generated)/", l)]
assert len(rows) == 3, r.stdout
for l in rows:
    cells = [c.strip() for c in l.strip("|").split("|")]
    assert len(cells) == 12, l
    assert cells[7] in ("met", "**NOT met**"), l  # goal 1 on every row
# iree_mobilenet: every greedy run and the planner reach the lower bound.
assert re.search(r"\| real/iree_mobilenet.csv \| 56 \| 5706112 \| 5706112 \(0.000, \S+\) \| "
                 r"5706112 \(0.000\) \| 5706112 \(0.000\) \| [0-9.]+ \| met \|  \| met \|", r.stdout), r.stdout
for k in range(1, 6):
    assert re.search(rf"^- goal {k} \(.*\): (met|NOT met|not run) \(", r.stdout, re.M), r.stdout
assert re.search(r"^- goal 4 .*: not run \(pass --million\)", r.stdout, re.M), r.stdout
m = re.search(r"^goals met: (.*); not met: (.*); not run: (.*)$", r.stdout, re.M)
assert m and "4" in m.group(3).split(", ") and "2" in m.group(3).split(", "), r.stdout  # no large/ file
assert ("1" in m.group(1).split(", ")) == (
    "goal 1 (never above the best greedy, at 1 s and 10 s): met" in r.stdout), r.stdout
assert (r.returncode == 1) == (m.group(2) != "none"), r.stdout

for args, msg in (((build, data, os.path.join(data, "plans", "nope.csv")), "nope.csv: no such file"),
                  ((build, os.path.join(data, "no-such-dir")), "no-such-dir: no such data directory"),
                  ((os.path.join(build, "nope"), data, files[1]), "not built")):
    r = goals(*args)
    assert r.returncode == 2 and msg in r.stderr and "|" not in r.stdout, (args, r.stdout, r.stderr)
print("ok")
