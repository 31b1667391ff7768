#!/usr/bin/env python3
"""memctl plan on a problem big enough for the planner's large path (segment tree,
squeaky-wheel lanes): with an iteration budget the plan is the same on one thread and
on two, valid (memctl plan --validate), and no worse than size order first fit.
usage: plan_threads_smoke.py MEMCTL GREEDY_BENCH"""
import json, os, random, subprocess, sys, tempfile

memctl, greedy = sys.argv[1], sys.argv[2]
rng = random.Random(13)
n, T = 30000, 45000
sizes = sorted({int(2 ** rng.uniform(1, 24)) + 1 for _ in range(60)})
with tempfile.TemporaryDirectory() as d:
    src = os.path.join(d, "p.csv")
    with open(src, "w") as f:
        f.write("id,lower,upper,size\n")
        for i in range(n):
            lo, r = rng.randrange(T), rng.random()
            life = rng.randint(1, 6) if r < 0.7 else (int(rng.paretovariate(1.2) * 8) if r < 0.95
                                                       else rng.randint(T // 20, T // 2))
            f.write(f"b{i},{lo},{min(T, lo + max(1, life))},{rng.choice(sizes)}\n")
    outs = []
    for threads in ("1", "2"):
        out = os.path.join(d, f"t{threads}.csv")
        r = subprocess.run([memctl, "plan", src, "--iterations", "12000", "--threads", threads,
                            "-o", out, "--json"], capture_output=True, text=True, check=True)
        outs.append((json.loads(r.stdout), open(out).read()))
        v = subprocess.run([memctl, "plan", "--validate", out, "--json"], capture_output=True,
                           text=True)
        assert v.returncode == 0, v.stdout + v.stderr
    assert outs[0][0]["arena"] == outs[1][0]["arena"], (outs[0][0], outs[1][0])
    assert outs[0][1] == outs[1][1], "one thread and two gave different plans"
    g = json.loads(subprocess.run([greedy, src], capture_output=True, text=True,
                                  check=True).stdout)
    size_first = next(r["arena"] for r in g["runs"] if r["order"] == "size" and r["fit"] == "first")
    assert outs[0][0]["arena"] <= size_first, (outs[0][0], size_first)
    print("ok", outs[0][0]["arena"], outs[0][0]["strategy"], "size-first", size_first)
