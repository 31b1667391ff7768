"""Recorded memd conversations: the file format, frame I/O, a daemon on a private socket,
and the masks of the reply fields that legitimately differ between two runs.

A recording (tests/data/frames/session-*.txt) is the sequence of events a recording proxy
saw between clients and memd, one per line:
    open N          the client opened connection N (numbered in accept order)
    C N HEX         a whole frame (header + payload) the client sent on N
    S N HEX         a whole frame memd sent on N
    close N         connection N ended: the client's EOF, then memd's
    closed N        connection N ended: memd closed it (after a malformed frame)
Everything in this module uses the Python standard library only."""
import errno
import os
import struct
import sys

# The daemon is tests/common's, the one the Python tests and benchmark smoke tests start.
sys.dont_write_bytecode = True  # importing it writes nothing into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import memd_daemon  # noqa: E402

# The header: u32 magic, u16 version, u16 opcode, u64 id, u32 len, i32 status.
HDR_SIZE = 24

OP = {"HELLO": 1, "ALLOC": 2, "ALLOC_BATCH": 3, "FREE": 4, "FREE_BATCH": 5, "QUERY": 6,
      "BANKS": 7, "DUMP": 8, "UPLOAD": 9, "PLAN": 10, "MODEL_LOAD": 11, "MODEL_UNLOAD": 12,
      "MODEL_INFO": 13, "INSTANCE_CREATE": 14, "INSTANCE_RELEASE": 15, "EVENTS": 16,
      "POOL_REPORT": 17, "ALLOC_BANKS": 18, "BANK_ADDRS": 19, "SUBDEV_DEFINE": 20,
      "SUBDEV_BIND": 21, "ALLOC_BATCH_BANKS": 22}
OP_NAME = {v: k for k, v in OP.items()}


# ---- the file ----

def load(path):
    events = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.split()
            if parts[0] in ("C", "S"):
                events.append((parts[0], int(parts[1]), bytes.fromhex(parts[2])))
            else:
                events.append((parts[0], int(parts[1]), None))
    return events


def save(path, events, header):
    with open(path, "w") as f:
        for line in header:
            f.write(f"# {line}\n")
        for kind, conn, frame in events:
            if frame is None:
                f.write(f"{kind} {conn}\n")
            else:
                f.write(f"{kind} {conn} {frame.hex()}\n")


def conversations(events):
    """{conn: [(kind, frame), ...]}: each connection's frames and its close, in order."""
    out = {}
    for kind, conn, frame in events:
        if kind == "open":
            out[conn] = []
        else:
            out[conn].append((kind, frame))
    return out


def hello_name(frame):
    """The client_name of a HELLO request frame."""
    return frame[HDR_SIZE + 8:HDR_SIZE + 40].split(b"\0")[0].decode()


# ---- frames on a socket ----

def take_frames(buf):
    """Splits whole frames off the front of a bytearray."""
    frames = []
    while len(buf) >= HDR_SIZE:
        n = HDR_SIZE + struct.unpack_from("<I", buf, 16)[0]
        if len(buf) < n:
            break
        frames.append(bytes(buf[:n]))
        del buf[:n]
    return frames


def recv_exact(sock, n):
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError(f"connection closed after {len(data)} of {n} bytes")
        data += chunk
    return bytes(data)


def recv_frame(sock):
    hdr = recv_exact(sock, HDR_SIZE)
    n = struct.unpack_from("<I", hdr, 16)[0]
    return hdr + recv_exact(sock, n)


def drain_to_eof(sock):
    """Reads until the peer closes: the bytes it still sent."""
    rest = bytearray()
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return bytes(rest)
        rest += chunk


# ---- a daemon ----

class Daemon(memd_daemon.Daemon):
    """memd on a socket in its own temporary directory, ready when it says READY=1 (as
    tests/python/conftest.py starts it): a fresh state store every time, so handles and ids
    start where they started when the recording was made."""

    def __init__(self, memd, config):
        super().__init__(memd, config, prefix="memd-frames-")

    def stop(self):
        """SIGTERM and wait, then the directory goes: the exit status (0 for a clean stop)."""
        rc = super().stop()
        self.cleanup()
        return rc


# ---- masks: reply bytes that legitimately differ from run to run ----
#
# Offsets are within a record, in protocol.h's field order. Only these bytes may differ
# between a recorded reply and a live one; a mask never changes a reply's length.

# HELLO request flags (payload offset 4) clients set since issue 25: NOTICES (bit 1, they
# read revocation notices) and POSTMORTEM (bit 2, they read the longer error record).
# HELLO's flags are advisory: the daemon answers a HELLO without them, as the old clients
# sent it, with the frames of before.
HELLO_OPCODE = 1
HELLO_NEW_FLAGS = (1 << 1) | (1 << 2)


def mask_request(recorded, live):
    """Clears, in both (bytearrays of whole frames), the request bits the tree's clients
    legitimately set that the recorded ones did not: HELLO's NOTICES and POSTMORTEM."""
    if struct.unpack_from("<H", recorded, 6)[0] == HELLO_OPCODE and len(live) >= HDR_SIZE + 8:
        for f in (recorded, live):
            flags = struct.unpack_from("<I", f, HDR_SIZE + 4)[0]
            struct.pack_into("<I", f, HDR_SIZE + 4, flags & ~HELLO_NEW_FLAGS)


# welcome (HELLO reply; the first 48 bytes are the V1 welcome)
WELCOME_MASKS = [
    (16, 48, "server_version: the daemon's version string changes with every build"),
    (48, 49, "flags: OPS_2, NOTICES, HISTORY_2 and RANGE_LOCKSTEP (bits 2-5), set since "
             "the requests and records they announce"),
    (56, 72, "token: the session's random reclaim secret"),
]
# memd_wire_alloc_info (QUERY reply, DUMP ALLOC record)
ALLOC_INFO_MASKS = [
    (64, 76, "pid, uid, gid: the credentials of the process that made it"),
    (80, 88, "created_ns: wall clock"),
    (152, 168, "comm: the creating process's name"),
]
# memd_wire_error of an unknown opcode: its message names the opcodes the daemon knows,
# "1..N", which grows with every opcode the protocol appends
UNKNOWN_OPCODE_MASKS = [(8, 200, "message: names the last opcode this memd knows")]
# memd_wire_plan_info (PLAN reply)
PLAN_INFO_MASKS = [(32, 40, "plan_us: time the planner took")]
# memd_wire_model_info (MODEL_LOAD, MODEL_INFO replies)
MODEL_INFO_MASKS = [(80, 88, "created_ns: wall clock")]
# memd_wire_event (EVENTS reply, after the 24-byte events_info)
EVENT_MASKS = [
    (8, 16, "time_ns: wall clock"),
    (24, 32, "pid, uid: the session's credentials"),
    (48, 64, "comm: the session's process name"),
    (64, 320, "message: the daemon's log line, which names the pid, comm and version"),
]
EVENT_SIZE = 320
EVENTS_INFO_SIZE = 24

# DUMP records: tag -> (size, masks)
DUMP_RECORDS = {
    1: (120, [(0, 32, "version: the daemon's version string"),
              (32, 48, "start_ns, now_ns: wall clock"),
              (52, 56, "pid: the daemon's"),
              (56, 120, "counters since start (requests .. bytes_out): the daemon's own "
                        "bookkeeping, not the codec's; they may count differently")]),
    2: (136, []),
    3: (88, []),
    4: (144, []),
    5: (168, ALLOC_INFO_MASKS),
    6: (24, []),
    7: (104, [(4, 16, "pid, uid, gid: the session's credentials"),
              (16, 24, "connected_ns: wall clock"),
              (40, 56, "comm: the session's process name")]),
    8: (96, [(24, 32, "created_ns: wall clock"), (32, 40, "plan_us: time the planner took")]),
    9: (144, [(56, 64, "created_ns: wall clock")]),
    10: (64, [(52, 56, "pid: the session's")]),
    11: (32, []),
    12: (40, [(8, 16, "as_of_ns: wall clock of the pool's last report")]),
    13: (88, []),
    14: (8, []),
    15: (80, []),
    16: (48, []),
    17: (232, []),
    18: (8, []),  # + 4 x count ids
}


def dump_masks(payload):
    """The masks of a DUMP reply: every record walked by its tag."""
    masks, off = [], 0
    while off < len(payload):
        tag = struct.unpack_from("<I", payload, off)[0]
        if tag not in DUMP_RECORDS:
            raise ValueError(f"DUMP reply: unknown tag {tag} at {off}")
        size, recmasks = DUMP_RECORDS[tag]
        if tag == 18:
            size += 4 * struct.unpack_from("<I", payload, off + 4)[0]
        start = off + 4
        masks += [(start + a, start + b, f"DUMP tag {tag}: {why}") for a, b, why in recmasks]
        off = start + size
    return masks


ALLOC_OPS = tuple(OP[n] for n in ("ALLOC", "ALLOC_BATCH", "ALLOC_BANKS", "ALLOC_BATCH_BANKS"))


def reply_masks(opcode, reply):
    """[(start, end, why)] of the frame `reply` (header included) that may differ."""
    if len(reply) < HDR_SIZE:
        return []
    status = struct.unpack_from("<i", reply, 20)[0]
    payload = reply[HDR_SIZE:]
    if status == -errno.EBADRQC:
        masks = [(a, b, f"unknown opcode error {why}") for a, b, why in UNKNOWN_OPCODE_MASKS]
    elif status == -12:  # ENOMEM: the message names the region's holders by pid
        masks = [(8, 8 + 192, "out of memory message: names the holders' pids")]
    elif status == -7 and opcode in ALLOC_OPS:
        # Changed on purpose (issue 24): larger than the region is out of memory now, with
        # its figures; compare_reply checks the live status is -ENOMEM.
        return [(20, 24, "status: -E2BIG became -ENOMEM")] + [
            (HDR_SIZE + a, HDR_SIZE + b, why)
            for a, b, why in [(0, len(payload), "the error record of an out of memory")]]
    elif status < 0:  # an error record: its message says what, nothing varies
        masks = []
    elif opcode == OP["HELLO"]:
        masks = [m for m in WELCOME_MASKS if m[1] <= len(payload)]
    elif opcode == OP["QUERY"]:
        masks = [(a, b, f"alloc_info {why}") for a, b, why in ALLOC_INFO_MASKS]
    elif opcode == OP["DUMP"]:
        masks = dump_masks(payload)
    elif opcode == OP["PLAN"]:
        masks = [(a, b, f"plan_info {why}") for a, b, why in PLAN_INFO_MASKS]
    elif opcode in (OP["MODEL_LOAD"], OP["MODEL_INFO"]):
        masks = [(a, b, f"model_info {why}") for a, b, why in MODEL_INFO_MASKS]
    elif opcode == OP["EVENTS"]:
        count = struct.unpack_from("<I", payload, 16)[0]
        masks = [(EVENTS_INFO_SIZE + i * EVENT_SIZE + a, EVENTS_INFO_SIZE + i * EVENT_SIZE + b,
                  f"event {i} {why}") for i in range(count) for a, b, why in EVENT_MASKS]
    else:
        masks = []
    return [(HDR_SIZE + a, HDR_SIZE + b, why) for a, b, why in masks]


def masked(frame, masks):
    b = bytearray(frame)
    for a, e, _ in masks:
        b[a:e] = bytes(e - a)
    return bytes(b)


def compare_reply(opcode, recorded, live):
    """None when live is recorded but for the masked fields, else what differs."""
    if len(recorded) != len(live):
        return f"{len(live)} bytes, recorded {len(recorded)}"
    if (opcode in ALLOC_OPS and len(recorded) >= HDR_SIZE and
            struct.unpack_from("<i", recorded, 20)[0] == -7 and
            struct.unpack_from("<i", live, 20)[0] != -12):
        return "a request larger than its region must be -ENOMEM now (issue 24)"
    masks = reply_masks(opcode, recorded)
    a, b = masked(recorded, masks), masked(live, masks)
    if a == b:
        return None
    i = next(k for k in range(len(a)) if a[k] != b[k])
    where = "header" if i < HDR_SIZE else f"payload byte {i - HDR_SIZE}"
    return (f"{where} (frame byte {i}) is 0x{live[i]:02x}, recorded 0x{recorded[i]:02x}; "
            f"recorded {recorded[max(0, i - 8):i + 8].hex()} live {live[max(0, i - 8):i + 8].hex()}")
