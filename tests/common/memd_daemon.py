"""The real, built memd on a private socket for the Python tests and the benchmarks'
smoke tests: readiness through its own sd_notify READY=1, as tests/common/daemon_fixture.c
does for the C suites."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import time


class Daemon:
    """A memd process on a socket in its own temporary directory: memd and memctl are the
    built programs' paths, config memd's config file."""

    def __init__(self, memd, config, memctl=None, args=(), env=None, prefix="memd-py-"):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.socket = os.path.join(self.dir, "memd.sock")
        self.memd = memd
        self.memctl_path = memctl
        self.config = config
        self.args = list(args)
        self.env = env or {}
        self.proc = None
        self.start()

    def start(self, timeout=20.0):
        notify = os.path.join(self.dir, "notify.sock")
        if os.path.exists(notify):
            os.unlink(notify)
        ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        ns.bind(notify)
        ns.settimeout(0.2)
        env = dict(os.environ, NOTIFY_SOCKET=notify, **self.env)
        self.log = open(os.path.join(self.dir, "memd.log"), "ab")
        self.proc = subprocess.Popen([self.memd, "--config", self.config, "--socket", self.socket,
                                      "--foreground"] + self.args, env=env,
                                     stderr=self.log, stdout=self.log)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"memd exited with {self.proc.returncode}: "
                                       f"{self.read_log()}")
                try:
                    msg = ns.recv(4096).decode()
                except socket.timeout:
                    continue
                if "READY=1" in msg.split("\n"):
                    return
            raise RuntimeError(f"memd sent no READY=1 in {timeout} s: {self.read_log()}")
        finally:
            ns.close()

    def read_log(self):
        with open(os.path.join(self.dir, "memd.log"), "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self):
        """SIGTERM and wait: the exit status (0 for a clean stop)."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.proc = None
        self.log.close()
        return rc

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        self.log.close()

    def cleanup(self):
        import shutil
        shutil.rmtree(self.dir, ignore_errors=True)

    def memctl(self, *args, check=True):
        r = subprocess.run([self.memctl_path, "--socket", self.socket] + list(args),
                           capture_output=True, text=True, timeout=120)
        if check and r.returncode != 0:
            raise AssertionError(f"memctl {args}: exit {r.returncode}: {r.stderr}")
        return r

    def dump(self):
        return json.loads(self.memctl("dump", "--json").stdout)
