"""The client workload of the recorded conversation (tests/data/frames/session-workload.txt).

    python3 workload.py SOCKET MEMCTL CONFIG_DIR OUT.json

Made by real clients: the memd Python package (libmemclient underneath) on PYTHONPATH,
the memctl at MEMCTL, and, for the frames no client library sends any more (the 40-byte
HELLO, the 8-byte and unpaged DUMP, MODEL_INFO), a raw connection written with struct.
It writes what the clients decoded to OUT.json: record.py keeps the old clients' reading
of the old replies; reverse.py runs the same workload with the tree's clients against the
old replies and must read the same. Everything runs in one order, one call at a time, so
two runs send the same frames."""
import json
import os
import socket
import struct
import subprocess
import sys

import memd

SOCK, MEMCTL, CONFIG_DIR, OUT = sys.argv[1:5]
KiB, MiB = 1 << 10, 1 << 20
out = {}


def buf(b):
    # region: the index the recorded clients printed (Buffer.region is now the name, which
    # the client would ask memd for with a DUMP the recording does not have).
    return {k: getattr(b, "region_index" if k == "region" else k)
            for k in ("handle", "address", "size_per_bank", "page_size", "pitch", "banks",
                      "bank_mode", "refcount", "region", "device", "name", "kind", "cls",
                      "scope")}


def err(call):
    """A request memd refuses: the error as the client decoded it."""
    try:
        call()
    except memd.Error as e:
        d = {"type": type(e).__name__, "errno": e.errno, "message": e.message}
        for k in ("requested", "size_per_bank", "allocated", "free", "largest_free", "device",
                  "cls", "kind", "region", "quota"):
            if hasattr(e, k):
                d[k] = getattr(e, k)
        return d
    raise AssertionError("memd accepted a request it must refuse")


def memctl(*args):
    r = subprocess.run([MEMCTL, "--socket", SOCK] + list(args), capture_output=True, text=True,
                       timeout=30)
    return {"argv": list(args), "rc": r.returncode, "stdout": r.stdout}


def raw_frames():
    """Frames no client library sends any more, that memd still answers: the replies' bytes
    are checked by replay.py; here only that memd answered."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(SOCK)

    def call(rid, op, payload):
        s.sendall(struct.pack("<IHHQIi", 0x444D454D, 1, op, rid, len(payload), 0) + payload)
        hdr = b""
        while len(hdr) < 24:
            hdr += s.recv(24 - len(hdr))
        n = struct.unpack_from("<I", hdr, 16)[0]
        body = b""
        while len(body) < n:
            body += s.recv(n - len(body))
        return struct.unpack_from("<i", hdr, 20)[0], len(body)

    res = [call(1, 1, struct.pack("<HHI32s", 1, 1, 0, b"frames-raw-v1"))]  # 40-byte HELLO
    res.append(call(2, 8, struct.pack("<II", 0xFFFFFFFF, 0)))                # 8-byte DUMP
    res.append(call(3, 8, struct.pack("<IIQ", 2, 1 | 4 | 8 | 16, 0)))         # unpaged, flags
    res.append(call(4, 13, struct.pack("<QII", out["model"]["model_id"], 0, 0)))  # MODEL_INFO
    res.append(call(5, 13, struct.pack("<QII", 999, 0, 0)))                   # no such model
    res.append(call(6, 16, struct.pack("<QII", 0, 2, 0)))                     # EVENTS, 2
    # a PLAN document sent ahead in two UPLOAD parts (clients do so only past the frame
    # limit): plan_req, then two plan_bufs (lower, upper, size, align, offset, flags, pad)
    doc = (struct.pack("<IIIIQ", 2, 0, 0, 0, 3) + struct.pack("<QQQQQII", 0, 2, 4096, 64, 0, 0, 0)
           + struct.pack("<QQQQQII", 1, 3, 8192, 0, 0, 0, 0))
    res.append(call(7, 9, struct.pack("<QQQ", 77, len(doc), 0) + doc[:40]))
    res.append(call(8, 9, struct.pack("<QQQ", 77, len(doc), 40) + doc[40:]))
    res.append(call(9, 10, struct.pack("<Q", 77)))
    s.close()
    return res


def malformed():
    """Whole frames memd refuses: an unknown opcode, a QUERY of 4 bytes, an ALLOC of an
    unknown class. Each gets an error reply, then memd closes the connection:
    [status, reply payload bytes, closed] each. (A bad header is checked by frames-golden
    and test_daemon_frames: a frame cut short cannot go through the recording proxy, which
    forwards whole frames.)"""
    alloc = bytearray(136)
    alloc[4] = 9  # cls
    res = []
    for op, rid, payload in ((99, 5, b""), (6, 6, bytes(4)), (2, 7, bytes(alloc))):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(SOCK)
        f = s.makefile("rb")
        s.sendall(struct.pack("<IHHQIi", 0x444D454D, 1, 1, 1, 64, 0) +
                  struct.pack("<HHI32sII16s", 1, 1, 0, b"frames-bad", 0, 0, bytes(16)))
        f.read(struct.unpack_from("<I", f.read(24), 16)[0])
        s.sendall(struct.pack("<IHHQIi", 0x444D454D, 1, op, rid, len(payload), 0) + payload)
        reply = f.read(24)
        body = f.read(struct.unpack_from("<I", reply, 16)[0])
        res.append([struct.unpack_from("<i", reply, 20)[0], len(body), f.read(1) == b""])
        f.close()
        s.close()
    return res


c = memd.connect(SOCK, name="frames-workload")
out["session"] = c.session()
del out["session"]["socket"]  # the path of a temporary directory: no part of the wire

# ALLOC: DRAM and SRAM, named, shared, shape + dtype, texture
w = c.alloc(0, "constant", 3 * MiB + 5, page_size=2048, name="frames.weights", shared=True)
cb = c.alloc(0, "internal", 96 * KiB, scope="sram", page_size=2048, name="frames.cb0")
ph = c.alloc(0, "placeholder", shape=[2, 3, 64, 17], dtype="f16", banks=3)
tex = c.alloc(3, "constant", shape=[16, 100], dtype="float32", scope="dram.texture")
out["alloc"] = [buf(b) for b in (w, cb, ph, tex)]
# ALLOC_BATCH
batch = c.alloc_batch([{"device": 2, "cls": "internal", "size": 4096 * (i + 1),
                        "name": f"frames.b{i}"} for i in range(3)])
out["alloc_batch"] = [buf(b) for b in batch]
# ALLOC_BANKS: range lockstep and per bank
rng = c.alloc(0, "internal", 8 * KiB, scope="sram", bank_set=[0, 1, 2, 7])
per = c.alloc(0, "internal", 4 * KiB, scope="sram", bank_set=[5, 9], per_bank=True)
out["alloc_banks"] = [buf(b) for b in (rng, per)]
# ALLOC_BATCH_BANKS: a bank-set element and a plain one
bb = c.alloc_batch([{"device": 0, "cls": "internal", "size": 2048, "scope": "sram",
                     "bank_set": [10, 11]},
                    {"device": 0, "cls": "constant", "size": 64 * KiB, "name": "frames.bb"}])
out["alloc_batch_banks"] = [buf(b) for b in bb]
# QUERY, BANKS, BANK_ADDRS
out["query"] = [c.query(b) for b in (w, rng, per)]
out["banks"] = c.bank_addresses(w)
out["bank_addrs"] = [c.bank_info(b) for b in (rng, per)]
# POOL_REPORT
pool = c.pool(0, "internal", 1 * MiB, name="frames.pool")
pa = pool.alloc(4096, name="frames.sub0")
pb = pool.alloc(10000, alignment=256)
pool.free(pa)
pool.flush()
out["pool"] = {"handle": pool.handle, "address": pool.address, "size": pool.size,
               "pb": [pb.offset, pb.size, pb.address]}
# PLAN: small enough to be optimal at once, whatever the machine
plan = c.plan([(0, 2, 1000), (1, 3, 3000), (2, 4, 500, 256), (0, 4, 64)], seed=7)
out["plan"] = {k: getattr(plan, k) for k in ("offsets", "arena", "lower_bound", "strategy",
                                              "optimal", "plan_id", "cached", "precomputed")}
# MODEL_LOAD, INSTANCE_CREATE, INSTANCE_RELEASE (kept, then reused), and later UNLOAD
model = memd.Model.from_yaml(os.path.join(CONFIG_DIR, "models", "tiny_cnn.yaml"))
# One page, as every model was before page sizes (the recording's MODEL_LOAD): the
# default page of the shipped DRAM would plan and load another model. A package that
# predates page sizes (the reference tree's, recording) loads one page without asking.
try:
    lm = c.load_model(model, device=0, page_size=0)
except TypeError:
    lm = c.load_model(model, device=0)
out["model"] = {k: getattr(lm, k) for k in ("model_id", "name", "device", "arena", "lower_bound",
                                             "plan_id", "strategy", "plan_cached", "plan_optimal",
                                             "created", "users", "code_address", "code_bytes",
                                             "const_address", "const_bytes", "weights",
                                             "offsets")}
inst = lm.create_instance()
i1 = {"instance_id": inst.instance_id, "arena_handle": inst.arena_handle,
      "arena_address": inst.arena_address, "tensors": inst.tensors, "handles": inst.handles}
inst.release()
inst2 = lm.create_instance()
out["instances"] = [i1, {"instance_id": inst2.instance_id, "reused": inst2.reused}]
# SUBDEV_DEFINE (admin), then SUBDEV_BIND and an allocation inside it on a session of its own
c.subdev_define("frames.tenant", 0, "sram", range(20, 28), budget=256 * KiB)
c2 = memd.connect(SOCK, name="frames-tenant")
c2.subdev_bind("frames.tenant")
t = c2.alloc(0, "internal", 8 * KiB, scope="sram", name="frames.tenant.buf")
out["subdev"] = {"buf": buf(t), "query": c2.query(t),
                 "out_of_subdev": err(lambda: c2.alloc(1, "constant", 4096))}
# DUMP, paged, with every flag the Python package asks for (blocks, models, pools with
# sub-allocations, banks and sub-device banks); memctl's own dump and the events
out["dump"] = c.dump(detailed=True)
out["memctl_dump"] = memctl("dump", "--json")
out["memctl_events"] = memctl("events", "--json")
out["raw"] = raw_frames()
out["malformed"] = malformed()
# error replies: a bad handle, out of memory (with its details), a bad bank set
out["errors"] = [
    err(lambda: c.free(0xDEADBEEF)),
    err(lambda: c.query(0xDEADBEEF)),
    err(lambda: c.alloc(2, "internal", 1 << 50)),
    err(lambda: c.alloc(0, "internal", 4096, scope="sram", bank_set=[3, 100000])),
]
# out of memory: two buffers of 60% of device 2's data region (as tests/python does)
data = [r for r in c.dump(2)["devices"][0]["bank_groups"][0]["regions"]
        if r["name"] == "data"][0]
big = data["size"] * 6 // 10 // 4096 * 4096
with c.alloc(2, "constant", big):
    out["errors"].append(err(lambda: c.alloc(2, "internal", big)))
# the end: MODEL_UNLOAD (forced: an instance is busy), FREE, FREE_BATCH, a failed one
inst2.release(free=True)
lm.unload(force=True)
pool.close()
c.free(w)
c.free_batch([cb, ph, tex] + batch)
out["errors"].append(err(lambda: c.free_batch([rng.handle, 0xBADBAD])))
c.free_batch([rng, per] + bb)
t.free()
c2.close()
out["last_dump"] = c.dump()
c.close()

with open(OUT, "w") as f:
    json.dump(out, f, indent=1, sort_keys=True, default=repr)
    f.write("\n")
