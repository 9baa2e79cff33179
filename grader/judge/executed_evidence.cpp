#include "grader/judge/executed_evidence.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <unordered_map>
#include <utility>

namespace labkit::executed {
namespace {

using nlohmann::json;

double ms_of(std::uint64_t ns) { return static_cast<double>(ns) * 1e-6; }

// The length of the union of [start, end) intervals (ns).
std::uint64_t union_ns(std::vector<std::pair<std::uint64_t, std::uint64_t>> iv) {
  std::sort(iv.begin(), iv.end());
  std::uint64_t total = 0, reach = 0;
  bool any = false;
  for (const auto& [a, b] : iv) {
    if (!any || a > reach) {
      total += b - a;
      reach = b;
      any = true;
    } else if (b > reach) {
      total += b - reach;
      reach = b;
    }
  }
  return total;
}

std::string percent(double share) {
  if (share > 0 && share < 0.001) return "<0.1%";
  return share < 0.1 ? fmt::format("{:.1f}%", 100 * share) : fmt::format("{:.0f}%", 100 * share);
}

std::string names(const std::vector<std::string>& list) {
  std::string out;
  for (std::size_t k = 0; k < list.size() && k < 3; ++k) out += (k ? ", " : "") + list[k];
  if (list.size() > 3) out += fmt::format(", +{} more", list.size() - 3);
  return out;
}

}  // namespace

Window window_from_text(std::string_view text, std::string group, double wall_ms, double reported_ms) {
  Window w;
  w.group = std::move(group);
  w.wall_ms = wall_ms;
  w.reported_ms = reported_ms;
  auto bad = [&](const std::string& why) {
    w = Window{w.group, false, "the harness sent malformed records: " + why, 0, 0, 0, 0, 0, {}, w.wall_ms, w.reported_ms};
    return w;
  };
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception&) {
    return bad("not JSON");
  }
  try {
    if (!j.is_object()) return bad("not an object");
    w.available = j.at("available").get<bool>();
    w.why = j.value("why", std::string());
    if (!w.available) {
      if (w.why.empty()) w.why = "no reason given";
      return w;
    }
    w.start_ns = j.at("start_ns").get<std::uint64_t>();
    w.end_ns = j.at("end_ns").get<std::uint64_t>();
    w.dropped = j.at("dropped").get<std::size_t>();
    w.kit_edge_records = j.value("kit_edge_records", std::size_t{0});
    w.kit_edge_ns = j.value("kit_edge_ns", std::uint64_t{0});
    const std::vector<std::string> list = j.at("names").get<std::vector<std::string>>();
    const json& records = j.at("records");
    if (!records.is_array() || records.size() > kMaxRecords) return bad("\"records\" is not an array of at most 4096");
    for (const json& r : records) {
      if (!r.is_array() || r.size() != 6) return bad("a record is not [kind, name, start_ns, end_ns, stream, threads]");
      const int kind = r[0].get<int>();
      const std::size_t name = r[1].get<std::size_t>();
      if (kind < 0 || kind > 2) return bad(fmt::format("a record of unknown kind {}", kind));
      if (name >= list.size()) return bad(fmt::format("a record names entry {} of {} names", name, list.size()));
      w.records.push_back({static_cast<activity::Kind>(kind), list[name], r[2].get<std::uint64_t>(),
                           r[3].get<std::uint64_t>(), r[4].get<std::uint32_t>(), r[5].get<std::uint64_t>()});
    }
  } catch (const json::exception& e) {
    return bad(e.what());
  }
  return w;
}

std::optional<double> busy_ms(const Window& w) {
  if (!w.available || w.dropped > 0 || w.end_ns < w.start_ns) return std::nullopt;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> busy;
  for (const Record& r : w.records) {
    const std::uint64_t s = std::max(r.start_ns, w.start_ns), e = std::min(r.end_ns, w.end_ns);
    if (e > s) busy.emplace_back(s, e);
  }
  return ms_of(union_ns(std::move(busy)));
}

Attribution attribute(const std::vector<Window>& windows, const std::vector<evidence::PtxFunction>& functions,
                      const Limits& limits) {
  Attribution a;
  a.windows = windows.size();
  std::unordered_map<std::string, const evidence::PtxFunction*> entries;
  for (const evidence::PtxFunction& f : functions)
    if (f.entry) entries.emplace(f.name, &f);
  auto fail = [&](std::string why) {
    a.verified = false;
    a.why = std::move(why);
    a.kernels.clear();
    a.kernel_ms = 0;
    return a;
  };
  if (windows.empty()) return fail("no timed call sent its records");
  std::map<std::string, std::size_t> calls;                      // group -> windows
  std::map<std::string, std::map<std::string, double>> per_group;  // group -> kernel -> ms
  std::map<std::string, double> covered, reported;                 // group -> ms, summed over its calls
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const Window& w = windows[i];
    const std::string call = fmt::format("timed call {} ({})", i + 1, w.group);
    if (!w.available) return fail(fmt::format("CUPTI recorded nothing in {}: {}", call, w.why));
    if (w.dropped > 0) return fail(fmt::format("CUPTI lost {} record(s) around {}", w.dropped, call));
    if (w.end_ns < w.start_ns) return fail(fmt::format("{}: its window ends before it starts", call));
    const double window_ms = ms_of(w.end_ns - w.start_ns);
    if (window_ms > w.wall_ms + limits.wall_slack_ms)
      return fail(fmt::format("{}: the harness's window ({:.3f} ms) is longer than the judge's clock around the "
                              "request ({:.3f} ms)", call, window_ms, w.wall_ms));
    std::vector<std::pair<std::uint64_t, std::uint64_t>> busy;
    ++calls[w.group];
    a.kit_edge_records += w.kit_edge_records;
    a.kit_edge_ns = std::max(a.kit_edge_ns, w.kit_edge_ns);
    auto& kernels = per_group[w.group];
    for (const Record& r : w.records) {
      if (r.end_ns < r.start_ns)
        return fail(fmt::format("{}: a record of {} ends before it starts", call, r.name));
      if (r.end_ns < w.start_ns || r.start_ns > w.end_ns)
        return fail(fmt::format("{}: a record of {} lies outside the timed window", call, r.name));
      if (r.kind == activity::Kind::kernel && !entries.contains(r.name))
        return fail(fmt::format("{}: kernel {} is not a kernel of the lab's PTX", call, r.name));
      const std::uint64_t s = std::max(r.start_ns, w.start_ns), e = std::min(r.end_ns, w.end_ns);
      busy.emplace_back(s, e);
      if (r.kind == activity::Kind::kernel) kernels[r.name] += ms_of(e - s);
    }
    covered[w.group] += ms_of(union_ns(std::move(busy)));
    reported[w.group] += w.reported_ms;
  }
  // Coverage over all of a shape's calls, not call by call: one short call's launch gaps (measured
  // on an H200: 0.041 of 0.088 ms in one of 34 calls of the 12 solution, the rest above 90%) are
  // no sign of missing records, while records left out of every call still are.
  for (const auto& [group, ms] : covered)
    if (ms < limits.min_coverage * reported[group])
      return fail(fmt::format("the timed calls of {}: the recorded GPU work covers {:.3f} ms of the {:.3f} ms the lab "
                              "reported (at least {:.0f}% expected)", group, ms, reported[group], 100 * limits.min_coverage));
  std::map<std::string, double> total;
  for (const auto& [group, kernels] : per_group)
    for (const auto& [name, ms] : kernels) total[name] += ms / double(calls[group]);
  for (const auto& [name, ms] : total) {
    a.kernels.push_back({name, entries.at(name)->display, ms, 0});
    a.kernel_ms += ms;
  }
  for (KernelTime& k : a.kernels) k.share = a.kernel_ms > 0 ? k.ms / a.kernel_ms : 0;
  std::sort(a.kernels.begin(), a.kernels.end(), [](const KernelTime& x, const KernelTime& y) { return x.ms > y.ms; });
  a.verified = true;
  return a;
}

evidence::Report check(std::string_view ptx, const std::vector<evidence::Pattern>& patterns,
                       const std::vector<Window>& windows, double share, const Limits& limits) {
  const std::vector<evidence::PtxFunction> functions = evidence::parse_ptx(ptx);
  const auto graph = evidence::call_graph(functions);
  const Attribution a = attribute(windows, functions, limits);
  evidence::Report report;
  report.executed = true;
  report.basis = "executed kernels (CUPTI)";
  report.kernels = static_cast<std::size_t>(
      std::count_if(functions.begin(), functions.end(), [](const evidence::PtxFunction& f) { return f.entry; }));
  report.unverified = a.verified ? "" : a.why;
  if (a.verified) {
    std::string ran;
    for (std::size_t k = 0; k < a.kernels.size() && k < 3; ++k)
      ran += fmt::format("{}{} {}", k ? ", " : "", a.kernels[k].display, percent(a.kernels[k].share));
    if (a.kernels.size() > 3) ran += fmt::format(", +{} more", a.kernels.size() - 3);
    report.summary = fmt::format("from the kernels that ran in {} timed call(s) (CUPTI): {:.3f} ms of kernel time a call{}{}",
                                 a.windows, a.kernel_ms, a.kernels.empty() ? "" : ": ", ran);
    if (a.kit_edge_records > 0)
      report.summary += fmt::format(" ({} record(s) of the kit's refill or digest across a window's edge left out, "
                                    "reaching {:.1f} us in)", a.kit_edge_records, a.kit_edge_ns / 1e3);
  }
  std::unordered_map<std::string, const KernelTime*> timed;
  for (const KernelTime& k : a.kernels) timed[k.name] = &k;
  report.ok = true;
  for (const evidence::Pattern& p : patterns) {
    const std::optional<std::regex> only =
        p.function.empty() ? std::nullopt : std::optional(std::regex(p.function, std::regex::ECMAScript | std::regex::nosubs));
    evidence::Finding f;
    f.pattern = p;
    f.share = 0;
    f.needed_share = share;
    // Which kernels carry it, each with its callees; how much of the time they took.
    std::vector<std::string> carriers_ran, carriers_dead, carriers_token;
    for (std::size_t i = 0; i < functions.size(); ++i) {
      const evidence::PtxFunction& k = functions[i];
      if (!k.entry || (only && !std::regex_search(k.display, *only))) continue;
      int n = 0;
      std::string example;
      for (std::size_t j : evidence::reachable(graph, i)) {
        std::string first;
        n += evidence::count_matches(functions[j].lines, p.regex, &first);
        if (example.empty()) example = first;
      }
      f.count += n;
      f.best = std::max(f.best, n);
      if (n > 0) f.functions.push_back(k.display);
      if (n > 0 && f.example.empty()) f.example = example;
      const bool carries = p.absent ? n > 0 : n >= p.min_count;
      if (!carries) continue;
      const auto it = timed.find(k.name);
      const double s = it == timed.end() ? 0 : it->second->share;
      if (it != timed.end() && it->second->ms > 0) {
        f.share += s;
        f.kernels.push_back(k.display);
        carriers_ran.push_back(k.display);
        carriers_token.push_back(fmt::format("{}: {} of timed GPU time", k.display, percent(s)));
      } else {
        carriers_dead.push_back(k.display);
      }
    }
    if (!a.verified) {
      f.ok = false;
      f.why = "(unverified records)";
    } else if (p.absent) {
      f.ok = carriers_ran.empty();
      f.share = f.ok ? 0 : f.share;
    } else {
      f.ok = a.kernel_ms > 0 && f.share >= share;
      if (!f.ok) {
        const std::string need = fmt::format("needs {}", percent(share));
        if (a.kernel_ms <= 0) f.why = "(no kernel ran in the timed calls)";
        else if (!carriers_ran.empty()) f.why = fmt::format("in {}; {}", names(carriers_token), need);
        else if (!carriers_dead.empty())
          f.why = fmt::format("in {}, which never ran in a timed call", names(carriers_dead));
        else if (f.count > 0)
          f.why = fmt::format("(at most x{} in one kernel with the functions it calls; {} needed)", f.best, p.min_count);
        else f.why = p.function.empty() ? "(in no kernel of the PTX)" : "(in none of the kernels the description names)";
      }
    }
    report.ok = report.ok && f.ok;
    report.findings.push_back(std::move(f));
  }
  if (!a.verified && !patterns.empty()) report.ok = false;
  for (const KernelTime& k : a.kernels) report.ran.push_back({k.display, k.share});
  return report;
}

}  // namespace labkit::executed
