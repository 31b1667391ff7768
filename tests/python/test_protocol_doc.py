"""doc/protocol.md is enough to write a client: a client in Python's struct and socket that
knows nothing of memd but what it parses from the document at test time (record tables,
opcodes, record tags, errnos, constants, vocabulary) speaks to the real daemon.

Nothing here comes from the memd package or the C headers: every number and layout is
read from the page, so a table that is wrong, missing or unparsable fails a test."""
import math
import os
import re
import socket
import struct

import pytest

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "doc", "protocol.md")
MiB = 1 << 20


# ---- the document ---------------------------------------------------------------------

def int_code(base):
    """The struct code of u8..u64 / i8..i64, as the Framing section defines them."""
    m = re.fullmatch(r"([ui])(8|16|32|64)", base)
    assert m, "%r is not an integer type of the Framing section" % base
    code = {"8": "b", "16": "h", "32": "i", "64": "q"}[m.group(2)]
    return code if m.group(1) == "i" else code.upper()


def int_struct(items):
    """The struct of a backticked list such as `u32 count, u32 0`: TYPE NAME, ..."""
    return struct.Struct("<" + "".join(int_code(i.split()[0]) for i in items.split(", ")))


def split_row(line):
    """The cells of a Markdown table row; an escaped \\| belongs to its cell."""
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


class Field:
    """One row of a record table, as a struct format and a way to read its values back."""

    def __init__(self, row, doc):
        self.offset, self.size = int(row[0]), int(row[1])
        self.type, self.name = row[2], row[3]
        nested = re.fullmatch(r"\[memd_wire_(\w+)\]\(#[^)]*\)", self.type)
        if nested:
            self.kind, self.record = "record", doc.record(nested.group(1))
            assert self.record.size == self.size, self.type
            self.count, self.fmt = 1, self.record.fmt
            return
        m = re.fullmatch(r"(char|[ui](?:8|16|32|64))((?:\[\w+\])*)", self.type)
        assert m, "type %r of %s is not in the Framing section's list" % (self.type, self.name)
        base = m.group(1)
        # Array lengths are numbers or constants' names; with the width they give the size.
        dims = [int(n) if n.isdigit() else doc.consts[n]
                for n in re.findall(r"\[(\w+)\]", m.group(2))]
        width = 1 if base == "char" else int(base[1:]) // 8
        assert math.prod(dims) * width == self.size, self.name
        if base == "char":  # char[N] is a string, char[M][N] M of them
            self.kind, self.strlen = "str", dims[-1]
            self.count = self.size // self.strlen
            self.fmt = ("%ds" % self.strlen) * self.count
        elif base == "u8" and dims:
            self.kind, self.count, self.fmt = "bytes", 1, "%ds" % self.size
        else:
            code = int_code(base)
            self.count = math.prod(dims)
            self.kind = "array" if dims else "int"
            self.fmt = ("%d" % self.count if dims else "") + code

    def string(self, value):
        raw = (value or "").encode()
        assert len(raw) < self.strlen, "%s: no room for the NUL" % self.name
        return raw  # struct's "s" pads with NULs, as the document asks

    def unstring(self, raw):
        assert b"\0" in raw, "%s without a NUL" % self.name
        return raw.split(b"\0", 1)[0].decode()

    def flat(self, value):
        if self.kind == "record":
            return self.record.flat(value or {})
        if self.kind == "str" and self.count > 1:
            v = tuple(value or ())
            return [self.string(x) for x in v + ("",) * (self.count - len(v))]
        if self.kind == "str":
            return [self.string(value)]
        if self.kind == "array":
            v = tuple(value or ())
            return list(v + (0,) * (self.count - len(v)))
        return [value or (b"" if self.kind == "bytes" else 0)]

    def take(self, values):
        if self.kind == "record":
            return self.record.take(values)
        if self.kind == "str" and self.count > 1:
            return tuple(self.unstring(next(values)) for _ in range(self.count))
        if self.kind == "str":
            return self.unstring(next(values))
        if self.kind == "array":
            return tuple(next(values) for _ in range(self.count))
        return next(values)


class Record:
    """A record's table: fields at the offsets the table gives, with no padding between
    them (the document's promise, checked), as one little-endian struct."""

    def __init__(self, name, size, rows, doc):
        self.name, self.size = name, size
        self.fields = []
        for row in rows:
            f = Field(row, doc)
            end = self.fields[-1].offset + self.fields[-1].size if self.fields else 0
            assert f.offset == end, "%s.%s: offset %d, expected %d" % (name, f.name, f.offset, end)
            self.fields.append(f)
        self.fmt = "".join(f.fmt for f in self.fields)
        self.struct = struct.Struct("<" + self.fmt)
        assert self.struct.size == size, "%s: the fields add up to %d" % (name, self.struct.size)

    def flat(self, values):
        unknown = set(values) - {f.name for f in self.fields}
        assert not unknown, "%s has no field %s" % (self.name, unknown)
        return [x for f in self.fields for x in f.flat(values.get(f.name))]

    def take(self, values):
        return {f.name: f.take(values) for f in self.fields}

    def pack(self, **values):
        return self.struct.pack(*self.flat(values))

    def unpack(self, buf, offset=0):
        return self.take(iter(self.struct.unpack_from(buf, offset)))


class Payload:
    """One cell of the opcode table's request or reply column: `empty`, a record, an
    integer (`u64 handle`), `count, X x count` (X behind the Framing section's count
    prefix) or the DUMP reply's tagged records."""

    def __init__(self, cell, doc):
        self.doc, self.batch = doc, False
        m = re.fullmatch(r"count, (.*) x count", cell)
        if m:
            self.batch, cell = True, m.group(1)
        link = re.fullmatch(r"\[(\w+)\]\(#memd_wire_\1-\d+-bytes\)", cell)
        if cell in ("empty", "tagged records (see Record tags)"):
            self.kind, self.size = cell.split()[0], 0
        elif link:
            self.kind, self.record = "record", doc.record(link.group(1))
            self.size = self.record.size
        else:
            self.kind, self.int = "int", int_struct(cell)
            self.size = self.int.size

    def encode(self, value):
        if self.batch:
            return self.doc.count.pack(len(value), 0) + b"".join(map(self.encode_one, value))
        return self.encode_one(value)

    def encode_one(self, value):
        if self.kind == "record":
            return self.record.pack(**value)
        if self.kind == "int":
            return self.int.pack(value)
        assert value is None, "%s payloads carry nothing" % self.kind
        return b""

    def decode(self, body):
        if self.kind == "tagged":
            return self.doc.tagged(body)
        off, n = 0, 1
        if self.batch:
            n, zero = self.doc.count.unpack_from(body)
            assert zero == 0
            off = self.doc.count.size
        assert len(body) == off + n * self.size, "a reply of %d bytes" % len(body)
        items = [self.decode_one(body, off + i * self.size) for i in range(n)]
        return items if self.batch else items[0]

    def decode_one(self, body, off):
        if self.kind == "record":
            return self.record.unpack(body, off)
        if self.kind == "int":
            return self.int.unpack_from(body, off)[0]
        return None


class Opcode:
    """A row of the opcode table: its number, payloads and length rule."""

    def __init__(self, row, doc):
        self.number, self.name = int(row[0]), row[1]
        self.request, self.reply = Payload(row[2], doc), Payload(row[3], doc)
        self.rule = row[4]

    def fits(self, n):
        """Whether a request payload of n bytes keeps the length rule."""
        m = re.fullmatch(r"exactly (\d+)(?: or (\d+))?", self.rule)
        if m:
            return n in {int(x) for x in m.groups() if x}
        m = re.fullmatch(r"(\d+) \+ count x (\d+)", self.rule)
        if m:
            head, each = int(m.group(1)), int(m.group(2))
            return n >= head and (n - head) % each == 0
        n_min = re.fullmatch(r"at least (\d+)", self.rule)
        assert n_min, "%s: length rule %r" % (self.name, self.rule)
        return n >= int(n_min.group(1))


class ProtocolDoc:
    """The numbers and layouts of doc/protocol.md."""

    def __init__(self, text):
        self.text = text
        self.sections = {}  # heading -> lines up to the next heading
        lines = []
        for line in text.splitlines():
            if line.startswith("#"):
                lines = self.sections.setdefault(line.lstrip("#").strip(), [])
            else:
                lines.append(line)
        self.consts = {}
        for name, value, _ in self.table("Constants and flags"):
            self.consts[name] = int(value, 0)
        for line in self.sections["Vocabulary (`<memd/types.h>`)"]:
            m = re.fullmatch(r"\*\*\w+\*\*: (.*)", line)
            if m:
                for member in m.group(1).split(", "):
                    name, value = member.split(" = ")
                    self.consts[name] = int(value)
        self.errno = {row[0]: int(row[1]) for row in self.table("Errors")}
        # The count prefix of batch payloads and the DUMP reply's tag, as the prose says.
        self.count = int_struct(self.quoted("Framing", r"are a `([^`]*)` prefix"))
        self.tag = int_struct(self.quoted("Record tags (DUMP replies)", r"each a `(\w+)` tag"))
        self.tags = {}
        for row in self.table("Record tags (DUMP replies)"):
            rec = re.fullmatch(r"\[memd_wire_(\w+)\]\(#[^)]*\)", row[2]).group(1)
            self.tags[int(row[0])] = (row[1], rec)
        self.records = {}
        for heading in self.sections:
            m = re.fullmatch(r"memd_wire_(\w+) \((\d+) bytes\)", heading)
            if m:
                self.records[m.group(1)] = (int(m.group(2)), heading)
        self.op_rows = {row[1]: row for row in self.table("Opcodes")}
        self.ops = {}

    def quoted(self, heading, pattern):
        m = re.search(pattern, "\n".join(self.sections[heading]), re.S)
        assert m, "%r: no %r" % (heading, pattern)
        return m.group(1)

    def table(self, heading):
        """The rows of the first table under heading (no header, no separator)."""
        rows, started = [], False
        for line in self.sections[heading]:
            if line.startswith("|"):
                started = True
                rows.append(split_row(line))
            elif started:
                break
        assert rows, "no table under %r" % heading
        return rows[2:]

    def record(self, name):
        """The record memd_wire_<name> (built on first use: records nest)."""
        r = self.records[name]
        if isinstance(r, tuple):
            size, heading = r
            r = self.records[name] = Record(name, size, self.table(heading), self)
        return r

    def op(self, name):
        """The opcode called name (built on first use: not every row's payload is one this
        client speaks, e.g. PLAN's documents)."""
        if name not in self.ops:
            self.ops[name] = Opcode(self.op_rows[name], self)
        return self.ops[name]

    def tagged(self, body):
        """A DUMP reply: [(tag name, record)], each record's table from the tag table."""
        out, off = [], 0
        while off < len(body):
            (tag,) = self.tag.unpack_from(body, off)
            assert tag in self.tags, "tag %d is not in the Record tags table" % tag
            name, rec = self.tags[tag]
            r = self.record(rec)
            out.append((name, r.unpack(body, off + self.tag.size)))
            off += self.tag.size + r.size
        assert off == len(body), "a record cut short"
        return out

    def example_frame(self):
        """The bytes of the hex dump in the Example section."""
        dump = self.quoted("Example", r"```\n(.*?)\n```")
        out = bytearray()
        for line in dump.splitlines():
            offset, _, hexbytes = line.partition("  ")
            assert int(offset, 16) == len(out)
            out += bytes.fromhex(hexbytes)
        return bytes(out)


@pytest.fixture(scope="module")
def doc():
    with open(DOC, encoding="utf-8") as f:
        return ProtocolDoc(f.read())


# ---- a client of the document's protocol ----------------------------------------------

class Conn:
    def __init__(self, path, doc):
        self.doc = doc
        self.hdr = doc.record("hdr")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(5)
        self.sock.connect(path)
        self.next_id = 1

    def close(self):
        self.sock.close()

    def send(self, opcode, payload, magic=None):
        rid = self.next_id
        self.next_id += 1
        c = self.doc.consts
        self.sock.sendall(self.hdr.pack(
            magic=c["MEMD_PROTO_MAGIC"] if magic is None else magic,
            version=c["MEMD_PROTO_VERSION"], opcode=self.doc.op(opcode).number, id=rid,
            len=len(payload)) + payload)
        return rid

    def recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("connection closed after %d of %d bytes" % (len(buf), n))
            buf += chunk
        return buf

    def recv(self):
        h = self.hdr.unpack(self.recv_exact(self.hdr.size))
        assert h["magic"] == self.doc.consts["MEMD_PROTO_MAGIC"]
        assert h["version"] == self.doc.consts["MEMD_PROTO_VERSION"]
        return h, self.recv_exact(h["len"])

    def call(self, opcode, value=None, status=0):
        """One request, encoded as the opcode table's request column says, and its reply,
        whose header echoes the request's opcode and id: decoded by the reply column, or
        the error record when status is an errno."""
        op = self.doc.op(opcode)
        payload = op.request.encode(value)
        assert op.fits(len(payload)), "%s: %d bytes break %r" % (opcode, len(payload), op.rule)
        rid = self.send(opcode, payload)
        h, body = self.recv()
        assert (h["opcode"], h["id"]) == (op.number, rid)
        err = self.doc.record("error")
        if h["status"] != status:
            pytest.fail("%s: status %d, expected %d: %s" % (
                opcode, h["status"], status, err.unpack(body) if h["status"] < 0 else body))
        if status < 0:
            assert len(body) == err.size
            return err.unpack(body)
        return op.reply.decode(body)

    def hello(self, name):
        v = self.doc.consts["MEMD_PROTO_VERSION"]
        # POSTMORTEM: this client reads the whole error record, appended fields included.
        return self.call("HELLO", dict(min_version=v, max_version=v, client_name=name,
                                       flags=self.doc.consts["MEMD_HELLO_F_POSTMORTEM"]))


@pytest.fixture
def conn(daemon, doc):
    c = Conn(daemon.socket, doc)
    c.welcome = c.hello("protocol-doc")
    yield c
    c.close()


def alloc_req(doc, **fields):
    c = doc.consts
    return dict(dict(device=0, cls=c["MEMD_CLASS_CONSTANT"], scope=c["MEMD_SCOPE_DRAM"],
                     dtype=c["MEMD_DTYPE_NONE"]), **fields)


# ---- the tests -----------------------------------------------------------------------

def test_every_record_table_parses(doc):
    """Every record of the page, not just those the session below uses, makes a struct of
    its documented size, and round-trips."""
    assert len(doc.records) > 40
    for name in list(doc.records):
        r = doc.record(name)
        assert r.unpack(r.pack()) == r.unpack(bytes(r.size))
    for tag, (name, rec) in doc.tags.items():
        assert rec in doc.records, "tag %s: no table for memd_wire_%s" % (name, rec)


def test_example_frame_is_the_tables(doc):
    """The Example section's hex dump is what the header and alloc_req tables make of its
    words: opcode 2, id 7, 1 MiB CONSTANT in DRAM of device 0, named "weights"."""
    c = doc.consts
    alloc = doc.op("ALLOC")
    payload = alloc.request.encode(alloc_req(doc, bytes=0x100000, name="weights"))
    frame = doc.record("hdr").pack(magic=c["MEMD_PROTO_MAGIC"], version=c["MEMD_PROTO_VERSION"],
                                   opcode=alloc.number, id=7, len=len(payload)) + payload
    assert alloc.number == 2 and c["MEMD_CLASS_CONSTANT"] == 1
    assert frame == doc.example_frame()


def test_example_frame_gets_a_buffer(doc, conn):
    """The example frame, sent as it is in the document, gets the reply it promises."""
    conn.sock.sendall(doc.example_frame())
    h, body = conn.recv()
    alloc = doc.op("ALLOC")
    assert (h["opcode"], h["id"], h["status"]) == (alloc.number, 7, 0)
    buf = alloc.reply.decode(body)
    conn.call("FREE", buf["handle"])


def test_hello_welcome(doc, conn):
    w = conn.welcome
    c = doc.consts
    # The 64-byte HELLO (not the older 40) gets the 72-byte welcome, token included.
    assert (doc.record("hello").size, doc.record("welcome").size) == (64, 72)
    assert w["version"] == c["MEMD_PROTO_VERSION"]
    assert w["session_id"] > 0 and w["ndevices"] > 0
    assert w["max_frame"] >= doc.record("alloc_req").size
    assert w["server_version"]
    # every flag set is one the document names
    named = 0
    for k, v in c.items():
        named |= v if k.startswith("MEMD_WELCOME_F_") else 0
    assert w["flags"] & ~named == 0
    assert not w["flags"] & c["MEMD_WELCOME_F_RECLAIMED"] and w["reclaimed"] == 0
    assert len(w["token"]) == c["MEMD_TOKEN_SIZE"]


def test_revoked_notice_before_the_next_reply(doc, conn, daemon):
    """Revocation notices as the document describes them: asked for in HELLO, one REVOKED
    frame (request id 0) right before the owner's next reply; none for a session that did
    not ask (conn)."""
    c = doc.consts
    owner = Conn(daemon.socket, doc)
    v = c["MEMD_PROTO_VERSION"]
    w = owner.call("HELLO", dict(min_version=v, max_version=v, client_name="doc-owner",
                                 flags=c["MEMD_HELLO_F_NOTICES"]))
    assert w["flags"] & c["MEMD_WELCOME_F_NOTICES"]
    assert not conn.welcome["flags"] & c["MEMD_WELCOME_F_NOTICES"]
    mine = owner.call("ALLOC", alloc_req(doc, bytes=MiB))
    theirs = conn.call("ALLOC", alloc_req(doc, bytes=MiB))
    conn.call("FREE", mine["handle"])  # the test runs as root: an admin
    rid = owner.send("QUERY", doc.op("QUERY").request.encode(mine["handle"]))
    h, body = owner.recv()
    rv = doc.op("REVOKED")
    assert (h["opcode"], h["id"], h["status"]) == (rv.number, 0, 0)
    [n] = rv.reply.decode(body)
    assert n["handle"] == mine["handle"] and n["actor_session"] == conn.welcome["session_id"]
    assert n["actor_uid"] == os.getuid() and n["actor_client"] == "protocol-doc"
    h, body = owner.recv()  # then the QUERY's own reply: the buffer is gone
    assert (h["opcode"], h["id"], h["status"]) == (doc.op("QUERY").number, rid,
                                                   doc.errno["ENOENT"])
    owner.call("FREE", theirs["handle"])  # root too: conn's goes, but conn did not ask
    conn.call("QUERY", theirs["handle"], status=doc.errno["ENOENT"])  # its reply comes alone
    owner.close()


def test_alloc_and_query(doc, conn):
    c = doc.consts
    buf = conn.call("ALLOC", alloc_req(doc, bytes=MiB, name="pydoc-weights"))
    assert buf["handle"] != 0 and buf["pitch"] == 0 and buf["banks"] > 0
    # No page size: one page, reserved whole in every bank (1 MiB is aligned already).
    assert buf["size_per_bank"] == MiB and buf["page_size"] == MiB
    assert buf["kind"] == c["MEMD_KIND_DRAM"] and buf["bank_mode"] == c["MEMD_BANKS_ALL"]
    assert buf["refcount"] == 1

    info = conn.call("QUERY", buf["handle"])
    assert info["buf"] == buf
    assert info["name"] == "pydoc-weights"
    assert (info["device"], info["cls"], info["scope"]) == (
        0, c["MEMD_CLASS_CONSTANT"], c["MEMD_SCOPE_DRAM"])
    assert info["session_id"] == conn.welcome["session_id"]
    assert (info["pid"], info["uid"]) == (os.getpid(), os.getuid())
    assert info["flags"] == 0 and info["created_ns"] > 0
    conn.call("FREE", buf["handle"])


def test_alloc_batch_and_free_batch(doc, conn):
    c = doc.consts
    sizes = [4096, 8192, 3 * 4096]
    bufs = conn.call("ALLOC_BATCH", [alloc_req(doc, cls=c["MEMD_CLASS_PLACEHOLDER"], bytes=n)
                                     for n in sizes])
    assert len(bufs) == 3
    assert [b["size_per_bank"] >= n for b, n in zip(bufs, sizes)] == [True] * 3
    spans = sorted((b["address"], b["address"] + b["size_per_bank"]) for b in bufs)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), "buffers overlap"
    handles = [b["handle"] for b in bufs]
    assert len(set(handles)) == 3

    assert conn.call("FREE_BATCH", handles) is None
    conn.call("QUERY", handles[0], status=doc.errno["ENOENT"])


def test_paged_dump(doc, conn):
    c = doc.consts
    # As many allocations as one request may carry: more than memd puts in one page
    # (daemon/handlers/dump.c), so the cursor loop below really turns.
    n = (conn.welcome["max_frame"] - doc.count.size) // doc.record("alloc_req").size
    filler = conn.call("ALLOC_BATCH", [alloc_req(doc, cls=c["MEMD_CLASS_PLACEHOLDER"], bytes=1)
                                       for _ in range(n)])
    # Made last, it has the highest handle: it is on the last page.
    buf = conn.call("ALLOC", alloc_req(doc, bytes=MiB, name="pydoc-dumped"))
    pages, cursor = [], 0
    while True:
        page = conn.call("DUMP", dict(device=0xFFFFFFFF, flags=c["MEMD_DUMP_F_PAGED"],
                                      cursor=cursor))
        pages.append(page)
        names = [name for name, _ in page]
        assert names[-1] == "PAGE" and names.count("PAGE") == 1, "a page ends with its PAGE"
        cursor = page[-1][1]["next"]
        if cursor == 0:
            break
        assert len(pages) <= n, "the cursors go round"
    assert len(pages) > 1
    records = [r for page in pages for r in page]
    names = [name for name, _ in records]
    assert names[0] == "SERVER" and names.count("SERVER") == 1
    server = records[0][1]
    assert server["pid"] > 0 and server["allocs"] >= n + 1
    assert names.count("DEVICE") == conn.welcome["ndevices"]
    dumped = {r["buf"]["handle"]: r for name, r in records if name == "ALLOC"}
    assert names.count("ALLOC") == len(dumped), "an allocation appears once"
    assert {b["handle"] for b in filler} <= set(dumped)
    mine = dumped[buf["handle"]]
    assert mine["name"] == "pydoc-dumped" and mine["buf"] == buf
    # buffer.region indexes the REGION records of its device and kind: the one it lies in.
    region, = [r for name, r in records if name == "REGION" and r["device"] == 0
               and (r["kind"], r["region"]) == (buf["kind"], buf["region"])]
    assert region["allocatable"]
    assert region["base"] <= buf["address"] < region["base"] + region["size"]
    sessions = [r for name, r in records if name == "SESSION"
                and r["id"] == conn.welcome["session_id"]]
    assert len(sessions) == 1 and sessions[0]["client_name"] == "protocol-doc"
    conn.call("FREE_BATCH", [b["handle"] for b in filler] + [buf["handle"]])


def test_error_record(doc, conn):
    enoent = doc.errno["ENOENT"]
    e = conn.call("FREE", 0xFFFF_FFFF_0000_0001, status=enoent)
    assert e["status"] == enoent and e["detail"] == doc.consts["MEMD_ERR_DETAIL_NONE"]
    assert e["message"]
    # An error reply is not a malformed frame: the session carries on.
    assert conn.call("DUMP", dict(device=0, flags=doc.consts["MEMD_DUMP_F_PAGED"]))


def test_bad_magic_gets_an_error_and_the_connection_closes(doc, conn):
    conn.send("FREE", doc.op("FREE").request.encode(1), magic=0x58585858)
    h, body = conn.recv()
    assert (h["opcode"], h["id"], h["status"]) == (0, 0, doc.errno["EPROTO"])
    e = doc.record("error").unpack(body)
    assert e["status"] == doc.errno["EPROTO"] and e["message"]
    with pytest.raises(EOFError):
        conn.recv()
