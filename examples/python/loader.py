#!/usr/bin/env python3
"""memd example: a runtime's model loader in Python, the same loop as examples/c/loader.c
(see examples/README.md).

    loader.py --standin PATH --model FILE.yaml [--socket PATH] [--device N] [--seed N]
              [--hold-ms MS] [--timeout-ms MS] [--stay]

Every process of the runtime runs the same code: load the model; memd makes one of them
its filler (LoadedModel.created), which writes each weight page by page where
LoadedModel.locate says the page is (bank id, bank-local address) and then calls
set_ready(). load_model() makes every other process wait until then; it then uses the
weights: here it reads every page back and checks the bytes. A waiter whose filler died
before set_ready() is handed the job (created) and fills instead.

The weights are made-up bytes a reader can check, the C loader's: for weight NAME, byte i
is byte i % 8 (little-endian) of splitmix64 word i // 8 of the key FNV-1a-64(NAME) ^ seed.
The "device" is a stand-in (StandinDevice); the rest is what a runtime does with its own
driver.
"""
import argparse
import mmap
import os
import signal
import socket
import struct
import sys
import time
import zlib

import memd

SHOWN_PAGES = 24  # a weight's line lists the banks of its first pages
M64 = (1 << 64) - 1
FNV_OFFSET, FNV_PRIME = 0xcbf29ce484222325, 0x100000001b3
GOLDEN = 0x9e3779b97f4a7c15


def fnv1a(h, data):
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & M64
    return h


def splitmix(key, k):
    """splitmix64's output for the k-th step from key."""
    z = (key + (k + 1) * GOLDEN) & M64
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)


def weight_bytes(key, off, n):
    """Bytes [off, off + n) of the weight whose key is key."""
    first, last = off // 8, (off + n + 7) // 8
    words = struct.pack(f"<{last - first}Q", *(splitmix(key, k) for k in range(first, last)))
    return words[off - first * 8:off - first * 8 + n]


class StandinDevice:
    """EXAMPLE ONLY: the stand-in for a device driver (examples/c/standin.h): the memfds,
    one per bank, that the standin-device program hands to whoever connects to its
    socket, each mapped like a device's memory window. A real runtime writes through its
    driver instead."""

    def __init__(self, path):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            try:
                s.connect(path)
            except OSError as e:
                raise SystemExit(f"stand-in device {path}: {e.strerror} "
                                 f"(is standin-device running?)")
            text, fds, _, _ = socket.recv_fds(s, 128, 64)
        try:
            fields = dict(f.split("=") for f in text.decode().split()[1:])
            banks, self.bank_size = int(fields["banks"]), int(fields["bank_size"])
            if not text.startswith(b"memd-standin ") or banks != len(fds):
                raise ValueError
            self.banks = [mmap.mmap(fd, self.bank_size) for fd in fds]
        except (ValueError, KeyError):
            raise SystemExit(f"stand-in device {path}: not a stand-in device's answer")
        finally:
            for fd in fds:  # the mappings keep the memory
                os.close(fd)

    def check(self, name, page, loc, n):
        if loc.bank >= len(self.banks) or loc.address + n > self.bank_size:
            raise SystemExit(f"loader: {name} page {page} is at bank {loc.bank} address "
                             f"{loc.address:#x}, past the stand-in device ({len(self.banks)} "
                             f"banks of {self.bank_size} bytes)")

    def write(self, bank, address, data):
        self.banks[bank][address:address + len(data)] = data

    def read(self, bank, address, n):
        return self.banks[bank][address:address + n]


def walk_weights(lm, dev, fill, seed):
    """Writes (fill) or reads back and checks every weight of the loaded model, page by
    page, in the model's tensor order: the summary (tensors, pages, banks, bytes, digest)."""
    step = lm.client.query(lm.const_handle)["page_size"] if lm.weights else 0
    tensors = pages = nbytes = digest = 0
    banks = set()
    for t in lm.model.tensors:
        if t.name not in lm.weights:
            continue
        key = fnv1a(FNV_OFFSET, t.name.encode()) ^ seed
        seen = []
        # Weights start on a page, so each step is one page of the constants buffer (the
        # last one shorter), all of it in one bank.
        offsets = range(0, t.bytes, step)
        for off, loc in zip(offsets, lm.locate(t.name, offsets)):
            n = min(step, t.bytes - off)
            dev.check(t.name, len(seen), loc, n)
            want = weight_bytes(key, off, n)
            # With a real device: the driver's write or read of n bytes at loc.address of
            # bank loc.bank (or at loc.absolute, or through the core at loc.noc).
            if fill:
                dev.write(loc.bank, loc.address, want)
                got = want
            else:
                got = dev.read(loc.bank, loc.address, n)
                if got != want:
                    k = next(i for i in range(n) if got[i] != want[i])
                    raise SystemExit(f"loader: {t.name} page {len(seen)} (bank {loc.bank} "
                                     f"address {loc.address:#x}): byte {off + k} is "
                                     f"{got[k]:#04x}, not {want[k]:#04x}")
            digest = zlib.crc32(got, digest)
            seen.append(loc.bank)
        print(" ".join([f"tensor {t.name}: {t.bytes} bytes, {len(seen)} pages, banks"]
                       + [str(b) for b in seen[:SHOWN_PAGES]]
                       + (["..."] if len(seen) > SHOWN_PAGES else [])))
        tensors, pages, nbytes = tensors + 1, pages + len(seen), nbytes + t.bytes
        banks.update(seen)
    if not tensors:
        print("the model has no weights")
        return
    print(f"{'filled' if fill else 'verified'} {tensors} tensors, {pages} pages, {len(banks)} "
          f"banks, {nbytes} bytes, digest {digest:08x}")


def main():
    p = argparse.ArgumentParser(description="Loads the model; the process memd makes the "
                                "filler writes every weight page by page into the stand-in "
                                "device and sets the model ready, any other process waits for "
                                "ready and reads the weights back, checking every byte.")
    p.add_argument("--socket", help="memd's socket (default: $MEMD_SOCKET, else memd's default)")
    p.add_argument("--standin", required=True, help="the stand-in device's socket")
    p.add_argument("--model", required=True, help="a model YAML (doc/models.md)")
    p.add_argument("--device", type=int, help="memd device (default: the model's, else 0)")
    p.add_argument("--seed", type=int, default=1,
                   help="the made-up weights' seed (default 1; readers need the filler's)")
    p.add_argument("--hold-ms", type=int, default=0,
                   help="the filler waits MS before set_ready (watch `memctl model list`)")
    p.add_argument("--timeout-ms", type=int, help="a waiter gives up after MS (default: no limit)")
    p.add_argument("--stay", action="store_true",
                   help="keep the model loaded until SIGINT or SIGTERM (a serving runtime)")
    a = p.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # progress lines as they happen, also into a pipe
    if a.stay:  # the signals wait for sigwait, so the model is always released cleanly
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    model = memd.Model.from_yaml(a.model)
    dev = StandinDevice(a.standin)
    with memd.connect(a.socket, name="loader") as c:
        t0 = time.monotonic()
        # Waits while another process fills the weights; when that one leaves without
        # set_ready(), this process is handed the job (created).
        lm = c.load_model(model, device=a.device,
                          timeout=None if a.timeout_ms is None else a.timeout_ms / 1000)
        print(f"model {lm.name} on device {lm.device}: page {lm.page_size} bytes, "
              f"{'filler' if lm.created else 'reader'} after {(time.monotonic() - t0) * 1000:.0f} ms")
        walk_weights(lm, dev, lm.created, a.seed)
        if lm.created:
            if a.hold_ms:
                print(f"holding {a.hold_ms} ms before set_ready")
                time.sleep(a.hold_ms / 1000)
            lm.set_ready()
            print("set ready")
        if a.stay:
            print("staying; SIGINT or SIGTERM ends")
            signal.sigwait({signal.SIGINT, signal.SIGTERM})


if __name__ == "__main__":
    try:
        main()
    except memd.Error as e:
        sys.exit(f"loader: {e}")
