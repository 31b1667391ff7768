#!/usr/bin/env python3
"""Checks the output of `memctl dump --json` for tests/integration/test_memctl.c.

usage: check_memctl_json.py FILE EXPECT

FILE must hold exactly ONE JSON document with "schema_version": 1 and the keys the
service issue lists; the numbers must be self-consistent (free + allocated = total,
allocations inside their region and not overlapping, group totals = sums of regions).
EXPECT is a JSON list of allocations the test made; names are given as hex of their
UTF-8 bytes so any character can be checked for exact round-tripping:
  [{"handle": 7, "name_hex": "...", "class": "constant", "kind": "dram",
    "region": "data", "device": 0, "pid": 123, "uid": 0, "min_size": 4096}]
Prints every problem and exits 1 if there is any."""
import json
import sys

errors = []


def err(msg):
    errors.append(msg)


def field(obj, key, typ, where):
    if not isinstance(obj, dict) or key not in obj:
        err(f"{where}: missing key '{key}'")
        return None
    v = obj[key]
    ok = isinstance(v, typ) and not (typ is int and isinstance(v, bool))
    if not ok:
        err(f"{where}.{key}: {v!r} is not {typ.__name__}")
        return None
    return v


def check_stats(obj, where, total_key):
    total = field(obj, total_key, int, where)
    alloc = field(obj, "allocated", int, where)
    free = field(obj, "free", int, where)
    largest = field(obj, "largest_free", int, where)
    if None in (total, alloc, free, largest):
        return
    if alloc + free != total:
        err(f"{where}: allocated {alloc} + free {free} != {total_key} {total}")
    if largest > free:
        err(f"{where}: largest_free {largest} > free {free}")


def check_frag(obj, largest, free, where):
    want = 100.0 * (1 - largest / free) if free else 0.0
    got = field(obj, "fragmentation_pct", float, where)
    if got is not None and abs(got - want) > 0.006:
        err(f"{where}: fragmentation_pct {got}, want {want:.2f}")


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    try:
        doc = json.loads(text)  # rejects a second document or trailing garbage
    except json.JSONDecodeError as e:
        print(f"not one JSON document: {e}")
        return 1
    expect = json.loads(sys.argv[2])

    if doc.get("schema_version") != 1 or isinstance(doc.get("schema_version"), bool):
        err(f"schema_version is {doc.get('schema_version')!r}, want 1")
    regions = {}
    devices = field(doc, "devices", list, "doc") or []
    if not devices:
        err("no devices")
    for d in devices:
        did = field(d, "id", int, "device")
        field(d, "name", str, f"device {did}")
        for g in field(d, "bank_groups", list, f"device {did}") or []:
            kind = field(g, "kind", str, f"device {did} group")
            where = f"device {did} {kind}"
            if kind not in ("dram", "sram"):
                err(f"{where}: kind {kind!r}")
            banks = field(g, "banks", int, where)
            if banks is not None and banks <= 0:
                err(f"{where}: banks {banks}")
            field(g, "bank_size", int, where)
            check_stats(g, where, "total")
            sum_alloc = sum_free = sum_largest = 0
            for r in field(g, "regions", list, where) or []:
                name = field(r, "name", str, f"{where} region")
                rw = f"{where} region {name}"
                base = field(r, "base", int, rw)
                size = field(r, "size", int, rw)
                for k in ("allocated", "free", "largest_free"):
                    field(r, k, int, rw)
                if r.get("allocatable", True):
                    check_stats(r, rw, "size")
                    sum_alloc += r.get("allocated", 0)
                    sum_free += r.get("free", 0)
                    sum_largest += r.get("largest_free", 0)
                    check_frag(r, r.get("largest_free", 0), r.get("free", 0), rw)
                regions[(did, kind, name)] = (base, size)
            if g.get("allocated") is not None and sum_alloc != g["allocated"]:
                err(f"{where}: group allocated {g['allocated']} != sum of regions {sum_alloc}")
            # A buffer never spans regions: the group's figure is over each region's
            # largest block (an idle group is 0 %, not 1 - largest region / all free).
            check_frag(g, sum_largest, sum_free, where)

    allocs = field(doc, "allocations", list, "doc") or []
    by_handle = {}
    keys = {"handle": int, "device": int, "kind": str, "region": str, "class": str,
            "address": int, "size_per_bank": int, "banks": int, "pid": int, "uid": int,
            "name": str}
    for a in allocs:
        w = f"allocation {a.get('handle')}"
        if any(field(a, k, t, w) is None for k, t in keys.items()):
            continue
        by_handle[a["handle"]] = a
        reg = regions.get((a["device"], a["kind"], a["region"]))
        if reg is None:
            err(f"{w}: no region {a['kind']}/{a['region']} on device {a['device']}")
        elif not (reg[0] <= a["address"] and a["address"] + a["size_per_bank"] <= reg[0] + reg[1]):
            err(f"{w}: [{a['address']:#x}, +{a['size_per_bank']}) outside its region")
    placed = sorted(by_handle.values(),
                    key=lambda a: (a["device"], a["kind"], a["region"], a["address"]))
    for x, y in zip(placed, placed[1:]):
        if (x["device"], x["kind"], x["region"]) == (y["device"], y["kind"], y["region"]) \
                and x["address"] + x["size_per_bank"] > y["address"]:
            err(f"allocations {x['handle']} and {y['handle']} overlap")

    for e in expect:
        a = by_handle.get(e["handle"])
        if a is None:
            err(f"expected allocation {e['handle']} is missing")
            continue
        want_name = bytes.fromhex(e["name_hex"]).decode("utf-8")
        if a["name"] != want_name:
            err(f"allocation {e['handle']}: name {a['name']!r}, want {want_name!r}")
        for k in ("class", "kind", "region", "device", "pid", "uid"):
            if k in e and a[k] != e[k]:
                err(f"allocation {e['handle']}: {k} {a[k]!r}, want {e[k]!r}")
        if a["size_per_bank"] < e.get("min_size", 0):
            err(f"allocation {e['handle']}: size_per_bank {a['size_per_bank']} < {e['min_size']}")

    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
