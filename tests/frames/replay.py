"""Old clients, this tree's daemon: replays the recorded REQUEST frames of
tests/data/frames/session-*.txt to a fresh memd in recorded order, and checks every reply
byte for byte against the recorded one, but for the fields framelib.reply_masks names
(times, pids, uids, comm, tokens, the server's version and counters).

    python3 replay.py MEMD CONFIG RECORDING...

Requests are sent as recorded: the handles and ids they carry are the ones a fresh daemon
hands out again (state starts empty and they are counted from the start), which is
checked by the replies themselves. Exit 0 when every reply matches."""
import socket
import struct
import sys

import framelib


def replay(memd, config, path):
    events = framelib.load(path)
    d = framelib.Daemon(memd, config)
    socks, pending, failures, replies = {}, {}, [], 0
    compared = masked = 0
    try:
        for kind, conn, frame in events:
            if kind == "open":
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(10)
                s.connect(d.socket)
                socks[conn] = s
                pending[conn] = []
            elif kind == "C":
                socks[conn].sendall(frame)
                pending[conn].append(struct.unpack_from("<H", frame, 6)[0])
            elif kind == "S":
                live = framelib.recv_frame(socks[conn])
                # Replies come in request order: this one answers the oldest pending request
                # (or, with no request pending, it is memd's answer to a malformed header).
                op = pending[conn].pop(0) if pending[conn] else 0
                why = framelib.compare_reply(op, frame, live)
                replies += 1
                compared += len(frame)
                masked += sum(e - a for a, e, _ in framelib.reply_masks(op, frame))
                if why:
                    failures.append(f"{path}: connection {conn}, reply {replies} "
                                    f"({framelib.OP_NAME.get(op, op)}): {why}")
            else:  # close, closed: the client's EOF (if memd did not close first), then
                # memd's, with nothing more said
                s = socks.pop(conn)
                s.shutdown(socket.SHUT_WR)
                rest = framelib.drain_to_eof(s)
                if rest:
                    failures.append(f"{path}: connection {conn}: {len(rest)} bytes more than "
                                    "recorded before memd closed it")
                s.close()
    finally:
        for s in socks.values():
            s.close()
        rc = d.stop()
    if rc != 0:
        failures.append(f"memd did not stop cleanly: {rc}")
    print(f"{path}: {compared} reply bytes compared, {masked} of them masked")
    return replies, failures


def main():
    memd, config, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    failed = False
    for path in paths:
        replies, failures = replay(memd, config, path)
        for f in failures:
            print(f"FAIL {f}")
        print(f"{path}: {replies} replies, {len(failures)} differ")
        failed = failed or bool(failures) or replies == 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
