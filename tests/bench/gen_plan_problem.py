#!/usr/bin/env python3
"""Writes a synthetic plan problem (memctl plan CSV). Deterministic for a given --seed.

--shape train (default): a long training trace: one activation per step, mostly
  short-lived, some kept for the backward pass (--keep-frac), sizes log-uniform and
  256-byte multiples. Few overlapping pairs: the planner places it with a conflict graph.
--shape large: shaped like ../shared/data/plans/large/ (big compiler traces): mostly very
  short lives, a heavy tail, 5 % living a twentieth to half of the trace, 60 distinct
  sizes. Millions of overlapping pairs: above 20000 buffers the planner takes its
  segment-tree path (squeaky-wheel lanes).

usage: gen_plan_problem.py --buffers N [--seed S] [--shape train|large] [--keep-frac F]
       > problem.csv
"""
import argparse
import random
import sys


def train(rng, n, keep_frac, out):
    for i in range(n):
        lower = i // 2  # two buffers produced per step
        if rng.random() < keep_frac:
            life = rng.randint(50, 400)
        else:
            life = rng.randint(1, 12)
        size = int(2 ** rng.uniform(8, 24)) // 256 * 256 + 256
        out.write(f"t{i},{lower},{lower + life},{size}\n")


def large(rng, n, out):
    T = n * 3 // 2
    sizes = sorted({int(2 ** rng.uniform(1, 24)) + 1 for _ in range(60)})
    for i in range(n):
        lo, r = rng.randrange(T), rng.random()
        if r < 0.7:
            life = rng.randint(1, 6)
        elif r < 0.95:
            life = int(rng.paretovariate(1.2) * 8)
        else:
            life = rng.randint(T // 20, T // 2)
        out.write(f"b{i},{lo},{min(T, lo + max(1, life))},{rng.choice(sizes)}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--buffers", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shape", choices=("train", "large"), default="train")
    ap.add_argument("--keep-frac", type=float, default=0.02,
                    help="train: fraction of buffers that live long (skip connections, "
                         "saved activations)")
    a = ap.parse_args()
    if a.buffers < 1:
        ap.error("--buffers must be >= 1")
    rng = random.Random(a.seed)
    sys.stdout.write("id,lower,upper,size\n")
    if a.shape == "train":
        train(rng, a.buffers, a.keep_frac, sys.stdout)
    else:
        large(rng, a.buffers, sys.stdout)


if __name__ == "__main__":
    main()
