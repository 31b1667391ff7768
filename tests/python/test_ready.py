"""The weights-ready handshake and call timeouts, with the real daemon: a second process
that loads a model waits until the first sets it ready; a filler killed before set_ready
hands the job to the waiter; load_model's timeout; readiness across a daemon restart;
memd.connect(timeout=) against a SIGSTOPped daemon."""
import builtins
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import memd
from conftest import BUILD_ROOT, SOURCE_ROOT

TINY = os.path.join(SOURCE_ROOT, "config", "models", "tiny_cnn.yaml")


def tiny(name):
    m = memd.Model.from_yaml(TINY)
    m.name = name
    return m


# A second process: loads the model (waiting for it to be ready) and says how it went.
LOADER = """
import json, sys, time, memd
sock, name, path, timeout = sys.argv[1:5]
m = memd.Model.from_yaml(path)
m.name = name
with memd.connect(sock, name="loader") as c:
    print("connected", flush=True)
    t0 = time.monotonic()
    try:
        lm = c.load_model(m, device=0, timeout=float(timeout))
    except memd.TimeoutError as e:
        print(json.dumps({"timeout": str(e)}), flush=True)
        sys.exit(0)
    print(json.dumps({"created": lm.created, "waited": time.monotonic() - t0}), flush=True)
    if len(sys.argv) > 5:  # a filler that holds the job until it is killed
        time.sleep(600)
"""


def spawn_loader(daemon, name, timeout=30.0, hold=False):
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD_ROOT, "python"))
    args = [sys.executable, "-c", LOADER, daemon.socket, name, TINY, str(timeout)]
    p = subprocess.Popen(args + (["hold"] if hold else []), stdout=subprocess.PIPE, text=True,
                         env=env)
    assert p.stdout.readline().strip() == "connected"
    return p


def model_state(daemon, name):
    doc = json.loads(daemon.memctl("model", "list", "--json").stdout)
    return next(m for m in doc["models"] if m["name"] == name)


def test_second_process_waits_until_ready(daemon):
    with memd.connect(daemon.socket) as c:
        lm = c.load_model(tiny("ready-py"), device=0)
        assert lm.created
        assert model_state(daemon, "ready-py")["state"] == "filling"
        p = spawn_loader(daemon, "ready-py")
        deadline = time.monotonic() + 10
        while model_state(daemon, "ready-py")["waiters"] == 0:
            assert time.monotonic() < deadline, "the second loader never waited"
            time.sleep(0.02)
        hold = 0.5
        time.sleep(hold)  # "writing the weights"
        t0 = time.monotonic()
        with memd.connect(daemon.socket) as other:  # the daemon serves others meanwhile
            other.free(other.alloc(0, "placeholder", 4096))
        assert time.monotonic() - t0 < hold
        lm.set_ready()
        out = json.loads(p.stdout.readline())
        assert p.wait(timeout=10) == 0
        assert out["created"] is False
        assert out["waited"] >= hold
        print(f"second loader waited {out['waited'] * 1000:.0f} ms (filler held {hold * 1000:.0f} ms)")
        assert model_state(daemon, "ready-py")["state"] == "ready"
        events = daemon.memctl("events").stdout
        assert "model ready-py ready: session" in events
        lm.set_ready()  # again: a no-op
        lm.unload()


def test_killed_filler_hands_the_job_over(daemon):
    filler = spawn_loader(daemon, "ready-kill", hold=True)
    assert json.loads(filler.stdout.readline())["created"] is True
    killer = threading.Timer(0.3, filler.kill)
    killer.start()
    try:
        with memd.connect(daemon.socket) as c:
            t0 = time.monotonic()
            lm = c.load_model(tiny("ready-kill"), device=0, timeout=20)
            assert lm.created  # the job came to this loader
            assert time.monotonic() - t0 >= 0.2
            lm.set_ready()
            assert model_state(daemon, "ready-kill")["state"] == "ready"
            lm.unload()
    finally:
        killer.cancel()
        filler.kill()
        filler.wait()


def test_load_model_timeout(daemon):
    m = tiny("ready-timeout")
    with memd.connect(daemon.socket) as c1, memd.connect(daemon.socket) as c2:
        lm = c1.load_model(m, device=0)
        t0 = time.monotonic()
        with pytest.raises(memd.TimeoutError) as e:
            c2.load_model(m, device=0, timeout=0.2)
        assert time.monotonic() - t0 >= 0.2
        assert isinstance(e.value, builtins.TimeoutError) and e.value.errno == 110
        assert "still filling" in str(e.value)
        assert model_state(daemon, "ready-timeout")["users"] == 1  # the load was undone
        assert c2.session()["session_id"] > 0  # and the connection is fine
        for bad, exc in ((0, ValueError), (-1, ValueError), ("1", TypeError), (True, TypeError)):
            with pytest.raises(exc):
                c2.load_model(m, device=0, timeout=bad)
        lm.unload()


def test_ready_state_survives_restart(own_daemon):
    d = own_daemon()
    m = tiny("ready-restart")
    c1 = memd.connect(d.socket)
    c1.load_model(m, device=0).set_ready()
    d.kill()
    d.start()
    with memd.connect(d.socket) as c2:
        t0 = time.monotonic()
        lm = c2.load_model(m, device=0, timeout=5)
        assert not lm.created and time.monotonic() - t0 < 2  # ready: nothing to wait for
        assert model_state(d, "ready-restart")["state"] == "ready"
    c1.close()


def test_stopped_daemon_times_out(own_daemon):
    d = own_daemon()
    with pytest.raises(ValueError):
        memd.connect(d.socket, timeout=0)
    with pytest.raises(TypeError):
        memd.connect(d.socket, timeout="1")
    # 1 s: the set-up calls must not time out on a loaded machine.
    c = memd.connect(d.socket, timeout=1.0)
    buf = c.alloc(0, "placeholder", 4096)
    os.kill(d.proc.pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        with pytest.raises(memd.TimeoutError) as e:
            c.alloc(0, "placeholder", 4096)
        assert 1.0 <= time.monotonic() - t0 < 8
        assert isinstance(e.value, builtins.TimeoutError)
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
    with pytest.raises(memd.ConnectionError):
        c.free(buf)  # the timed-out connection is closed: no late reply is taken
    c.close()
    with memd.connect(d.socket, timeout=5) as fresh:
        fresh.free(fresh.alloc(0, "placeholder", 4096))
