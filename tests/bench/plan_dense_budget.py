#!/usr/bin/env python3
"""Issue 27: a dense plan's wall time against its budget, and what a bystander sees.

N buffers living within ~1000 steps (lives of 1..50, sizes 64..4096: tests/python's
dense_problem), every 1000th of the first PINS*1000 pinned, planned by the built memd
with budget_ms=BUDGET while another process runs small ALLOC/FREE round trips (the
tests' Bystander). Prints plan_ms, the end-to-end time of Client.plan, the strategy and
the bystander's worst round trip; checks the plan with memd.validate.

usage: MEMD_BUILD_ROOT=build PYTHONPATH=build/python /usr/bin/python3 \\
       tests/bench/plan_dense_budget.py [N [PINS [BUDGET]]]     (default 1000000 0 1000)
"""
import os
import random
import sys
import time

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("python", "common")]
import conftest  # noqa: E402 (the tests' daemon and bystander)
import memd  # noqa: E402


def main():
    args = [int(a) for a in sys.argv[1:4]]
    n, pins, budget = args + [1000000, 0, 1000][len(args):]
    bufs = conftest.dense_problem(random.Random(27), n, 50)
    for i in range(0, min(n, pins * 1000), 1000):
        lo, hi, size = bufs[i]
        bufs[i] = (lo, hi, size, 64, i * 4096)
    d = conftest.Daemon()
    try:
        with memd.connect(d.socket) as c, conftest.Bystander(d) as b:
            t0 = time.monotonic()
            p = c.plan(bufs, budget_ms=budget)
            took = time.monotonic() - t0
        print(f"{n} dense buffers, {pins} pinned, budget {budget} ms: plan_ms {p.plan_ms:.0f}, "
              f"end to end {took:.2f} s, {p.strategy}; bystander's worst ALLOC/FREE "
              f"{b.worst_ms:.1f} ms over {b.trips} round trips")
        assert memd.validate(bufs, p.offsets) == p.arena
    finally:
        d.kill()
        d.cleanup()


if __name__ == "__main__":
    main()
