"""Records the conversation replay.py and reverse.py check: workload.py's clients talk to
memd through a recording proxy, which writes every frame in each direction.

    python3 tests/frames/record.py OLD_BUILD [OUT_DIR]

OLD_BUILD is the build directory of the reference tree (the hand-written codec of before
issue 23; see tests/data/frames/README): its daemon, memctl and Python package make the
recording. OUT_DIR (default tests/data/frames) receives session-workload.txt and
workload-out.json (what the old clients decoded). The proxy is serial: one frame at a time,
and a closing client's connection is finished (memd's EOF seen, so its session is gone)
before any other frame goes on, so the recording is the order memd handled things in."""
import os
import select
import socket
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import framelib  # noqa: E402

SOURCE_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


class Proxy(threading.Thread):
    """Listens on `path`; for each client, a connection to memd at `upstream`."""

    def __init__(self, path, upstream):
        super().__init__(daemon=True)
        self.upstream = upstream
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(16)
        self.events = []
        self.stopping = False
        self.conns = {}  # client socket -> [number, memd socket, client bytes, memd bytes]

    def run(self):
        while not self.stopping or self.conns:
            socks = [self.listener] + list(self.conns) + [c[1] for c in self.conns.values()]
            ready, _, _ = select.select(socks, [], [], 0.05)
            # One order for what became ready together, the order a sequential workload
            # caused it in: a client that closed did so before its other connections sent
            # anything more (or opened a new one), and its session must be gone before memd
            # sees what comes next (a DUMP would list it, or not, by chance).
            clients = [s for s in ready if s in self.conns]
            for s in clients:
                if s.recv(1, socket.MSG_PEEK) == b"":
                    self.finish(s, client_eof=True)
            for s in ready:
                client = next((c for c, v in self.conns.items() if v[1] is s), None)
                if client is not None:
                    self.from_memd(client)
            for s in clients:
                if s in self.conns:
                    self.from_client(s)
            if self.listener in ready:
                self.accept()

    def accept(self):
        client, _ = self.listener.accept()
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        up.connect(self.upstream)
        n = len([e for e in self.events if e[0] == "open"])
        self.conns[client] = [n, up, bytearray(), bytearray()]
        self.events.append(("open", n, None))

    def from_client(self, client):
        n, up, cbuf, _ = self.conns[client]
        data = client.recv(1 << 20)
        if not data:
            self.finish(client, client_eof=True)
            return
        cbuf += data
        for frame in framelib.take_frames(cbuf):
            self.events.append(("C", n, frame))
            up.sendall(frame)

    def from_memd(self, client):
        n, up, _, dbuf = self.conns[client]
        data = up.recv(1 << 20)
        if not data:
            self.finish(client, client_eof=False)
            return
        self.relay(client, n, dbuf, data)

    def relay(self, client, n, dbuf, data):
        dbuf += data
        for frame in framelib.take_frames(dbuf):
            self.events.append(("S", n, frame))
            try:
                client.sendall(frame)
            except OSError:
                pass  # the client is gone; memd's frame is still what memd said

    def finish(self, client, client_eof):
        """Either side ended: the other learns it, and memd's last frames are kept."""
        n, up, _, dbuf = self.conns.pop(client)
        if client_eof:
            up.shutdown(socket.SHUT_WR)
        self.relay(client, n, dbuf, framelib.drain_to_eof(up))
        self.events.append(("close" if client_eof else "closed", n, None))
        up.close()
        client.close()


def main():
    old = os.path.abspath(sys.argv[1])
    out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(SOURCE_ROOT, "tests", "data",
                                                                  "frames")
    config = os.path.join(SOURCE_ROOT, "config", "memd.yaml")
    d = framelib.Daemon(os.path.join(old, "daemon", "memd"), config)
    proxy_path = os.path.join(d.dir, "proxy.sock")
    proxy = Proxy(proxy_path, d.socket)
    proxy.start()
    try:
        subprocess.run([sys.executable, os.path.join(HERE, "workload.py"), proxy_path,
                        os.path.join(old, "tools", "memctl", "memctl"),
                        os.path.join(SOURCE_ROOT, "config"),
                        os.path.join(out_dir, "workload-out.json")],
                       env=dict(os.environ, PYTHONPATH=os.path.join(old, "python")),
                       check=True, timeout=120)
    finally:
        proxy.stopping = True
        proxy.join(30)
        rc = d.stop()
    if rc != 0:
        sys.exit(f"memd did not stop cleanly: {rc}")
    rev = subprocess.run(["git", "-C", old, "rev-parse", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    framelib.save(os.path.join(out_dir, "session-workload.txt"), proxy.events, [
        "memd frames recorded by tests/frames/record.py (workload.py through a recording proxy)",
        f"reference build: {rev or 'unknown'} (daemon, memctl and Python package of that tree)",
        "open N / close N (the client's EOF) / closed N (memd's): connection N",
        "C N HEX: a frame the client sent on N; S N HEX: a frame memd sent on N"])
    print(f"{len(proxy.events)} events, "
          f"{len([e for e in proxy.events if e[0] == 'C'])} requests")


if __name__ == "__main__":
    main()
