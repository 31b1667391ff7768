#!/usr/bin/env python3
"""memd protocol generator: proto/memd.toml -> header, codec, dispatch table, docs.

    gen.py SCHEMA LOCK header OUT        <memd/protocol.h>
    gen.py SCHEMA LOCK codec-h OUT       proto's wire_gen.h (sizes, put/get prototypes)
    gen.py SCHEMA LOCK codec-c OUT       proto's wire_gen.c (put/get, opcode and tag tables)
    gen.py SCHEMA LOCK dispatch OUT      the daemon's handler table
    gen.py SCHEMA LOCK handlers-h OUT    the handlers' prototypes
    gen.py SCHEMA LOCK doc OUT           doc/protocol.md
    gen.py SCHEMA LOCK client-h OUT      libmemclient's memclient_wire_gen.h (wire -> memclient_*)
    gen.py SCHEMA LOCK client-c OUT      libmemclient's memclient_wire_gen.c
    gen.py SCHEMA LOCK py-h OUT          the Python extension's field tables: declarations
    gen.py SCHEMA LOCK py-c OUT          the tables (memdpy_fields_gen.c)
    gen.py SCHEMA LOCK value NAME        a constant's value
    gen.py --lock SCHEMA LOCK            record appended items in LOCK (never rewrites one)

Every mode first checks the schema (sizes, names, references) and the versioning rule
against LOCK: what LOCK records never changes, new items must be recorded with --lock.
Uses only Python's standard library (Debian's python3 >= 3.11 for tomllib).
"""
import json
import re
import sys
import tomllib

SCALARS = {"u8": 1, "u16": 2, "u32": 4, "u64": 8, "i32": 4}
CTYPE = {"u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t",
         "i32": "int32_t", "char": "char"}


class SchemaError(Exception):
    pass


def c_int(expr, consts):
    """Evaluates a C integer constant expression over known constants."""
    e = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)[uU]?\b", r"\1", expr)
    e = e.replace("UINT32_MAX", str(2**32 - 1))
    for name in sorted(consts, key=len, reverse=True):
        e = re.sub(r"\b%s\b" % name, "(%d)" % consts[name], e)
    if not re.fullmatch(r"[0-9xa-fA-F()<>|&+*\- ]*", e):
        raise SchemaError("cannot evaluate %r" % expr)
    return int(eval(e))  # digits and operators only, checked above


class Field:
    def __init__(self, st, spec, consts, structs):
        if len(spec) != 3:
            raise SchemaError("%s: a field is [name, type, doc]: %r" % (st, spec))
        self.name, typ, self.doc = spec
        parts = typ.split(None, 1)
        self.check = parts[1] if len(parts) > 1 else ""
        t = parts[0]
        self.pad = t.startswith("pad:")
        if self.pad:
            t = t[4:]
        m = re.fullmatch(r"(\w+)((?:\[\w+\])*)", t)
        if not m:
            raise SchemaError("%s.%s: bad type %r" % (st, self.name, typ))
        self.base = m.group(1)
        self.dims = re.findall(r"\[(\w+)\]", m.group(2))
        self.type = t
        dimv = [c_int(d, consts) for d in self.dims]
        if self.base in SCALARS:
            unit = SCALARS[self.base]
        elif self.base == "char":
            if not self.dims:
                raise SchemaError("%s.%s: char needs a size" % (st, self.name))
            unit = 1
        elif self.base in structs:
            unit = structs[self.base].size
            self.check = self.check or ""
        else:
            raise SchemaError("%s.%s: unknown type %r" % (st, self.name, self.base))
        self.size = unit
        for d in dimv:
            self.size *= d
        self.dimv = dimv
        self.nested = self.base in structs
        if self.check and not re.fullmatch(r"(<|<=|>=|!=|==) \w+|flags [\w|]+", self.check):
            raise SchemaError("%s.%s: bad check %r" % (st, self.name, self.check))


class Struct:
    def __init__(self, spec, section, consts, structs):
        self.name = spec["name"]
        self.section = section
        self.doc = spec.get("doc", "").strip()
        self.codec = spec.get("codec", "gen")
        self.checks = spec.get("checks", [])
        self.fields = []
        off = 0
        self.size = 0
        for f in spec["fields"]:
            fld = Field(self.name, f, consts, structs)
            fld.offset = off
            off += fld.size
            self.fields.append(fld)
        self.size = off
        self.mirror = Mirror(self, spec)
        self.v1_size = spec.get("v1_size", 0)
        self.min_size = spec.get("min_size", self.size)
        for what, v in (("v1_size", self.v1_size), ("min_size", self.min_size)):
            if v and v not in [f.offset for f in self.fields] + [self.size]:
                raise SchemaError("%s: %s %d is not a field boundary" % (self.name, what, v))

    @property
    def upper(self):
        return self.name.upper()


class Mirror:
    """The memclient_* struct a record decodes into (the mirror_* keys). Not layout: the
    lock never sees it."""
    KEYS = ("mirror", "mirror_skip", "mirror_rename", "mirror_flags", "mirror_bool", "py",
            "py_skip", "py_rename", "py_enum")
    PY_ENUMS = ("kind", "class", "scope")  # memdpy.h's MEMDPY_F_<name>

    def __init__(self, st, spec):
        self.name = spec.get("mirror", "")
        for k in spec:
            if k.startswith(("mirror", "py")) and k not in self.KEYS:
                raise SchemaError("%s: unknown key %s" % (st.name, k))
        for k in self.KEYS:
            if k in spec and k != "mirror" and not self.name:
                raise SchemaError("%s: %s without mirror" % (st.name, k))
        self.skip = set(spec.get("mirror_skip", []))
        self.rename = dict(spec.get("mirror_rename", {}))
        self.flags = dict(spec.get("mirror_flags", {}))  # client bool -> flag in `flags`
        self.bool = set(spec.get("mirror_bool", []))
        self.py = spec.get("py", False)
        self.py_skip = set(spec.get("py_skip", []))
        self.py_rename = dict(spec.get("py_rename", {}))
        self.py_enum = dict(spec.get("py_enum", {}))
        names = {f.name for f in st.fields}
        for what in (self.skip, self.rename, self.bool):
            for n in what:
                if n not in names:
                    raise SchemaError("%s: mirror names no field %s" % (st.name, n))
        if self.flags and "flags" not in names:
            raise SchemaError("%s: mirror_flags without a flags field" % st.name)
        for k in ("py_skip", "py_rename", "py_enum"):
            if k in spec and not self.py:
                raise SchemaError("%s: %s without py" % (st.name, k))
        for e in self.py_enum.values():
            if e not in self.PY_ENUMS:
                raise SchemaError("%s: py_enum: no enum %s" % (st.name, e))

    @property
    def fn(self):
        return "memclient_%s_from_wire" % self.name[len("memclient_"):]

    def copies(self, st):
        """(wire field, client field) for every copied field, in wire order; the flags
        field stands for its mirror_flags bools."""
        for f in st.fields:
            if f.pad or f.name in self.skip:
                continue
            if f.name == "flags" and self.flags:
                for client in self.flags:
                    yield f, client
                continue
            yield f, self.rename.get(f.name, f.name)


class Schema:
    def __init__(self, path):
        with open(path, "rb") as f:
            d = tomllib.load(f)
        self.proto = d["protocol"]
        self.consts = {}
        self.vocab = d.get("vocab", [])
        for v in self.vocab:
            for name, value in v["members"]:
                self.consts[name] = value
        self.sections = []
        self.structs = {}
        self.enums = []
        for sec in d["section"]:
            s = {"title": sec["title"], "doc": sec.get("doc", "").strip(), "const": [],
                 "enum": [], "struct": []}
            for name, value, doc in sec.get("const", []):
                self.consts[name] = c_int(value, self.consts)
                s["const"].append((name, value, doc))
            for e in sec.get("enum", []):
                nxt = 0
                members = []
                for name, value, doc in e["members"]:
                    v = c_int(value, self.consts) if value else nxt
                    nxt = v + 1
                    self.consts[name] = v
                    members.append((name, value, doc, v))
                en = {"name": e.get("name", ""), "doc": e.get("doc", "").strip(),
                      "members": members, "section": s["title"]}
                s["enum"].append(en)
                self.enums.append(en)
            for st in sec.get("struct", []):
                obj = Struct(st, s["title"], self.consts, self.structs)
                if obj.name in self.structs:
                    raise SchemaError("struct %s twice" % obj.name)
                self.structs[obj.name] = obj
                self.consts["MEMD_WIRE_%s_SIZE" % obj.upper] = obj.size
                if obj.v1_size:
                    self.consts["MEMD_WIRE_%s_V1_SIZE" % obj.upper] = obj.v1_size
                s["struct"].append(obj)
            self.sections.append(s)
        self.opcodes = d["opcode"]
        self.tags = d["tag"]
        self.errnos = d["errno"]["list"]
        self.validate()

    def validate(self):
        seen = set()
        for o in self.opcodes:
            if o["value"] in seen:
                raise SchemaError("opcode %d twice" % o["value"])
            seen.add(o["value"])
            if o["shape"] not in ("fixed", "min", "count", "doc"):
                raise SchemaError("opcode %s: bad shape" % o["name"])
            if ("record" in o) == ("len" in o):
                raise SchemaError("opcode %s: give record or len" % o["name"])
            if "record" in o and o["record"] not in self.structs:
                raise SchemaError("opcode %s: no struct %s" % (o["name"], o["record"]))
        if sorted(seen) != list(range(1, len(seen) + 1)):
            raise SchemaError("opcodes must be numbered 1..n without gaps")
        tags = [t["value"] for t in self.tags]
        if sorted(tags) != list(range(1, len(tags) + 1)):
            raise SchemaError("record tags must be numbered 1..n without gaps")
        for t in self.tags:
            if t["record"] not in self.structs:
                raise SchemaError("tag %s: no struct %s" % (t["name"], t["record"]))
        mirrors = set()
        for st in self.structs.values():
            m = st.mirror
            if not m.name:
                continue
            if not m.name.startswith("memclient_"):
                raise SchemaError("%s: mirror %s is not a memclient_ struct" % (st.name, m.name))
            if m.name in mirrors:  # its memclient_<x>_from_wire would be defined twice
                raise SchemaError("%s: another record mirrors %s" % (st.name, m.name))
            mirrors.add(m.name)
            for flag in m.flags.values():
                if flag not in self.consts:
                    raise SchemaError("%s: mirror_flags: no constant %s" % (st.name, flag))
            for f, _ in m.copies(st):
                if f.nested and not self.structs[f.base].mirror.name:
                    raise SchemaError("%s.%s: %s has no mirror" % (st.name, f.name, f.base))

    def op_len(self, o):
        if "record" in o:
            return "MEMD_WIRE_%s_SIZE" % o["record"].upper()
        return o["len"]

    def op_len_value(self, o):
        return c_int(self.op_len(o), self.consts)


# ---- versioning --------------------------------------------------------------------------

def layout(schema):
    # An opcode's rules are part of its contract: a request turning admin-only, or one
    # the store must now hear of, breaks clients and journals as a renumbering would.
    out = {"opcodes": {o["name"]: o["value"] for o in schema.opcodes},
           "rules": {o["name"]: [o["shape"], bool(o.get("mutating")), bool(o.get("admin"))]
                     for o in schema.opcodes},
           "tags": {t["name"]: t["value"] for t in schema.tags},
           "values": {}, "structs": {}}
    for en in schema.enums:
        for name, _, _, v in en["members"]:
            out["values"][name] = v
    for sec in schema.sections:
        for name, _, _ in sec["const"]:
            out["values"][name] = schema.consts[name]
    for v in schema.vocab:
        for name, value in v["members"]:
            out["values"][name] = value
    for st in schema.structs.values():
        out["structs"][st.name] = [[f.name, f.type, f.offset, f.size] for f in st.fields]
    return out


def check_lock(schema, lock_path, update=False):
    try:
        with open(lock_path) as f:
            lock = json.load(f)
    except FileNotFoundError:
        lock = {}
    for kind in ("opcodes", "rules", "tags", "values", "structs"):
        lock.setdefault(kind, {})
    cur = layout(schema)
    errors, new = [], []
    for kind in ("opcodes", "tags", "values", "rules"):
        for name, v in lock[kind].items():
            if name not in cur[kind]:
                errors.append("%s %s was removed" % (kind, name))
            elif cur[kind][name] != v and not name.endswith("_COUNT") and kind == "values":
                errors.append("%s changed from %s to %s" % (name, v, cur[kind][name]))
            elif cur[kind][name] != v and kind == "rules":
                errors.append("opcode %s: its shape/mutating/admin rules changed from %s to %s"
                              % (name, v, cur[kind][name]))
            elif cur[kind][name] != v and kind != "values":
                errors.append("%s %s renumbered" % (kind, name))
        for name in cur[kind]:
            if name not in lock[kind]:
                new.append("%s %s" % (kind, name))
    for name, fields in lock["structs"].items():
        if name not in cur["structs"]:
            errors.append("struct %s was removed" % name)
            continue
        now = cur["structs"][name]
        if now[:len(fields)] != fields:
            errors.append("struct %s: a recorded field changed (only appends are allowed)" % name)
        elif len(now) > len(fields):
            new.append("struct %s: appended fields" % name)
    for name in cur["structs"]:
        if name not in lock["structs"]:
            new.append("struct %s" % name)
    if errors:
        raise SchemaError("breaks %s:\n  " % lock_path + "\n  ".join(errors))
    if update:
        for kind in ("opcodes", "rules", "tags", "values", "structs"):
            lock[kind].update({k: v for k, v in cur[kind].items()})
        with open(lock_path, "w") as f:
            json.dump(lock, f, indent=1, sort_keys=True)
            f.write("\n")
    elif new:
        raise SchemaError("not yet in %s (check they are appends, then run gen.py --lock):\n  "
                          % lock_path + "\n  ".join(new))


# ---- C header ----------------------------------------------------------------------------

def c_comment(text, indent="", first="/* "):
    lines = text.strip().split("\n")
    if len(lines) == 1 and len(indent + first + lines[0]) < 88:
        return indent + first + lines[0] + " */\n"
    out = indent + "/*\n"
    for l in lines:
        out += (indent + " * " + l).rstrip() + "\n"
    return out + indent + " */\n"


def field_decl(f):
    base = CTYPE.get(f.base, "memd_wire_" + f.base)
    dims = "".join("[%s]" % d for d in f.dims)
    return "%s %s%s;" % (base, f.name, dims)


def gen_header(s):
    o = ["/* memd wire protocol, version %d. Generated by proto/gen.py from proto/memd.toml:\n"
         " * do not edit; doc/protocol.md is the reference.\n *\n" % s.proto["version"]]
    for l in s.proto["doc"].strip().split("\n"):
        o.append((" * " + l).rstrip() + "\n")
    o.append(" */\n#ifndef MEMD_PROTOCOL_H\n#define MEMD_PROTOCOL_H\n\n#include <stdint.h>\n\n"
             "#include \"memd/types.h\"\n")
    for sec in s.sections:
        o.append("\n/* ---- %s %s */\n" % (sec["title"], "-" * (80 - len(sec["title"]))))
        if sec["doc"]:
            o.append(c_comment(sec["doc"]))
        for name, value, doc in sec["const"]:
            o.append("#define %s %s%s\n" % (name, value, " /* %s */" % doc if doc else ""))
        if sec["title"] == "Frames":
            o.append(gen_opcode_enum(s))
        for en in sec["enum"]:
            o.append("\n")
            if en["doc"]:
                o.append(c_comment(en["doc"]))
            o.append("typedef enum %s {\n" % en["name"] if en["name"] else "enum {\n")
            for name, value, doc, _ in en["members"]:
                if doc:
                    o.append(c_comment(doc, "    "))
                o.append("    %s%s,\n" % (name, " = " + value if value else ""))
            o.append("} %s;\n" % en["name"] if en["name"] else "};\n")
            o.append(gen_flags_all(en["members"]))
        for st in sec["struct"]:
            o.append("\n")
            if st.doc:
                o.append(c_comment(st.doc))
            o.append("typedef struct memd_wire_%s {\n" % st.name)
            for f in st.fields:
                if f.doc:
                    o.append(c_comment(f.doc, "    "))
                o.append("    %s\n" % field_decl(f))
            o.append("} memd_wire_%s;\n" % st.name)
        if sec["title"] == "The state dump":
            o.append(gen_tag_enum(s))
    o.append("\n#endif\n")
    return "".join(o)


def gen_opcode_enum(s):
    o = ["\ntypedef enum memd_opcode {\n"]
    for op in s.opcodes:
        o.append("    MEMD_OP_%s = %d, /* %s -> %s */\n" % (
            op["name"], op["value"], ", ".join(op["request"]) or "empty",
            ", ".join(op["reply"]) or "empty"))
    o.append("    MEMD_OP_OPCODE_COUNT\n} memd_opcode;\n")
    return "".join(o)


def gen_flags_all(members):
    """PREFIX_F_ALL for an enum of single-bit flags sharing a PREFIX_F_: the mask that
    tests and checks use, so a new flag changes none of them."""
    names = [m[0] for m in members]
    prefixes = {n[:n.index("_F_") + 3] for n in names if "_F_" in n}
    if len(prefixes) != 1 or not all(re.fullmatch(r"1u << \d+", m[1] or "") for m in members):
        return ""
    return "#define %sALL (%s)\n" % (prefixes.pop(), " | ".join(names))


def gen_tag_enum(s):
    o = ["\n/* A DUMP reply is a sequence of records, each: u32 tag, then the record for that tag. */\n"
         "typedef enum memd_rec_tag {\n"]
    for t in s.tags:
        doc = "memd_wire_%s%s" % (t["record"], ", " + t["doc"] if t.get("doc") else "")
        o.append(c_comment(doc, "    "))
        o.append("    MEMD_REC_%s = %d,\n" % (t["name"], t["value"]))
    o.append("    MEMD_REC_TAG_END /* one past the last tag: the first one not given yet */\n"
             "} memd_rec_tag;\n")
    return "".join(o)


# ---- codec -------------------------------------------------------------------------------

def gen_codec_h(s):
    o = ["/* memd wire codec: generated by proto/gen.py from proto/memd.toml; do not edit.\n"
         " * Included by proto/wire.h, which says what put and get promise. */\n"
         "#ifndef MEMD_PROTO_WIRE_GEN_H\n#define MEMD_PROTO_WIRE_GEN_H\n\n"
         "#include <stddef.h>\n#include <stdint.h>\n\n#include \"memd/protocol.h\"\n\n"]
    for st in s.structs.values():
        o.append("#define MEMD_WIRE_%s_SIZE %du\n" % (st.upper, st.size))
        if st.v1_size:
            o.append("#define MEMD_WIRE_%s_V1_SIZE %du\n" % (st.upper, st.v1_size))
    o.append("#define MEMD_WIRE_TAG_SIZE 4u /* u32 tag before each DUMP record */\n\n")
    for st in s.structs.values():
        if st.codec == "hand":
            continue
        n = st.name if st.codec == "gen" else st.name + "_fixed"
        o.append("uint8_t *memd_wire_%s_put(uint8_t *out, const memd_wire_%s *r);\n" % (n, st.name))
        o.append("int memd_wire_%s_get(const uint8_t *in, size_t len, memd_wire_%s *r);\n" % (n, st.name))
        if st.v1_size:
            o.append("/* exactly the V1 size (the appended fields read as 0) or the current size */\n")
            o.append("int memd_wire_%s_get_any(const uint8_t *in, size_t len, memd_wire_%s *r);\n"
                     % (n, st.name))
    o.append("\n/* The size of the record after a DUMP tag; 0 for an unknown tag (for SUBDEV_BANKS,\n"
             " * the size of its fixed part). */\nsize_t memd_wire_rec_size(uint32_t tag);\n")
    o.append("\n#endif\n")
    return "".join(o)


def check_expr(f, var):
    c = f.check
    if c.startswith("flags "):
        return "!(%s & ~(uint32_t)(%s))" % (var, c[6:].replace("|", " | "))
    op, val = c.split()
    return "%s %s %s" % (var, op, val)


def codec_name(st):
    """Its put/get functions' stem: a record followed by ids has its fixed part's here."""
    return st.name if st.codec == "gen" else st.name + "_fixed"


def gen_put(st):
    o = ["uint8_t *memd_wire_%s_put(uint8_t *p, const memd_wire_%s *r)\n{\n" % (codec_name(st), st.name)]
    for f in st.fields:
        at = "p + %d" % f.offset if f.offset else "p"
        v = "r->" + f.name
        if f.pad:
            o.append("    memset(%s, 0, %d);\n" % (at, f.size))
        elif f.nested:
            o.append("    memd_wire_%s_put(%s, &%s);\n" % (f.base, at, v))
        elif f.base == "char" and len(f.dims) == 1:
            o.append("    memd_wire_put_str(%s, %s, %d);\n" % (at, v, f.size))
        elif f.base == "char":
            o.append("    for (size_t i = 0; i < %d; i++)\n        memd_wire_put_str(%s + %d * i, %s[i], %d);\n"
                     % (f.dimv[0], at, f.dimv[1], v, f.dimv[1]))
        elif f.base == "u8" and f.dims:
            o.append("    memcpy(%s, %s, %d);\n" % (at, v, f.size))
        elif f.base == "u8":
            o.append("    p[%d] = %s;\n" % (f.offset, v))
        elif f.dims:
            w = SCALARS[f.base]
            o.append("    for (size_t i = 0; i < %d; i++)\n        memd_wire_put_%s(%s + %d * i, %s[i]);\n"
                     % (f.dimv[0], f.base, at, w, v))
        elif f.base == "i32":
            o.append("    memd_wire_put_u32(%s, (uint32_t)%s);\n" % (at, v))
        else:
            o.append("    memd_wire_put_%s(%s, %s);\n" % (f.base, at, v))
    o.append("    return p + %d;\n}\n" % st.size)
    return "".join(o)


def gen_get(st):
    n = codec_name(st)
    o = ["int memd_wire_%s_get(const uint8_t *p, size_t len, memd_wire_%s *r)\n{\n" % (n, st.name)]
    o.append("    if (len < %d)\n        return -EBADMSG;\n" % st.min_size)
    if st.min_size < st.size:
        o.append("    uint8_t whole[%d] = {0}; /* fields past a shorter record read as 0 */\n"
                 "    if (len < %d) {\n        memcpy(whole, p, len);\n        p = whole;\n    }\n"
                 % (st.size, st.size))
    needs_rc = any(f.nested or (f.base == "char" and not f.pad) for f in st.fields)
    if needs_rc:
        o.append("    int rc;\n")
    for f in st.fields:
        at = "p + %d" % f.offset if f.offset else "p"
        v = "r->" + f.name
        if f.pad:
            if f.dims:
                o.append("    memset(%s, 0, sizeof %s);\n" % (v, v))
            else:
                o.append("    %s = 0;\n" % v)
        elif f.nested:
            o.append("    if ((rc = memd_wire_%s_get(%s, %d, &%s)) < 0)\n        return rc;\n"
                     % (f.base, at, f.size, v))
        elif f.base == "char" and len(f.dims) == 1:
            o.append("    if ((rc = memd_wire_get_str(%s, %s, %d)) < 0)\n        return rc;\n"
                     % (at, v, f.size))
        elif f.base == "char":
            o.append("    for (size_t i = 0; i < %d; i++)\n"
                     "        if ((rc = memd_wire_get_str(%s + %d * i, %s[i], %d)) < 0)\n"
                     "            return rc;\n" % (f.dimv[0], at, f.dimv[1], v, f.dimv[1]))
        elif f.base == "u8" and f.dims:
            o.append("    memcpy(%s, %s, %d);\n" % (v, at, f.size))
        elif f.base == "u8":
            o.append("    %s = p[%d];\n" % (v, f.offset))
        elif f.dims:
            w = SCALARS[f.base]
            o.append("    for (size_t i = 0; i < %d; i++)\n        %s[i] = memd_wire_%s(%s + %d * i);\n"
                     % (f.dimv[0], v, f.base, at, w))
        elif f.base == "i32":
            o.append("    %s = (int32_t)memd_wire_u32(%s);\n" % (v, at))
        else:
            o.append("    %s = memd_wire_%s(%s);\n" % (v, f.base, at))
    conds = [check_expr(f, "r->" + f.name) for f in st.fields if f.check and not f.pad]
    conds += ["(%s)" % c for c in st.checks]
    if conds:
        o.append("    if (!(%s))\n        return -EINVAL;\n" % (" &&\n          ".join(conds)))
    o.append("    return 0;\n}\n")
    if st.v1_size:
        o.append("\nint memd_wire_%s_get_any(const uint8_t *p, size_t len, memd_wire_%s *r)\n{\n"
                 "    uint8_t whole[%d] = {0}; /* the appended fields read as 0 */\n"
                 "    if (len != %d && len != %d)\n        return -EBADMSG;\n"
                 "    memcpy(whole, p, len);\n    return memd_wire_%s_get(whole, sizeof whole, r);\n}\n"
                 % (n, st.name, st.size, st.size, st.v1_size, n))
    return "".join(o)


def gen_codec_c(s):
    o = ["/* memd wire codec: generated by proto/gen.py from proto/memd.toml; do not edit. */\n"
         "#include \"wire.h\"\n\n#include <errno.h>\n#include <string.h>\n\n"]
    # types.h is the engine's vocabulary too: it must say what the wire says.
    for v in s.vocab:
        for name, value in v["members"]:
            o.append("_Static_assert(%s == %d, \"types.h disagrees with proto/memd.toml\");\n"
                     % (name, value))
    for st in s.structs.values():
        if st.codec != "hand":
            o.append("\n" + gen_put(st) + "\n" + gen_get(st))
    o.append("\nconst memd_wire_op memd_wire_ops[MEMD_OP_OPCODE_COUNT] = {\n")
    for op in s.opcodes:
        rec = s.structs.get(op.get("record", ""))
        v1 = "MEMD_WIRE_%s_V1_SIZE" % rec.upper if rec is not None and rec.v1_size else "0"
        if op.get("why"):
            o.append(c_comment(op["why"], "    "))
        o.append("    [MEMD_OP_%s] = {\"%s\", MEMD_WIRE_SHAPE_%s, %s, %s, %s, %s, %s},\n" % (
            op["name"], op["name"], op["shape"].upper(), s.op_len(op), v1,
            "true" if op.get("mutating") else "false", "true" if op.get("admin") else "false",
            "true" if op.get("batch") else "false"))
    o.append("};\n\nsize_t memd_wire_rec_size(uint32_t tag)\n{\n    switch (tag) {\n")
    for t in s.tags:
        o.append("    case MEMD_REC_%s: return MEMD_WIRE_%s_SIZE;\n" % (t["name"], t["record"].upper()))
    o.append("    default: return 0;\n    }\n}\n")
    return "".join(o)


def handler_name(op):
    return "memd_op_" + op["name"].lower()


def gen_handlers_h(s):
    o = ["/* memd daemon — every opcode's handler: generated by proto/gen.py from\n"
         " * proto/memd.toml; do not edit. Included by dispatch.h. */\n"
         "#ifndef MEMD_DAEMON_HANDLERS_GEN_H\n#define MEMD_DAEMON_HANDLERS_GEN_H\n\n"]
    for op in s.opcodes:
        o.append("int %s(memd_state *st, memd_session *s, const memd_wire_hdr *h,\n"
                 "    const uint8_t *p, memd_buf *out);\n" % handler_name(op))
    return "".join(o) + "\n#endif\n"


def gen_dispatch(s):
    o = ["/* memd daemon — the handler table: generated by proto/gen.py from proto/memd.toml;\n"
         " * do not edit. */\n#include \"dispatch.h\"\n\n"
         "const memd_handler memd_handlers[MEMD_OP_OPCODE_COUNT] = {\n"]
    for op in s.opcodes:
        o.append("    [MEMD_OP_%s] = %s,\n" % (op["name"], handler_name(op)))
    return "".join(o) + "};\n"


# ---- libmemclient: wire records -> memclient_* ---------------------------------------------

def mirrored(s):
    return [st for st in s.structs.values() if st.mirror.name]


def gen_client_h(s):
    protos = "".join("void %s(%s *o, const memd_wire_%s *w);\n" % (st.mirror.fn, st.mirror.name,
                                                                    st.name)
                     for st in mirrored(s))
    return ("/* libmemclient: wire records -> its public memclient_* structs. Generated by\n"
            " * proto/gen.py from proto/memd.toml (the mirror keys); do not edit. Each function\n"
            " * sets the fields its record carries and leaves the others as they are. */\n"
            "#ifndef MEMD_CLIENT_MEMCLIENT_WIRE_GEN_H\n#define MEMD_CLIENT_MEMCLIENT_WIRE_GEN_H\n\n"
            "#include \"memd/client.h\"\n#include \"memd/protocol.h\"\n\n%s\n#endif\n" % protos)


def gen_client_c(s):
    o = ["/* libmemclient: wire records -> memclient_*. Generated by proto/gen.py from\n"
         " * proto/memd.toml; do not edit. */\n"
         "#include \"memclient_wire_gen.h\"\n\n#include <string.h>\n"]
    for st in mirrored(s):
        m = st.mirror
        body, asserts = [], []
        for f, client in m.copies(st):
            v, c = "w->" + f.name, "o->" + client
            if f.name == "flags" and m.flags:
                body.append("    %s = (%s & %s) != 0;\n" % (c, v, m.flags[client]))
            elif f.nested:
                body.append("    %s(&%s, &%s);\n" % (s.structs[f.base].mirror.fn, c, v))
            elif f.dims:
                # Strings and arrays are copied whole: the public struct must hold them.
                asserts.append("_Static_assert(sizeof ((%s *)0)->%s == sizeof ((memd_wire_%s *)0)->%s,\n"
                               "               \"%s.%s is not the wire's size\");\n"
                               % (m.name, client, st.name, f.name, m.name, client))
                body.append("    memcpy(%s, %s, sizeof %s);\n" % (c, v, c))
            elif f.name in m.bool:
                body.append("    %s = %s != 0;\n" % (c, v))
            else:
                body.append("    %s = %s;\n" % (c, v))
        o.append("\n" + "".join(asserts))
        o.append("void %s(%s *o, const memd_wire_%s *w)\n{\n%s}\n"
                 % (m.fn, m.name, st.name, "".join(body)))
    return "".join(o)


# ---- the Python extension: memclient_* -> dict / attributes -------------------------------

def py_entries(s, st, prefix=""):
    """(client path, Python key, kind) of every mirrored client field, nested records
    flattened (their fields named "outer.inner" in the py_* keys)."""
    m = s.structs[st].mirror if isinstance(st, str) else st.mirror
    st = s.structs[st] if isinstance(st, str) else st
    for f, client in m.copies(st):
        path = prefix + client
        if f.nested:
            yield from py_entries(s, f.base, path + ".")
            continue
        if f.name == "flags" and m.flags or f.name in m.bool:
            kind = "BOOL"
        elif f.base == "char" and len(f.dims) == 1:
            kind = "STR"
        elif f.dims:
            raise SchemaError("%s.%s: no Python conversion for arrays" % (st.name, f.name))
        else:
            kind = "INT" if f.base.startswith("i") else "UINT"
        yield path, client, kind


def py_fields(s, st):
    m = st.mirror
    known = {path for path, _, _ in py_entries(s, st)}
    for n in list(m.py_skip) + list(m.py_rename) + list(m.py_enum):
        if n not in known:
            raise SchemaError("%s: py keys name no mirrored field %s" % (st.name, n))
    for path, client, kind in py_entries(s, st):
        if path in m.py_skip:
            continue
        if path in m.py_enum:
            kind = m.py_enum[path].upper()
        yield path, m.py_rename.get(path, client), kind


def gen_py_h(s):
    o = ["/* memd._memd: the field tables of the memclient_* structs Python sees as dicts or\n"
         " * attributes. Generated by proto/gen.py from proto/memd.toml (the py keys); do not\n"
         " * edit. Included by memdpy.h, which defines memdpy_cfield. */\n"]
    for st in mirrored(s):
        if st.mirror.py:
            o.append("extern const memdpy_cfield memdpy_fields_%s[];\n" % st.mirror.name[10:])
    return "".join(o)


def gen_py_c(s):
    o = ["/* memd._memd: field tables, generated by proto/gen.py from proto/memd.toml; do not\n"
         " * edit. */\n#include <stddef.h>\n\n#include \"memdpy.h\"\n"]
    for st in mirrored(s):
        m = st.mirror
        if not m.py:
            continue
        o.append("\nconst memdpy_cfield memdpy_fields_%s[] = {\n" % m.name[10:])
        for path, key, kind in py_fields(s, st):
            o.append("    {\"%s\", offsetof(%s, %s), sizeof ((%s *)0)->%s, MEMDPY_F_%s},\n"
                     % (key, m.name, path, m.name, path, kind))
        o.append("    {NULL, 0, 0, MEMDPY_F_UINT},\n};\n")
    return "".join(o)


# ---- doc/protocol.md -----------------------------------------------------------------------

def md_text(t):
    return " ".join(t.split())


def md_cell(t):
    """Text for a table cell: a bare | would split the row."""
    return md_text(t).replace("|", "\\|")


def md_value(expr, value):
    """A constant as a number any language reads, not a C expression (hex if it was)."""
    return "0x%x" % value if expr.lstrip("(").startswith("0x") else "%d" % value


def md_struct(s, st):
    o = ["#### memd_wire_%s (%d bytes)\n\n" % (st.name, st.size)]
    if st.doc:
        o.append(md_text(st.doc) + "\n\n")
    if st.v1_size:
        o.append("An older peer's record of %d bytes (the fields before offset %d) is still "
                 "accepted; the appended fields then read as 0.\n\n" % (st.v1_size, st.v1_size))
    if st.min_size < st.size and st.min_size != st.v1_size:
        o.append("A record of %d bytes or more is accepted; missing fields read as 0.\n\n"
                 % st.min_size)
    o.append("| offset | size | type | field | checked on receipt | meaning |\n"
             "|---:|---:|---|---|---|---|\n")
    for f in st.fields:
        t = f.type if not f.nested else "[memd_wire_%s](#memd_wire_%s-%d-bytes)" % (
            f.base, f.base, s.structs[f.base].size)
        check = ("reserved: 0" if f.pad else f.check.replace("|", " \\| "))
        if f.base == "char" and not f.pad:
            check = (check + ", " if check else "") + "NUL-terminated"
        o.append("| %d | %d | %s | %s | %s | %s |\n" % (
            f.offset, f.size, t, f.name, check, md_cell(f.doc)))
    for c in st.checks:
        o.append("\nAlso checked: `%s`.\n" % c.replace("r->", ""))
    return "".join(o) + "\n"


def example_alloc(s):
    """The bytes of an ALLOC request: 1 MiB constant in DRAM of device 0, named "weights"."""
    st = s.structs["alloc_req"]
    payload = bytearray(st.size)
    vals = {"device": 0, "cls": 1, "scope": 0, "dtype": 0, "ndim": 0, "bytes": 1 << 20,
            "page_size": 0, "alignment": 0, "banks": 0, "flags": 0}
    for f in st.fields:
        if f.name in vals:
            payload[f.offset:f.offset + f.size] = vals[f.name].to_bytes(f.size, "little")
        elif f.name == "name":
            payload[f.offset:f.offset + 7] = b"weights"
    hdr = (s.consts["MEMD_PROTO_MAGIC"].to_bytes(4, "little") + (1).to_bytes(2, "little")
           + (2).to_bytes(2, "little") + (7).to_bytes(8, "little")
           + len(payload).to_bytes(4, "little") + (0).to_bytes(4, "little"))
    frame = hdr + payload

    def hexdump(b):
        return "\n".join("%04x  %s" % (i, " ".join("%02x" % x for x in b[i:i + 16]))
                         for i in range(0, len(b), 16))
    return hexdump(frame)


def gen_doc(s):
    p = s.proto
    o = ["<!-- Generated by proto/gen.py from proto/memd.toml: do not edit. -->\n"
         "# The memd wire protocol, version %d\n\n" % p["version"]]
    o.append(md_text(p["doc"].split("\n\n")[0]) + "\n\n" + md_text(p["doc"].split("\n\n")[1])
             + "\n\n")
    o.append("This page is generated from `proto/memd.toml`, the one description of the "
             "protocol: the C header `<memd/protocol.h>`, the codec in `proto/` and the "
             "daemon's dispatch table are generated from it too. Everything a client needs is "
             "here: the tables give every record's byte layout.\n\n")
    o.append("## Framing\n\nEvery frame, request or reply, is a 24-byte header "
             "([memd_wire_hdr](#memd_wire_hdr-24-bytes)) and then `len` payload bytes. "
             "`magic` is 0x%08x (\"MEMD\" as little-endian bytes), `version` is %d. A "
             "request's `status` carries request flags (MEMD_REQ_F_RETRY = 1, a resend after "
             "a lost reply); a reply's is 0 or a negative errno. A request payload may be at "
             "most the welcome's `max_frame` bytes; a reply at most MEMD_MAX_REPLY (%d). "
             "Requests may be pipelined: replies come in order and echo the request's `opcode` "
             "and `id`; the error reply to a malformed header has `opcode` and `id` 0.\n\n"
             % (s.consts["MEMD_PROTO_MAGIC"], p["version"], s.consts["MEMD_MAX_REPLY"]))
    o.append("Field types in the tables: `u8`, `u16`, `u32`, `u64` are unsigned and `i32` a "
             "signed (two's complement) little-endian integer of that many bits; `char[N]` is a "
             "string of N bytes, NUL-padded (at most N - 1 bytes of UTF-8: a receiver rejects one "
             "without a NUL), `char[M][N]` M such strings; `u8[N]` is N raw bytes; `T[N]` is N "
             "values of T; a linked type is "
             "that record, nested in place. N may be a constant's name (see Constants and "
             "Vocabulary); the size column gives every field's width in bytes. Reserved fields "
             "(`reserved: 0`) are sent as zeros and ignored. Names a client sends (HELLO's "
             "client_name, an allocation's name) must be UTF-8 text without control "
             "characters, else -EINVAL.\n\n"
             "Batch payloads (`count, X x count` in the opcode table) are a `u32 count, u32 0` "
             "prefix and then `count` records.\n\n")
    o.append("## The handshake\n\nA session's first request is HELLO "
             "([memd_wire_hello](#memd_wire_hello-64-bytes)) with min_version = max_version = 1 "
             "and a client name; the reply is a welcome "
             "([memd_wire_welcome](#memd_wire_welcome-72-bytes)) carrying the session id, the "
             "request size limit and a reclaim token. With MEMD_HELLO_F_RECLAIM and an earlier "
             "session's id and token, a client takes that session back after a daemon restart. "
             "A connection whose first request does not come within the daemon's "
             "hello_timeout_ms (doc/configuration.md) gets an -ETIMEDOUT error reply with "
             "`opcode` and `id` 0 and is closed.\n\n")
    o.append("## Errors\n\nA failed request's reply has a negative status and, as payload, one "
             "[memd_wire_error](#memd_wire_error-248-bytes) record whose message says what and "
             "where. A malformed frame (bad magic, version, a length that does not fit the "
             "opcode, a record that does not decode) gets an error reply and the connection is "
             "closed; other sessions carry on.\n\n| errno | value | meaning |\n|---|---:|---|\n")
    for name, value, doc in s.errnos:
        o.append("| %s | -%d | %s |\n" % (name, value, md_cell(doc)))
    o.append("\n## Opcodes\n\n| opcode | name | request | reply | length rule | mutating | admin | batch |\n"
             "|---:|---|---|---|---|---|---|---|\n")
    for op in s.opcodes:
        rule = {"fixed": "exactly %d", "min": "at least %d",
                "count": "8 + count x %d", "doc": "%d-byte upload id (+ document when 0)"}[
                    op["shape"]] % s.op_len_value(op)
        rec = s.structs.get(op.get("record", ""))
        if op["shape"] == "fixed" and rec is not None and rec.v1_size:
            rule += " or %d" % rec.v1_size
        if op["shape"] == "fixed" and rec is not None and rec.min_size not in (rec.size, rec.v1_size):
            rule += " or %d" % rec.min_size
        o.append("| %d | %s | %s | %s | %s | %s | %s | %s |\n" % (
            op["value"], op["name"], md_layout(s, op["request"]), md_layout(s, op["reply"]),
            rule, "yes" if op.get("mutating") else "", "yes" if op.get("admin") else "",
            "yes" if op.get("batch") else ""))
    o.append("\nNotes:\n\n")
    for op in s.opcodes:
        notes = " ".join(md_text(op[k]) for k in ("doc", "why") if op.get(k))
        if notes:
            o.append("- **%s**: %s\n" % (op["name"], notes))
    o.append("\n## Record tags (DUMP replies)\n\nA DUMP reply is a sequence of records, each a "
             "`u32` tag and then the tag's record.\n\n| tag | name | record | notes |\n|---:|---|---|---|\n")
    for t in s.tags:
        st = s.structs[t["record"]]
        o.append("| %d | %s | [memd_wire_%s](#memd_wire_%s-%d-bytes) | %s |\n" % (
            t["value"], t["name"], st.name, st.name, st.size, md_cell(t.get("doc", ""))))
    o.append("\n## Records\n\n")
    for sec in s.sections:
        if not sec["struct"]:
            continue
        o.append("### %s\n\n" % sec["title"])
        if sec["doc"]:
            o.append("\n\n".join(md_text(par) for par in sec["doc"].split("\n\n")) + "\n\n")
        for st in sec["struct"]:
            o.append(md_struct(s, st))
    o.append("## Constants and flags\n\n| name | value | meaning |\n|---|---|---|\n")
    for sec in s.sections:
        for name, value, doc in sec["const"]:
            o.append("| %s | %s | %s |\n" % (name, md_value(value, s.consts[name]),
                                               md_cell(doc)))
        for en in sec["enum"]:
            for name, value, doc, v in en["members"]:
                o.append("| %s | %d | %s |\n" % (name, v, md_cell(doc or en["doc"])))
    o.append("\n## Vocabulary (`<memd/types.h>`)\n\n")
    for v in s.vocab:
        o.append("**%s**: %s\n\n" % (v["name"], ", ".join("%s = %d" % (n, x) for n, x in v["members"])))
    o.append("## Versioning\n\nThe protocol grows by appending only, and the generator checks "
             "it against `proto/layout.lock`: opcodes, record tags and constant values are "
             "never renumbered or reused; a record's fields keep their offsets and types "
             "forever; a record grows only at its end, and a receiver accepts the older, "
             "shorter record (the appended fields read as 0) where the table says so. New "
             "record tags and dump contents are opt-in by a DUMP flag, because clients refuse "
             "tags they do not know.\n\n")
    o.append("## Example\n\nAn ALLOC request (opcode 2, request id 7): 1 MiB (`bytes` = "
             "0x100000) of class CONSTANT (1) in DRAM (scope 0) of device 0, named "
             "\"weights\":\n\n```\n%s\n```\n\nThe first 24 bytes are the header (magic, "
             "version 1, opcode 2, id 7, len 136, status 0), then the %d-byte alloc_req. "
             "The reply is a header with status 0 and a 56-byte memd_wire_buffer.\n"
             % (example_alloc(s), s.structs["alloc_req"].size))
    return "".join(o)


def md_layout(s, items):
    out = []
    for it in items:
        rep = it.endswith("*")
        name = it.rstrip("*")
        if name in s.structs:
            st = s.structs[name]
            name = "[%s](#memd_wire_%s-%d-bytes)" % (name, name, st.size)
        out.append(("count, " + name + " x count") if rep else name)
    return ", ".join(out) if out else "empty"


def main(argv):
    try:
        if argv[1] == "--lock":
            check_lock(Schema(argv[2]), argv[3], update=True)
            return 0
        schema_path, lock_path, mode, out = argv[1:5]
        s = Schema(schema_path)
        if mode == "value":  # a constant's value, for meson at configure time
            print(s.consts[out])
            return 0
        check_lock(s, lock_path)
        text = {"header": gen_header, "codec-h": gen_codec_h, "codec-c": gen_codec_c,
                "dispatch": gen_dispatch, "handlers-h": gen_handlers_h, "doc": gen_doc, "client-h": gen_client_h,
                "client-c": gen_client_c, "py-h": gen_py_h, "py-c": gen_py_c}[mode](s)
    except SchemaError as e:
        print("%s: %s" % (argv[1] if argv[1] != "--lock" else argv[2], e), file=sys.stderr)
        return 1
    with open(out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
