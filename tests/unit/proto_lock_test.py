#!/usr/bin/python3
"""proto/gen.py's versioning rules, on copies of the schema and its lock: what the lock
records never changes (opcode and tag numbers, constant values, struct fields, an opcode's
shape/mutating/admin rules), and an append is refused until --lock records it."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("MEMD_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(SRC, "proto", "gen.py")
failures = 0


def run(toml, lock, *mode):
    args = [sys.executable, GEN] + (["--lock", toml, lock] if mode == ("--lock",) else
                                    [toml, lock, "header", os.devnull])
    return subprocess.run(args, capture_output=True, text=True)


def case(name, edit, want_rc, want_msg, mode=()):
    global failures
    with tempfile.TemporaryDirectory() as d:
        toml, lock = os.path.join(d, "memd.toml"), os.path.join(d, "layout.lock")
        shutil.copy(os.path.join(SRC, "proto", "memd.toml"), toml)
        shutil.copy(os.path.join(SRC, "proto", "layout.lock"), lock)
        s = open(toml).read()
        t = edit(s)
        assert t != s, f"{name}: the edit changed nothing"
        open(toml, "w").write(t)
        r = run(toml, lock, *mode)
        ok = (r.returncode == 0) == (want_rc == 0) and re.search(want_msg, r.stderr + r.stdout)
        print(("ok" if ok else "FAIL"), name, "-", (r.stderr.strip().splitlines() or [""])[-1])
        failures += not ok


def opcode_block(s, op):
    i = s.index(f'name = "{op}"')
    return i, s.index("\n[[", i)


def flip_admin(s):
    i, j = opcode_block(s, "LOWEST")
    return s[:j] + "\nadmin = true" + s[j:]


def renumber(s):
    """LOWEST and ALLOC_AT swap numbers: still 1..n, but both renumbered."""
    a = re.search(r'name = "ALLOC_AT"\nvalue = (\d+)', s)[1]
    b = re.search(r'name = "LOWEST"\nvalue = (\d+)', s)[1]
    s = s.replace(f'name = "ALLOC_AT"\nvalue = {a}', f'name = "ALLOC_AT"\nvalue = {b}')
    return s.replace(f'name = "LOWEST"\nvalue = {b}', f'name = "LOWEST"\nvalue = {a}')


def new_opcode(s):
    i, j = opcode_block(s, "FREE")
    blk = s[s.rindex("[[opcode]]", 0, i):j]
    blk = blk.replace('name = "FREE"', 'name = "FREE_TWICE"')
    last = max(int(v) for v in re.findall(r'\[\[opcode\]\]\nname = "\w+"\nvalue = (\d+)', s))
    blk = re.sub(r"value = \d+", f"value = {last + 1}", blk, count=1)
    k = s.index("# ---- DUMP record tags")
    return s[:k] + blk + "\n" + s[k:]


def move_field(s):
    return s.replace('["reclaimed", "u32",', '["reclaimed", "u16",', 1)


case("unchanged schema passes", lambda s: s + "\n", 0, r"^$")
case("an opcode turning admin-only is refused", flip_admin, 1,
     r"opcode LOWEST: its shape/mutating/admin rules changed")
case("a renumbered opcode is refused", renumber, 1, r"opcodes LOWEST renumbered")
case("a changed field is refused", move_field, 1, r"a recorded field changed")
case("an appended opcode waits for --lock", new_opcode, 1, r"(?s)not yet in .*opcodes FREE_TWICE.*rules FREE_TWICE")
case("--lock records an append", new_opcode, 0, r"", mode=("--lock",))
print(f"{failures} failed")
sys.exit(1 if failures else 0)
