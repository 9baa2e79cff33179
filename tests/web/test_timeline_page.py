"""The streams timeline (grader/tools/timeline.h) in headless Chromium, on a hand-built 10-streams grade
result (fixtures/grade-streams.json; no GPU): `labkit grade --from` draws its grade page (--html)
and the SVG file beside the terminal report (--svg), whose path the report names. In the page and
in the file: one chart per side (lab, baseline), one bar per recorded copy, kernel and memset, the
bars' kinds as recorded, every kernel's name shown as the text it is in its bar's title (hostile
markup included, nothing of it run or parsed), the overlap shaded, and the caption's overlap
fraction equal to one computed here from the records by the evidence's rule. Saves timeline.png.
  usage: test_timeline_page.py LABKIT FIXTURE OUT_DIR
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gradecheck import check_grade_page  # noqa: E402
from pagecheck import Checks, browser_or_skip, open_page, printable  # noqa: E402

labkit, fixture, out = sys.argv[1:4]
c = Checks("web-timeline")
b = browser_or_skip(out, "timeline")

CHARTS_JS = r"""
Array.prototype.map.call(document.querySelectorAll('svg.timeline'), function (s) {
  return {
    side: s.getAttribute('data-side'),
    caption: (s.querySelector('text.caption') || {}).textContent || '',
    text: s.textContent,
    overlaps: s.querySelectorAll('rect.overlap').length,
    bars: Array.prototype.map.call(s.querySelectorAll('rect.bar'), function (r) {
      var t = r.querySelector('title'), box = r.getBoundingClientRect();
      return {kind: r.getAttribute('data-kind'), title: t ? t.textContent : null, children: r.children.length,
              width: box.width, height: box.height};
    })
  };
})
"""


def overlap_fraction(records):
    """activity::summarize's rule, written again: time in which a kernel runs on one stream while a
    kernel or a copy runs on another (memsets do not count), over the time anything runs."""
    edges = sorted({x for r in records for x in (r["start_ms"], r["end_ms"])})
    busy = overlap = 0.0
    for a, z in zip(edges, edges[1:]):
        mid = (a + z) / 2
        running = [r for r in records if r["start_ms"] < mid < r["end_ms"]]
        if running:
            busy += z - a
        kernel_streams = {r["stream"] for r in running if r["kind"] == "kernel"}
        work_streams = {r["stream"] for r in running if r["kind"] != "memset"}
        if kernel_streams and len(work_streams) >= 2:
            overlap += z - a
    return overlap, busy


def check_charts(where, timelines, kernels_named):
    charts = b.js(CHARTS_JS)
    c.equal([x["side"] for x in charts], [t["side"] for t in timelines], f"{where}: one chart per side, in order")
    for chart, t in zip(charts, timelines):
        side, records = t["side"], t["records"]
        c.equal(len(chart["bars"]), len(records), f"{where}: {side}: one bar per recorded copy, kernel and memset")
        c.equal(sorted(x["kind"] for x in chart["bars"]), sorted(r["kind"] for r in records), f"{where}: {side}: bar kinds")
        c.check(all(x["children"] == 1 and x["title"] for x in chart["bars"]),
                f"{where}: {side}: a bar without its one <title> (a name broke out of it)")
        c.check(all(x["width"] > 0 and x["height"] > 0 for x in chart["bars"]), f"{where}: {side}: a bar not drawn")
        titles = [x["title"] for x in chart["bars"]]
        for r in records:
            if r["kind"] == "kernel":
                name = r.get("name", "")
                c.check(any(title.startswith(f"kernel {name}, stream {r['stream']},") for title in titles),
                        f"{where}: {side}: kernel {name!r} is not shown as text in a bar's title")
        overlap, busy = overlap_fraction(records)
        want = f"overlap {overlap:.3f} ms of {busy:.3f} ms busy ({100 * overlap / busy:.1f}%)"
        c.check(chart["caption"].startswith(want), f"{where}: {side}: caption {chart['caption']!r}, want {want!r}...")
        c.check((chart["overlaps"] > 0) == (overlap > 0), f"{where}: {side}: {chart['overlaps']} shaded spans for {overlap:.3f} ms")
        for s in sorted({r["stream"] for r in records}):  # every stream that ran something has a lane
            c.check(f"stream {s} " in chart["text"], f"{where}: {side}: no lane of stream {s}")
    c.check(kernels_named, "the fixture names no hostile kernel")
    c.equal(b.js("document.querySelectorAll('svg.timeline script, svg.timeline img, svg.timeline foreignObject,"
                 " svg.timeline svg').length"), 0, f"{where}: elements made from a kernel's name")
    c.equal(b.js("typeof window.__pwned"), "undefined", f"{where}: markup from a kernel's name ran")


try:
    result = json.load(open(fixture))["results"][0]
    timelines = result["timeline"]
    hostile = [r["name"] for t in timelines for r in t["records"] if r["kind"] == "kernel" and "<" in r.get("name", "")]

    # The terminal report names the SVG it wrote; --json keeps stdout JSON and names it on stderr.
    folder = os.path.join(out, "timeline-svg")
    p = subprocess.run([labkit, "grade", "--from", fixture, "--svg", folder], capture_output=True, text=True, timeout=60)
    c.equal(p.returncode, 0, f"grade --from (text): exit status ({p.stderr.strip()[-300:]})")
    svg = os.path.abspath(os.path.join(folder, "10-streams-timeline.svg"))
    c.check(re.search(r"Timeline picture .*: " + re.escape(svg) + "$", p.stdout, re.M),
            f"the terminal report does not name {svg}: {p.stdout[-400:]!r}")
    c.check("Timeline of the recorded layer (conv1 B=1000" in p.stdout, "the terminal report has no timeline lines")
    page = os.path.join(out, "timeline.html")
    p = subprocess.run([labkit, "grade", "--from", fixture, "--json", "--html", page, "--svg", folder],
                       capture_output=True, text=True, timeout=60)
    c.equal(p.returncode, 0, f"grade --from --json: exit status ({p.stderr.strip()[-300:]})")
    c.equal(json.loads(p.stdout)["results"][0]["timeline"], timelines, "--json: the timeline as read")
    c.check(svg in p.stderr, f"--json: stderr does not name {svg}")

    # The grade page: the usual checks, then the timeline section.
    check_grade_page(b, c, page, result)
    c.check(b.js("!!document.getElementById('timeline-section')"), f"{page}: no timeline section")
    check_charts(page, timelines, hostile)
    printable(b, c, page)
    b.screenshot(os.path.join(out, "timeline.png"))

    # The SVG file: a document of its own (a parse error would show instead), both charts.
    requests = b.open_offline(svg)
    c.equal([u for u in requests if u != "file://" + svg], [], f"{svg}: requests besides the file itself")
    c.equal(b.js("document.documentElement.tagName"), "svg", f"{svg}: not an SVG document")
    c.equal(b.js("document.getElementsByTagName('parsererror').length"), 0, f"{svg}: XML parse error")
    check_charts(svg, timelines, hostile)
    c.check(all(name in b.js("document.documentElement.textContent") for name in hostile),
            f"{svg}: a hostile name is not in the text")
finally:
    b.close()
c.finish()
