#!/usr/bin/env python3
"""Bytes a loaded model reserves on a device, as `memctl dump --json` shows them: the
closing-note figure of interleaved pages (issue 24).

usage: PYTHONPATH=BUILD/python /usr/bin/python3 tests/bench/model_reserved.py BUILD
           [--model resnet50] [--size 224] [--config config/memd.yaml] [--device 0]

Starts BUILD's memd on the config (the shipped one: device 0 is Wormhole B0, 12 DRAM
banks), imports the torchvision model (weights=None) through the PyTorch importer,
loads it with one instance, and prints per buffer of the model (constants, arena,
placeholders) its data bytes and what it reserves over all its banks (size_per_bank x
banks from `memctl dump --json`), then the totals. Run it with the build of a tree
before pages (every buffer one page, whole in every bank) and after. Not a test:
figures only."""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import memd  # noqa: E402
import memd_daemon  # noqa: E402
import torch  # noqa: E402
import torchvision.models as tvm  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--config", default=os.path.join(HERE, "..", "..", "config", "memd.yaml"))
    ap.add_argument("--device", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(1)
    m = memd.Model.from_torch(getattr(tvm, a.model)(weights=None).eval(),
                              torch.randn(1, 3, a.size, a.size), name=f"bench-{a.model}")
    d = memd_daemon.Daemon(os.path.join(a.build, "daemon", "memd"), os.path.abspath(a.config),
                           os.path.join(a.build, "tools", "memctl", "memctl"))
    try:
        with memd.connect(d.socket) as c, c.load_model(m, device=a.device) as lm, \
                lm.create_instance() as inst:
            doc = json.loads(d.memctl("dump", "--json").stdout)
            data = {lm.const_address: ("constants", m.weight_bytes),
                    inst.arena_address: ("arena", lm.arena)}
            for t in m.tensors:
                if t.role in ("input", "output", "inout") and not t.alias_of:
                    data[inst.tensors[t.name]] = (f"placeholder {t.name}", t.bytes)
            total_data = total_res = 0
            for al in doc["allocations"]:
                if al["device"] != a.device or al["address"] not in data:
                    continue
                what, n = data[al["address"]]
                res = al["size_per_bank"] * al["banks"]
                total_data += n
                total_res += res
                print(f"{what:24} data {n:>12} reserved {res:>13} ({al['size_per_bank']} x "
                      f"{al['banks']} banks, page {al['page_size']}) {res / n:6.2f}x")
            print(f"{a.model:24} data {total_data:>12} reserved {total_res:>13} "
                  f"{total_res / total_data:6.2f}x")
    finally:
        d.stop()
        d.cleanup()


if __name__ == "__main__":
    main()
