// The records of the kernels, copies and memsets that ran in the last timed region (server.h),
// for the judge's executed-kernel evidence (grader/judge/executed_evidence.h). The harness only
// reports: which kernels count, and whether the records are believable, is the judge's call.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>

#include "grader/tools/activity.h"
#include "device_ops.h"
#include "grader/judge/executed_evidence.h"
#include "server.h"

namespace labkit::harness {
namespace {

using nlohmann::json;

struct Window {
  std::uint64_t start_ns = 0, end_ns = 0;
  bool open = false, closed = false;
};
Window g_window;
std::optional<json> g_kept;  // the last closed window's records, until a request sends them

json window_json(const Window& w) {
  const activity::Traced t = activity::take_traced();
  json j{{"available", t.available}, {"why", t.why}, {"start_ns", w.start_ns}, {"end_ns", w.end_ns}};
  if (t.available && (w.start_ns == 0 || w.end_ns == 0)) {
    j["available"] = false;
    j["why"] = "CUPTI's clock could not be read around the timed region";
  }
  json names = json::array(), records = json::array();
  std::unordered_map<std::string, std::size_t> index;
  std::size_t dropped = t.dropped;
  std::size_t kit_edge = 0;
  std::uint64_t kit_edge_ns = 0;
  for (const activity::Interval& iv : t.intervals) {
    if (iv.end_ns < w.start_ns || iv.start_ns > w.end_ns) continue;  // not this window's
    if (iv.kind == activity::Kind::kernel && (iv.start_ns < w.start_ns || iv.end_ns > w.end_ns) &&
        is_kit_kernel(iv.name)) {
      // The refill before the window or the digest after it, seen across the window's edge by
      // CUPTI's clock; how far is kept so that the judge's log shows the clocks' disagreement.
      ++kit_edge;
      kit_edge_ns = std::max(kit_edge_ns, iv.start_ns < w.start_ns ? std::min(iv.end_ns, w.end_ns) - w.start_ns
                                                                   : w.end_ns - std::max(iv.start_ns, w.start_ns));
      continue;
    }
    if (records.size() >= executed::kMaxRecords) {
      ++dropped;
      continue;
    }
    auto [it, added] = index.try_emplace(iv.name, names.size());
    if (added) names.push_back(iv.name);
    records.push_back({static_cast<int>(iv.kind), it->second, iv.start_ns, iv.end_ns, iv.stream, iv.threads});
  }
  j["dropped"] = dropped;
  j["kit_edge_records"] = kit_edge;
  j["kit_edge_ns"] = kit_edge_ns;
  j["names"] = std::move(names);
  j["records"] = std::move(records);
  return j;
}

}  // namespace

std::span<unsigned char> Tensors::bytes(std::uint64_t offset, std::size_t count) const {
  if (offset > bytes_ || count > bytes_ - offset)
    throw KitError("tensor byte range " + std::to_string(offset) + "+" + std::to_string(count) + " outside the file");
  return {base_ + offset, count};
}

void window_open() {
  g_window = {activity::timestamp_ns(), 0, true, false};
}

void window_close() {
  if (!g_window.open) return;
  g_window.end_ns = activity::timestamp_ns();
  g_window.open = false;
  g_window.closed = true;
}

void take_window(bool discard, bool wanted) {
  if (g_window.closed && wanted) g_kept = window_json(g_window);
  if (g_window.closed) g_window = {};
  if (discard) {
    g_kept.reset();
    activity::clear_traced();
  }
}

json send_window(const json& request, const Tensors& t) {
  if (!g_kept || !request.contains("executed_out")) return nullptr;
  const json& where = request.at("executed_out");
  const std::uint64_t offset = where.at("offset").get<std::uint64_t>();
  const std::size_t capacity = where.at("bytes").get<std::size_t>();
  std::string text = g_kept->dump(-1, ' ', false, json::error_handler_t::replace);
  g_kept.reset();
  if (text.size() > capacity)
    text = json{{"available", false}, {"why", "the records do not fit the judge's region"}}.dump();
  if (text.size() > capacity) return nullptr;
  std::memcpy(t.bytes(offset, text.size()).data(), text.data(), text.size());
  return {{"bytes", text.size()}};
}

}  // namespace labkit::harness
