// grader/tools/sweep.h — `labkit sweep LAB --param NAME=V1,V2,...`: one lab's kernel.cu built with each
// value of a compile-time constant it declares (grader/judge/variant_build.h), each build graded by the
// judge as `labkit grade` would grade it, and the results as a table and a chart.
//
// Contract
//   * parse_param(): "TILE=8,16,32". The name is a C identifier; the values are positive decimal
//     integers below 2^31 (no sign, no leading zero), at least one, none twice, kept in the order
//     given (values are built and graded in that order). Throws ParamError saying what is wrong
//     and what was given.
//   * require_declared(): a kernel.cu can be swept over NAME only when it declares NAME as a macro
//     a -D can override: `#ifndef NAME` (or `#if !defined(NAME)`) at the start of a line. Throws
//     ParamError naming the file and NAME otherwise; when the file has `#define NAME` without the
//     guard, or a `constexpr ... NAME`, the message says how to turn it into an overridable one.
//   * A Row is one value: not built (build_log: the compiler's output, already readable and cut)
//     or built and graded (result: the judge's GradeResult, a failure verdict included).
//   * render(): md (a caption, the table, then one line per value that did not pass saying why),
//     csv (one header line, plain numbers, an "error" column) or json (to_json). Columns: the
//     value, the verdict ("build failed" when not built), cases passed / run, then per grading
//     shape (conv1, conv2; in the order the judge timed them) the lab's median Op Time (or Layer
//     Time) in ms and its speedup over the baseline timed beside it, and the geometric mean.
//     Shapes are named without the batch (shape_label): the caption and the chart give it once.
//   * svg(): time (ms, y, from 0) against the value (x): on a log2 axis when every value is a
//     power of two, else one evenly spaced category per value in the order given. One <polyline
//     class="line"> per grading shape through its measured points (sorted along x), a dashed
//     line at the shape's baseline, failed values marked in red with their verdict. The GPU name
//     is in the title; every text is XML-escaped, every attribute value HTML-escaped
//     (grader/core/text_escape.h). Test hooks: <g class="series" data-shape="..."> and
//     <circle class="point" data-value="..." data-ms="...">.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "grader/judge/grade_result.h"

namespace labkit::sweep {

class ParamError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct Param {
  std::string name;                 // "TILE"
  std::vector<std::string> values;  // "8", "16", "32"
};

Param parse_param(const std::string& text);

void require_declared(const std::string& source_text, const std::string& file, const std::string& name);

struct Row {
  std::string value;
  bool built = false;
  std::string build_log;
  GradeResult result;
};

struct Sweep {
  std::string lab, role, param;
  std::string timed_region = "op";  // lab.json "timed": "op" or "layer"
  std::string device;               // the GPU's name
  std::uint64_t seed = 0;
  int batch = 0;
  std::vector<Row> rows;
};

enum class Format { md, csv, json };
Format parse_format(const std::string& name);  // throws std::invalid_argument listing the formats

// "Op Time" or "Layer Time".
std::string time_label(const Sweep& s);
// A grading shape's name without the batch the caption already gives: "conv1 B=1000" -> "conv1".
std::string shape_label(const Sweep& s, const std::string& timing_name);
// A row's verdict as the table shows it: "build failed" or the judge's verdict.
std::string row_verdict(const Row& r);

std::string render(const Sweep& s, Format f);
nlohmann::json to_json(const Sweep& s);
std::string svg(const Sweep& s);

}  // namespace labkit::sweep
