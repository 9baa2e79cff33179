#include "grader/judge/lab_spec.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace labkit {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct Reader {
  const fs::path& file;
  const json& root;

  [[noreturn]] void fail(const std::string& what) const {
    throw LabSpecError(fmt::format("{}: {}", file.string(), what));
  }
  const json& member(const char* key) const {
    if (!root.contains(key)) fail(fmt::format("missing \"{}\"", key));
    return root.at(key);
  }
  std::string string(const char* key) const {
    const json& v = member(key);
    if (!v.is_string() || v.get<std::string>().empty())
      fail(fmt::format("\"{}\" must be a non-empty string, found {}", key, v.dump()));
    return v.get<std::string>();
  }
  double number(const char* key, double lo, double hi, const char* expected) const {
    const json& v = member(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo ||
        v.get<double>() > hi)
      fail(fmt::format("\"{}\" must be {}, found {}", key, expected, v.dump()));
    return v.get<double>();
  }
  template <class E, std::size_t N>
  E choice(const char* key, const std::pair<const char*, E> (&options)[N]) const {
    const std::string s = string(key);
    std::string names;
    for (const auto& [name, value] : options) {
      if (s == name) return value;
      names += names.empty() ? fmt::format("\"{}\"", name) : fmt::format(" or \"{}\"", name);
    }
    fail(fmt::format("\"{}\" must be {}, found \"{}\"", key, names, s));
  }
};

constexpr std::pair<const char*, LabKind> kKinds[] = {{"conv", LabKind::conv}, {"map", LabKind::map}};
constexpr std::pair<const char*, Precision> kPrecisions[] = {
    {"fp32", Precision::fp32}, {"fp16", Precision::fp16}, {"tf32", Precision::tf32}, {"any", Precision::any}};
constexpr std::pair<const char*, SpeedupOf> kSpeedupOf[] = {{"geometric-mean", SpeedupOf::geometric_mean},
                                                            {"total", SpeedupOf::total}};
constexpr std::pair<const char*, TimedRegion> kRegions[] = {{"op", TimedRegion::op},
                                                            {"layer", TimedRegion::layer}};
constexpr std::pair<const char*, HostEvidence> kHostEvidence[] = {
    {"streams", HostEvidence::streams}, {"no_extra_memory", HostEvidence::no_extra_memory}};

constexpr std::pair<const char*, Contract> kContracts[] = {{"general", Contract::general},
                                                           {"course", Contract::course}};

const std::set<std::string> kKeys = {"id", "title", "points", "kind", "precision", "timed",
                                     "target_speedup", "targets_by_gpu", "correctness_share", "evidence",
                                     "host_evidence", "hints", "map", "network_accuracy", "batch",
                                     "speedup_of", "tiers", "arch_specific", "contract", "sanitize",
                                     "evidence_share", "counters", "requires_gpu", "course_evidence"};

}  // namespace

const char* to_string(LabKind k) { return k == LabKind::conv ? "conv" : "map"; }
const char* to_string(Precision p) {
  return p == Precision::fp32 ? "fp32" : p == Precision::fp16 ? "fp16" : p == Precision::tf32 ? "tf32" : "any";
}
Precision precision_from_string(const std::string& name) {
  for (const auto& [spelled, p] : kPrecisions)
    if (name == spelled) return p;
  throw std::invalid_argument(fmt::format("unknown precision \"{}\" (expected fp32, fp16, tf32 or any)", name));
}
const char* to_string(SpeedupOf s) { return s == SpeedupOf::total ? "total" : "geometric-mean"; }
const char* to_string(TimedRegion t) { return t == TimedRegion::op ? "op" : "layer"; }
const char* to_string(HostEvidence h) {
  return h == HostEvidence::streams ? "streams" : "no_extra_memory";
}

ChosenTarget LabSpec::target_for(const std::string& gpu) const {
  for (const GpuTarget& t : targets_by_gpu)
    if (t.gpu == gpu) {
      std::string why = fmt::format("calibrated for {}", gpu);
      if (!t.date.empty()) why += " on " + t.date;
      if (t.solution_speedup > 0) why += fmt::format(" (instructor solution {:.2f}x)", t.solution_speedup);
      return {t.target_speedup, true, why};
    }
  std::string known;
  for (const GpuTarget& t : targets_by_gpu) known += (known.empty() ? "" : ", ") + t.gpu;
  return {target_speedup, false,
          known.empty() ? fmt::format("lab.json's target: no calibration for {}", gpu)
                        : fmt::format("lab.json's default target: no calibration for {} (calibrated: {})", gpu, known)};
}

bool LabSpec::apply_contract(Contract c) {
  contract = c;
  if (c != Contract::course || !course_evidence) return false;
  evidence = *course_evidence;
  std::string hints;
  for (const evidence::Pattern& p : evidence)
    if (!p.hint.empty()) hints += (hints.empty() ? "" : "; ") + p.hint;
  hint_evidence = hints;
  return true;
}

LabSpec load_lab_spec(const fs::path& file, const std::string& expected_id) {
  std::ifstream in(file);
  if (!in) throw LabSpecError(fmt::format("{}: cannot open the lab description", file.string()));
  json root;
  try {
    root = json::parse(in);
  } catch (const json::parse_error& e) {
    throw LabSpecError(fmt::format("{}: not valid JSON ({})", file.string(), e.what()));
  }
  const Reader r{file, root};
  if (!root.is_object()) r.fail("expected a JSON object at the top level");
  for (const auto& [key, value] : root.items())
    if (!kKeys.contains(key)) r.fail(fmt::format("unknown key \"{}\"", key));

  LabSpec s;
  s.file = file;
  s.id = r.string("id");
  if (!expected_id.empty() && s.id != expected_id)
    r.fail(fmt::format("\"id\" is \"{}\" but the lab's folder is \"{}\"; they must be equal", s.id,
                       expected_id));
  s.title = r.string("title");
  s.points = r.number("points", 1e-9, 1e6, "a positive number");
  s.kind = r.choice("kind", kKinds);
  s.precision = r.choice("precision", kPrecisions);
  s.timed = r.choice("timed", kRegions);
  s.target_speedup = r.number("target_speedup", 1.0001, 1e6, "a number above 1");
  s.correctness_share = r.number("correctness_share", 0, 1, "a number from 0 to 1");
  if (root.contains("targets_by_gpu")) {
    const json& t = root.at("targets_by_gpu");
    if (!t.is_object()) r.fail("\"targets_by_gpu\" must be an object {\"<GPU name>\": {\"target_speedup\": ...}}");
    for (const auto& [gpu, value] : t.items()) {
      const std::string where = fmt::format("targets_by_gpu[\"{}\"]", gpu);
      if (!value.is_object()) r.fail(where + " must be an object with \"target_speedup\"");
      static const std::set<std::string> keys = {"target_speedup", "solution_speedup", "solution_low", "solution_high",
                                                 "batch", "margin", "driver", "date"};
      for (const auto& [key, _] : value.items())
        if (!keys.contains(key)) r.fail(fmt::format("{}: unknown key \"{}\"", where, key));
      const Reader g{file, value};
      GpuTarget gt;
      gt.gpu = gpu;
      if (!value.contains("target_speedup")) r.fail(where + " has no \"target_speedup\"");
      gt.target_speedup = g.number("target_speedup", 1.0001, 1e6, "a number above 1");
      for (auto [key, field] : {std::pair{"solution_speedup", &gt.solution_speedup}, {"solution_low", &gt.solution_low},
                                {"solution_high", &gt.solution_high}, {"margin", &gt.margin}})
        if (value.contains(key)) *field = g.number(key, 0, 1e6, "a number");
      if (value.contains("batch")) gt.batch = static_cast<int>(g.number("batch", 1, 1e6, "a positive integer"));
      if (value.contains("driver")) gt.driver = g.string("driver");
      if (value.contains("date")) gt.date = g.string("date");
      s.targets_by_gpu.push_back(gt);
    }
  }

  const auto patterns = [&](const char* key) {
    const json& ev = r.member(key);
    if (!ev.is_array()) r.fail(fmt::format("\"{}\" must be an array of patterns (may be empty)", key));
    std::vector<evidence::Pattern> out;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      try {
        out.push_back(evidence::pattern_from_json(ev[i], fmt::format("{}: {}[{}]", file.string(), key, i)));
      } catch (const evidence::EvidenceError& e) {
        throw LabSpecError(e.what());
      }
    }
    return out;
  };
  s.evidence = patterns("evidence");
  if (root.contains("course_evidence")) s.course_evidence = patterns("course_evidence");
  if (root.contains("evidence_share"))
    s.evidence_share = r.number("evidence_share", 0, 1, "a number from 0 to 1 (the share of the timed GPU time the "
                                                      "kernels carrying each pattern must take)");
  if (root.contains("host_evidence")) {
    const json& he = root.at("host_evidence");
    if (!he.is_array()) r.fail("\"host_evidence\" must be an array");
    for (const json& item : he) {
      const Reader one{file, json{{"host_evidence", item}}};
      s.host_evidence.push_back(one.choice("host_evidence", kHostEvidence));
    }
  }
  if (root.contains("hints")) {
    const json& h = root.at("hints");
    if (!h.is_object()) r.fail("\"hints\" must be an object");
    for (const auto& [key, value] : h.items()) {
      if (!value.is_string()) r.fail(fmt::format("hints.{} must be a string", key));
      if (key == "correctness") s.hint_correctness = value;
      else if (key == "performance") s.hint_performance = value;
      else if (key == "evidence") s.hint_evidence = value;
      else r.fail(fmt::format("unknown hint \"{}\" (expected correctness, performance, evidence)", key));
    }
  }
  if (root.contains("map")) {
    if (s.kind != LabKind::map) r.fail("\"map\" is only allowed when \"kind\" is \"map\"");
    const Reader m{file, root.at("map")};
    if (!m.root.is_object()) r.fail("\"map\" must be an object {dimx, dimy, niterations}");
    s.map.dimx = static_cast<int>(m.number("dimx", 1, 1 << 20, "an integer from 1 to 2^20"));
    s.map.dimy = static_cast<int>(m.number("dimy", 1, 1 << 20, "an integer from 1 to 2^20"));
    s.map.niterations = static_cast<int>(m.number("niterations", 1, 1e6, "an integer from 1 to 10^6"));
  }
  if (root.contains("network_accuracy")) {
    if (s.kind != LabKind::conv) r.fail("\"network_accuracy\" is only allowed when \"kind\" is \"conv\"");
    const Reader n{file, root.at("network_accuracy")};
    if (!n.root.is_object()) r.fail("\"network_accuracy\" must be an object {max_drop_points, images}");
    NetworkAccuracy a;
    a.max_drop_points = n.number("max_drop_points", 0, 100, "accuracy points from 0 to 100");
    a.images = static_cast<int>(n.number("images", 1, 1e6, "an integer from 1 to 10^6"));
    s.network_accuracy = a;
  }
  if (root.contains("batch")) {
    if (s.kind != LabKind::conv) r.fail("\"batch\" is only allowed when \"kind\" is \"conv\"");
    s.batch = static_cast<int>(r.number("batch", 1, 10000, "an integer from 1 to 10000"));
  }
  if (root.contains("speedup_of")) s.speedup_of = r.choice("speedup_of", kSpeedupOf);
  if (root.contains("arch_specific")) {
    if (!root.at("arch_specific").is_boolean()) r.fail("\"arch_specific\" must be true or false");
    s.arch_specific = root.at("arch_specific").get<bool>();
  }
  if (root.contains("requires_gpu")) {
    // The same checks as discover_labs.py's at configure time, which reads the key first.
    const json& g = root.at("requires_gpu");
    const char* shape = "\"requires_gpu\" must be {\"compute_capability\": \"8.0\", \"features\": \"what needs it\"}";
    if (!g.is_object() || g.size() != 2 || !g.contains("compute_capability") || !g.contains("features"))
      r.fail(fmt::format("{}, found {}", shape, g.dump()));
    const Reader q{file, g};
    const auto cc = parse_compute_capability(q.string("compute_capability"));
    if (!cc) r.fail(fmt::format("\"requires_gpu\": \"compute_capability\" must look like \"8.0\", found {}", g.at("compute_capability").dump()));
    s.requires_gpu = GpuRequirement{*cc, q.string("features")};
  }
  if (root.contains("contract")) {
    if (s.kind != LabKind::conv) r.fail("\"contract\" is only allowed when \"kind\" is \"conv\"");
    s.contract = r.choice("contract", kContracts);
  }
  if (root.contains("sanitize")) {
    // The compute-sanitizer tools of the memory check in every grade (labkit grade): memcheck by
    // default, racecheck too where the technique is shared memory; [] turns the check off.
    static const std::set<std::string> tools = {"memcheck", "racecheck", "synccheck", "initcheck"};
    const json& t = root.at("sanitize");
    if (!t.is_array()) r.fail("\"sanitize\" must be an array of compute-sanitizer tools (memcheck, racecheck, synccheck, initcheck)");
    s.sanitize.clear();
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (!t[i].is_string() || !tools.contains(t[i].get<std::string>()))
        r.fail(fmt::format("sanitize[{}] is {}: expected one of memcheck, racecheck, synccheck, initcheck", i, t[i].dump()));
      if (std::find(s.sanitize.begin(), s.sanitize.end(), t[i].get<std::string>()) != s.sanitize.end())
        r.fail(fmt::format("sanitize[{}]: \"{}\" is named twice", i, t[i].get<std::string>()));
      s.sanitize.push_back(t[i].get<std::string>());
    }
  }
  if (root.contains("counters")) {
    if (s.kind != LabKind::conv) r.fail("\"counters\" is only allowed when \"kind\" is \"conv\"");
    const json& c = root.at("counters");
    constexpr const char* kKeys = "name, metrics, per_count, min_fraction, max_fraction, over";
    if (!c.is_array()) r.fail(fmt::format("\"counters\" must be an array of {{{}}}", kKeys));
    for (std::size_t i = 0; i < c.size(); ++i) {
      const Reader one{file, c[i]};
      if (!c[i].is_object()) r.fail(fmt::format("counters[{}] must be an object {{{}}}", i, kKeys));
      for (const auto& [key, value] : c[i].items())
        if (key != "name" && key != "metrics" && key != "per_count" && key != "min_fraction" && key != "max_fraction" &&
            key != "over")
          r.fail(fmt::format("counters[{}]: unknown key \"{}\" (expected {})", i, key, kKeys));
      CounterEvidence e;
      e.name = one.string("name");
      // Metric names go into ncu's --metrics list, comma-separated: one name each, nothing else.
      const auto metric_list = [&](const char* key, std::vector<std::string>& into) {
        const json& m = c[i].value(key, json());
        if (!m.is_array() || m.empty()) r.fail(fmt::format("counters[{}].{} must be a non-empty array of metric names", i, key));
        for (const json& name : m) {
          if (!name.is_string() || name.get<std::string>().empty() ||
              name.get<std::string>().find_first_of(", \t\n") != std::string::npos)
            r.fail(fmt::format("counters[{}].{}: {} is not one Nsight Compute metric name", i, key, name.dump()));
          into.push_back(name.get<std::string>());
        }
      };
      metric_list("metrics", e.metrics);
      if (c[i].contains("over")) metric_list("over", e.over);
      if (c[i].contains("per_count")) e.per_count = one.number("per_count", 1e-6, 1e6, "multiply-adds per count, above 0");
      if (c[i].contains("max_fraction")) {
        e.max_fraction = one.number("max_fraction", 0, 10, "a fraction from 0 to 10");
        e.min_fraction = 0;  // a ceiling alone: no floor unless one is given
      }
      if (c[i].contains("min_fraction")) e.min_fraction = one.number("min_fraction", 0, 10, "a fraction from 0 to 10");
      if (e.max_fraction && e.min_fraction > *e.max_fraction)
        r.fail(fmt::format("counters[{}]: min_fraction {} is above max_fraction {}: no count could pass", i, e.min_fraction,
                           *e.max_fraction));
      s.counters.push_back(std::move(e));
    }
  }
  if (root.contains("tiers")) {
    const json& t = root.at("tiers");
    if (!t.is_array() || t.empty()) r.fail("\"tiers\" must be a non-empty array of ascending speedups above 1");
    for (std::size_t i = 0; i < t.size(); ++i) {
      const Reader one{file, json{{"tier", t[i]}}};
      const double v = one.number("tier", 1.0001, 1e6, "a speedup above 1");
      if (!s.tiers.empty() && v <= s.tiers.back())
        r.fail(fmt::format("\"tiers\" must ascend: tiers[{}] = {} is not above {}", i, v, s.tiers.back()));
      s.tiers.push_back(v);
    }
    if (std::abs(s.tiers.back() - s.target_speedup) > 1e-9)
      r.fail(fmt::format("the last of \"tiers\" ({}) must equal \"target_speedup\" ({})", s.tiers.back(),
                         s.target_speedup));
    if (!s.targets_by_gpu.empty())
      r.fail("a lab with \"tiers\" has no \"targets_by_gpu\": its tiers hold on every GPU");
  }
  return s;
}

}  // namespace labkit
