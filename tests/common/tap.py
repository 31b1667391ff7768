"""The script tests' results as TAP lines: check() prints "ok - what" or "not ok - what"
and counts the failures; done() ends the script, exit 1 if any check failed."""
import sys

failed = 0


def check(cond, what):
    global failed
    print(("ok - " if cond else "not ok - ") + what, flush=True)
    failed += not cond


def done():
    sys.exit(1 if failed else 0)
