#!/usr/bin/env python3
"""memctl plan with an iteration budget (no clock) gives the same plan twice, and the
same on one thread as on two, both on a problem big enough for the planner's large path
(30k buffers: segment tree, squeaky-wheel lanes) and on a small one (the exact search's
lanes); every plan is valid (memctl plan --validate) and never above the best of the
ten full greedy runs (memd-bench-plan-greedy's per-run mode).
usage: plan_threads_smoke.py MEMCTL GREEDY_BENCH"""
import json, os, subprocess, sys, tempfile

memctl, greedy = sys.argv[1], sys.argv[2]
gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_plan_problem.py")


def plan(src, out, iterations, threads):
    r = subprocess.run([memctl, "plan", src, "--iterations", str(iterations), "--threads",
                        threads, "-o", out, "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    v = subprocess.run([memctl, "plan", "--validate", out, "--json"], capture_output=True,
                       text=True)
    assert v.returncode == 0, v.stdout + v.stderr
    assert json.loads(v.stdout)["arena"] == json.loads(r.stdout)["arena"], (v.stdout, r.stdout)
    return json.loads(r.stdout), open(out).read()


def check(d, name, args, iterations, strategy):
    src = os.path.join(d, name + ".csv")
    with open(src, "w") as f:
        subprocess.run([sys.executable, gen] + args, stdout=f, check=True)
    runs = [plan(src, os.path.join(d, f"{name}-{k}.csv"), iterations, t)
            for k, t in enumerate(("1", "2", "2"))]
    first = runs[0][0]
    assert first["strategy"].startswith(strategy), (name, first)
    for res, text in runs[1:]:
        assert res["arena"] == first["arena"] and res["strategy"] == first["strategy"], \
            (name, first, res)
        assert text == runs[0][1], f"{name}: the plans differ (1 thread, 2 threads, again)"
    g = json.loads(subprocess.run([greedy, src], capture_output=True, text=True,
                                  check=True).stdout)
    assert len(g["runs"]) == 10 and g["best"] == min(r["arena"] for r in g["runs"]), g
    assert first["arena"] <= g["best"], (name, first, g["best"], g["best_run"])
    print("ok", name, first["buffers"], first["arena"], first["strategy"], "best greedy",
          g["best"], g["best_run"])


with tempfile.TemporaryDirectory() as d:
    check(d, "large", ["--shape", "large", "--buffers", "30000", "--seed", "13"], 12000,
          "squeaky-")
    check(d, "small", ["--shape", "large", "--buffers", "300", "--seed", "5"], 20000,
          "search")
