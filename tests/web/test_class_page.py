"""The class dashboard (`labkit bulk collect` -> class.html) and the student pages it links to, in
headless Chromium, against class.csv, leaderboard.txt and missing.txt of the same collect.

The class: tests/bulk/fixtures (alice, bob, carol, heidi merged; dave, erin, frank, grace missing
or corrupt) plus tests/web/fixtures/class (ivan: a wrong tiling lab whose log holds markup,
quotes and right-to-left text; judy: a timeout) and a students.txt line whose student name is
hostile markup. Saves class.png (the screenshot of the closing note) in OUT_DIR.
  usage: test_class_page.py LABKIT BULK_FIXTURES WEB_FIXTURES OUT_DIR
"""
import collections
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gradecheck import check_grade_page  # noqa: E402
from pagecheck import Checks, browser_or_skip, check_numeric_sort, norm, open_page, printable, tables, texts  # noqa: E402

labkit, bulk_fixtures, web_fixtures, out = sys.argv[1:5]
c = Checks("web-class")
b = browser_or_skip(out, "class")
tmp = tempfile.mkdtemp(prefix="labkit-web-class-")
try:
    cls = os.path.join(tmp, "out")
    shutil.copytree(bulk_fixtures, cls)
    for student in ("ivan", "judy"):
        shutil.copytree(os.path.join(web_fixtures, student), os.path.join(cls, student))
    with open(os.path.join(cls, "students.txt"), "a") as f, open(os.path.join(web_fixtures, "students-extra.txt")) as extra:
        f.write(extra.read())
    p = subprocess.run([labkit, "bulk", "collect", cls], capture_output=True, text=True, timeout=120)
    c.equal(p.returncode, 1, f"bulk collect exit status (some students missing) ({p.stderr.strip()})")

    rows = list(csv.DictReader(open(os.path.join(cls, "class.csv"))))
    students = sorted({r["student"] for r in rows})
    c.check(len(students) >= 5, f"a class of at least five merged students: {students}")
    missing = [line.rstrip("\n").split("\t") for line in open(os.path.join(cls, "missing.txt")).readlines()[1:]]
    board_text = open(os.path.join(cls, "leaderboard.txt")).read()
    labs = list(dict.fromkeys(r["lab"] for r in rows))

    page = os.path.join(cls, "class.html")
    open_page(b, page, c)
    t = tables(b)
    for lab in labs:
        tid = f"students-{lab}"
        if not c.check(tid in t, f"no table #{tid}"):
            continue
        want = [[r[k] for k in ("student", "verdict", "correct", "speedup", "score", "max_score", "gpu", "flags")]
                for r in rows if r["lab"] == lab]
        c.equal([texts(row) for row in t[tid]["rows"]], want, f"#{tid}: the class.csv rows of {lab}")
        for row in t[tid]["rows"]:
            if norm(row[1]["text"]) == "not-graded":  # no result yet: no page to link to
                c.check(not row[0]["href"], f"#{tid}: a not-graded row links nowhere")
                continue
            href = row[0]["href"]
            c.equal(href, f"{norm(row[0]['text'])}/pages/{lab}.html", f"#{tid}: link of {row[0]['text']}")
            c.check(href and os.path.isfile(os.path.join(cls, href)), f"#{tid}: {href} does not exist")
        counts = collections.Counter(r["verdict"] for r in rows if r["lab"] == lab and r["verdict"] != "not-graded")
        got = {norm(row[0]["text"]): row[1]["sort"] for row in t[f"verdicts-{lab}"]["rows"]}
        c.equal(got, dict(counts), f"#verdicts-{lab}")
        # leaderboard.txt: "  1. carol   2.31x  [2.284, 2.336]  NVIDIA ...  (other-gpu)"
        block = board_text.split(f"\n{lab}\n")[1].split("\n\n")[0].splitlines() if f"\n{lab}\n" in board_text else []
        want = [re.match(r"\s*\d+\. (\S+)\s+([\d.]+x)\s+(\[[^\]]+\])", line).groups() for line in block]
        if want or f"leaderboard-{lab}" in t:
            got = [tuple(texts(row)[1:4]) for row in t[f"leaderboard-{lab}"]["rows"]]
            c.equal(got, [tuple(w) for w in want], f"#leaderboard-{lab}: leaderboard.txt's entries")
    c.equal(b.js("document.querySelectorAll('figure svg').length"), len(labs), "one score histogram per lab")
    c.equal([texts(row) for row in t["missing"]["rows"]], [[norm(x) for x in m] for m in missing], "#missing: missing.txt")
    hostile = open(os.path.join(web_fixtures, "students-extra.txt")).read().splitlines()[-1].split("\t")[1]
    reasons = b.js("Array.prototype.map.call(document.querySelectorAll('#missing td'), function (td) { return td.textContent; })")
    c.check(any(hostile in x for x in reasons), "the hostile student name is not shown as the text it is")
    c.equal(b.js("typeof window.__pwned"), "undefined", "markup in a student name ran")
    check_numeric_sort(b, c, "students-03-tiling", "Speedup")
    check_numeric_sort(b, c, "students-06-fusion", "Score")
    printable(b, c, page)
    b.screenshot(os.path.join(out, "class.png"))
    c.check(os.path.getsize(os.path.join(out, "class.png")) > 10000, "class.png not written")

    # The student pages the rows link to, against the grade.json they came from.
    for student, lab in (("ivan", "03-tiling"), ("ivan", "06-fusion"), ("judy", "04-float4"), ("alice", "03-tiling")):
        result = next(r for r in json.load(open(os.path.join(cls, student, "grade.json")))["results"] if r["lab"]["id"] == lab)
        path = os.path.join(cls, student, "pages", f"{lab}.html")
        check_grade_page(b, c, path, result)
        back = b.js("document.querySelector('a').getAttribute('href')")
        c.check(os.path.isfile(os.path.normpath(os.path.join(os.path.dirname(path), back))), f"{path}: back link {back}")
        if (student, lab) == ("ivan", "03-tiling"):
            b.screenshot(os.path.join(out, "grade-ivan-03-tiling.png"))
finally:
    b.close()
    shutil.rmtree(tmp, ignore_errors=True)
c.finish()
