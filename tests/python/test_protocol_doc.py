"""A client written from doc/protocol.md alone.

The document says it is enough to write a client in another language. This one proves
it: it parses the document's tables at test time (every record's layout, the opcodes,
record tags, constants, vocabulary and errno values), speaks to the real, built memd
with nothing else (no memd package, no number copied from a C header), and checks the
document's worked example byte for byte.
"""
import os
import re
import socket
import struct

import pytest

from conftest import SOURCE_ROOT

DOC = os.path.join(SOURCE_ROOT, "doc", "protocol.md")
SCALAR = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q", "i32": "i"}


def rows(lines, start):
    """The rows of the Markdown table after line index start, as lists of cells."""
    out = []
    i = start
    while i < len(lines) and not lines[i].startswith("|"):
        i += 1
    i += 2  # header and rule
    while i < len(lines) and lines[i].startswith("|"):
        cells = re.split(r"(?<!\\)\|", lines[i])[1:-1]
        out.append([c.strip().replace("\\|", "|") for c in cells])
        i += 1
    return out


def c_value(text, consts):
    """A value as the document writes it: 1u << 0, (64u << 20), 0x444d454du, NAMEs."""
    e = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)[uU]\b", r"\1", text).replace("UINT32_MAX", str(2**32 - 1))
    e = re.sub(r"\b[A-Z][A-Z0-9_]+\b", lambda m: str(consts[m.group(0)]), e)
    return int(eval(e, {"__builtins__": {}}))  # digits and operators left


class Protocol:
    """Everything a client needs, read from the document."""

    def __init__(self, path):
        with open(path) as f:
            self.text = f.read()
        lines = self.text.split("\n")
        self.consts, self.records, self.opcodes, self.tags, self.errno = {}, {}, {}, {}, {}
        for m in re.finditer(r"^\*\*[^*]+\*\*: (.*)$", self.text, re.M):
            for name, v in re.findall(r"(MEMD_\w+) = (\d+)", m.group(1)):
                self.consts[name] = int(v)
        for i, line in enumerate(lines):
            if line == "## Constants and flags":
                for name, value, _ in rows(lines, i):
                    self.consts[name] = c_value(value, self.consts)
            elif line == "## Opcodes":
                for r in rows(lines, i):
                    self.opcodes[r[1]] = int(r[0])
            elif line.startswith("## Record tags"):
                for r in rows(lines, i):
                    self.tags[int(r[0])] = (r[1], re.match(r"\[memd_wire_(\w+)\]", r[2]).group(1))
            elif line == "## Errors":
                for name, value, _ in rows(lines, i):
                    self.errno[name] = int(value)
            m = re.match(r"#### memd_wire_(\w+) \((\d+) bytes\)", line)
            if m:
                fields = []
                for off, size, typ, name, check, _ in rows(lines, i):
                    nested = re.match(r"\[memd_wire_(\w+)\]", typ)
                    fields.append((name, int(off), int(size),
                                   nested.group(1) if nested else typ, check.startswith("reserved")))
                self.records[m.group(1)] = (int(m.group(2)), fields)

    def size(self, rec):
        return self.records[rec][0]

    def encode(self, rec, **values):
        size, fields = self.records[rec]
        out = bytearray(size)
        for name, off, fsize, typ, reserved in fields:
            if reserved or name not in values:
                continue  # reserved and unset fields are zeros
            v = values[name]
            base = typ.split("[")[0]
            if base == "char":
                b = v.encode()
                assert len(b) < fsize, f"{rec}.{name}: room for its NUL"
                out[off:off + len(b)] = b
            elif base in SCALAR:
                n = fsize // struct.calcsize(SCALAR[base])
                out[off:off + fsize] = struct.pack("<%d%s" % (n, SCALAR[base]),
                                                   *(v if n > 1 else [v]))
            else:
                raise AssertionError(f"{rec}.{name}: cannot encode {typ}")
        return bytes(out)

    def decode(self, rec, data):
        size, fields = self.records[rec]
        assert len(data) >= size, f"{rec}: {len(data)} bytes, need {size}"
        out = {}
        for name, off, fsize, typ, reserved in fields:
            raw = data[off:off + fsize]
            base = typ.split("[")[0]
            if reserved:
                continue
            if typ in self.records:
                out[name] = self.decode(typ, raw)
            elif base == "char":
                assert b"\0" in raw, f"{rec}.{name}: no NUL"
                out[name] = raw.split(b"\0", 1)[0].decode()
            elif base == "u8" and "[" in typ:
                out[name] = raw
            else:
                n = fsize // struct.calcsize(SCALAR[base])
                vals = struct.unpack("<%d%s" % (n, SCALAR[base]), raw)
                out[name] = vals if "[" in typ else vals[0]
        return out

    def frame(self, opcode, req_id, payload, magic=None):
        hdr = self.encode("hdr", magic=self.consts["MEMD_PROTO_MAGIC"] if magic is None else magic,
                          version=self.consts["MEMD_PROTO_VERSION"], opcode=self.opcodes[opcode],
                          id=req_id, len=len(payload), status=0)
        return hdr + payload

    def count(self, n):
        """The u32 count, u32 0 prefix of batch payloads."""
        return struct.pack("<II", n, 0)


@pytest.fixture(scope="module")
def proto():
    return Protocol(DOC)


class Conn:
    def __init__(self, proto, path):
        self.p = proto
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(10)
        self.s.connect(path)
        self.next_id = 1

    def recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed")
            buf += chunk
        return buf

    def reply(self):
        h = self.p.decode("hdr", self.recv_exact(self.p.size("hdr")))
        return h, self.recv_exact(h["len"])

    def call(self, opcode, payload):
        rid = self.next_id
        self.next_id += 1
        self.s.sendall(self.p.frame(opcode, rid, payload))
        h, body = self.reply()
        assert h["id"] == rid and h["opcode"] == self.p.opcodes[opcode]
        return h, body

    def ok(self, opcode, payload):
        h, body = self.call(opcode, payload)
        if h["status"] != 0:
            raise AssertionError(f"{opcode}: {self.p.decode('error', body)}")
        return body


def hello(p, conn):
    body = conn.ok("HELLO", p.encode("hello", min_version=1, max_version=1,
                                     client_name="doc-client"))
    assert len(body) == p.size("welcome")
    return p.decode("welcome", body)


def test_worked_example_is_what_the_tables_build(proto):
    """The document's hex dump is the ALLOC frame its tables describe."""
    example = re.search(r"## Example\n.*?```\n(.*?)```", proto.text, re.S).group(1)
    dumped = bytes(int(x, 16) for line in example.strip().split("\n") for x in line.split()[1:])
    payload = proto.encode("alloc_req", device=0, cls=proto.consts["MEMD_CLASS_CONSTANT"],
                           scope=proto.consts["MEMD_SCOPE_DRAM"], bytes=1 << 20, name="weights")
    assert proto.frame("ALLOC", 7, payload) == dumped


def test_session_from_the_document(proto, daemon):
    p = proto
    c = Conn(p, daemon.socket)
    w = hello(p, c)
    assert w["version"] == p.consts["MEMD_PROTO_VERSION"] and w["session_id"] > 0
    assert w["max_frame"] > 0 and w["ndevices"] >= 1

    # One named DRAM constant.
    req = dict(device=0, cls=p.consts["MEMD_CLASS_CONSTANT"], scope=p.consts["MEMD_SCOPE_DRAM"],
               bytes=1 << 20, name="doc-weights")
    buf = p.decode("buffer", c.ok("ALLOC", p.encode("alloc_req", **req)))
    assert buf["handle"] != 0 and buf["size_per_bank"] >= 1 << 20
    assert buf["kind"] == p.consts["MEMD_KIND_DRAM"] and buf["refcount"] == 1
    info = p.decode("alloc_info", c.ok("QUERY", struct.pack("<Q", buf["handle"])))
    assert info["name"] == "doc-weights" and info["cls"] == req["cls"]
    assert info["buf"]["handle"] == buf["handle"] and info["buf"]["address"] == buf["address"]
    assert info["session_id"] == w["session_id"] and info["pid"] == os.getpid()

    # A batch of three, freed in one request.
    reqs = [p.encode("alloc_req", device=0, cls=p.consts["MEMD_CLASS_INTERNAL"],
                     scope=p.consts["MEMD_SCOPE_DRAM"], bytes=4096 * (i + 1)) for i in range(3)]
    body = c.ok("ALLOC_BATCH", p.count(3) + b"".join(reqs))
    n = struct.unpack_from("<I", body)[0]
    bsize = p.size("buffer")
    assert n == 3 and len(body) == 8 + 3 * bsize
    handles = [p.decode("buffer", body[8 + i * bsize:])["handle"] for i in range(3)]
    assert len(set(handles)) == 3
    assert c.ok("FREE_BATCH", p.count(3) + struct.pack("<3Q", *handles)) == b""

    # The whole state, page by page.
    seen, cursor, pages = [], 0, 0
    while True:
        body = c.ok("DUMP", p.encode("dump_req", device=0xFFFFFFFF,
                                     flags=p.consts["MEMD_DUMP_F_PAGED"], cursor=cursor))
        off, names = 0, []
        while off < len(body):
            tag = struct.unpack_from("<I", body, off)[0]
            name, rec = p.tags[tag]
            r = p.decode(rec, body[off + 4:])
            names.append(name)
            seen.append((name, r))
            off += 4 + p.size(rec)
        assert off == len(body) and names[-1] == "PAGE"
        if pages == 0:
            assert names[0] == "SERVER"
        pages += 1
        cursor = seen[-1][1]["next"]
        if cursor == 0:
            break
    mine = [r for name, r in seen if name == "ALLOC" and r["buf"]["handle"] == buf["handle"]]
    assert len(mine) == 1 and mine[0]["name"] == "doc-weights"
    assert not any(name == "ALLOC" and r["buf"]["handle"] in handles for name, r in seen)

    # An error: the record says what, the status is the document's errno.
    h, body = c.call("FREE", struct.pack("<Q", buf["handle"] + 1000))
    err = p.decode("error", body)
    assert h["status"] == err["status"] == p.errno["ENOENT"]
    assert err["message"]
    assert c.ok("FREE", struct.pack("<Q", buf["handle"])) == b""


def test_bad_magic_is_answered_then_closed(proto, daemon):
    c = Conn(proto, daemon.socket)
    hello(proto, c)
    c.s.sendall(proto.frame("QUERY", 9, struct.pack("<Q", 1), magic=0x12345678))
    h, body = c.reply()
    assert h["status"] == proto.errno["EPROTO"]
    assert proto.decode("error", body)["message"]
    assert c.s.recv(1) == b""  # memd closed the connection
