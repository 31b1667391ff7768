#!/usr/bin/env python3
"""Dynamic-batch ONNX exports of torchvision families through Model.from_onnx.

usage: PYTHONPATH=BUILD/python /usr/bin/python3 tests/bench/onnx_dynamic.py
           [--models a,b,...] [--opsets 13,17] [--size 224] [--budget-ms 1000]
           [--markdown]

Every model (weights=None: nothing downloaded) is exported by torch.onnx.export the way
runtimes ask for it, with the batch axis dynamic (dynamic_axes={"input": {0: "batch"},
...}) at each opset, then imported with dims={"batch": 1} and planned offline. One row per
model and opset: import ms (the export not timed; wall clock, and CPU time of this
process and of the importer's forked worker, which a loaded machine inflates less),
tensors, lower bound MiB, arena MiB and the plan gap (arena vs lower bound, %), or the
error the import raised. Not a test:
figures only (pytest-families imports a few small families the same way); exit status 1
when any import failed."""
import argparse
import os
import resource
import sys
import tempfile
import time

import torch

import memd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model_table import build, row  # noqa: E402  (the same models, planned the same)

MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "shufflenet_v2_x1_0",
          "squeezenet1_1", "densenet121", "efficientnet_b0", "regnet_x_400mf",
          "regnet_y_400mf", "mnasnet1_0", "vgg11", "googlenet", "inception_v3",
          "convnext_tiny"]


def cpu_s():
    """CPU seconds of this process and its waited-for children (the import's worker)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), \
        resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def export(model, x, path, opset):
    torch.onnx.export(model, x, path, opset_version=opset, do_constant_folding=True,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--opsets", default="13,17")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--budget-ms", type=int, default=1000)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(1)
    head = ("model", "opset", "import ms", "cpu ms", "tensors", "lower bound MiB", "arena MiB",
            "gap %")
    fmt, sep = ("| {} |", " | ") if a.markdown else ("{}", "  ")
    print(fmt.format(sep.join(head)))
    if a.markdown:
        print("|" + "|".join("---" for _ in head) + "|")
    failed = []
    with tempfile.TemporaryDirectory(prefix="memd-onnx-") as tmp:
        for name in filter(None, a.models.split(",")):
            model, x = build(name, 1, a.size)
            model.eval()
            for opset in (int(o) for o in a.opsets.split(",")):
                f = os.path.join(tmp, f"{name}-{opset}.onnx")
                export(model, x, f, opset)
                t0, c0 = time.perf_counter(), cpu_s()
                try:
                    m = memd.Model.from_onnx(f, dims={"batch": 1})
                except memd.Error as e:
                    failed.append(f"{name}/{opset}")
                    print(fmt.format(sep.join([f"{name:<20}", f"{opset:>5}", f"FAILED: {e}"])),
                          flush=True)
                    continue
                finally:
                    os.unlink(f)
                wall, cpu = time.perf_counter() - t0, cpu_s() - c0
                r = row(name, "onnx", m, wall, a.budget_ms)
                cells = [f"{name:<20}", f"{opset:>5}", f"{r['import_ms']:>9.0f}",
                         f"{cpu * 1000:>6.0f}",
                         f"{r['tensors']:>7}", f"{r['lb']:>15.2f}", f"{r['arena']:>9.2f}",
                         f"{r['gap']:>6.3f}"]
                print(fmt.format(sep.join(cells)), flush=True)
    print(f"\nfailed: {', '.join(failed)}" if failed else "\nevery import succeeded")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
