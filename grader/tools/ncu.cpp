#include "grader/tools/ncu.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

namespace labkit::ncu {
namespace {

// One CSV line into fields: ncu quotes every field; "" inside quotes is a quote.
std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// "1,234.5" -> 1234.5; false for "", "n/a" and text.
bool to_number(std::string s, double& v) {
  std::erase(s, ',');
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end && *end == '\0' && std::isfinite(v);
}

std::string shorten(const std::string& s, std::size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

// "void <unnamed>::conv_tiled_kernel<4>(float *, ...)" -> "conv_tiled_kernel<4>": the function's
// own name is what a student finds in kernel.cu. ncu may cut the front of a qualified name
// ("unnamed>::conv_forward_kernel(...)"), so the name is what follows the last "::" outside <>.
std::string short_name(std::string s) {
  if (s.starts_with("void ")) s.erase(0, 5);
  for (const std::string_view ns : {"(anonymous namespace)::"})
    for (std::size_t at; (at = s.find(ns)) != std::string::npos;) s.erase(at, ns.size());
  if (const std::size_t paren = s.find('('); paren != std::string::npos && paren > 0) s.erase(paren);
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>') depth = std::max(0, depth - 1);
    else if (depth == 0 && s.compare(i, 2, "::") == 0) start = i + 2;
  }
  return s.substr(start);
}

double sum_of(const std::vector<Kernel>& ks, const std::string& metric) {
  double sum = 0;
  for (const Kernel& k : ks)
    if (const auto it = k.values.find(metric); it != k.values.end()) sum += it->second;
  return sum;
}

std::string format_value(const Kernel& k, const Row& r) {
  double sum = 0;
  for (const std::string& m : r.metrics) {
    const auto it = k.values.find(m);
    if (it == k.values.end()) return "n/a";
    sum += it->second;
  }
  switch (r.unit) {
    case Unit::time_ns: return sum >= 1e6 ? fmt::format("{:.3f} ms", sum / 1e6) : fmt::format("{:.1f} us", sum / 1e3);
    case Unit::percent: return fmt::format("{:.1f} %", sum);
    case Unit::count: return fmt::format("{:.0f}", sum);
    case Unit::bytes:
      if (sum >= 1e9) return fmt::format("{:.2f} GB", sum / 1e9);
      if (sum >= 1e6) return fmt::format("{:.1f} MB", sum / 1e6);
      if (sum >= 1e3) return fmt::format("{:.1f} kB", sum / 1e3);
      return fmt::format("{:.0f} B", sum);
  }
  return "";
}

}  // namespace

const std::vector<Row>& rows() {
  static const std::vector<Row> r = {
      {"duration", {"gpu__time_duration.sum"}, Unit::time_ns},
      {"SM throughput (% of peak)", {"sm__throughput.avg.pct_of_peak_sustained_elapsed"}, Unit::percent},
      {"memory throughput (% of peak)", {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"}, Unit::percent},
      {"achieved occupancy", {"sm__warps_active.avg.pct_of_peak_sustained_active"}, Unit::percent},
      {"theoretical occupancy", {"sm__maximum_warps_per_active_cycle_pct"}, Unit::percent},
      {"registers/thread", {"launch__registers_per_thread"}, Unit::count},
      {"shared memory/block", {"launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic"}, Unit::bytes},
      {"L1 hit rate", {"l1tex__t_sector_hit_rate.pct"}, Unit::percent},
      {"L2 hit rate", {"lts__t_sector_hit_rate.pct"}, Unit::percent},
      {"global load bytes", {"l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"}, Unit::bytes},
      {"global store bytes", {"l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum"}, Unit::bytes},
      {"DRAM bytes (read + write)", {"dram__bytes_read.sum", "dram__bytes_write.sum"}, Unit::bytes},
  };
  return r;
}

std::string metric_list() {
  std::string out = "launch__grid_size,launch__block_size";
  for (const Row& r : rows())
    for (const std::string& m : r.metrics) out += "," + m;
  return out;
}

std::vector<Kernel> parse_csv(std::string_view text) {
  std::vector<Kernel> kernels;
  std::vector<std::string> header;
  bool units_row_pending = false;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.starts_with('"')) continue;
    std::vector<std::string> f = split_csv(line);
    if (!f.empty() && f[0] == "ID") {
      header = std::move(f);
      units_row_pending = true;
      continue;
    }
    if (header.empty()) continue;
    if (units_row_pending) {  // the units row has an empty ID
      units_row_pending = false;
      if (!f.empty() && f[0].empty()) continue;
    }
    Kernel k;
    for (std::size_t i = 0; i < f.size() && i < header.size(); ++i) {
      const std::string& col = header[i];
      double v = 0;
      if (col == "Kernel Name") k.name = f[i];
      else if (col == "launch__grid_size" || col == "Grid Size") k.grid = k.grid.empty() ? f[i] : k.grid;
      else if (col == "launch__block_size" || col == "Block Size") k.block = k.block.empty() ? f[i] : k.block;
      else if (col.find("__") != std::string::npos && to_number(f[i], v)) k.values[col] = v;
    }
    kernels.push_back(std::move(k));
  }
  return kernels;
}

Complaint problem_of(std::string_view log) {
  Complaint c;
  std::size_t pos = 0;
  while (pos < log.size()) {
    std::size_t end = log.find('\n', pos);
    if (end == std::string_view::npos) end = log.size();
    const std::string line(log.substr(pos, end - pos));
    pos = end + 1;
    if (line.find("ERR_NVGPUCTRPERM") != std::string::npos) return {Problem::no_permission, line};
    if (line.starts_with("==ERROR==") && c.problem == Problem::none) c = {Problem::other, line};
    if (line.find("No kernels were profiled") != std::string::npos && c.problem == Problem::none)
      c = {Problem::no_kernels, line};
  }
  return c;
}

std::string format_shape(const ShapeProfile& p) {
  constexpr std::size_t kLabel = 30, kCol = 24;
  std::vector<std::pair<std::string, const Kernel*>> cols;
  for (std::size_t i = 0; i < p.baseline.size(); ++i)
    cols.push_back({p.baseline.size() > 1 ? fmt::format("baseline {}", i + 1) : "baseline", &p.baseline[i]});
  for (std::size_t i = 0; i < p.lab.size(); ++i)
    cols.push_back({p.lab.size() > 1 ? fmt::format("lab {}", i + 1) : "lab", &p.lab[i]});
  std::string out = fmt::format("{}  [{}]\n", p.name, p.shape);
  auto line = [&](const std::string& label, auto cell) {
    out += fmt::format("  {:<{}}", label, kLabel);
    for (const auto& [head, k] : cols) out += fmt::format(" {:>{}}", shorten(cell(head, *k), kCol), kCol);
    out += "\n";
  };
  line("", [](const std::string& head, const Kernel&) { return head; });
  line("kernel", [](const std::string&, const Kernel& k) { return short_name(k.name); });
  line("grid", [](const std::string&, const Kernel& k) { return k.grid.empty() ? std::string("n/a") : k.grid; });
  line("block", [](const std::string&, const Kernel& k) { return k.block.empty() ? std::string("n/a") : k.block; });
  for (const Row& r : rows()) line(r.label, [&](const std::string&, const Kernel& k) { return format_value(k, r); });
  const std::string duration = "gpu__time_duration.sum", stores = "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum";
  const double base = sum_of(p.baseline, duration), lab = sum_of(p.lab, duration);
  if (p.lab.empty()) {
    out += "  the lab launched no kernel in this call: is conv_forward_gpu still the skeleton?\n";
  } else if (sum_of(p.lab, stores) == 0 && sum_of(p.baseline, stores) > 0 &&
             sum_of(p.lab, "dram__bytes_write.sum") < 0.01 * sum_of(p.baseline, "dram__bytes_write.sum")) {
    // A kernel that writes nothing is fast and wrong: no ratio, which would read as a speedup.
    // Atomics (red/atom, 07's output adds) are not plain stores: a lab whose output reached DRAM
    // wrote it, whatever the store counter says.
    out += "  the lab's kernels store nothing to global memory: the output is not written (still the skeleton?)\n";
  } else if (base > 0 && lab > 0) {
    out += fmt::format("  {:<{}} {:.3f} ms baseline, {:.3f} ms lab ({} kernel{}): {:.2f}x\n", "kernel time", kLabel,
                       base / 1e6, lab / 1e6, p.lab.size(), p.lab.size() == 1 ? "" : "s", base / lab);
  }
  return out;
}

namespace {

namespace fs = std::filesystem;

// The ELF header's e_machine (little-endian, offset 18); -1 when `p` is not an ELF file.
int elf_machine(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  unsigned char h[20] = {};
  in.read(reinterpret_cast<char*>(h), sizeof h);
  if (in.gcount() != sizeof h || h[0] != 0x7f || h[1] != 'E' || h[2] != 'L' || h[3] != 'F') return -1;
  return h[18] | (h[19] << 8);
}

}  // namespace

fs::path cli_binary(const fs::path& found, const std::vector<fs::path>& roots) {
  std::error_code ec;
  const fs::path real = fs::canonical(found, ec);
  if (ec) return {};
  const int mine = elf_machine("/proc/self/exe");
  if (mine < 0) return {};
  if (elf_machine(real) == mine) return real;
  std::vector<fs::path> where{real.parent_path(), real.parent_path().parent_path()};
  where.insert(where.end(), roots.begin(), roots.end());
  for (const fs::path& root : where) {
    std::vector<fs::path> platforms;
    for (const auto& e : fs::directory_iterator(root / "target", ec)) platforms.push_back(e.path());
    std::sort(platforms.begin(), platforms.end());  // the same choice on every run
    for (const fs::path& d : platforms)
      if (elf_machine(d / "ncu") == mine) return fs::canonical(d / "ncu", ec);
  }
  return {};
}

}  // namespace labkit::ncu

