"""`labkit grade --html` in headless Chromium: one lab (a file) and --all (a folder, a page per
lab), each page against the `--json` result of the same run. The runs are --evidence-only (the
PTX read at build time), so this runs without a GPU; the pages of full results (failing cases,
timing, score lines) are checked by test_class_page.py on recorded results.
  usage: test_grade_page.py LABKIT OUT_DIR GRADE_ARGS...
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gradecheck import check_grade_page  # noqa: E402
from pagecheck import Checks, browser_or_skip, printable  # noqa: E402

labkit, out, subject = sys.argv[1], sys.argv[2], sys.argv[3:]
c = Checks("web-grade")
b = browser_or_skip(out, "grade")


def grade(args, html):
    p = subprocess.run([labkit, "grade", *args, "--evidence-only", "--json", "--html", html],
                       capture_output=True, text=True, timeout=300)
    c.check(p.returncode in (0, 1), f"labkit grade {' '.join(args)}: exit {p.returncode} ({p.stderr.strip()[-400:]})")
    return json.loads(p.stdout)["results"] if p.stdout.strip() else []


try:
    one = os.path.join(out, "grade.html")
    results = grade(subject, one)
    c.equal(len(results), 1, "results of one lab")
    for r in results:
        check_grade_page(b, c, one, r)
        printable(b, c, one)

    folder = os.path.join(out, "grade-all")
    results = grade(["--all"], folder)  # the labs of labs/: there in every copy of the kit
    c.check(len(results) >= 1, "--all graded nothing")
    c.equal(sorted(os.listdir(folder)), sorted(r["lab"]["id"] + ".html" for r in results), f"{folder}: a page per lab")
    for r in results[:3]:  # the same page for each lab: a few are enough
        check_grade_page(b, c, os.path.join(folder, r["lab"]["id"] + ".html"), r)
finally:
    b.close()
c.finish()
