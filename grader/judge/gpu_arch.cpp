// Compute capabilities, the build's targets and a lab's "requires_gpu" (grader/judge/gpu_arch.h).
#include "grader/judge/gpu_arch.h"

#include <fmt/core.h>

#include <charconv>
#include <sstream>

namespace labkit {
namespace {

std::optional<int> number(std::string_view s) {
  int v = 0;
  if (s.empty() || s.size() > 3) return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// "sm_86" -> (sm, 8.6), "compute_100" -> (compute, 10.0); nullopt for anything else.
struct Target {
  bool machine_code = false;
  ComputeCapability cc;
};
std::optional<Target> parse_target(std::string_view word) {
  Target t;
  std::string_view digits;
  if (word.starts_with("sm_")) {
    t.machine_code = true;
    digits = word.substr(3);
  } else if (word.starts_with("compute_")) {
    digits = word.substr(8);
  } else {
    return std::nullopt;
  }
  if (digits.size() < 2) return std::nullopt;
  const auto major = number(digits.substr(0, digits.size() - 1)), minor = number(digits.substr(digits.size() - 1));
  if (!major || !minor) return std::nullopt;
  t.cc = {*major, *minor};
  return t;
}

}  // namespace

std::optional<ComputeCapability> parse_compute_capability(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos || text.size() != dot + 2) return std::nullopt;
  const auto major = number(text.substr(0, dot)), minor = number(text.substr(dot + 1));
  if (!major || !minor || *major < 1) return std::nullopt;
  return ComputeCapability{*major, *minor};
}

std::string to_string(ComputeCapability cc) { return fmt::format("{}.{}", cc.major, cc.minor); }

std::string family(ComputeCapability cc) {
  // NVIDIA's CUDA C++ Programming Guide, "Compute Capabilities" (one name per major version but
  // 7.5 Turing within Volta's 7 and 8.9 Ada Lovelace within Ampere's 8).
  switch (cc.major) {
    case 3: return "Kepler";
    case 5: return "Maxwell";
    case 6: return "Pascal";
    case 7: return cc.minor >= 5 ? "Turing" : "Volta";
    case 8: return cc.minor == 9 ? "Ada Lovelace" : "Ampere";
    case 9: return "Hopper";
    case 10: case 11: case 12: return "Blackwell";
    default: return "";
  }
}

std::string describe(ComputeCapability cc) {
  const std::string f = family(cc);
  return f.empty() ? to_string(cc) : fmt::format("{} ({})", to_string(cc), f);
}

bool build_runs_on(std::string_view targets, ComputeCapability cc) {
  std::istringstream words{std::string(targets)};
  for (std::string w; words >> w;) {
    const auto t = parse_target(w);
    if (!t) continue;
    if (t->machine_code ? t->cc.major == cc.major && t->cc.minor <= cc.minor : t->cc <= cc) return true;
  }
  return false;
}

std::string build_mismatch(std::string_view targets, const std::string& gpu, ComputeCapability cc) {
  if (build_runs_on(targets, cc)) return {};
  const std::string f = family(cc);
  return fmt::format(
      "This build has no code for this GPU, {} (compute capability {}{}): it was built for {} (meson's gpu_arch). "
      "Rebuild on this machine with `meson setup --reconfigure BUILD_DIR -Dgpu_arch=auto` (or -Dgpu_arch={}), then "
      "`meson compile -C BUILD_DIR`.",
      gpu, to_string(cc), f.empty() ? "" : ", " + f, targets, to_string(cc));
}

std::string lab_mismatch(const std::string& lab_id, const GpuRequirement& need, const std::string& gpu,
                         ComputeCapability cc) {
  if (cc >= need.compute_capability) return {};
  return fmt::format("{} needs a GPU of compute capability {} or newer for {}; this GPU, {}, is {}.", lab_id,
                     describe(need.compute_capability), need.features, gpu, describe(cc));
}

}  // namespace labkit
