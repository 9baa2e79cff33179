// The page-building layer (grader/judge/html.h) and what the pages are drawn from: text lands escaped
// in content and attributes, the page allows no fetch and only its own script, and a report saved
// as JSON reads back (milestone::read_report) into the same tables it was saved from.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "grader/judge/html.h"
#include "grader/network/milestone.h"

namespace ms = labkit::milestone;
namespace html = labkit::html;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

labkit::network::RunResult run(int batch, double op1, double op2, double floor1) {
  labkit::network::RunResult r;
  r.backend = std::string(1, 'x');  // not = "x": GCC 12's -Wrestrict false positive (its bug 105651)
  r.batch = batch;
  r.conv[0].op_ms = op1;
  r.conv[1].op_ms = op2;
  r.conv[0].floor_ms = r.conv[1].floor_ms = floor1;
  r.conv[0].samples_ms = {op1, op1};
  r.total_s = 0.5;
  r.accuracy = 0.875;
  r.correct = batch * 7 / 8;
  r.predictions = std::string(static_cast<std::size_t>(batch), '3');
  r.device = "NVIDIA Test GPU (driver 13.0)";
  return r;
}

}  // namespace

TEST_CASE("html: text is escaped in content, captions, links and headers; tones are a closed set") {
  const std::string evil = "<script>alert(\"x\")</script>' & \u202e";
  html::Table t;
  t.id = "t\"1";
  t.caption = evil;
  t.header = {evil};
  html::Cell link(evil, "", "a\" onclick=\"x");
  t.rows = {{link}, {html::number(evil, 1.5)}};
  html::Page page(evil);
  page.heading(2, evil).paragraph(evil, "bad").preformatted(evil).facts({{evil, evil}}).bullets({evil}).table(t);
  const std::string out = page.render();
  CHECK_FALSE(contains(out, "<script>alert"));
  CHECK_FALSE(contains(out, "\" onclick=\"x"));
  CHECK(contains(out, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; \u202e"));
  CHECK(contains(out, "id=\"t&quot;1\""));
  CHECK(contains(out, "data-sort=\"1.5\""));
  CHECK_THROWS_AS(page.paragraph("x", "red"), std::invalid_argument);
}

TEST_CASE("html: one script, allowed by a nonce drawn per page; nothing else may load") {
  const std::string a = html::Page("a").render(), b = html::Page("a").render();
  CHECK(contains(a, "default-src 'none'"));
  CHECK(contains(a, "script-src 'nonce-"));
  const auto nonce = [](const std::string& p) {
    const auto at = p.find("'nonce-") + 7;
    return p.substr(at, p.find('\'', at) - at);
  };
  CHECK(nonce(a).size() == 32);
  CHECK(nonce(a) != nonce(b));
  CHECK(contains(a, "<script nonce=\"" + nonce(a) + "\">"));
  CHECK_FALSE(contains(a, "http://"));
  CHECK_FALSE(contains(a, "https://"));
}

TEST_CASE("read_report: a saved --format json report gives back the same runs and tables, --compare or not") {
  ms::Report r;
  r.batches = {100, 1000};
  r.compare = true;
  r.runs = {{{"baseline", 100, run(100, 1.0, 2.0, 0), "", false}, {"baseline", 1000, run(1000, 10, 20, 0), "", false}},
            {{"10-streams (solution)", 100, run(100, 0.5, 0.75, 0.01), "", true},
             {"10-streams (solution)", 1000, std::nullopt, "it crashed", true}}};
  const auto path = std::filesystem::temp_directory_path() / "labkit-test-html-report.json";
  for (bool compare : {true, false}) {
    r.compare = compare;
    std::ofstream(path) << ms::render(r, ms::Format::json);
    const ms::Report back = ms::read_report(path.string());
    CHECK(back.compare == compare);
    CHECK(back.batches == r.batches);
    CHECK(ms::render(back, ms::Format::md) == ms::render(r, ms::Format::md));
    CHECK(ms::render(back, ms::Format::csv) == ms::render(r, ms::Format::csv));
    CHECK(back.runs[1][0].run->conv[0].floor_ms == doctest::Approx(0.01));
  }
  CHECK(contains(ms::render(r, ms::Format::md), "Note: 10-streams (solution) is graded on Layer Time"));
  std::ofstream(path) << "{\"runs\": [{\"name\": \"a\", \"batch\": 1, \"error\": \"x\"}, {\"name\": \"b\", \"batch\": 2, \"error\": \"y\"}]}";
  CHECK_THROWS_WITH_AS(ms::read_report(path.string()), doctest::Contains("no run of a at batch 2"), std::runtime_error);
  std::ofstream(path) << "{\"runs\": [";
  CHECK_THROWS_WITH_AS(ms::read_report(path.string()), doctest::Contains("is not JSON"), std::runtime_error);
  std::filesystem::remove(path);
}

TEST_CASE("compare_svg: one bar group per implementation that ran, and the floor where a run recorded it") {
  std::vector<ms::Entry> rows{{"baseline", 100, run(100, 1.0, 2.0, 0), "", false},
                              {"lab \"q\"", 100, run(100, 0.5, 0.5, 0.1), "", false},
                              {"failed", 100, std::nullopt, "boom", false}};
  const std::string svg = ms::compare_svg(100, rows, "GPU");
  std::size_t bars = 0;
  for (auto at = svg.find("class=\"bar\""); at != std::string::npos; at = svg.find("class=\"bar\"", at + 1)) ++bars;
  CHECK(bars == 2);
  CHECK(contains(svg, "data-name=\"lab &quot;q&quot;\""));
  CHECK(contains(svg, "class=\"floor\" data-ms=\"0.2\""));
  rows[1].run->conv[1].floor_ms = 0;  // one layer without a floor: no line
  CHECK_FALSE(contains(ms::compare_svg(100, rows, "GPU"), "class=\"floor\""));
  // The roofline floor of a run's precision class (grader/judge/roofline.h): a tick on its own bar, where
  // the run recorded both layers'.
  CHECK_FALSE(contains(svg, "class=\"roofline\""));
  rows[0].run->conv[0].roofline_ms = 0.5;
  rows[0].run->conv[1].roofline_ms = 0.25;
  const std::string with = ms::compare_svg(100, rows, "GPU");
  CHECK(contains(with, "class=\"roofline\" data-name=\"baseline\" data-ms=\"0.75\" data-pct=\"25\""));
  CHECK_FALSE(contains(with, "data-name=\"lab &quot;q&quot;\" data-ms=\"0.2\" data-pct"));
}
