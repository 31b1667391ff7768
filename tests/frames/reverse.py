"""Old daemon, this tree's clients: a fake memd answers the tree's memctl (and, with
--python, the tree's Python package through workload.py) with the REPLY frames the old
daemon sent in tests/data/frames/session-workload.txt, and the clients must print what
the old clients printed then (tests/data/frames/workload-out.json).

    python3 reverse.py MEMCTL RECORDING OUT.json            memctl dump --json, events --json
    python3 reverse.py MEMCTL RECORDING OUT.json --python   the whole workload (PYTHONPATH:
                                                            the tree's package)

The fake daemon serves the recorded connections in the order clients connect. Each
request must be the recorded one byte for byte (so the tree's clients also send what the
old ones sent), but for the header's request id, which is the client's to choose, and
HELLO's NOTICES and POSTMORTEM bits, which clients set since issue 25
(framelib.mask_request): the reply sent is the recorded one with that id echoed, as memd does. Exit 0 when every
request matched and every output is the recorded one."""
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading

import framelib

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


class FakeDaemon(threading.Thread):
    def __init__(self, path, convs):
        super().__init__(daemon=True)
        self.convs = list(convs)
        self.failures = []
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(16)
        self.listener.settimeout(0.1)
        self.stopping = False
        self.served = []

    def run(self):
        while not self.stopping:
            try:
                s, _ = self.listener.accept()
            except socket.timeout:
                continue
            if not self.convs:
                self.failures.append("a connection more than recorded")
                s.close()
                continue
            n, conv = self.convs.pop(0)
            t = threading.Thread(target=self.serve, args=(s, n, conv), daemon=True)
            t.start()
            self.served.append(t)

    def serve(self, s, n, conv):
        s.settimeout(30)  # a connection may wait while the client uses its others
        ids = []
        try:
            for kind, frame in conv:
                if kind == "C":
                    live = framelib.recv_frame(s)
                    a, b = bytearray(frame), bytearray(live)
                    a[8:16] = b[8:16] = bytes(8)  # the request id: the client's choice
                    framelib.mask_request(a, b)
                    if a != b:
                        op = framelib.OP_NAME.get(struct.unpack_from("<H", frame, 6)[0])
                        i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]),
                                 min(len(a), len(b)))
                        self.failures.append(f"connection {n}: request {op} differs at byte {i} "
                                             f"({len(live)} bytes, recorded {len(frame)})")
                        return
                    ids.append(live[8:16])
                elif kind == "S":
                    reply = bytearray(frame)
                    if ids:  # a reply echoes its request's id (not the header error's 0)
                        reply[8:16] = ids.pop(0)
                    s.sendall(reply)
                elif kind == "close":  # the client ends it
                    framelib.drain_to_eof(s)
                # closed: memd ended it, as the finally does
        except (OSError, EOFError) as e:
            self.failures.append(f"connection {n}: {e}")
        finally:
            s.close()

    def finish(self):
        self.stopping = True
        self.join(10)
        for t in self.served:
            t.join(10)
        self.listener.close()
        if self.convs:
            self.failures.append(f"{len(self.convs)} recorded connections never came")
        return self.failures


def memctl_json(stdout):
    """memctl's --json output as data (its layout is memctl's, not the wire's): one document,
    or one per line (events). Ages in it are computed from the recorded now_ns, so a replay
    prints the same ones."""
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        return [json.loads(line) for line in stdout.splitlines() if line]


# Keys memctl's documents gained after the recording (additions only: a reader of the
# old document reads the new one): (list key, key of each element).
ADDED = [("processes", "client"), ("sub_devices", "window"), ("sub_devices", "window_start"),
         ("sub_devices", "window_allocated")]


def without_added(doc):
    """doc without the ADDED keys, wherever such a list is in it."""
    if isinstance(doc, dict):
        for lst, key in ADDED:
            for x in doc.get(lst) if isinstance(doc.get(lst), list) else []:
                if isinstance(x, dict):
                    x.pop(key, None)
        for v in doc.values():
            without_added(v)
    elif isinstance(doc, list):
        for v in doc:
            without_added(v)
    return doc


def run_memctl(memctl, events, recorded, tmp):
    """Each memctl call of the workload against its own recorded connection."""
    convs = framelib.conversations(events)
    mine = [(n, c) for n, c in convs.items() if framelib.hello_name(c[0][1]) == "memctl"]
    calls = [recorded["memctl_dump"], recorded["memctl_events"]]
    if len(mine) != len(calls):
        return [f"{len(mine)} memctl connections recorded, {len(calls)} calls"]
    failures = []
    for (n, conv), call in zip(mine, calls):
        path = os.path.join(tmp, f"fake{n}.sock")
        fake = FakeDaemon(path, [(n, conv)])
        fake.start()
        # --all: memctl's own sessions and their events, as the old memctl printed them.
        r = subprocess.run([memctl, "--socket", path, "--all"] + call["argv"],
                           capture_output=True, text=True, timeout=30)
        failures += fake.finish()
        if r.returncode != call["rc"]:
            failures.append(f"memctl {call['argv']}: exit {r.returncode}, recorded {call['rc']}: "
                            f"{r.stderr}")
        elif without_added(memctl_json(r.stdout)) != memctl_json(call["stdout"]):
            diffs = diff_paths(memctl_json(call["stdout"]), without_added(memctl_json(r.stdout)))
            failures.append(f"memctl {call['argv']}: output differs from the old memctl's at "
                            f"{', '.join(diffs[:10])}")
        else:
            print(f"memctl {' '.join(call['argv'])}: as recorded ({len(r.stdout)} bytes)")
    return failures


def diff_paths(a, b, path="out"):
    if type(a) is not type(b):
        return [path]
    if isinstance(a, dict):
        return [p for k in sorted(set(a) | set(b))
                for p in (diff_paths(a.get(k), b.get(k), f"{path}.{k}"))]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path} (length)"]
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in diff_paths(x, y, f"{path}[{i}]")]
    return [] if a == b else [path]


def run_python(memctl, events, recorded, tmp):
    """The whole workload, with the tree's Python package, against every recorded
    connection."""
    path = os.path.join(tmp, "fake.sock")
    convs = framelib.conversations(events)
    fake = FakeDaemon(path, sorted(convs.items()))
    fake.start()
    out = os.path.join(tmp, "out.json")
    # memctl --all: its own sessions and their events, as the recorded memctl printed them
    # (workload.py stays as it recorded with the old memctl, which has no --all).
    wrapper = os.path.join(tmp, "memctl-all")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nexec "%s" --all "$@"\n' % memctl)
    os.chmod(wrapper, 0o755)
    r = subprocess.run([sys.executable, os.path.join(HERE, "workload.py"), path, wrapper,
                        os.path.join(SOURCE_ROOT, "config"), out], capture_output=True,
                       text=True, timeout=60)
    failures = fake.finish()
    if r.returncode != 0:
        return failures + [f"workload.py: exit {r.returncode}: {r.stderr[-2000:]}"]
    with open(out) as f:
        got = json.load(f)
    for k in ("memctl_dump", "memctl_events"):  # memctl's output as documents, not text
        for d in (got, recorded):
            d[k] = dict(d[k], stdout=memctl_json(d[k]["stdout"]))
    diffs = diff_paths(recorded, without_added(got))
    failures += [f"workload output differs at {p}" for p in diffs[:20]]
    if not diffs:
        print(f"workload.py with this tree's package: as recorded ({len(events)} events)")
    return failures


def main():
    memctl, recording, out_json = sys.argv[1:4]
    events = framelib.load(recording)
    with open(out_json) as f:
        recorded = json.load(f)
    with tempfile.TemporaryDirectory(prefix="memd-frames-rev-") as tmp:
        if "--python" in sys.argv[4:]:
            try:
                import memd  # noqa: F401  (the tree's package must load in this interpreter)
            except ImportError as e:
                print(f"SKIP: the memd package does not load here: {e}")
                sys.exit(77)
            failures = run_python(memctl, events, recorded, tmp)
        else:
            failures = run_memctl(memctl, events, recorded, tmp)
    for f in failures:
        print(f"FAIL {f}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
