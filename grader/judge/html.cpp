// html.cpp — the page-building layer (grader/judge/html.h): markup, style and the sorting script.
#include "grader/judge/html.h"

#include <fmt/core.h>

#include <fstream>
#include <random>
#include <stdexcept>

#include "grader/core/text_escape.h"

namespace labkit::html {
namespace {

const auto esc = html_escape;

// Screen and print in one sheet. Colours only repeat what the text says (a verdict, "failed").
constexpr const char* kStyle = R"(
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#111;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}h3{margin-top:1.2em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:.3em 0}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right;vertical-align:top;unicode-bidi:isolate}
th:first-child,td:first-child,td.text{text-align:left}
thead th{background:#f2f2f2}
table.sortable thead th{cursor:pointer;user-select:none}
table.sortable thead th::after{content:" \2195";color:#999;font-size:.8em}
table.sortable thead th[aria-sort=ascending]::after{content:" \2191";color:#111}
table.sortable thead th[aria-sort=descending]::after{content:" \2193";color:#111}
.good{color:#1a6e1a}.bad{color:#b00020}.warn{color:#8a5a00}
td.good,td.bad,td.warn{font-weight:600}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;white-space:pre-wrap;unicode-bidi:isolate}
dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:600}dd{margin:0;unicode-bidi:isolate}
svg{max-width:100%;height:auto}
@media print{body{margin:0;max-width:none}table.sortable thead th::after,table.sortable thead th[aria-sort]::after{content:""}
 tr,svg,pre{break-inside:avoid}a{color:inherit;text-decoration:none}h2{break-after:avoid}}
)";

// Sorts a table by the clicked column (numbers by data-sort, the rest as text); Enter works too.
constexpr const char* kScript = R"(
document.querySelectorAll('table.sortable').forEach(function (t) {
  var heads = t.querySelectorAll('thead th');
  heads.forEach(function (th, col) {
    th.tabIndex = 0;
    function key(r) {
      var c = r.cells[col];
      if (!c || c.colSpan > 1) return null;
      var s = c.getAttribute('data-sort'), text = c.textContent.trim();
      return s !== null ? Number(s) : text === '' ? null : text;
    }
    function sort() {
      var asc = th.getAttribute('aria-sort') !== 'ascending';
      heads.forEach(function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        // Empty cells go last, numbers before words, in either direction.
        if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
        if (typeof x !== typeof y) return typeof x === 'number' ? -1 : 1;
        var d = typeof x === 'number' ? x - y
              : String(x).localeCompare(String(y), undefined, {numeric: true});
        return asc ? d : -d;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    }
    th.addEventListener('click', sort);
    th.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); }
    });
  });
});
)";

std::string nonce() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", rd(), rd(), rd(), rd());
}

std::string tone_class(const std::string& tone) {
  if (tone == "good" || tone == "bad" || tone == "warn") return tone;
  if (!tone.empty()) throw std::invalid_argument("html: unknown tone \"" + tone + "\" (good, bad or warn)");
  return "";
}

}  // namespace

Cell number(std::string text, double key) {
  Cell c(std::move(text));
  c.sort = key;
  return c;
}

Page::Page(std::string title) : title_(std::move(title)) {}

Page& Page::heading(int level, const std::string& text, const std::string& id) {
  if (level < 1 || level > 4) throw std::invalid_argument("html: heading level must be 1 to 4");
  body_ += fmt::format("<h{0}{1}>{2}</h{0}>\n", level, id.empty() ? "" : " id=\"" + esc(id) + "\"", esc(text));
  return *this;
}

Page& Page::paragraph(const std::string& text, const std::string& tone) {
  const std::string cls = tone_class(tone);
  body_ += fmt::format("<p{}>{}</p>\n", cls.empty() ? "" : " class=\"" + cls + "\"", esc(text));
  return *this;
}

Page& Page::preformatted(const std::string& text) {
  body_ += "<pre>" + esc(text) + "</pre>\n";
  return *this;
}

Page& Page::facts(const std::vector<std::pair<std::string, std::string>>& items) {
  body_ += "<dl>\n";
  for (const auto& [term, value] : items) body_ += fmt::format("<dt>{}</dt><dd>{}</dd>\n", esc(term), esc(value));
  body_ += "</dl>\n";
  return *this;
}

Page& Page::bullets(const std::vector<std::string>& items) {
  body_ += "<ul>\n";
  for (const auto& item : items) body_ += "<li>" + esc(item) + "</li>\n";
  body_ += "</ul>\n";
  return *this;
}

Page& Page::link(const std::string& text, const std::string& href) {
  body_ += "<p><a href=\"" + esc(href) + "\">" + esc(text) + "</a></p>\n";
  return *this;
}

Page& Page::table(const Table& t) {
  body_ += fmt::format("<table{}{}>\n", t.id.empty() ? "" : " id=\"" + esc(t.id) + "\"",
                       t.sortable ? " class=\"sortable\"" : "");
  if (!t.caption.empty()) body_ += "<caption>" + esc(t.caption) + "</caption>\n";
  body_ += "<thead><tr>";
  for (const auto& h : t.header) body_ += "<th scope=\"col\">" + esc(h) + "</th>";
  body_ += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    body_ += "<tr>";
    for (const Cell& c : row) {
      std::string cls = tone_class(c.tone);
      if (!c.sort && &c != &row.front()) cls += cls.empty() ? "text" : " text";
      std::string attrs;
      if (!cls.empty()) attrs += " class=\"" + cls + "\"";
      if (c.sort) attrs += fmt::format(" data-sort=\"{}\"", *c.sort);
      if (c.span > 1) attrs += fmt::format(" colspan=\"{}\"", c.span);
      const std::string text = esc(c.text);
      body_ += "<td" + attrs + ">" + (c.href.empty() ? text : "<a href=\"" + esc(c.href) + "\">" + text + "</a>") + "</td>";
    }
    body_ += "</tr>\n";
  }
  body_ += "</tbody>\n</table>\n";
  return *this;
}

Page& Page::svg(const std::string& kit_chart) {
  body_ += "<figure>\n" + kit_chart + "</figure>\n";
  return *this;
}

std::string Page::render() const {
  const std::string n = nonce();
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "img-src data:; script-src 'nonce-{0}'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"labkit\">\n<title>{1}</title>\n<style>{2}</style>\n</head>\n<body>\n{3}"
      "<script nonce=\"{0}\">{4}</script>\n</body>\n</html>\n",
      n, esc(title_), kStyle, body_, kScript);
}

void write_page(const std::string& file, const std::string& page) {
  std::ofstream out(file, std::ios::binary);
  out << page;
  if (!out) throw std::runtime_error(file + ": cannot write the page (is its folder there and writable?)");
}

}  // namespace labkit::html
