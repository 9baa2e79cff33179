// grader/judge/evidence.h — technique evidence: does a lab's PTX show the optimization it teaches?
//
// Contract
//   * A lab's lab.json lists patterns in its "evidence" array:
//       {"name": "ld.shared", "regex": "^ld\\.shared\\.",
//        "description": "loads from shared memory (the tiles)",
//        "hint": "stage the input tile in __shared__ memory and read from it",
//        "min_count": 1, "absent": false}
//     name, regex and description are required; hint (""), min_count (1) and absent (false) are
//     optional; any other key is an error, so a misspelt "min-count" cannot silently default.
//   * The regex is ECMAScript, searched (std::regex_search, so anchor with ^ where it matters) in
//     each statement of every function (.entry kernels and .func device functions) of the PTX.
//     A statement is what parse_ptx yields: comments removed, labels, .loc lines and `{ }` scope
//     braces dropped, one statement per `;` (so inline asm's "{fma.rn.f16x2 ...;" reads
//     "fma.rn.f16x2 ..."), whitespace runs collapsed to one space, trimmed. A function's lines
//     also hold its parameter declarations and header directives (".maxntid 256, 1, 1").
//     Module-scope declarations (a __constant__ array that is declared but never read) and debug
//     sections never count.
//   * A pattern holds when at least min_count statements match, or, with absent, when none does.
//     A report holds when every pattern holds; a PTX without kernels is not an error here.
//   * That whole-module search (check()) is the static pre-check of `labkit grade --evidence-only`
//     and of runs that time nothing. A graded run replaces it with the executed-kernel evidence
//     (grader/judge/executed_evidence.h): a pattern counts there only in the kernels that did the timed
//     work, each kernel with the functions it calls (call_graph), and the Finding's share fields
//     say how much of the timed GPU time those kernels took.
//   * Every problem in a pattern or a PTX file throws EvidenceError with one line naming the file
//     or lab.json entry, the key, and what was expected.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace labkit::evidence {

class EvidenceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Pattern {
  std::string name;         // shown in reports: "ld.shared"
  std::string regex;        // ECMAScript, searched in each PTX statement
  std::string description;  // what a match proves: "loads from shared memory (the tiles)"
  std::string hint;         // what to do when the pattern does not hold
  int min_count = 1;        // statements that must match
  bool absent = false;      // the pattern must not match at all (min_count ignored)
  // Only functions whose display name matches this (ECMAScript; empty: every function), e.g.
  // "<7>" for a kernel instantiated with the template argument 7.
  std::string function;
  bool in_one_function = false;  // min_count must be reached inside a single function
};

// One element of lab.json's "evidence" array; `where` names it in errors, e.g.
// "labs/03-tiling/lab.json: evidence[1]". The regex is compiled here, so a bad one fails at load.
Pattern pattern_from_json(const nlohmann::json& entry, const std::string& where);

struct PtxFunction {
  std::string name;     // as in the PTX (mangled)
  std::string display;  // demangled without the parameter list ("tiled_conv_kernel"), else name
  bool entry = false;   // .entry (a kernel) rather than .func
  std::vector<std::string> lines;
};

// The functions that have a body, in file order; prototypes (".extern .func ...;") are skipped.
std::vector<PtxFunction> parse_ptx(std::string_view ptx);

// For each function (by index), the functions of the module it calls directly: a statement
// "call[.uni] [(ret),] NAME[, (params)]" naming one of them. Indirect calls (through a register)
// name no function and add no edge.
std::vector<std::vector<std::size_t>> call_graph(const std::vector<PtxFunction>& functions);
// `root` and every function it reaches through the graph, root first, each once (cycles allowed).
std::vector<std::size_t> reachable(const std::vector<std::vector<std::size_t>>& graph, std::size_t root);
// Statements of `lines` that match `re` (compiled from a Pattern's regex), the first in `example`.
int count_matches(const std::vector<std::string>& lines, const std::string& regex, std::string* example = nullptr);

struct Finding {
  Pattern pattern;
  int count = 0;                       // matching statements over all (selected) functions
  int best = 0;                        // the most in one function
  std::vector<std::string> functions;  // display names of the functions with a match
  std::string example;                 // the first matching statement
  bool ok = false;
  // Executed-kernel evidence only (share < 0 in the static check): the share of the timed GPU
  // kernel time taken by the kernels that carry the pattern (absent: that contain it), the share
  // needed, those kernels as "name (93%)", and, when not ok, where the pattern is instead
  // ("in dead_kernel, which never ran in a timed call").
  double share = -1, needed_share = 0;
  std::vector<std::string> kernels;
  std::string why;
};

struct Report {
  std::vector<Finding> findings;  // in the order of the patterns
  bool ok = false;                // every finding ok
  std::size_t kernels = 0;        // .entry functions in the PTX
  // What decided: "static PTX (pre-check)" or "executed kernels (CUPTI)".
  std::string basis = "static PTX (pre-check)";
  bool executed = false;
  std::string unverified;  // executed: why the records earned no credit ("" when verified)
  std::string summary;     // executed: one line on what ran ("3 kernels in 41 timed calls, ...")
  std::vector<std::pair<std::string, double>> ran;  // executed: kernels with timed time (display, share)
};

Report check(std::string_view ptx, const std::vector<Pattern>& patterns);

// The whole file; throws "FILE: cannot read PTX (...)", "FILE: empty, expected PTX from nvcc
// -ptx", or "FILE: not PTX (...)" when it has no .version directive.
std::string read_ptx_file(const std::filesystem::path& path);

// One line per finding, each indented two spaces and ending in '\n' (executed evidence: a line
// with its summary or why it is unverified first):
//   "  found   ld.shared (x7, in tiled_conv_kernel): loads from shared memory"
//   "  MISSING bar.sync: a barrier between filling and reading the tile -> call __syncthreads()"
std::string format_report(const Report& report);

}  // namespace labkit::evidence
