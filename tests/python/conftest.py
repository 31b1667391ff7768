"""pytest fixtures for the memd Python package: the built package on sys.path, and the
real, built memd on a private socket (readiness through its own sd_notify READY=1, as
tests/integration/daemon_fixture.c does).

Paths come from meson's test environment ($MEMD_BUILD_ROOT, $MEMD_SOURCE_ROOT,
$MEMD_SHARED_DATA); run by hand from a build directory:

    MEMD_BUILD_ROOT=build PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.environ.get("MEMD_SOURCE_ROOT", os.path.normpath(os.path.join(HERE, "..", "..")))
BUILD_ROOT = os.environ.get("MEMD_BUILD_ROOT", os.path.join(SOURCE_ROOT, "build"))
SHARED_DATA = os.environ.get("MEMD_SHARED_DATA",
                             os.path.normpath(os.path.join(SOURCE_ROOT, "..", "shared", "data")))
if os.path.join(BUILD_ROOT, "python") not in sys.path:
    sys.path.insert(0, os.path.join(BUILD_ROOT, "python"))

import memd  # noqa: E402  (the build tree's package)

MEMD = os.environ.get("MEMD_BIN", os.path.join(BUILD_ROOT, "daemon", "memd"))
MEMCTL = os.path.join(BUILD_ROOT, "tools", "memctl", "memctl")
CONFIG = os.path.join(SOURCE_ROOT, "config", "memd.yaml")


def pytest_configure(config):
    config.addinivalue_line("markers", "families: torchvision model families through both "
                            "importers (heavier; small inputs)")
    config.addinivalue_line("markers", "torch: needs python3-torch")
    config.addinivalue_line("markers", "onnx: needs python3-onnx")


def spins_during(call):
    """Runs call() while another Python thread counts as fast as it can: (result, count).
    A call that holds the GIL leaves the count near 0."""
    import threading
    counter = [0]
    done = threading.Event()

    def spin():
        while not done.is_set():
            counter[0] += 1
    t = threading.Thread(target=spin)
    t.start()
    try:
        before = counter[0]
        result = call()
        return result, counter[0] - before
    finally:
        done.set()
        t.join()


class Daemon:
    """A memd process on a socket in its own temporary directory."""

    def __init__(self, config=CONFIG, args=(), env=None):
        self.dir = tempfile.mkdtemp(prefix="memd-py-")
        self.socket = os.path.join(self.dir, "memd.sock")
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
        self.proc = subprocess.Popen([MEMD, "--config", self.config, "--socket", self.socket,
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
        r = subprocess.run([MEMCTL, "--socket", self.socket] + list(args), capture_output=True,
                           text=True, timeout=120)
        if check and r.returncode != 0:
            raise AssertionError(f"memctl {args}: exit {r.returncode}: {r.stderr}")
        return r

    def dump(self):
        return json.loads(self.memctl("dump", "--json").stdout)


@pytest.fixture(scope="session")
def daemon():
    d = Daemon()
    yield d
    rc = d.stop()
    d.cleanup()
    assert rc == 0, "memd did not stop cleanly"


@pytest.fixture
def own_daemon():
    """A daemon of the test's own (to kill, restart, or fill)."""
    made = []

    def make(**kw):
        d = Daemon(**kw)
        made.append(d)
        return d
    yield make
    for d in made:
        d.kill()
        d.cleanup()


@pytest.fixture
def client(daemon):
    with memd.connect(daemon.socket, name="pytest") as c:
        yield c
    # Whatever the test left is released with the session: check the daemon agrees.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        doc = daemon.dump()
        if not any(s["client"] == "pytest" for s in doc["sessions"]):
            break
        time.sleep(0.02)
