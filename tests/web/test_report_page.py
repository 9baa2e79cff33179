"""`labkit report --html` in headless Chromium, against the Markdown and CSV of the same runs.

The runs are a saved --compare report (fixtures/report-compare.json, the format of
`labkit report --format json`: seven implementations at batch 100, 1000 and 10000, one of them
failed, one graded on Layer Time, the lab runs with their physical floor), drawn by
`labkit report --from` as Markdown, CSV and a page. Checks what a reader sees: every table with
the Markdown's rows and cells, numbers equal to the CSV's, the chart with one bar per
implementation and the floor line, sorting by a click, the GPU, the method, print, no network;
and the --course page's table (its ratio column sorted by the ratio).
  usage: test_report_page.py LABKIT FIXTURE OUT_DIR
"""
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pagecheck import (Checks, click_sort, browser_or_skip, check_numeric_sort, md_tables, norm, open_page, printable,  # noqa: E402
                       tables, texts)

labkit, fixture, out = sys.argv[1:4]
c = Checks("web-report")
b = browser_or_skip(out, "report")


def report(*args):
    p = subprocess.run([labkit, "report", "--from", fixture, *args], capture_output=True, text=True, timeout=120)
    c.equal(p.returncode, 0, f"labkit report --from {' '.join(args)} exit status ({p.stderr.strip()})")
    return p.stdout


page = os.path.join(out, "report.html")
compare_md = report("--compare", "--svg", os.path.join(out, "report.svg"), "--html", page)
compare_csv = report("--compare", "--format", "csv", "--svg", os.path.join(out, "report-csv.svg"))
milestone_md = report()

runs = {}  # (name, batch) -> the saved run
batches = []
with open(fixture) as f:
    decoder, text, at = json.JSONDecoder(), f.read(), 0
    while text[at:].strip():
        doc, end = decoder.raw_decode(text, at + len(text[at:]) - len(text[at:].lstrip()))
        at = end
        for r in doc["runs"]:
            runs[(r["name"], r["batch"])] = r
            if r["batch"] not in batches:
                batches.append(r["batch"])
names = list(dict.fromkeys(name for name, _ in runs))

try:
    open_page(b, page, c)
    t = tables(b)

    # Where the Total Execution Time went (the Markdown's last table before the notes): the page's
    # #breakdown, cell for cell.
    def is_breakdown(table):
        return table[0].startswith("Where the Total Execution Time went")
    parts = [m for m in md_tables(compare_md) if is_breakdown(m)]
    if c.equal(len(parts), 1, "Markdown breakdown tables (comparison)") and c.check("breakdown" in t, "no table #breakdown"):
        caption, header, rows = parts[0]
        c.equal([norm(h) for h in t["breakdown"]["header"]], header, "#breakdown columns")
        c.equal(norm(t["breakdown"]["caption"]), norm(caption), "#breakdown caption")
        c.equal([texts(row) for row in t["breakdown"]["rows"]], [[norm(x) for x in r] for r in rows], "#breakdown rows")

    # Where a harness's start-up went (runs saved with startup_ms): the page's #startup, cell for
    # cell; a fixture without them has neither.
    def is_startup(table):
        return table[0].startswith("Where a harness's start-up went")
    starts = [m for m in md_tables(compare_md) if is_startup(m)]
    c.equal("startup" in t, bool(starts), "a table #startup where the Markdown has one")
    if starts and "startup" in t:
        caption, header, rows = starts[0]
        c.equal([norm(h) for h in t["startup"]["header"]], header, "#startup columns")
        c.equal(norm(t["startup"]["caption"]), norm(caption), "#startup caption")
        c.equal([texts(row) for row in t["startup"]["rows"]], [[norm(x) for x in r] for r in rows], "#startup rows")

    # The comparison: one table per batch, the Markdown's cells exactly, the CSV's numbers.
    md = [m for m in md_tables(compare_md) if not is_breakdown(m) and not is_startup(m)]
    c.equal(len(md), len(batches), "Markdown comparison tables")
    csv_blocks = [blk for blk in compare_csv.split("\n\n") if blk.strip()]
    for k, batch in enumerate(batches):
        tid = f"compare-{batch}"
        if not c.check(tid in t, f"no table #{tid} (tables: {sorted(t)})"):
            continue
        caption, header, rows = md[k]
        c.equal([norm(h) for h in t[tid]["header"]], header, f"#{tid} columns")
        c.equal(norm(t[tid]["caption"]), norm(caption), f"#{tid} caption")
        c.equal(len(t[tid]["rows"]), len(names), f"#{tid} rows (one per implementation)")
        for row, want in zip(t[tid]["rows"], rows):
            got = texts(row) + [""] * (len(header) - len(row))  # a failure: one cell across the row
            c.equal(got, [norm(x) for x in want], f"#{tid} row {want[0]}")
        lines = list(csv.DictReader(io.StringIO(csv_blocks[k])))
        for row, line in zip(t[tid]["rows"], lines):
            c.equal(norm(row[0]["text"]), line["implementation"], f"#{tid}: the CSV's implementation")
            if line["error"]:
                c.check(line["error"] in norm(row[1]["text"]), f"#{tid} {line['implementation']}: the CSV's error is not shown")
                continue
            for col, key, half_step in (("Conv 1", "conv1_ms", 5e-4), ("Conv 2", "conv2_ms", 5e-4),
                                        ("Conv total", "conv_total_ms", 5e-4), ("Accuracy", "accuracy", 5e-5),
                                        ("Total Execution Time", "total_execution_time_s", 5e-3)):
                cell = row[t[tid]["header"].index(col)]
                c.check(cell["sort"] is not None and abs(cell["sort"] - float(line[key])) <= half_step + 1e-12,
                        f"#{tid} {line['implementation']} {col}: page {cell['sort']}, CSV {line[key]}")

    # The milestone tables: one per implementation, the Markdown's cells exactly.
    md = [m for m in md_tables(milestone_md) if not is_breakdown(m) and not is_startup(m)]
    c.equal(len(md), len(names), "Markdown milestone tables")
    # Under each implementation's table, where its largest batch's time went (when that run worked).
    c.equal(sum(1 for m in md_tables(milestone_md) if is_breakdown(m)),
            sum(1 for n in names if "error" not in runs[(n, batches[-1])]),
            "Markdown breakdown tables (one per implementation whose largest batch ran)")
    for n, (caption, header, rows) in enumerate(md, start=1):
        tid = f"milestone-{n}"
        if not c.check(tid in t, f"no table #{tid}"):
            continue
        c.equal(norm(t[tid]["caption"]), norm(caption), f"#{tid} caption")
        c.equal([norm(h) for h in t[tid]["header"]], header, f"#{tid} columns")
        c.equal(len(t[tid]["rows"]), len(batches), f"#{tid} rows (one per batch)")
        for row, want in zip(t[tid]["rows"], rows):
            got = texts(row) + [""] * (len(header) - len(row))
            c.equal(got, [norm(x) for x in want], f"#{tid} row {want[0]}")

    # The chart: one bar per implementation that ran at the last batch, the floor where recorded.
    last = batches[-1]
    ran = [name for name in names if "error" not in runs[(name, last)]]
    bars = b.js("Array.prototype.map.call(document.querySelectorAll('svg g.bar'), function (g) {"
                " return [g.getAttribute('data-name'), Number(g.getAttribute('data-ms')), g.querySelectorAll('rect').length]; })")
    c.equal([x[0] for x in bars], ran, "chart bars (one per implementation, in order)")
    for name, ms, rects in bars:
        r = runs[(name, last)]
        c.check(abs(ms - (r["conv"][0]["op_ms"] + r["conv"][1]["op_ms"])) < 1e-9, f"chart bar {name}: {ms} ms")
        c.equal(rects, 2, f"chart bar {name}: conv1 and conv2 segments")
    floors = [r["conv"][0]["floor_ms"] + r["conv"][1]["floor_ms"] for name in names
              for r in [runs[(name, last)]] if "floor_ms" in r.get("conv", [{}])[0]]
    drawn = b.js("Array.prototype.map.call(document.querySelectorAll('svg g.floor'), function (g) {"
                 " return Number(g.getAttribute('data-ms')); })")
    c.check(len(drawn) == 1 and floors and abs(drawn[0] - floors[0]) < 1e-9, f"floor line: drawn {drawn}, runs {floors[:1]}")
    c.check(b.js("document.querySelector('svg g.floor line').getBoundingClientRect().height") > 50, "floor line not visible")

    # GPU and driver, the method, the Layer-Time note.
    device = runs[(names[0], last)]["device"]
    facts = b.js("Object.fromEntries(Array.prototype.map.call(document.querySelectorAll('dt'), function (dt) {"
                 " return [dt.textContent, dt.nextElementSibling.textContent]; }))")
    c.equal(facts.get("GPU and driver"), device, "GPU and driver")
    body = norm(b.js("document.body.innerText"))
    repeats = len(runs[(names[0], last)]["conv"][0]["samples_ms"])
    c.check(f"the median of {repeats} more timed calls" in body, "the method does not give the repeats")
    for name in names:
        if runs[(name, last)].get("layer_timed"):
            c.check(f"{name} is graded on Layer Time" in body, f"no Layer Time note for {name}")

    # Sorting by a click, numbers as numbers, the failed run last.
    check_numeric_sort(b, c, f"compare-{last}", "Conv total")
    check_numeric_sort(b, c, "milestone-1", "Op Time 2")
    # Names sort as text: "01-restrict-unroll (solution)" is a name, not the number 1.
    names_cells = click_sort(b, f"compare-{last}", "Implementation")
    c.check(all(x is None or x["sort"] is None for x in names_cells), "#compare: an implementation's name sorts as a number")
    shown = [norm(r[0]["text"]) for r in tables(b)[f"compare-{last}"]["rows"]]
    c.equal(shown, sorted(shown, key=str.lower), "#compare sorted by name (one click: ascending)")

    printable(b, c, page)
    b.screenshot(os.path.join(out, "report.png"))
    c.check(os.path.getsize(os.path.join(out, "report.png")) > 10000, "report.png not written")

    # --course (grader/network/course.h) at batch 100, where one run failed: the Markdown's table, the
    # ratio column sorted by the ratio (the reference at 1), the failure across its row.
    course_page = os.path.join(out, "report-course.html")
    course_md = report("--course", "--batches", "100", "--html", course_page)
    open_page(b, course_page, c)
    t = tables(b)
    (caption, header, rows), = md_tables(course_md)
    if c.check("course-100" in t, f"no table #course-100 (tables: {sorted(t)})"):
        c.equal(norm(t["course-100"]["caption"]), norm(caption), "#course-100 caption")
        c.equal([norm(h) for h in t["course-100"]["header"]], header, "#course-100 columns")
        for row, want in zip(t["course-100"]["rows"], rows):
            c.equal(texts(row) + [""] * (len(header) - len(row)), [norm(x) for x in want], f"#course-100 row {want[0]}")
        vs = header.index("vs 06-fusion (solution)")
        ref = [r for r in t["course-100"]["rows"] if norm(r[0]["text"]) == "06-fusion (solution)"]
        c.check(len(ref) == 1 and ref[0][vs]["sort"] == 1, "#course-100: the reference's ratio is 1")
        check_numeric_sort(b, c, "course-100", "vs 06-fusion (solution)")
finally:
    b.close()
c.finish()
