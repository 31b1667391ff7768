"""Prints the interpreter's own package directory under PREFIX (argv[1]), or nothing."""
import sys

prefix = sys.argv[1].rstrip("/") + "/lib/"
dirs = [p for p in sys.path if p.startswith(prefix) and p.endswith(("dist-packages", "site-packages"))]
print(dirs[0] if dirs else "")
