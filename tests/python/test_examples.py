"""The integration examples (examples/): the C and the Python loader as runtime processes
against the real daemon on the shipped config's 12-bank Wormhole DRAM (2 KiB pages) and
the stand-in device. A filler writes the weights page by page and a second process,
started while it holds before set_ready, waits and reads back the same bytes; C and
Python cross; a filler killed before set_ready hands the job over; a reader checking the
wrong bytes fails, and so does a loader given a device smaller than memd's map."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import BUILD_ROOT, SOURCE_ROOT
from test_ready import model_state

MODEL = os.path.join(SOURCE_ROOT, "config", "models", "tiny_cnn.yaml")
BANKS = 12
LOADERS = {
    "c": [os.path.join(BUILD_ROOT, "examples", "loader")],
    "py": [sys.executable, os.path.join(SOURCE_ROOT, "examples", "python", "loader.py")],
}
SUMMARY = re.compile(r"^(filled|verified) (\d+) tensors, (\d+) pages, (\d+) banks, (\d+) bytes, "
                     r"digest ([0-9a-f]{8})$", re.M)
ROLE = re.compile(r"^model tiny-cnn on device 0: page 2048 bytes, (filler|reader) "
                  r"after (\d+) ms$", re.M)
TENSOR = re.compile(r"^tensor (\S+): (\d+) bytes, (\d+) pages, banks((?: \d+)+)(?: \.\.\.)?$", re.M)


def standin_device(banks, bank_size):
    """Starts standin-device: (its process, its socket)."""
    path = os.path.join(tempfile.mkdtemp(prefix="memd-dev-"), "dev.sock")
    dev = subprocess.Popen([os.path.join(BUILD_ROOT, "examples", "standin-device"), "--banks",
                            str(banks), "--bank-size", str(bank_size), path],
                           stdout=subprocess.PIPE, text=True)
    assert dev.stdout.readline() == f"stand-in device: {banks} banks of {bank_size} bytes on {path}\n"
    return dev, path


def stop_standin_device(dev, path):
    dev.send_signal(signal.SIGTERM)
    assert dev.wait(timeout=10) == 0
    assert not os.path.exists(path)
    os.rmdir(os.path.dirname(path))


class Rig:
    """A daemon of the test's own, a stand-in device and the loaders started on them."""

    def __init__(self, daemon, device):
        self.daemon, self.device, self.loaders = daemon, device, []


@pytest.fixture
def setup(own_daemon):
    """A Rig with a stand-in device of 12 banks of 1 GiB (sparse memfds, the shipped
    Wormhole's DRAM banks); loaders a failed test left behind are killed."""
    dev, path = standin_device(BANKS, 1 << 30)
    rig = Rig(own_daemon(), path)
    yield rig
    for p in rig.loaders:
        if p.poll() is None:
            p.kill()
            p.communicate()
    stop_standin_device(dev, path)


def start(lang, rig, *args, device=None):
    """A loader (C or Python) on rig's daemon and device (or that device socket)."""
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD_ROOT, "python"))
    p = subprocess.Popen(LOADERS[lang] + ["--socket", rig.daemon.socket, "--standin",
                                          device or rig.device, "--model", MODEL] + list(args),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    rig.loaders.append(p)
    return p


def read_until(p, prefix):
    """p's output lines up to and including the first that starts with prefix."""
    lines = []
    while not lines or not lines[-1].startswith(prefix):
        line = p.stdout.readline()
        assert line, f"ended before '{prefix}': {''.join(lines)}{p.stderr.read()}"
        lines.append(line)
    return "".join(lines)


def finish(p, before="", rc=0):
    """Waits for p: everything it printed (before: what was already read)."""
    out, err = p.communicate(timeout=60)
    assert p.returncode == rc, f"exit {p.returncode}: {before}{out}{err}"
    return before + out, err


def result(out):
    """What a loader's output says: role, waited ms, each weight's banks, the summary."""
    role, waited = ROLE.search(out).groups()
    kind, tensors, pages, banks, nbytes, digest = SUMMARY.search(out).groups()
    return {"role": role, "waited": int(waited), "kind": kind, "tensors": int(tensors),
            "pages": int(pages), "banks": int(banks), "bytes": int(nbytes), "digest": digest,
            "placed": {m[0]: [int(b) for b in m[3].split()] for m in TENSOR.findall(out)},
            "ready": "\nset ready\n" in out}


def waiters(d):
    """Processes waiting for tiny-cnn to be ready (None: not loaded)."""
    try:
        return model_state(d, "tiny-cnn")["waiters"]
    except StopIteration:
        return None


def wait_for_waiter(d, reader):
    """Until memd shows the reader waiting for tiny-cnn (it has not finished meanwhile)."""
    deadline = time.monotonic() + 20
    while not waiters(d):
        assert reader.poll() is None, f"the reader did not wait: {finish(reader)}"
        assert time.monotonic() < deadline, "the reader never waited"
        time.sleep(0.02)
    assert reader.poll() is None


def check_placement(r):
    """Every weight's pages on consecutive banks from its first; fc.w (20 pages) on all 12."""
    for name, banks in r["placed"].items():
        assert all((b - a) % BANKS == 1 for a, b in zip(banks, banks[1:])), (name, banks)
    assert len(r["placed"]["fc.w"]) == 20 and len(set(r["placed"]["fc.w"])) == BANKS
    # tiny-cnn's six weights: 864 + 32 + 9216 + 64 + 40960 + 20 bytes in 29 pages
    assert (r["tensors"], r["pages"], r["bytes"]) == (6, 29, 51156)
    assert r["banks"] == BANKS


@pytest.mark.parametrize("filler,reader", [("c", "c"), ("py", "py"), ("c", "py"), ("py", "c")])
def test_second_process_waits_and_reads_back(setup, filler, reader):
    d = setup.daemon
    f = start(filler, setup, "--hold-ms", "2000")
    f_out = read_until(f, "holding")  # filled, holding before set_ready
    # Stopped, the filler cannot set ready however long the reader takes to start.
    f.send_signal(signal.SIGSTOP)
    r = start(reader, setup)
    wait_for_waiter(d, r)
    time.sleep(0.3)
    assert r.poll() is None
    f.send_signal(signal.SIGCONT)
    f_out, _ = finish(f, f_out)
    r_out, _ = finish(r)
    fr, rr = result(f_out), result(r_out)
    print(f"{filler} filled, {reader} read back after waiting {rr['waited']} ms "
          f"({rr['pages']} pages, {rr['bytes']} bytes on {rr['banks']} banks)")
    assert (fr["role"], fr["kind"], fr["ready"]) == ("filler", "filled", True)
    assert (rr["role"], rr["kind"], rr["ready"]) == ("reader", "verified", False)
    assert rr["waited"] >= 300  # seen waiting, and still at least that long after
    for key in ("digest", "tensors", "pages", "bytes", "placed"):
        assert fr[key] == rr[key], key
    check_placement(fr)


def test_filler_dies_before_set_ready(setup):
    d = setup.daemon
    # A filler killed before set_ready: the next loader, started after, fills.
    dead = start("c", setup, "--hold-ms", "60000")
    read_until(dead, "holding")
    dead.kill()
    finish(dead, rc=-signal.SIGKILL)
    second = start("c", setup, "--hold-ms", "60000")
    second_out = read_until(second, "holding")
    assert ROLE.search(second_out).group(1) == "filler"
    # One waits behind it; the filler is killed too: the waiter is handed the job (the
    # handshake's handover), fills and sets ready, then stays loaded.
    heir = start("py", setup, "--stay")
    wait_for_waiter(d, heir)
    second.kill()
    finish(second, rc=-signal.SIGKILL)
    heir_out = read_until(heir, "staying")
    hr = result(heir_out)
    assert (hr["role"], hr["kind"], hr["ready"]) == ("filler", "filled", True)
    assert hr["waited"] > 0
    check_placement(hr)
    # A reader now gets the heir's bytes at once.
    rr = result(finish(start("c", setup))[0])
    assert (rr["role"], rr["kind"], rr["digest"]) == ("reader", "verified", hr["digest"])
    heir.send_signal(signal.SIGTERM)
    finish(heir)
    assert waiters(d) is None, "tiny-cnn outlived its last loader"


@pytest.mark.parametrize("lang", ["c", "py"])
def test_reader_catches_wrong_bytes(setup, lang):
    """A reader expecting other weights (another seed) names the first byte that differs,
    and one that gives up waiting says so: the check can fail."""
    filler = start("c", setup, "--hold-ms", "60000")
    read_until(filler, "holding")
    _, err = finish(start(lang, setup, "--timeout-ms", "200"), rc=1)
    assert "still filling after 200 ms" in err, err
    filler.kill()
    finish(filler, rc=-signal.SIGKILL)
    filler = start("c", setup, "--stay")
    read_until(filler, "staying")
    _, err = finish(start(lang, setup, "--seed", "2"), rc=1)
    assert re.search(r"conv1\.w page 0 \(bank \d+ address 0x[0-9a-f]+\): byte \d+ is 0x[0-9a-f]{2}, "
                     r"not 0x[0-9a-f]{2}", err), err
    filler.send_signal(signal.SIGTERM)
    finish(filler)


@pytest.mark.parametrize("lang", ["c", "py"])
def test_device_smaller_than_memd_says(setup, lang):
    """A device with fewer or smaller banks than memd's map is refused, naming the page."""
    dev, path = standin_device(4, 1 << 20)
    try:
        _, err = finish(start(lang, setup, device=path), rc=1)
        assert re.search(r"conv\S+ page \d+ is at bank \d+ address 0x[0-9a-f]+, past the "
                         r"stand-in device \(4 banks of 1048576 bytes\)", err), err
    finally:
        stop_standin_device(dev, path)
