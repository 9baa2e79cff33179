// grader/judge/text_lines.h — a text as its lines, for the kit's line-oriented readers and editors
// (ninja's query output, compiler logs, lab.json edits).
//
// Contract: split at '\n'; the '\n' is not kept (a '\r' before it is); a final line without
// '\n' is kept; a text ending in '\n' yields no empty last line; "" yields none.
#pragma once

#include <string>
#include <vector>

namespace labkit {

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace labkit
