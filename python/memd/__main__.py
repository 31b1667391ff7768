"""python3 -m memd import MODEL.onnx [-o MODEL.yaml] [--dims NAME=N,...] [--name NAME] [--json]"""
import sys

from .importer import main

if len(sys.argv) < 2 or sys.argv[1] != "import":
    print(__doc__.strip(), file=sys.stderr)
    sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
sys.exit(main(sys.argv[2:], prog="memd import"))
