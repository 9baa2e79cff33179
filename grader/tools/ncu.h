// grader/tools/ncu.h — reading Nsight Compute's output for `labkit profile LAB`.
//
// Contract
//   * kMetrics is what `labkit profile` asks ncu for (`--metrics`, comma-joined by metric_list()),
//     one row of the summary each; a row may add several metrics (shared memory static + dynamic).
//   * parse_csv reads `ncu --csv --page raw --print-units base` output: a header row starting with
//     "ID", a units row, one row per profiled kernel, in launch order. Lines that are not CSV rows
//     (==PROF==, ==WARNING==, the program's own output) are skipped. Numbers may carry thousands
//     separators. A metric ncu left empty or "n/a" is absent from Kernel::values.
//   * problem_of classifies ncu's own complaints in its log: no permission to read the counters,
//     no kernel profiled, or another ==ERROR== line (text holds it).
//   * format_shape prints one grading shape: a column per kernel, the baseline's first.
//   * cli_binary(found, roots): Nsight Compute's CLI as an ELF program for this machine. The
//     toolkit's bin/ncu is a shell script that runs <version>/target/<platform>/ncu, and a
//     version ships several platforms (x86-64, and aarch64's linux-desktop-t210-a64 beside it):
//     the one whose ELF machine is this process's own. Looked for in the script's folder, its
//     parent, then `roots` (Nsight Compute's install folders), in that order; empty if none.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace labkit::ncu {

enum class Unit { time_ns, percent, count, bytes };

struct Row {
  std::string label;                 // "duration", "SM throughput (% of peak)"
  std::vector<std::string> metrics;  // summed
  Unit unit;
};
const std::vector<Row>& rows();
std::string metric_list();  // every metric of rows() and the launch's grid and block size

struct Kernel {
  std::string name;  // as ncu names it (demangled, without parameters)
  std::string grid, block;
  std::map<std::string, double> values;  // metric name -> value in base units
};

std::vector<Kernel> parse_csv(std::string_view text);

enum class Problem { none, no_permission, no_kernels, other };
struct Complaint {
  Problem problem = Problem::none;
  std::string text;  // ncu's own line(s)
};
Complaint problem_of(std::string_view log);

struct ShapeProfile {
  std::string name, shape;  // "conv1 B=1000", "[B=1000 M=4 ...]"
  std::vector<Kernel> baseline, lab;
};
std::string format_shape(const ShapeProfile& p);

std::filesystem::path cli_binary(const std::filesystem::path& found, const std::vector<std::filesystem::path>& roots);

}  // namespace labkit::ncu
