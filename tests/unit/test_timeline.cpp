// The streams timeline (grader/tools/timeline.h) on hand-made records: times made relative to the layer,
// the JSON form read back leniently, the overlap by activity::summarize's rule, and the SVG: one
// bar per record, lanes per stream and direction, the overlap shaded, and a lab's hostile kernel
// name shown as text (escaped, never markup). No GPU.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "grader/tools/activity.h"
#include "grader/core/text_escape.h"
#include "grader/tools/timeline.h"

namespace act = labkit::activity;
namespace tl = labkit::timeline;
using nlohmann::json;

namespace {

constexpr std::uint64_t kT0 = 1'700'000'000'000'000'000ull;  // CUPTI's clock: ns since some epoch
constexpr std::uint64_t us = 1000;
const std::string kHostile = "<script>alert(1)</script>&\"";

act::Interval rec(act::Kind kind, std::uint32_t stream, std::uint64_t start_us, std::uint64_t end_us, std::string name,
                  std::size_t bytes = 0) {
  return {kind, kT0 + start_us * us, kT0 + end_us * us, stream, bytes, std::move(name), false, 0};
}

// Two streams: each segment's copy in, kernel, copy out; segment 1's copy in overlaps kernel 0.
act::Summary two_segments(const std::string& kernel_name = "_Z19conv_forward_kernelPfPKfS1_iiiiii") {
  return act::summarize({rec(act::Kind::memcpy, 13, 100, 300, "HtoD", 4'000'000),
                         rec(act::Kind::memcpy, 14, 300, 500, "HtoD", 4'000'000),
                         rec(act::Kind::kernel, 13, 300, 450, kernel_name),
                         rec(act::Kind::kernel, 14, 500, 650, kernel_name),
                         rec(act::Kind::memcpy, 13, 450, 900, "DtoH", 12'000'000),
                         rec(act::Kind::memcpy, 14, 900, 1350, "DtoH", 12'000'000),
                         rec(act::Kind::memset, 13, 50, 60, "memset", 1024)});
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("from_activity: times from the layer's start, kinds by direction, names kept") {
  const tl::Timeline t = tl::from_activity(two_segments(), kT0, kT0 + 1500 * us, "lab", "conv1 B=1000");
  CHECK(t.available);
  CHECK(t.side == "lab");
  CHECK(t.shape == "conv1 B=1000");
  CHECK(t.span_ms == doctest::Approx(1.5));
  REQUIRE(t.records.size() == 7);
  CHECK(t.records.front().kind == "memset");  // by start
  CHECK(t.records.front().start_ms == doctest::Approx(0.05));
  CHECK(t.records[1].kind == "HtoD");
  CHECK(t.records[1].stream == 13);
  CHECK(t.records[1].bytes == 4'000'000);
  int kernels = 0, dtoh = 0;
  for (const tl::Record& r : t.records) {
    kernels += r.kind == "kernel";
    dtoh += r.kind == "DtoH";
    if (r.kind == "kernel") CHECK(r.name == "_Z19conv_forward_kernelPfPKfS1_iiiiii");
  }
  CHECK(kernels == 2);
  CHECK(dtoh == 2);
}

TEST_CASE("from_activity: without a plausible note the records set the origin; other copies are \"copy\"") {
  act::Summary s = act::summarize({rec(act::Kind::memcpy, 7, 200, 400, "DtoD", 64), rec(act::Kind::kernel, 7, 400, 600, "k")});
  // No note, a note that ends before it starts, a note of days: the first record is 0 ms.
  for (auto [a, b] : {std::pair<std::uint64_t, std::uint64_t>{0, 0}, {kT0 + 500 * us, kT0}, {1, kT0}}) {
    const tl::Timeline t = tl::from_activity(s, a, b, "baseline", "conv2 B=1000");
    REQUIRE(t.records.size() == 2);
    CHECK(t.records[0].start_ms == doctest::Approx(0));
    CHECK(t.records[0].kind == "copy");
    CHECK(t.records[0].name == "DtoD");
    CHECK(t.span_ms == doctest::Approx(0.4));
  }
}

TEST_CASE("from_activity: an unavailable record says why; dropped and surplus records are counted") {
  act::Summary none;
  none.why = "CUPTI is in use by another profiler";
  const tl::Timeline t = tl::from_activity(none, 0, 0, "lab", "conv1 B=1000");
  CHECK_FALSE(t.available);
  CHECK(t.why == none.why);
  CHECK(t.records.empty());

  std::vector<act::Interval> many;
  for (std::uint64_t i = 0; i < tl::kMaxRecords + 5; ++i) many.push_back(rec(act::Kind::kernel, 1, i, i + 1, "k"));
  act::Summary s = act::summarize(many);
  s.dropped = 3;
  const tl::Timeline big = tl::from_activity(s, 0, 0, "lab", "x");
  CHECK(big.records.size() == tl::kMaxRecords);
  CHECK(big.left_out == 8);
}

TEST_CASE("from_activity: a long name is cut on a character boundary") {
  std::string name(tl::kMaxNameBytes - 1, 'a');
  name += "\xC3\xA9tape";  // 'é' straddles the limit
  act::Summary s = act::summarize({rec(act::Kind::kernel, 1, 0, 10, name)});
  const tl::Timeline t = tl::from_activity(s, 0, 0, "lab", "x");
  REQUIRE(t.records.size() == 1);
  CHECK(t.records[0].name == std::string(tl::kMaxNameBytes - 1, 'a'));
}

TEST_CASE("to_json and from_json: the same timeline back") {
  const tl::Timeline t = tl::from_activity(two_segments(kHostile), kT0, kT0 + 1500 * us, "lab", "conv1 B=1000");
  const tl::Timeline back = tl::from_json(json::parse(tl::to_json(t).dump()));
  CHECK(back.side == "lab");
  CHECK(back.shape == t.shape);
  CHECK(back.available);
  CHECK(back.span_ms == t.span_ms);
  REQUIRE(back.records.size() == t.records.size());
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    CHECK(back.records[i].kind == t.records[i].kind);
    CHECK(back.records[i].stream == t.records[i].stream);
    CHECK(back.records[i].start_ms == t.records[i].start_ms);
    CHECK(back.records[i].end_ms == t.records[i].end_ms);
    CHECK(back.records[i].name == t.records[i].name);
    CHECK(back.records[i].bytes == t.records[i].bytes);
  }
}

TEST_CASE("from_json: a forged file is read leniently") {
  const json j = {{"side", "<b>evil</b>"}, {"available", true}, {"span_ms", -5},
                  {"records", json::array({json{{"kind", "kernel"}, {"stream", 1}, {"start_ms", 0.5}, {"end_ms", 0.1}},
                                           json{{"kind", "\" onload=\"x"}, {"stream", -3}, {"start_ms", 1}, {"end_ms", 2}},
                                           json{{"kind", "kernel"}, {"start_ms", "soon"}, {"end_ms", 2}},
                                           json("not a record"),
                                           json{{"kind", "HtoD"}, {"stream", 2}, {"start_ms", 1e300}, {"end_ms", 1e308}}})}};
  const tl::Timeline t = tl::from_json(j);
  CHECK(t.side == "lab");  // only "baseline" is the other side
  CHECK(t.span_ms == 0);
  REQUIRE(t.records.size() == 3);
  CHECK(t.left_out == 2);
  CHECK(t.records[0].end_ms == t.records[0].start_ms);  // an end before the start is the start
  CHECK(t.records[1].kind == "copy");                   // an unknown kind
  CHECK(t.records[1].stream == 0);
  CHECK(t.records[2].start_ms <= 1e9);  // clamped
  CHECK(tl::from_json(json("nope")).records.empty());
  CHECK(tl::svg(t).find("onload") == std::string::npos);
}

TEST_CASE("overlap_of: summarize's rule, and the pieces that add up to it") {
  const tl::Timeline t = tl::from_activity(two_segments(), kT0, kT0 + 1500 * us, "lab", "x");
  const tl::Overlap o = tl::overlap_of(t);
  const act::Summary s = two_segments();
  CHECK(o.overlap_ms == doctest::Approx(s.overlap_ms));
  CHECK(o.busy_ms == doctest::Approx(s.busy_ms));
  CHECK(o.streams == 2);
  // Kernel 0 (0.30-0.45) beside HtoD 1 (0.30-0.50); kernel 1 (0.50-0.65) beside DtoH 0 (0.45-0.90).
  REQUIRE(o.spans.size() == 2);
  CHECK(o.spans[0].first == doctest::Approx(0.30));
  CHECK(o.spans[0].second == doctest::Approx(0.45));
  CHECK(o.spans[1].first == doctest::Approx(0.50));
  CHECK(o.spans[1].second == doctest::Approx(0.65));
  CHECK(o.overlap_ms == doctest::Approx(0.30));
}

TEST_CASE("activity::overlap_spans: touching pieces merge; one stream and memsets never overlap") {
  const auto spans = act::overlap_spans({rec(act::Kind::kernel, 1, 0, 100, "a"), rec(act::Kind::memcpy, 2, 10, 50, "HtoD"),
                                         rec(act::Kind::memcpy, 3, 50, 80, "DtoH"), rec(act::Kind::memset, 4, 90, 200, "m"),
                                         rec(act::Kind::memcpy, 1, 100, 200, "DtoH")});
  REQUIRE(spans.size() == 1);
  CHECK(spans[0].first == kT0 + 10 * us);
  CHECK(spans[0].second == kT0 + 80 * us);
}

TEST_CASE("svg: one bar per record in a lane per stream and direction, the overlap shaded, a caption") {
  const tl::Timeline t = tl::from_activity(two_segments(), kT0, kT0 + 1500 * us, "lab", "conv1 B=1000");
  const std::string s = tl::svg(t);
  CHECK(s.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" data-side=\"lab\"", 0) == 0);
  CHECK(count(s, "class=\"bar\"") == 7);
  CHECK(count(s, "data-kind=\"kernel\"") == 2);
  CHECK(count(s, "data-kind=\"HtoD\"") == 2);
  CHECK(count(s, "data-kind=\"DtoH\"") == 2);
  CHECK(count(s, "data-kind=\"memset\"") == 1);
  CHECK(count(s, "class=\"overlap\"") == 2);
  // Lanes: stream 13 HtoD, kernels, DtoH, memsets; stream 14 HtoD, kernels, DtoH.
  CHECK(count(s, ">stream 13 ") == 4);
  CHECK(count(s, ">stream 14 ") == 3);
  CHECK(s.find("overlap 0.300 ms of 1.260 ms busy (23.8%)") != std::string::npos);
  CHECK(s.find("ms since the layer's start") != std::string::npos);
  CHECK(s.find("4.00 MB") != std::string::npos);  // a copy's tooltip: bytes and rate
  CHECK(count(s, "<title>") == count(s, "</title>"));
  CHECK(count(s, "<svg") == count(s, "</svg>"));
}

TEST_CASE("svg: a hostile kernel name is XML text, never markup") {
  const tl::Timeline t = tl::from_activity(two_segments(kHostile), kT0, kT0 + 1500 * us, "lab", kHostile);
  const std::string s = tl::svg(t);
  CHECK(s.find("<script") == std::string::npos);
  CHECK(count(s, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;\"") == 3);  // two kernels' titles and the heading
  CHECK(count(s, "class=\"bar\"") == 7);
  // Characters XML forbids even escaped become '?': the file still parses.
  const tl::Timeline ctl = tl::from_activity(act::summarize({rec(act::Kind::kernel, 1, 0, 10, std::string("a\x01") + "b\xEF\xBF\xBF" + "c")}),
                                             0, 0, "lab", "x");
  const std::string c = tl::svg(ctl);
  CHECK(c.find("kernel a?b?c,") != std::string::npos);
}

TEST_CASE("svg: an unavailable record draws its reason; too many lanes are counted, not drawn") {
  act::Summary none;
  none.why = "CUPTI <busy>";
  const std::string s = tl::svg(tl::from_activity(none, 0, 0, "baseline", "conv1 B=1000"));
  CHECK(s.find("data-side=\"baseline\"") != std::string::npos);
  CHECK(s.find("not recorded: CUPTI &lt;busy&gt;") != std::string::npos);
  CHECK(s.find("class=\"bar\"") == std::string::npos);

  std::vector<act::Interval> wide;
  for (std::uint32_t i = 0; i < tl::kMaxLanes + 12; ++i) wide.push_back(rec(act::Kind::kernel, i, i, i + 5, "k"));
  const std::string w = tl::svg(tl::from_activity(act::summarize(wide), 0, 0, "lab", "x"));
  CHECK(count(w, "class=\"bar\"") == tl::kMaxLanes);
  CHECK(w.find("12 records on 12 more lanes not drawn") != std::string::npos);
}

TEST_CASE("svg_file: the lab's chart and the baseline's in one document under an escaped heading") {
  const std::vector<tl::Timeline> both{tl::from_activity(two_segments(), kT0, kT0 + 1500 * us, "lab", "conv1 B=1000"),
                                       tl::from_activity(act::summarize({rec(act::Kind::memcpy, 7, 0, 400, "HtoD", 9),
                                                                         rec(act::Kind::kernel, 7, 400, 600, "k")}),
                                                         0, 0, "baseline", "conv1 B=1000")};
  const std::string f = tl::svg_file(both, "10-streams <lab>");
  CHECK(f.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=", 0) == 0);
  CHECK(count(f, "class=\"timeline\"") == 2);
  CHECK(count(f, "class=\"bar\"") == 9);
  CHECK(f.find("labkit grade: 10-streams &lt;lab&gt;") != std::string::npos);
  CHECK(count(f, "<svg") == count(f, "</svg>"));
}

TEST_CASE("text_escape: utf8_prefix and xml_chars") {
  CHECK(labkit::utf8_prefix("abc", 5) == "abc");
  CHECK(labkit::utf8_prefix("ab\xE2\x82\xAC", 4) == "ab");  // the euro sign needs 3 bytes
  CHECK(labkit::utf8_prefix("ab\xE2\x82\xAC", 5) == "ab\xE2\x82\xAC");
  CHECK(labkit::xml_chars("tab\there\nok \xC3\xA9 \xF0\x9F\x98\x80") == "tab\there\nok \xC3\xA9 \xF0\x9F\x98\x80");
  CHECK(labkit::xml_chars(std::string("nul\0x", 5)) == "nul?x");
  CHECK(labkit::xml_chars("\xC0\xAF") == "?");         // an overlong '/': not UTF-8
  CHECK(labkit::xml_chars("\xED\xA0\x80") == "?");     // a surrogate
  CHECK(labkit::xml_chars("\xEF\xBF\xBE|") == "?|");   // U+FFFE
  CHECK(labkit::xml_chars("\xE2\x82") == "??");        // cut short
}
