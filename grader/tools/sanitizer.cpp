#include "grader/tools/sanitizer.h"

#include <algorithm>
#include <regex>

namespace labkit::sanitizer {
namespace {

constexpr std::string_view kPrefix = "=========";

std::string trim(std::string_view s) {
  const std::size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const std::size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

bool starts_with_any(std::string_view s, std::initializer_list<std::string_view> heads) {
  for (std::string_view h : heads)
    if (s.starts_with(h)) return true;
  return false;
}

// "file.cu:48" anywhere in a line: the sanitizer writes "in /abs/kernel.cu:48" or
// "in /abs/kernel.cu:48:kernel_name(...)" depending on its version.
const std::regex& location_pattern() {
  static const std::regex re(R"(([^\s:()]+\.(?:cu|cuh|cpp|h|hpp)):(\d+))");
  return re;
}

// "at <unnamed>::racy_tiled(float *, labkit::ConvShape)+0x7f0 in kernel.cu:23" ->
// "at tests/labs/tiling-race/kernel.cu:23 in racy_tiled": the place first, the function by the
// name the student gave it. Lines without that form are returned as they are.
std::string tidy(const std::string& line, std::string_view prefer) {
  static const std::regex at(R"(at (.+?)\+0x[0-9a-fA-F]+ in (\S+?):(\d+)\b)");
  const std::string_view prefer_base = prefer.substr(prefer.rfind('/') == std::string_view::npos ? 0 : prefer.rfind('/') + 1);
  std::string out;
  auto from = line.cbegin();
  for (std::sregex_iterator it(line.begin(), line.end(), at), end; it != end; ++it) {
    const std::smatch& m = *it;
    std::string fn = m[1].str();
    for (const std::string_view ns : {"(anonymous namespace)::", "<unnamed>::"})
      for (std::size_t p; (p = fn.find(ns)) != std::string::npos;) fn.erase(p, ns.size());
    if (const std::size_t paren = fn.find('('); paren != std::string::npos && paren > 0) fn.erase(paren);
    std::string file = m[2].str();
    if (!prefer.empty() && (file == prefer_base || file.ends_with("/" + std::string(prefer)))) file = prefer;
    out.append(from, m[0].first);
    out += "at " + file + ":" + m[3].str() + " in " + fn;
    from = m[0].second;
  }
  out.append(from, line.cend());
  if (out.starts_with("Error: ")) out.erase(0, 7);
  return out;
}

// The line tables name a file as nvcc was given it, and the sanitizer may print its base name only
// ("kernel.cu:23"): a base name that is the lab's file's is written as the lab's path.
std::string pick_location(const Finding& f, std::string_view prefer) {
  const std::string_view prefer_base = prefer.substr(prefer.rfind('/') == std::string_view::npos ? 0 : prefer.rfind('/') + 1);
  std::string first;
  std::vector<std::string_view> lines{f.headline};
  for (const std::string& d : f.detail) lines.push_back(d);
  for (std::string_view line : lines) {
    for (std::cregex_iterator it(line.data(), line.data() + line.size(), location_pattern()), end; it != end; ++it) {
      const std::string file = (*it)[1].str(), loc = it->str();
      if (!prefer.empty() && file.ends_with(prefer)) return loc;
      if (!prefer.empty() && file == prefer_base) return std::string(prefer) + ":" + (*it)[2].str();
      if (first.empty()) first = loc;
    }
  }
  return first;
}

}  // namespace

Report parse_log(const std::string& tool, std::string_view log, std::string_view prefer_source,
                 std::size_t max_findings) {
  Report r;
  r.tool = tool;
  std::vector<Finding> all;
  bool in_host_trace = false;
  std::vector<std::string> head_lines;
  std::size_t pos = 0;
  while (pos < log.size()) {
    std::size_t end = log.find('\n', pos);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(pos, end - pos);
    pos = end + 1;
    // Unanchored: the lab's process can write into the log (it inherits the tool's log fd), and
    // junk it wrote without a newline must not hide the tool's line after it. The tool's own
    // prefix is the last one on the line (its text never holds one; in a longer run of '=', the
    // run's last nine).
    const std::size_t at = line.rfind(kPrefix);
    if (at == std::string_view::npos) continue;  // the program's own output, if it shared the log
    std::string_view body = line.substr(at + kPrefix.size());
    if (body.starts_with(" ")) body.remove_prefix(1);
    if (head_lines.size() < 4 && !trim(body).empty()) head_lines.push_back(trim(body));
    const std::string text = trim(body);
    if (text.empty()) {
      in_host_trace = false;
      continue;
    }
    const bool indented = body.starts_with(" ") || body.starts_with("\t");
    if (!indented) {
      in_host_trace = false;
      // Several summaries: only the lab's process writes a second one, and it never lowers the count.
      if (text.starts_with("ERROR SUMMARY:")) {
        r.completed = true;
        r.errors = std::max(r.errors, std::atoi(text.c_str() + std::string_view("ERROR SUMMARY:").size()));
        continue;
      }
      // racecheck ends with its own summary: "RACECHECK SUMMARY: 12 hazards displayed (12 errors, 0 warnings)".
      if (text.starts_with("RACECHECK SUMMARY:")) {
        r.completed = true;
        const std::size_t open = text.find('(');
        r.errors = std::max(r.errors, open == std::string::npos ? 0 : std::atoi(text.c_str() + open + 1));
        continue;
      }
      if (text.starts_with("COMPUTE-SANITIZER")) {
        r.banner = true;
        continue;
      }
      if (starts_with_any(text, {"LEAK SUMMARY", "Target application returned"})) continue;
      all.push_back({text, {}, {}});
      continue;
    }
    if (all.empty()) continue;
    if (starts_with_any(text, {"Saved host backtrace", "Host Frame"})) {
      in_host_trace = true;
      continue;
    }
    if (!in_host_trace) all.back().detail.push_back(text);
  }
  r.findings_total = int(all.size());
  for (Finding& f : all) {
    f.headline = tidy(f.headline, prefer_source);
    for (std::string& d : f.detail) d = tidy(d, prefer_source);
    f.location = pick_location(f, prefer_source);
    if (is_out_of_bounds(f) && r.out_of_bounds++ == 0) r.first_out_of_bounds = f;
    if (r.findings.size() < max_findings) r.findings.push_back(std::move(f));
  }
  if (!r.completed) {
    for (const std::string& l : head_lines) r.problem += (r.problem.empty() ? "" : "\n") + l;
    if (r.problem.empty()) r.problem = "compute-sanitizer wrote no log";
  }
  return r;
}

bool is_out_of_bounds(const Finding& f) {
  const std::string& h = f.headline;
  if (!(h.starts_with("Invalid __global__") || h.starts_with("Invalid __shared__") || h.starts_with("Invalid __local__") ||
        h.starts_with("Out-of-range")))
    return false;
  // memcheck names a misaligned access the same way: an address the right size away from
  // alignment, not past a buffer.
  if (h.find("isaligned") != std::string::npos) return false;
  return std::none_of(f.detail.begin(), f.detail.end(),
                      [](const std::string& d) { return d.find("isaligned") != std::string::npos; });
}

std::string explain(const Finding& f) {
  const std::string& h = f.headline;
  auto has = [&](std::string_view s) { return h.find(s) != std::string::npos; };
  // memcheck names a misaligned access in the headline or on a detail line ("... is misaligned").
  const bool misaligned = has("isaligned") || std::any_of(f.detail.begin(), f.detail.end(), [](const std::string& d) {
    return d.find("isaligned") != std::string::npos;
  });
  if (has("Race reported"))
    return "A shared-memory race: one thread writes an element that another thread of the block "
           "reads or writes, with no __syncthreads() between the two accesses.";
  if (has("Barrier error") || has("Divergent") || has("Invalid __syncthreads") || has("barrier"))
    return "A barrier that not every thread of the block reaches: __syncthreads() inside an if, or "
           "inside a loop whose trip count differs between threads.";
  if (has("Uninitialized"))
    return "The kernel reads device memory that nothing wrote: an allocation read before it is "
           "filled, or a read past the part that was copied.";
  if (misaligned)
    return "A load or store at an address that is not a multiple of its size: a float4 access "
           "needs a 16-byte aligned address (index a multiple of 4 from an aligned base).";
  if (has("Invalid __shared__"))
    return "An index outside the shared-memory array: the tile is smaller than what the kernel "
           "indexes (check the halo and the dynamic shared-memory size of the launch).";
  if (has("Invalid __global__ write"))
    return "An out-of-bounds write: a thread stores past the end of an array; check the bounds "
           "test in front of every store.";
  if (has("Invalid __global__ read") || has("Invalid __local__") || has("Invalid"))
    return "An out-of-bounds read: a thread loads past the end of an array; check the bounds test "
           "in front of every load (halo cells past the input's edge must not be read).";
  if (has("Program hit"))
    return "A CUDA call returned an error; the finding above it is usually the cause.";
  return "";
}

std::string relative_to(std::string text, std::string_view root) {
  if (root.empty()) return text;
  std::string needle(root);
  if (!needle.ends_with('/')) needle += '/';
  for (std::size_t at; (at = text.find(needle)) != std::string::npos;) text.erase(at, needle.size());
  return text;
}

}  // namespace labkit::sanitizer
