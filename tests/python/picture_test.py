"""memctl dump --html / --svg as a person sees them: a real daemon holds lockstep, bank-set
and per-bank buffers of two client processes that share a program (python3) but not a
client name; headless Chromium (Debian's `chromium`) renders the page and the SVG at two
window sizes. The page's own layout is asked in the browser (a copy of the page with a
short script that writes what it measured into the DOM, read back with --dump-dom): the
picture fits the window, each bank-set buffer sits in its banks' rows on the side its
class grows from, the legend names the clients, the table gives human sizes. The PNG
screenshots are decoded here (zlib + struct) to check the buffers are drawn where the
DOM says. Screenshots: BUILD/tests/python/pictures/*.png.

usage: picture_test.py BUILD_DIR SOURCE_DIR   (exit 77: no chromium)"""
import math
import os
import re
import sys

BUILD, SRC = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SRC, "tests", "common"))
from tap import check, done  # noqa: E402
from chromium import chromium, dom_json, near, picture_daemon, read_png  # noqa: E402

# Window sizes and the screenshot's device scale. The narrow window is shot as a HiDPI
# screen shows it: at scale 1 an SRAM bank's row is 1.4 px tall, so every pixel in it is a
# blend of its fill, its owner band and the next row's, and no pixel has the class colour.
SIZES = [(1280, 800, 1), (600, 900, 2)]
INTERNAL = (0xb0, 0x7a, 0xa1)  # class internal's fill in memctl_svg.c


# Measured in the page: the window, the page's scroll width, the picture's box, every
# per-bank buffer's box (with its title), the legend's owners and the table's size cells.
PROBE = """<script>
window.addEventListener('load', () => {
  const svg = document.querySelector('#map svg'), sb = svg.getBoundingClientRect();
  const boxes = [...document.querySelectorAll('g.perbank g')].map(g => {
    const r = g.querySelector('rect').getBoundingClientRect();
    return {x: r.x, y: r.y, w: r.width, h: r.height, title: g.querySelector('title').textContent};
  });
  const facts = {inner: window.innerWidth, scroll: document.documentElement.scrollWidth,
    svg: {x: sb.x, y: sb.y, w: sb.width, h: sb.height},
    rows: [...document.querySelectorAll('g.perbank > rect')].map(r => r.getBoundingClientRect().y),
    boxes: boxes, owners: [...document.querySelectorAll('text.owner')].map(t => t.textContent),
    sizes: [...document.querySelectorAll('#largest td[title]')].map(t => t.textContent),
    table: document.querySelector('#largest').textContent};
  const pre = document.createElement('pre');
  pre.id = 'facts';
  pre.textContent = JSON.stringify(facts);
  document.body.appendChild(pre);
});
</script>"""

HOLDER = """import sys, memd
c = memd.Client(sys.argv[1], name=sys.argv[2])
bufs = [c.alloc(0, "constant", 4 << 20)]
if sys.argv[2] == "decoder":
    bufs.append(c.alloc(0, "internal", 64 << 10, scope="sram", bank_set=[0, 1, 2, 3]))
else:
    bufs.append(c.alloc(0, "internal", 32 << 10, scope="sram", bank_set=[5, 9], per_bank=True))
print(" ".join(str(b.handle) for b in bufs), flush=True)
sys.stdin.read()
"""

CLIENTS = ("decoder", "encoder")
with picture_daemon(BUILD, SRC, "memd-pictures-", HOLDER, CLIENTS) as (d, tmp, out, procs):
    holders = [p.stdout.readline().split() for p in procs]
    check(all(len(h) == 2 for h in holders), "two clients hold their buffers")
    html, svg = os.path.join(tmp, "map.html"), os.path.join(tmp, "map.svg")
    d.memctl("dump", "--html", html)
    d.memctl("dump", "--svg", svg)
    page = open(html).read()
    probe = os.path.join(tmp, "probe.html")
    with open(probe, "w") as f:
        f.write(page.replace("</body>", PROBE + "</body>"))
    check(re.search(r"<svg [^>]*width=\"100%\"", page) is not None and "width=\"1610\"" not in page,
          "the picture has no fixed width")
    for w, h, scale in SIZES:
        profile = os.path.join(tmp, "profile-%d" % w)
        zoom = "--force-device-scale-factor=%d" % scale  # measured as shot
        dom = chromium(profile, w, h, zoom, "--virtual-time-budget=5000", "--dump-dom",
                       "file://" + probe)
        facts = dom_json(dom, "facts")
        check(facts is not None, "%dx%d: the page's measurements came back" % (w, h))
        if not facts:
            continue
        check(facts["scroll"] <= facts["inner"], "%dx%d: no horizontal scrolling (%s <= %s)"
              % (w, h, facts["scroll"], facts["inner"]))
        sv = facts["svg"]
        check(sv["x"] >= 0 and sv["x"] + sv["w"] <= facts["inner"] + 0.5,
              "%dx%d: the picture fits the window (%.0f..%.0f)" % (w, h, sv["x"], sv["x"] + sv["w"]))
        rows = facts["rows"]
        check(len(rows) == 64, "%dx%d: a row per SRAM bank (%d)" % (w, h, len(rows)))
        boxes = facts["boxes"]
        banks = sorted(int(re.match(r"bank (\d+):", b["title"]).group(1)) for b in boxes)
        check(banks == [0, 1, 2, 3, 5, 9], "%dx%d: the bank-set buffers drawn in banks %s"
              % (w, h, banks))
        for b in boxes:
            bank = int(re.match(r"bank (\d+):", b["title"]).group(1))
            row_ok = len(rows) == 64 and abs(b["y"] - rows[bank]) < 0.6
            right = b["x"] > sv["x"] + sv["w"] / 2  # internal grows top-down: high addresses
            who = "client decoder" if bank < 4 else "client encoder"
            check(row_ok and right and b["w"] >= 1 and who in b["title"],
                  "%dx%d: bank %d's buffer in its row, on the right, its client named: %s"
                  % (w, h, bank, b))
        owners = " ".join(facts["owners"])
        check("decoder: python3" in owners and "encoder: python3" in owners,
              "%dx%d: the legend tells the clients apart: %s" % (w, h, facts["owners"]))
        check("decoder" in facts["table"] and "encoder" in facts["table"],
              "%dx%d: the table names the clients" % (w, h))
        check("64.0 KiB" in facts["sizes"] and "4.0 MiB" in facts["sizes"],
              "%dx%d: human sizes in the table: %s" % (w, h, facts["sizes"]))
        # What the eye sees: the screenshots, checked where the DOM put the buffers.
        for what, url in (("html", html), ("svg", svg)):
            png = os.path.join(out, "map-%s-%dx%d.png" % (what, w, h))
            if os.path.exists(png):
                os.unlink(png)
            chromium(profile, w, h, zoom, "--screenshot=" + png, "file://" + url)
            pw, ph, px = read_png(png)
            # Where the page put each buffer; the SVG alone is drawn from the window's
            # corner at the window's width.
            k = scale * (w / sv["w"] if what == "svg" else 1.0)
            ox, oy = (sv["x"], sv["y"]) if what == "svg" else (0, 0)
            seen = []
            for b in boxes:
                cx = int((b["x"] + b["w"] / 2 - ox) * k)
                # The pixel row the fill below the owner band (its top third) covers most:
                # a row the box only partly covers is a blend with its neighbours.
                top, bottom = (b["y"] + b["h"] / 3 - oy) * k, (b["y"] + b["h"] - oy) * k
                cy = max(range(int(top), math.ceil(bottom)),
                         key=lambda r: min(r + 1, bottom) - max(r, top))
                covered = min(cy + 1, bottom) - max(cy, top) >= 0.9
                seen.append(covered and cy < ph and cx < pw and near(px[cy][cx], INTERNAL, 60))
            check(pw == w * scale and len(seen) == 6 and all(seen),
                  "%s %dx%d: each bank-set buffer's pixel has its class colour (%s): %s"
                  % (what, w, h, seen, png))
    devices = d.memctl("devices").stdout
    sram = [l for l in devices.splitlines() if l.strip().startswith(("sram", "buffers"))]
    check(len(sram) == 2 and all("0 B-64.0 KiB" in l for l in sram),
          "memctl devices: bank-set buffers counted in ALLOCATED: %s" % sram)
done()
