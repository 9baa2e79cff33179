"""A grade page (grader/judge/pages.h grade_page) against the `labkit grade --json` result it was drawn
from: the verdict, message and hint; the cases, with each failing case's first wrong elements;
the timing table with its interval; the evidence found and missing; the score lines; the lab's
own log shown as text, whatever it holds."""
import re

from pagecheck import norm, open_page, tables

PRE_TEXTS = "Array.prototype.map.call(document.querySelectorAll('pre'), function (p) { return p.textContent; })"


def check_grade_page(b, c, path, r):
    open_page(b, path, c)
    t = tables(b)
    body = b.js("document.body.innerText")
    pres = b.js(PRE_TEXTS)
    v = r["verdict"]
    verdict = b.js("(Array.prototype.find.call(document.querySelectorAll('p'), function (p) {"
                   " return p.textContent.indexOf('Verdict: ') === 0; }) || {}).textContent")
    c.check(verdict is not None and verdict.endswith(f"({v})"), f"{path}: the verdict line {verdict!r} does not name {v}")
    c.check(b.js("document.body.innerText").find("Verdict: ") < b.js("document.body.innerText").find("Correctness")
            or not r.get("cases"), f"{path}: the verdict is not above the cases")
    if r.get("message"):
        c.check(r["message"] in pres, f"{path}: the message is not shown as written")
    if r.get("hint"):
        c.check(norm("Next: " + r["hint"]) in norm(body), f"{path}: the hint is not shown")

    cases = r.get("cases", [])
    if cases and c.check("cases" in t, f"{path}: no cases table"):
        rows = t["cases"]["rows"]
        c.equal(len(rows), len(cases), f"{path}: case rows")
        for row, case in zip(rows, cases):
            got = [norm(x["text"]) for x in row]
            c.equal(got[:3], [case["name"], case.get("origin", ""), norm(case.get("shape", ""))], f"{path}: case {case['name']}")
            want = "ok" if case["passed"] else "FAIL: " + case.get("outcome", "")
            c.equal(got[3], want, f"{path}: case {case['name']} result")
            if not case["passed"] and case.get("detail"):
                c.check(case["detail"] in pres, f"{path}: the first wrong elements of {case['name']} are not shown")
    timing = r.get("timing", {})
    if timing.get("measured") and timing.get("shapes") and c.check("timing" in t, f"{path}: no timing table"):
        header, rows = t["timing"]["header"], t["timing"]["rows"]
        c.equal(len(rows), len(timing["shapes"]), f"{path}: timing rows")
        for row, s in zip(rows, timing["shapes"]):
            cell = dict(zip(header, row))
            c.equal(norm(cell["Shape"]["text"]), s["name"], f"{path}: timing shape")
            for col, key in (("Baseline ms", "baseline_ms"), ("Lab ms", "lab_ms"), ("Speedup", "speedup")):
                c.equal(cell[col]["sort"], s.get(key, 0), f"{path}: {s['name']} {col}")  # absent: 0
            low, high = map(float, re.findall(r"[-\d.]+", cell["95% interval"]["text"]))
            want = (s.get("speedup_low", 0), s.get("speedup_high", 0))
            c.check(abs(low - want[0]) <= 5e-4 and abs(high - want[1]) <= 5e-4,
                    f"{path}: {s['name']} interval {cell['95% interval']['text']} vs {list(want)}")
        c.check(f"{timing['speedup']:.2f}x" in body, f"{path}: the geometric mean speedup is not shown")
    roofs = [s for s in timing.get("shapes", []) if s.get("roofline")]
    if timing.get("peaks") and roofs and c.check("roofline" in t, f"{path}: no roofline table"):
        header, rows = t["roofline"]["header"], t["roofline"]["rows"]
        c.equal(len(rows), len(roofs), f"{path}: roofline rows")
        for row, s in zip(rows, roofs):
            cell = dict(zip(header, row))
            c.equal(norm(cell["Shape"]["text"]), s["name"], f"{path}: roofline shape")
            c.equal(cell["GB/s"]["sort"], s["roofline"]["gbps"], f"{path}: {s['name']} GB/s")
            c.equal(cell["Floor ms"]["sort"], s["roofline"]["floor_ms"], f"{path}: {s['name']} floor")
            if "bound" in s["roofline"]:  # results before the roofline per precision class have none
                c.equal(norm(cell["Bound"]["text"]), s["roofline"]["bound"], f"{path}: {s['name']} bound")
                share = s["roofline"]["pct_of_floor"]
                c.equal(cell["Of floor"]["sort"], share, f"{path}: {s['name']} share of the floor")
                c.check((share > 100) == ("peaks table for this GPU is wrong" in cell["Of floor"]["text"]),
                        f"{path}: {s['name']} share {cell['Of floor']['text']!r} of {share}")
    ev = r.get("evidence", {})
    found = ev.get("patterns", []) + ev.get("host", [])
    if found and c.check("evidence" in t, f"{path}: no evidence table"):
        rows = t["evidence"]["rows"]
        c.equal(len(rows), len(found), f"{path}: evidence rows")
        for row, p in zip(rows, found):
            c.check(norm(row[0]["text"]).startswith(p["name"]), f"{path}: evidence {p['name']}")
            status = norm(row[1]["text"])
            c.check(status.startswith("found") or status.startswith("absent") if p["ok"] else
                    status.startswith("MISSING") or status.startswith("PRESENT"), f"{path}: evidence {p['name']}: {status}")
    score = r.get("score", {})
    if c.check("score" in t, f"{path}: no score table"):
        rows = t["score"]["rows"]
        lines = score.get("lines", [])
        c.equal(len(rows), len(lines) + 1, f"{path}: score rows (the lines and the total)")
        for row, line in zip(rows, lines):
            c.equal([norm(row[0]["text"]), row[1]["sort"], row[2]["sort"], norm(row[3]["text"])],
                    [line["item"], line["points"], line["max"], norm(line["why"])], f"{path}: score line {line['item']}")
        c.equal([row[1]["sort"] for row in rows[-1:]], [score.get("total")], f"{path}: score total")
    if r.get("log"):
        c.check(r["log"] in pres, f"{path}: the lab's log is not shown exactly as text")
    c.equal(b.js("typeof window.__pwned"), "undefined", f"{path}: markup from the result ran")
