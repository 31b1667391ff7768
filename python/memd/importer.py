"""memd model import: ONNX (or memd YAML) files to memd's model YAML.

    python3 -m memd import MODEL.onnx [-o MODEL.yaml] [--dims batch=8,seq=128] [--name NAME]
                                      [--json]

What `memctl model import` runs. The YAML goes to -o (or stdout); a summary (tensors,
weights, activations, lower bound) to stderr, or with --json (which needs -o) as one JSON
object on stdout. Exit status 0, 1 when the model cannot be
imported (the reason on stderr), 2 for a usage error.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Dict, List, Optional

from . import Error, Model
from ._model import _check_name


def _dims(text: str) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for part in filter(None, text.split(",")):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip().isdigit() or int(value) <= 0:
            raise argparse.ArgumentTypeError(f"'{part}': want NAME=N with N > 0")
        out[key.strip()] = int(value)
    return out


def main(argv: Optional[List[str]] = None, prog: str = "memd import") -> int:
    ap = argparse.ArgumentParser(prog=prog, description="Import a model into memd's YAML "
                                 "model format (see doc/models.md).")
    ap.add_argument("model", help="an .onnx file (or a memd .yaml model, to normalise it)")
    ap.add_argument("-o", "--output", help="write the YAML here (default: stdout)")
    ap.add_argument("--dims", type=_dims, default={},
                    help="bind dynamic dimensions: NAME=N[,NAME=N...]")
    ap.add_argument("--name", help="model name (default: the graph's or the file's)")
    ap.add_argument("--json", action="store_true",
                    help="print the summary as one JSON object on stdout (needs -o)")
    a = ap.parse_args(argv)
    if a.json and not a.output:
        ap.error("--json needs -o: stdout carries the JSON summary, not the YAML")
    t0 = time.perf_counter()
    try:
        if a.model.endswith((".yaml", ".yml")):
            if a.dims:
                ap.error("--dims applies to ONNX models")
            m = Model.from_yaml(a.model)
        else:
            m = Model.from_onnx(a.model, dims=a.dims, name=a.name)
        if a.name and a.model.endswith((".yaml", ".yml")):
            m.name = _check_name(a.name)
        text = m.to_yaml(a.output) if a.output else m.to_yaml()
    except (Error, ValueError, OSError, ImportError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    if not a.output:
        sys.stdout.write(text)
    s = m.summary()
    ms = (time.perf_counter() - t0) * 1000
    if a.json:
        print(json.dumps({"schema_version": 1, "model": m.name, "output": a.output,
                          **s, "import_ms": round(ms, 1)}))
        return 0
    mib = 1 << 20
    print(f"{prog}: {m.name}: {s['tensors']} tensors ({s['weights']} weights "
          f"{s['weight_bytes'] / mib:.2f} MiB, {s['activations']} activations "
          f"{s['activation_bytes'] / mib:.2f} MiB without reuse, {s['aliases']} aliases), "
          f"{s['ops']} ops; lower bound {s['lower_bound'] / mib:.2f} MiB; "
          f"{ms:.0f} ms", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(prog="python3 -m memd.importer"))
