#!/usr/bin/env python3
"""memctl plan as a user meets it, offline (no daemon): a bad input CSV is refused with
FILE:LINE:COL and the reason (exit 1), a problem no plan can satisfy names the buffers
and their lines, --validate accepts a good plan and names the first overlapping pair of a
bad one (text and --json), a plan it writes validates with the arena it printed, and a
wrong command line is a usage error (exit 2).
usage: plan_cli.py MEMCTL"""
import json, os, subprocess, sys, tempfile

memctl = sys.argv[1]
HEAD = "id,lower,upper,size\n"


def memctl_plan(*args):
    return subprocess.run([memctl, "plan", *args], capture_output=True, text=True)


def write(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def refused(r, code, msg, what):
    assert r.returncode == code, (what, r.returncode, r.stdout, r.stderr)
    assert msg in r.stderr, (what, msg, r.stderr)
    assert r.stderr.count("\n") == 1, (what, "one line", r.stderr)


with tempfile.TemporaryDirectory() as d:
    # The reader's errors, FILE:LINE:COL first.
    bad = {
        "empty.csv": ("", "empty.csv:1:1: empty file"),
        "nosize.csv": ("id,lower,upper\n", "nosize.csv:1:15: missing column 'size'"),
        "colour.csv": ("id,lower,upper,size,colour\n", "colour.csv:1:21: unknown column 'colour'"),
        "num.csv": (HEAD + "a,0,10,100\nb,0,10,1x\n",
                    "num.csv:3:8: expected an unsigned integer for 'size'"),
        "life.csv": (HEAD + "a,0,10,100\nb,5,5,3\n",
                     "life.csv:3:5: 'upper' (5) must be greater than 'lower' (5)"),
        "dup.csv": (HEAD + "a,0,1,5\nb,0,1,5\na,3,4,1\n",
                    "dup.csv:4:1: duplicate id 'a' (first on line 2)"),
        "fields.csv": (HEAD + "a,0,10,5\nb,1,2\n", "fields.csv:3:6: expected 4 fields, found 3"),
        "align.csv": ("id,lower,upper,size,alignment,offset\na,0,1,5,8,12\n",
                      "align.csv:2:11: offset 12 is not a multiple of the alignment 8"),
    }
    for name, (text, msg) in bad.items():
        path = write(d, name, text)
        for args in ((path,), (path, "--json"), ("--validate", path)):
            r = memctl_plan(*args)
            refused(r, 1, "memctl plan: " + os.path.join(d, msg), args)
            assert r.stdout == "", (args, r.stdout)
    refused(memctl_plan(os.path.join(d, "none.csv")), 1, "none.csv: No such file or directory",
            "missing file")

    # Readable, but no plan exists: the pinned pair, or sums past 64 bits.
    pins = write(d, "pins.csv", "id,lower,upper,size,offset\na,0,10,100,0\nb,5,12,3,50\n")
    refused(memctl_plan(pins), 1, f"{pins}:3: no plan possible: pin-conflict (two pinned "
            "buffers overlap: no plan can exist): 'b' and 'a' (line 2)", "pins")
    big = write(d, "big.csv", HEAD + "a,0,10,9223372036854775808\nb,5,12,9223372036854775808\n")
    refused(memctl_plan(big), 1, f"{big}:3: no plan possible: out-of-range", "overflow")

    # --validate: a good plan, a bad one, plans without offsets.
    good = write(d, "good.csv", "id,lower,upper,size,offset\na,0,10,100,0\nb,5,12,3,100\n"
                                "c,10,20,100,0\n")
    r = memctl_plan("--validate", good)
    assert r.returncode == 0 and r.stdout.startswith("plan: 3 buffers, arena 103 bytes, lower "
                                                     "bound 103 bytes") and "validated" in r.stdout, r
    j = json.loads(memctl_plan("--validate", good, "--json").stdout)
    assert j["validated"] is True and j["arena"] == 103 and j["lower_bound"] == 103, j
    over = write(d, "over.csv", "id,lower,upper,size,offset\na,0,10,100,0\nx,20,30,5,0\n"
                                "b,5,12,3,99\n")
    refused(memctl_plan("--validate", over), 1, f"{over}:4: the plan is not valid: overlap "
            "(two buffers live at the same time share bytes): 'b' and 'a' (line 2)", "overlap")
    r = memctl_plan("--validate", over, "--json")
    assert r.returncode == 1, r
    assert json.loads(r.stdout) == {"valid": False, "buffers": 3, "issue": "overlap", "a": "b",
                                    "line_a": 4, "b": "a", "line_b": 2}, r.stdout
    noff = write(d, "noff.csv", HEAD + "a,0,10,100\n")
    refused(memctl_plan("--validate", noff), 1, f"{noff}: --validate needs an 'offset' column",
            "no offset column")
    hole = write(d, "hole.csv", "id,lower,upper,size,offset\na,0,10,100,0\nb,5,12,3,\n")
    refused(memctl_plan("--validate", hole), 1, f"{hole}:3: --validate needs an offset on every row",
            "an empty offset")

    # A plan written is the plan printed, and validates; a pin stays where it is.
    src = write(d, "src.csv", "id,lower,upper,size,alignment,offset\n"
                              "a,0,10,100,,\nb,5,12,3,64,\nc,10,20,64,,\np,0,30,8,8,4096\n")
    out = os.path.join(d, "out.csv")
    r = memctl_plan(src, "-o", out, "--json", "--iterations", "100")
    assert r.returncode == 0, r
    res = json.loads(r.stdout)
    v = json.loads(memctl_plan("--validate", out, "--json").stdout)
    assert v["validated"] and v["arena"] == res["arena"] == 4104, (res, v)
    rows = open(out).read().splitlines()
    assert rows[0].split(",")[0] == "id" and "offset" in rows[0].split(","), rows
    assert [r.split(",")[0] for r in rows[1:]] == ["a", "b", "c", "p"], rows
    assert rows[4].split(",")[rows[0].split(",").index("offset")] == "4096", rows

    # Usage errors: exit 2, nothing planned.
    for args, msg in ((("--validate", good, "-o", out), "--validate writes nothing"),
                      ((src, "--threads", "0"), "--threads needs at least 1"),
                      ((src, "--budget-ms", "1s"), "--budget-ms: '1s' is not an unsigned integer"),
                      ((src, "--colour"), "unknown option '--colour'"),
                      ((), "missing INPUT.csv"),
                      ((src, good), "more than one input")):
        r = memctl_plan(*args)
        assert r.returncode == 2 and msg in r.stderr and r.stdout == "", (args, r)
print("plan_cli: ok")
