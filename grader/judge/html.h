// grader/judge/html.h — the one place the kit builds web pages (`labkit report --html`, `labkit grade
// --html`, the class dashboard of `labkit bulk collect`). Commands describe a page as headings,
// paragraphs, fact lists, tables and the kit's own SVG charts; only this layer writes markup.
//
// Contract
//   * Every string given to a Page is text: it is escaped (grader/core/text_escape.h html_escape) where
//     it lands, in content or in an attribute. The single exception is Page::svg, which takes a
//     chart the kit drew itself (milestone.h, bulk.h: their text already XML-escaped).
//   * A page is self-contained: one file, inline CSS, one inline script (the table sorting), no
//     fetches. Its Content-Security-Policy allows nothing from anywhere (default-src 'none'), the
//     style inline, and only the script carrying this page's nonce, drawn at random when the page
//     is rendered: markup that slipped into a student's text could not run even if an escape were
//     missing.
//   * Tables with `sortable` sort by a click on a header cell (again: reverses). A Cell with a
//     numeric `sort` key sorts by it; otherwise by its text. Rows without that column or with an
//     empty cell there go last, numbers before words, in either direction.
//   * Printing hides the sorting affordances and keeps table rows whole.
//   * Test hooks are plain markup: tables carry their `id`, chart bars class "bar", the floor line
//     class "floor" (tests/web reads them in a browser).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace labkit::html {

struct Cell {
  Cell(std::string text = {}, std::string tone = {}, std::string href = {}, int span = 1)
      : text(std::move(text)), href(std::move(href)), tone(std::move(tone)), span(span) {}
  std::string text;
  std::optional<double> sort;  // numeric sort key (the value behind a formatted number)
  std::string href;            // a relative link the kit wrote (another page of the same run)
  std::string tone;            // "", "good", "bad" or "warn": a colour, never the only signal
  int span = 1;                // columns this cell covers (a failed run's message)
};

Cell number(std::string text, double key);

struct Table {
  std::string id;       // the element id (tests and links find the table by it)
  std::string caption;  // shown above the table
  std::vector<std::string> header;
  std::vector<std::vector<Cell>> rows;
  bool sortable = true;
};

class Page {
 public:
  explicit Page(std::string title);
  Page& heading(int level, const std::string& text, const std::string& id = "");
  Page& paragraph(const std::string& text, const std::string& tone = "");
  Page& preformatted(const std::string& text);
  Page& facts(const std::vector<std::pair<std::string, std::string>>& items);  // a definition list
  Page& bullets(const std::vector<std::string>& items);
  Page& link(const std::string& text, const std::string& href);  // a paragraph holding one link
  Page& table(const Table& t);
  Page& svg(const std::string& kit_chart);
  std::string render() const;

 private:
  std::string title_, body_;
};

// Writes `page` to `file`; throws std::runtime_error naming the file when it cannot.
void write_page(const std::string& file, const std::string& page);

}  // namespace labkit::html
