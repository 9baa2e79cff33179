"""What the web tests check on every page, and how they read what a person sees.

A test opens a page with `open_page` (network off; nothing may be requested but the page itself,
no Content-Security-Policy violation, no external resource), reads its tables as rendered text
with `tables`, sorts a column by clicking its header with `click_sort`, and checks the printed
form with `printable`. Failures are collected (`Checks`), each naming the page and what differed.
"""
import os
import re
import sys

from cdp import Browser

TABLES_JS = r"""
(function () {
  var out = {};
  document.querySelectorAll('table[id]').forEach(function (t) {
    out[t.id] = {
      caption: t.caption ? t.caption.textContent : '',
      header: Array.prototype.map.call(t.querySelectorAll('thead th'), function (th) { return th.textContent; }),
      rows: Array.prototype.map.call(t.tBodies[0].rows, function (r) {
        return Array.prototype.map.call(r.cells, function (c) {
          var a = c.querySelector('a');
          return {text: c.textContent, sort: c.hasAttribute('data-sort') ? Number(c.getAttribute('data-sort')) : null,
                  href: a ? a.getAttribute('href') : null, span: c.colSpan,
                  visible: c.getBoundingClientRect().width > 0};
        });
      })
    };
  });
  return out;
})()
"""


class Checks:
    def __init__(self, name):
        self.name, self.failures, self.passed = name, [], 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failures.append(what)
            print(f"FAIL {self.name}: {what}")
        return ok

    def equal(self, got, want, what):
        return self.check(got == want, f"{what}: got {got!r}, want {want!r}")

    def finish(self):
        print(f"{self.name}: {self.passed} checks passed, {len(self.failures)} failed")
        sys.exit(1 if self.failures else 0)


def browser_or_skip(out_dir, name):
    exe = Browser.find()
    if exe is None:
        print(f"{name}: skipped: no chromium on PATH (Debian: apt-get install chromium)")
        sys.exit(77)
    os.makedirs(out_dir, exist_ok=True)
    return Browser(exe, os.path.join(out_dir, f"profile-{name}"))


def open_page(b, path, c):
    """Opens `path` offline and checks that it is self-contained and quiet."""
    c.check(os.path.isfile(path), f"{path}: not written")
    requests = b.open_offline(path)
    url = "file://" + os.path.abspath(path)
    c.equal([u for u in requests if u != url], [], f"{path}: requests besides the page itself")
    c.equal(b.js("window.__violations"), [], f"{path}: Content-Security-Policy violations")
    c.equal(b.js("document.querySelectorAll('[src], link, iframe, object, embed, img').length"), 0,
            f"{path}: elements that load something")
    csp = b.js("(document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]') || {}).content || ''")
    c.check("default-src 'none'" in csp, f"{path}: the Content-Security-Policy does not start from default-src 'none': {csp!r}")
    c.equal(b.js("document.scripts.length"), 1, f"{path}: scripts on the page (only the kit's sorting script)")


def tables(b):
    return b.js(TABLES_JS)


def texts(row):
    return [norm(cell["text"]) for cell in row]


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def click_sort(b, table_id, column):
    """Clicks the header of `column` (by its text) and returns that column's cells afterwards."""
    b.js(f"""(function () {{
      var ths = document.querySelectorAll('#{table_id} thead th');
      var th = Array.prototype.find.call(ths, function (h) {{ return h.textContent === {column!r}; }});
      if (!th) throw new Error('no column {column} in #{table_id}');
      th.click();
    }})()""")
    t = tables(b)[table_id]
    i = t["header"].index(column)
    return [r[i] if i < len(r) and r[i]["span"] == 1 and not (len(r) == 2 and r[1]["span"] > 1) else None
            for r in t["rows"]]


def check_numeric_sort(b, c, table_id, column):
    """Clicking a numeric column sorts it ascending, a second click descending; the rows stay the same."""
    before = sorted(norm(" | ".join(texts(r))) for r in tables(b)[table_id]["rows"])
    for direction in ("ascending", "descending"):
        cells = click_sort(b, table_id, column)
        keys = [x["sort"] for x in cells if x is not None and x["sort"] is not None]
        c.check(len(keys) >= 2, f"#{table_id} {column}: fewer than two numbers to sort")
        want = sorted(keys, reverse=direction == "descending")
        c.equal(keys, want, f"#{table_id} after clicking {column!r} ({direction})")
        tail = cells[len(keys):]
        c.check(all(x is None or x["sort"] is None for x in tail), f"#{table_id} {column}: rows without a number are not last")
        after = sorted(norm(" | ".join(texts(r))) for r in tables(b)[table_id]["rows"])
        c.equal(after, before, f"#{table_id}: the rows changed while sorting")


def printable(b, c, path):
    """Printed: the sorting arrows are gone, every table still shows, and Chromium makes a PDF of it."""
    b.call("Emulation.setEmulatedMedia", media="print")
    arrows = b.js("Array.prototype.filter.call(document.querySelectorAll('table.sortable th'), function (th) {"
                  " var s = getComputedStyle(th, '::after').content; return s !== 'none' && s !== '\"\"' && s !== 'normal'; }).length")
    hidden = b.js("Array.prototype.filter.call(document.querySelectorAll('table'), function (t) {"
                  " return t.getBoundingClientRect().height === 0; }).length")
    c.equal(arrows, 0, f"{path}: sorting arrows still shown in print")
    c.equal(hidden, 0, f"{path}: tables hidden in print")
    pdf = b.pdf()
    c.check(pdf.startswith(b"%PDF") and len(pdf) > 1000, f"{path}: printing to PDF gave {len(pdf)} bytes")
    b.call("Emulation.setEmulatedMedia", media="")


def md_tables(text):
    """The tables of a Markdown report: [(caption, header, rows)], cells stripped."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("| ") and i + 1 < len(lines) and lines[i + 1].startswith("|:"):
            caption = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            header = [x.strip() for x in lines[i].strip()[1:-1].split("|")]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("| "):
                rows.append([x.strip() for x in lines[i].strip()[1:-1].split("|")])
                i += 1
            out.append((caption.replace("*", ""), header, rows))
        else:
            i += 1
    return out
