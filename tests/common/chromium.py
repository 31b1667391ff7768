"""Headless Chromium (Debian's `chromium`) for the tests of memctl's pictures: run it on a
page (--dump-dom, --screenshot) and read the PNG it writes (zlib + struct, no imaging
library). CHROMIUM is None where it is not installed: the tests skip (exit 77)."""
import contextlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

from memd_daemon import Daemon

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def require_chromium():
    """Ends a test where Chromium is not installed: exit 77, meson's "skipped"."""
    if not CHROMIUM:
        print("no chromium here: skipped")
        sys.exit(77)


def pictures_dir(build):
    """Where the tests keep their screenshots: BUILD/tests/python/pictures."""
    return os.path.join(build, "tests", "python", "pictures")


@contextlib.contextmanager
def picture_daemon(build, src, prefix, script, names):
    """The set-up the picture tests share: skipped without Chromium, the pictures folder,
    a scratch folder, a daemon on config/memd.yaml and one client process per name
    running script (argv: socket, name) with piped stdin/stdout. Yields (daemon, scratch
    folder, pictures folder, processes); on the way out closes each process's stdin (the
    scripts hold their buffers until then), waits for it and removes the daemon and the
    scratch folder."""
    require_chromium()
    out = pictures_dir(build)
    os.makedirs(out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=prefix)
    d = Daemon(os.path.join(build, "daemon", "memd"), os.path.join(src, "config", "memd.yaml"),
               memctl=os.path.join(build, "tools", "memctl", "memctl"), prefix=prefix)
    procs = []
    try:
        for name in names:
            procs.append(subprocess.Popen([sys.executable, "-c", script, d.socket, name],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          text=True))
        yield d, tmp, out, procs
    finally:
        for p in procs:
            p.stdin.close()
            p.wait(timeout=20)
        d.stop()
        d.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


def chromium(profile, w, h, *args):
    """Chromium's stdout for args, in a window of w x h with its own profile folder."""
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--user-data-dir=" + profile,
                        "--window-size=%d,%d" % (w, h)] + list(args),
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("chromium %s: exit %d: %s" % (args, r.returncode, r.stderr[-2000:]))
    return r.stdout


def read_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    assert depth == 8 and ctype in (2, 6) and not interlace, hdr
    bpp = 3 if ctype == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):  # undo the row filter
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def near(px, rgb, tol=12):
    return all(abs(a - b) <= tol for a, b in zip(px, rgb))


def dom_json(dom, elem_id):
    """The JSON a page's script put as the text of <pre id=elem_id>, from --dump-dom's
    HTML (None if absent)."""
    m = re.search(r'<pre id="%s"[^>]*>(.*?)</pre>' % elem_id, dom, re.S)
    if not m:
        return None
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<")
                      .replace("&gt;", ">").replace("&amp;", "&"))
