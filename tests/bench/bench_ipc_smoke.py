#!/usr/bin/env python3
"""Smoke test of memd-bench-ipc (BENCHMARKS.md section 2): never timed.

usage: bench_ipc_smoke.py MEMD BENCH CONFIG [MEMCTL]

Starts the built memd on a private socket (readiness through its sd_notify READY=1),
runs the bench for a fraction of a second in three shapes (plain, pipelined, batched and
pipelined), checks each prints ONE JSON line with the documented keys and did work, checks
that bad flags are refused with exit 2 and that an unreachable socket fails cleanly, and
finally (with MEMCTL) that the daemon holds no allocation left over by the bench."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from memd_daemon import Daemon  # noqa: E402

KEYS = ("bench", "clients", "batch", "pipeline", "ops", "ops_per_s", "p50_us", "p99_us")


def main():
    memd, bench, config = sys.argv[1:4]
    memctl = sys.argv[4] if len(sys.argv) > 4 else None
    daemon = Daemon(memd, config, memctl, prefix="memd-bench-")
    d, sock = daemon.dir, daemon.socket
    try:
        runs = [["--clients", "2", "--seconds", "0.2"],
                ["--clients", "2", "--seconds", "0.2", "--pipeline", "8"],
                ["--clients", "3", "--seconds", "0.2", "--batch", "64", "--pipeline", "4"],
                ["--clients", "5", "--seconds", "0.2", "--threads", "2"],
                ["--clients", "4", "--seconds", "0.2", "--threads", "1", "--batch", "8",
                 "--pipeline", "2"],
                # bank sets: one ALLOC_BANKS per buffer, then batches of them
                ["--clients", "1", "--seconds", "0.2", "--bank-set", "per-bank"],
                ["--clients", "2", "--seconds", "0.2", "--bank-set", "mixed", "--batch", "64",
                 "--pipeline", "2"]]
        for args in runs:
            out = subprocess.run([bench, "--socket", sock] + args, capture_output=True,
                                 text=True, timeout=60)
            if out.returncode != 0:
                print(f"{args}: exit {out.returncode}: {out.stderr}")
                return 1
            lines = out.stdout.splitlines()
            if len(lines) != 1:
                print(f"{args}: want one line, got {out.stdout!r}")
                return 1
            r = json.loads(lines[0])
            missing = [k for k in KEYS if k not in r]
            if missing or r["bench"] != "ipc" or r["ops"] <= 0 or r["ops_per_s"] <= 0 \
                    or not 0 < r["p50_us"] <= r["p99_us"]:
                print(f"{args}: bad result {r} (missing {missing})")
                return 1
            want = {"clients": int(args[1]),
                    "batch": int(args[args.index("--batch") + 1]) if "--batch" in args else 1,
                    "pipeline": int(args[args.index("--pipeline") + 1])
                    if "--pipeline" in args else 1,
                    "threads": int(args[args.index("--threads") + 1])
                    if "--threads" in args else int(args[1])}
            want["bank_set"] = args[args.index("--bank-set") + 1] if "--bank-set" in args \
                else "none"
            if any(r[k] != v for k, v in want.items()) or r["ops"] % want["batch"] \
                    or (want["bank_set"] != "none" and not r["alloc_us"] > 0):
                print(f"{args}: result {r} does not match the flags {want}")
                return 1
            print(lines[0])
        for bad in (["--clients", "0"], ["--seconds", "-1"], ["--batch", "x"],
                    ["--pipeline", "99999999999"], ["--bogus", "1"], ["--seconds"],
                    ["--bank-set", "diagonal"], ["--set-size", "0"]):
            out = subprocess.run([bench, "--socket", sock] + bad, capture_output=True,
                                 text=True, timeout=60)
            if out.returncode != 2 or not out.stderr:
                print(f"{bad}: exit {out.returncode}, want 2 with a message")
                return 1
        out = subprocess.run([bench, "--socket", os.path.join(d, "nope.sock"), "--seconds",
                              "0.1"], capture_output=True, text=True, timeout=60)
        if out.returncode != 1 or "nope.sock" not in out.stderr:
            print(f"unreachable socket: exit {out.returncode}: {out.stderr}")
            return 1
        # Every bench session is gone and released what it held.
        if memctl:
            dump = daemon.memctl("dump", "--json", check=False)
            if dump.returncode != 0:
                print(f"memctl dump: exit {dump.returncode}: {dump.stderr}")
                return 1
            doc = json.loads(dump.stdout)
            if doc["allocations"]:
                print(f"{len(doc['allocations'])} allocations left behind")
                return 1
    finally:
        rc = daemon.stop()
        log = daemon.read_log()
        daemon.cleanup()
    if rc != 0:
        print(f"memd exited with {rc}: {log}")
        return 1
    print("bench_ipc smoke: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
