#!/usr/bin/env python3
"""Writes a synthetic plan problem (memctl plan CSV) shaped like a long training trace:
one activation per step, mostly short-lived, some kept for the backward pass, sizes
log-uniform and 256-byte multiples. Deterministic for a given --seed.

usage: gen_plan_problem.py --buffers N [--seed S] [--keep-frac F] > problem.csv
"""
import argparse
import random
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--buffers", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep-frac", type=float, default=0.02,
                    help="fraction of buffers that live long (skip connections, saved activations)")
    a = ap.parse_args()
    if a.buffers < 1:
        ap.error("--buffers must be >= 1")
    rng = random.Random(a.seed)
    out = sys.stdout
    out.write("id,lower,upper,size\n")
    for i in range(a.buffers):
        lower = i // 2  # two buffers produced per step
        if rng.random() < a.keep_frac:
            life = rng.randint(50, 400)
        else:
            life = rng.randint(1, 12)
        size = int(2 ** rng.uniform(8, 24)) // 256 * 256 + 256
        out.write(f"t{i},{lower},{lower + life},{size}\n")


if __name__ == "__main__":
    main()
