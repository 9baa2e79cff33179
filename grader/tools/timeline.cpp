// The data side of grader/tools/timeline.h: a recorded layer made relative to its start, its JSON form
// (written by the judge, read back from any file), and its overlap by activity::summarize's rule.
// The drawing is timeline_svg.cpp.
#include "grader/tools/timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "grader/core/text_escape.h"

namespace labkit::timeline {
namespace {

using nlohmann::json;

// A layer note further than this from its records is not believed (a lab's process sends it).
constexpr double kMaxLayerMs = 600'000;
// Times read from a file are kept within this many ms of the layer's start.
constexpr double kMaxAbsMs = 1e9;

std::string kind_of(const activity::Interval& iv) {
  if (iv.kind == activity::Kind::kernel) return "kernel";
  if (iv.kind == activity::Kind::memset) return "memset";
  return iv.name == "HtoD" || iv.name == "DtoH" ? iv.name : "copy";
}

bool known_kind(const std::string& k) {
  return k == "kernel" || k == "HtoD" || k == "DtoH" || k == "memset" || k == "copy";
}

double finite_or(const json& x, double fallback) {
  if (!x.is_number()) return fallback;
  const double v = x.get<double>();
  return std::isfinite(v) ? std::clamp(v, -kMaxAbsMs, kMaxAbsMs) : fallback;
}

}  // namespace

Timeline from_activity(const activity::Summary& s, std::uint64_t layer_start_ns, std::uint64_t layer_end_ns,
                       std::string side, std::string shape) {
  Timeline t;
  t.side = std::move(side);
  t.shape = std::move(shape);
  t.available = s.available;
  t.why = utf8_prefix(s.why, 1000);
  t.left_out = s.dropped;
  if (!s.available) return t;
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max(), last = 0;
  for (const activity::Interval& iv : s.intervals) {
    first = std::min(first, iv.start_ns);
    last = std::max(last, iv.end_ns);
  }
  const bool noted = layer_start_ns > 0 && layer_end_ns >= layer_start_ns &&
                     double(layer_end_ns - layer_start_ns) * 1e-6 <= kMaxLayerMs;
  std::uint64_t origin = s.intervals.empty() ? layer_start_ns : first, end = s.intervals.empty() ? layer_end_ns : last;
  if (noted) {
    // A record outside the note (CUPTI's clock and the note's disagree by a little) widens it.
    origin = std::min(origin, layer_start_ns);
    end = std::max(end, layer_end_ns);
  }
  if (!noted && s.intervals.empty()) origin = end = 0;
  const auto ms = [origin](std::uint64_t ns) { return ns >= origin ? double(ns - origin) * 1e-6 : -double(origin - ns) * 1e-6; };
  t.span_ms = std::min(ms(end), kMaxAbsMs);
  for (const activity::Interval& iv : s.intervals) {
    if (t.records.size() == kMaxRecords) {
      ++t.left_out;
      continue;
    }
    Record r;
    r.kind = kind_of(iv);
    r.stream = iv.stream;
    r.start_ms = std::min(ms(iv.start_ns), kMaxAbsMs);
    r.end_ms = std::min(ms(std::max(iv.start_ns, iv.end_ns)), kMaxAbsMs);
    r.name = utf8_prefix(iv.name, kMaxNameBytes);
    r.bytes = iv.bytes;
    t.records.push_back(std::move(r));
  }
  std::stable_sort(t.records.begin(), t.records.end(), [](const Record& a, const Record& b) { return a.start_ms < b.start_ms; });
  return t;
}

json to_json(const Timeline& t) {
  json records = json::array();
  for (const Record& r : t.records) {
    json x = {{"kind", r.kind}, {"stream", r.stream}, {"start_ms", r.start_ms}, {"end_ms", r.end_ms}};
    if (r.name != r.kind) x["name"] = r.name;  // a copy's name is its direction: said once
    if (r.bytes > 0) x["bytes"] = r.bytes;
    records.push_back(std::move(x));
  }
  return {{"side", t.side}, {"shape", t.shape}, {"available", t.available}, {"why", t.why},
          {"span_ms", t.span_ms}, {"left_out", t.left_out}, {"records", records}};
}

Timeline from_json(const json& j) {
  Timeline t;
  if (!j.is_object()) {
    t.why = "not a timeline";
    return t;
  }
  const auto text = [&](const char* key, std::size_t max) {
    return j.contains(key) && j[key].is_string() ? utf8_prefix(j[key].get<std::string>(), max) : std::string();
  };
  t.side = text("side", 16) == "baseline" ? "baseline" : "lab";
  t.shape = text("shape", 200);
  t.why = text("why", 1000);
  t.available = j.contains("available") && j["available"].is_boolean() && j["available"].get<bool>();
  t.span_ms = j.contains("span_ms") ? std::max(0.0, finite_or(j["span_ms"], 0)) : 0;
  t.left_out = j.contains("left_out") && j["left_out"].is_number_unsigned() ? j["left_out"].get<std::size_t>() : 0;
  if (!j.contains("records") || !j["records"].is_array()) return t;
  for (const json& x : j["records"]) {
    if (t.records.size() == kMaxRecords || !x.is_object() || !x.contains("start_ms") || !x.contains("end_ms") ||
        !x["start_ms"].is_number() || !x["end_ms"].is_number()) {
      ++t.left_out;
      continue;
    }
    Record r;
    const std::string kind = x.contains("kind") && x["kind"].is_string() ? x["kind"].get<std::string>() : "";
    r.kind = known_kind(kind) ? kind : "copy";
    r.stream = x.contains("stream") && x["stream"].is_number_unsigned() && x["stream"].get<std::uint64_t>() <= 0xFFFFFFFFu
                   ? x["stream"].get<std::uint32_t>()
                   : 0;
    r.start_ms = finite_or(x["start_ms"], 0);
    r.end_ms = std::max(r.start_ms, finite_or(x["end_ms"], r.start_ms));
    r.name = x.contains("name") && x["name"].is_string() ? utf8_prefix(x["name"].get<std::string>(), kMaxNameBytes) : r.kind;
    r.bytes = x.contains("bytes") && x["bytes"].is_number_unsigned() ? x["bytes"].get<std::uint64_t>() : 0;
    t.records.push_back(std::move(r));
  }
  std::stable_sort(t.records.begin(), t.records.end(), [](const Record& a, const Record& b) { return a.start_ms < b.start_ms; });
  return t;
}

Overlap overlap_of(const Timeline& t) {
  Overlap o;
  if (t.records.empty()) return o;
  // Back to integer ns from the earliest start, the unit activity::summarize works in.
  double least = t.records.front().start_ms;
  for (const Record& r : t.records) least = std::min(least, r.start_ms);
  const auto ns = [least](double ms) { return static_cast<std::uint64_t>(std::llround((ms - least) * 1e6)); };
  std::vector<activity::Interval> intervals;
  std::set<std::uint32_t> streams;
  for (const Record& r : t.records) {
    activity::Interval iv;
    iv.kind = r.kind == "kernel" ? activity::Kind::kernel : r.kind == "memset" ? activity::Kind::memset : activity::Kind::memcpy;
    iv.start_ns = ns(r.start_ms);
    iv.end_ns = std::max(iv.start_ns, ns(r.end_ms));
    iv.stream = r.stream;
    if (iv.kind != activity::Kind::memset) streams.insert(r.stream);
    intervals.push_back(iv);
  }
  for (const auto& [a, b] : activity::overlap_spans(intervals))
    o.spans.emplace_back(least + double(a) * 1e-6, least + double(b) * 1e-6);
  const activity::Summary s = activity::summarize(std::move(intervals));
  o.overlap_ms = s.overlap_ms;
  o.busy_ms = s.busy_ms;
  o.streams = static_cast<int>(streams.size());
  return o;
}

}  // namespace labkit::timeline
