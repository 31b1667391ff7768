#!/usr/bin/python3
"""Instructions memd executes per request, counted by callgrind (a count, not a time: the
same on a loaded machine), for memd-bench-ipc's three workloads (BENCHMARKS.md section 2):
single (1 client), batched (4 clients x 256) and pipelined (16 clients x 16, one thread).
Compares trees side by side: each TREE is a checkout with a release build in BUILD
(memd and memd-bench-ipc from the same tree), CONFIG its memd.yaml.

usage: ipc_instructions.py NAME=TREE:BUILD:CONFIG ... [--seconds S]

Per tree: an idle daemon (start and stop) is counted first and taken off each workload's
total, so what remains is per request; the bench's own "requests" count divides it."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

MODES = {"single": ["--clients", "1"],
         "batched": ["--clients", "4", "--batch", "256"],
         "pipelined": ["--clients", "16", "--pipeline", "16", "--threads", "1"]}


def run(build, config, args, seconds):
    w = tempfile.mkdtemp(prefix="memd-ipc-ir-")
    try:
        sock, out = os.path.join(w, "s"), os.path.join(w, "cg.out")
        d = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                              os.path.join(build, "daemon", "memd"), "--config", config,
                              "--socket", sock, "--foreground"], stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not os.path.exists(sock):
            if time.monotonic() > deadline or d.poll() is not None:
                raise SystemExit("memd under callgrind did not start")
            time.sleep(0.1)
        requests = 0
        if args is not None:
            r = subprocess.run([os.path.join(build, "tests", "bench", "memd-bench-ipc"),
                                "--socket", sock, "--seconds", str(seconds), "--seed", "1"]
                               + args, capture_output=True, text=True, check=True)
            requests = json.loads(r.stdout)["requests"]
        d.terminate()
        d.wait()
        with open(out) as f:
            ir = next(int(l.split()[1]) for l in f if l.startswith(("summary:", "totals:")))
        return ir, requests
    finally:
        shutil.rmtree(w, ignore_errors=True)


def main(argv):
    seconds = 5
    if "--seconds" in argv:
        i = argv.index("--seconds")
        seconds = int(argv[i + 1])
        del argv[i:i + 2]
    if not argv or not shutil.which("valgrind"):
        raise SystemExit(__doc__)
    for spec in argv:
        name, rest = spec.split("=", 1)
        tree, build, config = rest.split(":")
        build = os.path.join(tree, build)
        idle, _ = run(build, config, None, seconds)
        for mode, args in MODES.items():
            ir, req = run(build, config, args, seconds)
            per = (ir - idle) / req
            row = {"tree": name, "mode": mode, "requests": req, "ir_per_request": round(per)}
            if mode == "batched":
                row["ir_per_op"] = round(per / 256)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
