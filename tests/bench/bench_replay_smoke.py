#!/usr/bin/env python3
"""Smoke test of memd-bench-replay: never timed.

usage: bench_replay_smoke.py MEMD BENCH CONFIG MODEL.yaml MEMCTL

Starts the built memd on a private socket (readiness through its sd_notify READY=1), runs
the replay of MODEL for a few inferences in every mode, and checks: one JSON line per
mode with the documented keys, every mode did the same number of pairs, pool and inproc
report the same peak (the bench itself checks that they place every tensor alike), call
and batch agree on their peak (the daemon placed the same sizes), a single mode runs
alone, inproc runs without a daemon, bad arguments exit 2, and the daemon holds nothing
afterwards (memctl dump --json)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from memd_daemon import Daemon  # noqa: E402

KEYS = ("bench", "model", "mode", "ns_per_pair", "peak_bytes", "pairs", "tensors", "ops",
        "inferences", "repeat")


def run(bench, args, sock=None):
    cmd = [bench] + args + (["--socket", sock] if sock else [])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def main():
    memd, bench, config, model, memctl = sys.argv[1:6]
    daemon = Daemon(memd, config, memctl, prefix="memd-replay-")
    d, sock = daemon.dir, daemon.socket
    try:
        out = run(bench, [model, "--inferences", "4", "--repeat", "2"], sock)
        if out.returncode != 0:
            print(f"exit {out.returncode}: {out.stderr}")
            return 1
        rows = [json.loads(line) for line in out.stdout.splitlines()]
        modes = [r.get("mode") for r in rows]
        if modes != ["call", "batch", "pool", "inproc"]:
            print(f"modes {modes}")
            return 1
        for r in rows:
            missing = [k for k in KEYS if k not in r]
            if missing or r["bench"] != "replay" or r["ns_per_pair"] <= 0 \
                    or r["peak_bytes"] <= 0 or r["pairs"] != rows[0]["pairs"] \
                    or r["pairs"] != 4 * r["tensors"] or r["inferences"] != 4:
                print(f"bad row {r} (missing {missing})")
                return 1
        by = {r["mode"]: r for r in rows}
        if by["pool"]["peak_bytes"] != by["inproc"]["peak_bytes"]:
            print(f"pool and inproc peaks differ: {by}")
            return 1
        if by["call"]["peak_bytes"] != by["batch"]["peak_bytes"]:
            print(f"call and batch peaks differ: {by}")
            return 1
        one = run(bench, [model, "--inferences", "2", "--repeat", "1", "--mode", "pool"],
                  sock)
        if one.returncode != 0 or len(one.stdout.splitlines()) != 1:
            print(f"pool alone: {one.returncode} {one.stdout!r} {one.stderr}")
            return 1
        alone = run(bench, [model, "--mode", "inproc", "--inferences", "2"],
                    os.path.join(d, "no-such.sock"))
        if alone.returncode != 0 or json.loads(alone.stdout)["mode"] != "inproc":
            print(f"inproc without a daemon: {alone.returncode} {alone.stderr}")
            return 1
        for bad in (["--mode", "nope", model], [model, "--inferences", "0"], [],
                    [model, "--bogus", "1"]):
            b = run(bench, bad)
            if b.returncode != 2:
                print(f"{bad}: exit {b.returncode}, want 2")
                return 1
        missing = run(bench, [os.path.join(d, "none.yaml"), "--mode", "inproc"])
        if missing.returncode != 1 or "none.yaml" not in missing.stderr:
            print(f"missing model: {missing.returncode} {missing.stderr}")
            return 1
        dump = daemon.memctl("dump", "--json", check=False)
        doc = json.loads(dump.stdout)
        left = doc["allocations"]
        if dump.returncode != 0 or left:
            print(f"left over after the bench: {left} {dump.stderr}")
            return 1
        print(out.stdout, end="")
        return 0
    finally:
        daemon.stop()
        daemon.cleanup()


if __name__ == "__main__":
    sys.exit(main())
