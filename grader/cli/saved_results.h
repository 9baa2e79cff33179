// saved_results.h — what `labkit grade` writes and reads besides its report: the streams
// timeline's SVG file (grader/tools/timeline.h) beside the terminal report, and a saved `--json` output
// for --from. Results read back are files anyone could have written: read leniently, the file
// name made of safe characters, every string escaped by the renderer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace labkit::cli {

// Writes the result's timeline as DIR/<lab>-timeline.svg (<lab>-<role>-timeline.svg for a
// solution or a test lab), making DIR. Returns the file's absolute path; "" when the result has no
// timeline, or when the file cannot be written (said on stderr: the grade itself stands).
std::string write_timeline(const nlohmann::json& result, const std::string& dir);

// A saved `labkit grade --json` output ({"results": [...]}), one result, or a list of results;
// throws std::runtime_error naming the file when it holds none.
std::vector<nlohmann::json> read_results(const std::string& file);

}  // namespace labkit::cli
