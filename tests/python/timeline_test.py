"""memctl history --html as a person sees it: a real daemon records a short scripted
workload of two client processes that share a program (python3) but not a client name
(allocations and frees over time in named contexts with stacks, a bank-set buffer still
held in four SRAM banks, one freed, a refused allocation); memctl history --html writes
the page. The file must name no URL and embed the records as valid JSON; headless
Chromium (Debian's `chromium`) runs its script at two window sizes and a short probe
script added to a copy of the page reports what was drawn and where (read back with
--dump-dom): a band per allocation and bank, in the right panels, inside the window, the
legend naming both clients, a peak marker, a hover tooltip with who/what/context/stack,
wheel zoom and reset. The PNG screenshots are decoded to check the bands' pixels have
their process's colour. Screenshots: BUILD/tests/python/pictures/timeline-*.png.

usage: timeline_test.py BUILD_DIR SOURCE_DIR   (exit 77: no chromium)"""
import json
import os
import re
import sys
import time

BUILD, SRC = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SRC, "tests", "common"))
from tap import check, done  # noqa: E402
from chromium import chromium, dom_json, near, picture_daemon, read_png  # noqa: E402

SIZES = [(1280, 800), (800, 600)]


# Two processes: each does its steps, then says "done" and holds what is left until its
# stdin closes. trainer: weights (held), a step's 2 MiB freed, a 64 KiB bank-set buffer in
# SRAM banks 0-3 (held), a 32 KiB one in banks 5 and 9 (freed), a refused 1 TiB; loader:
# a 4 MiB batch (freed), 1 MiB (held). Stacks recorded: the tooltip shows them.
WORKER = """import sys, time, memd
c = memd.Client(sys.argv[1], name=sys.argv[2])
memd.record_stacks(True)
MiB = 1 << 20
def trainer():
    with c.context("trainer/weights"):
        keep = [c.alloc(0, "constant", 8 * MiB, name="weights")]
    time.sleep(0.15)
    with c.context("trainer/step1"):
        a = c.alloc(0, "internal", 2 * MiB)
        time.sleep(0.15)
        c.free(a)
    with c.context("trainer/sram"):
        keep.append(c.alloc(0, "internal", 64 << 10, scope="sram", bank_set=[0, 1, 2, 3]))
        b = c.alloc(0, "internal", 32 << 10, scope="sram", bank_set=[5, 9])
        time.sleep(0.1)
        c.free(b)
    try:
        c.alloc(0, "constant", 1 << 40)
    except memd.Error:
        pass
    return keep
def loader():
    time.sleep(0.05)
    with c.context("loader/batch"):
        a = c.alloc(0, "placeholder", 4 * MiB)
        time.sleep(0.2)
        c.free(a)
    return [c.alloc(0, "placeholder", MiB)]
held = trainer() if sys.argv[2] == "trainer" else loader()
print("done", flush=True)
sys.stdin.read()
"""
ALLOCATIONS = 6       # bands: every alloc above, each once
RECTS = 9             # drawn: the held bank-set buffer once in each of its 4 banks
SRAM_PANELS = ["bank 0", "bank 1", "bank 2", "bank 3",
               "bank sets, freed (banks not recorded)"]

# In the browser, after the page's own script: what it drew and where, a hover on the
# bank-set buffer in bank 2, a wheel zoom (the time range shrinks) and the reset button.
PROBE = """<script>
window.addEventListener('load', () => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; };
  const panels = [...document.querySelectorAll('.panel')].map(p => ({
    region: p.closest('.region').querySelector('h2').textContent,
    name: p.querySelector('.name').textContent, svg: box(p.querySelector('svg')),
    bands: [...p.querySelectorAll('rect.band')].map(r => Object.assign(box(r),
      {fill: getComputedStyle(r).fill})),
    peak: p.querySelectorAll('line.peak').length, fails: p.querySelectorAll('path.fail').length}));
  const facts = {inner: window.innerWidth, scroll: document.documentElement.scrollWidth,
    summary: Object.assign({}, document.getElementById('summary').dataset), panels: panels,
    owners: [...document.querySelectorAll('#legend .owner')].map(o => o.textContent)};
  const target = [...document.querySelectorAll('.panel')].find(p =>
    p.querySelector('.name').textContent === 'bank 2').querySelector('rect.band');
  const tb = target.getBoundingClientRect();
  target.dispatchEvent(new PointerEvent('pointermove', {bubbles: true,
    clientX: tb.x + tb.width / 2, clientY: tb.y + tb.height / 2}));
  const tip = document.getElementById('tip');
  facts.tip = tip.style.display === 'block' ? tip.innerText : '';
  const range = () => document.getElementById('range').textContent;
  facts.range = range();
  const svg = target.closest('svg'), sb = svg.getBoundingClientRect();
  svg.dispatchEvent(new WheelEvent('wheel', {bubbles: true, cancelable: true, deltaY: -600,
    clientX: sb.x + sb.width * 0.6, clientY: sb.y + sb.height / 2}));
  facts.zoomed = range();
  // Shown bands (zoomed, some are out of view) and whether each lies inside its panel.
  const shown = () => [...document.querySelectorAll('rect.band')].filter(r =>
    r.style.display !== 'none').map(r => {
      const b = r.getBoundingClientRect(), s = r.closest('svg').getBoundingClientRect();
      return b.x >= s.x - 0.5 && b.right <= s.right + 0.5; });
  facts.zoomedShown = shown();
  document.getElementById('reset').click();
  facts.reset = range();
  facts.resetShown = shown();
  const pre = document.createElement('pre');
  pre.id = 'facts';
  pre.style.display = 'none';
  pre.textContent = JSON.stringify(facts);
  document.body.appendChild(pre);
});
</script>"""


def rgb(css):
    return tuple(int(v) for v in re.findall(r"\d+", css)[:3])


CLIENTS = ("trainer", "loader")
with picture_daemon(BUILD, SRC, "memd-timeline-", WORKER, CLIENTS) as (d, tmp, out, workers):
    check(all(p.stdout.readline().strip() == "done" for p in workers),
          "both clients ran their steps")
    page_path = os.path.join(tmp, "timeline.html")
    d.memctl("history", "--html", page_path)
    records = [json.loads(l) for l in d.memctl("history", "--json").stdout.splitlines()]
    page = open(page_path, encoding="utf-8").read()
    print("page: %s, %d bytes" % (page_path, len(page)))
    check(re.search(r"https?:|<link|\bsrc=", page, re.I) is None,
          "the page names no URL and loads nothing")
    m = re.search(r'<script id="memd-data" type="application/json">(.*?)</script>', page, re.S)
    data = json.loads(m.group(1)) if m else {}
    check([e["seq"] for e in data.get("events", [])] == [e["seq"] for e in records],
          "the embedded JSON has every record memctl history --json lists (%d)" % len(records))
    mine = [e for e in data.get("events", []) if e["client"] in ("trainer", "loader")]
    kinds = sorted((e["client"], e["type"]) for e in mine)
    check(kinds.count(("trainer", "alloc")) == 4 and kinds.count(("trainer", "free")) == 2
          and kinds.count(("trainer", "fail")) == 1 and kinds.count(("loader", "alloc")) == 2
          and kinds.count(("loader", "free")) == 1, "the records of both clients: %s" % kinds)
    check(any(e["context"] == "trainer/sram" and e["banks"] == 4 and "trainer" in e["stack"]
              for e in mine), "a record carries its context and stack")
    check(len(data.get("bank_sets", [])) == 4, "the held bank-set buffer's banks come along")

    probe = os.path.join(tmp, "probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(page.replace("</body>", PROBE + "</body>"))
    for w, h in SIZES:
        profile = os.path.join(tmp, "profile-%d" % w)
        facts = dom_json(chromium(profile, w, h, "--virtual-time-budget=5000", "--dump-dom",
                                  "file://" + probe), "facts")
        check(facts is not None, "%dx%d: the page's script ran and the probe reported" % (w, h))
        if not facts:
            continue
        s = facts["summary"]
        check(s.get("allocations") == str(ALLOCATIONS) and s.get("rects") == str(RECTS),
              "%dx%d: a band per allocation (%s of %d), %s rectangles drawn (%d expected)"
              % (w, h, s.get("allocations"), ALLOCATIONS, s.get("rects"), RECTS))
        check(s.get("owners") == "2" and s.get("fails") == "1",
              "%dx%d: two processes, one refusal: %s" % (w, h, s))
        check(facts["scroll"] <= facts["inner"], "%dx%d: no horizontal scrolling (%s <= %s)"
              % (w, h, facts["scroll"], facts["inner"]))
        panels = facts["panels"]
        sram = [p["name"] for p in panels if "sram" in p["region"]]
        check(sram == SRAM_PANELS, "%dx%d: SRAM panels side by side: %s" % (w, h, sram))
        rows = {}
        for p in panels:
            rows.setdefault(round(p["svg"]["y"]), []).append(p["name"])
        check(any(len(v) > 1 for v in rows.values()),
              "%dx%d: panels share a row: %s" % (w, h, list(rows.values())))
        for p in panels:
            sv = p["svg"]
            inside = all(b["x"] >= sv["x"] - 0.5 and b["x"] + b["w"] <= sv["x"] + sv["w"] + 0.5
                         and b["y"] >= sv["y"] - 0.5 and b["y"] + b["h"] <= sv["y"] + sv["h"] + 0.5
                         for b in p["bands"])
            check(sv["x"] >= 0 and sv["x"] + sv["w"] <= facts["inner"] and inside
                  and p["peak"] == 1,
                  "%dx%d: panel %s / %s fits the window, its %d bands inside it, a peak marker"
                  % (w, h, p["region"], p["name"], len(p["bands"])))
            if p["name"].startswith("bank "):
                check(len(p["bands"]) == 1, "%dx%d: %s holds the bank-set buffer"
                      % (w, h, p["name"]))
        check(sum(p["fails"] for p in panels) == 1, "%dx%d: the refusal is marked" % (w, h))
        owners = " | ".join(facts["owners"])
        check(re.search(r"trainer: python3 \(\d+\)", owners) and
              re.search(r"loader: python3 \(\d+\)", owners),
              "%dx%d: the legend names both clients: %s" % (w, h, owners))
        tip = facts["tip"]
        check("client trainer" in tip and "64.0 KiB per bank x 4 banks = 256.0 KiB" in tip
              and "trainer/sram" in tip and "device 0 sram/buffers, bank 2: 0x" in tip
              and "live at the end" in tip
              and re.search(r":\d+ trainer\n", tip),
              "%dx%d: hovering the bank-set buffer: who, what, context, stack: %r" % (w, h, tip))
        check(facts["zoomed"] != facts["range"] and facts["reset"] == facts["range"],
              "%dx%d: the wheel zooms (%s -> %s), reset restores"
              % (w, h, facts["range"], facts["zoomed"]))
        zs, rs = facts["zoomedShown"], facts["resetShown"]
        check(0 < len(zs) <= RECTS and all(zs) and len(rs) == RECTS and all(rs),
              "%dx%d: zoomed, %d bands in view, each inside its panel; reset: all %d"
              % (w, h, len(zs), len(rs)))

        png = os.path.join(out, "timeline-%dx%d.png" % (w, h))
        if os.path.exists(png):
            os.unlink(png)
        chromium(profile, w, h, "--screenshot=" + png, "file://" + page_path)
        print("screenshot: " + png)
        pw, ph, px = read_png(png)
        seen = []
        for p in panels:
            for b in p["bands"]:
                cx, cy = int(b["x"] + b["w"] / 2), int(b["y"] + b["h"] / 2)
                if b["w"] < 6 or b["h"] < 4 or cy >= ph or cx >= pw:
                    continue  # below the fold, or too thin to hit its middle
                want = tuple(round(c * 0.85 + 255 * 0.15) for c in rgb(b["fill"]))  # opacity
                # Along the band's middle row: most pixels (the peak line may cross it).
                row = px[cy][int(b["x"]) + 2:min(pw, int(b["x"] + b["w"]) - 1)]
                share = sum(near(c, want, 20) for c in row) / max(1, len(row))
                seen.append((share >= 0.8, (cx, cy), px[cy][cx], want))
        check(pw == w and len(seen) >= 3 and all(ok for ok, *_ in seen),
              "%dx%d: the bands' pixels have their process's colour (%s): %s"
              % (w, h, seen, png))
    # Held buffers older than the records shown (--since: none in the last second) come
    # from the dump: the weights, the bank-set buffer in its 4 banks, the loader's 1 MiB.
    time.sleep(1.2)
    since_path = os.path.join(tmp, "since.html")
    d.memctl("history", "--html", since_path, "--since", "1s")
    facts = re.search(r'<div id="summary"[^>]*>', chromium(
        os.path.join(tmp, "profile-since"), 1280, 800, "--virtual-time-budget=5000",
        "--dump-dom", "file://" + since_path))
    held = dict(re.findall(r'data-([a-z]+)="(\d+)"', facts.group(0))) if facts else {}
    check(held.get("allocations") == "3" and held.get("rects") == "6" and
          held.get("owners") == "2", "--since 1s: the held buffers drawn from the dump: %s" % held)
done()
