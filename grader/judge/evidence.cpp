#include "grader/judge/evidence.h"

#include <cxxabi.h>
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <regex>
#include <unordered_map>

namespace labkit::evidence {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%'; }

// Whitespace runs become one space, so that patterns need not care about nvcc's tabs.
std::string normalize(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
    else if (!out.empty() && out.back() != ' ') out += ' ';
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool starts_with_word(std::string_view s, std::string_view word) {
  return s.starts_with(word) && (s.size() == word.size() || !is_ident(s[word.size()]));
}

// Directives that end at the line rather than at ';': without this, ".loc 1 12 3" (-lineinfo)
// would glue itself onto the next instruction.
bool is_line_directive(std::string_view text) {
  const std::string s = normalize(text);
  for (std::string_view d : {".loc", ".file", ".version", ".target", ".address_size"})
    if (starts_with_word(s, d)) return true;
  return false;
}

bool is_label(std::string_view text) {
  const std::string s = normalize(text);
  return !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0])) &&
         std::all_of(s.begin(), s.end(), is_ident);
}

// "void tiled<16>(float*)" -> "tiled<16>": reports name kernels the way students wrote them.
std::string display_name(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> d(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !d) return mangled;
  std::string s = d.get();
  int depth = 0;
  for (std::size_t p = s.size(); !s.empty() && s.back() == ')' && p-- > 0;) {
    if (s[p] == ')') ++depth;
    if (s[p] == '(' && --depth == 0) {
      s.resize(p);  // the parameter list
      break;
    }
  }
  std::size_t start = 0;  // after the return type of a template
  depth = 0;
  for (std::size_t p = 0; p < s.size(); ++p) {
    if (s[p] == '<' || s[p] == '(') ++depth;
    if (s[p] == '>' || s[p] == ')') --depth;
    if (s[p] == ' ' && depth == 0) start = p + 1;
  }
  return start < s.size() ? s.substr(start) : mangled;
}

// The header of a function with a body: "[.visible] .entry NAME(PARAMS) [directives]" or
// ".func [(RETURNS)] NAME[(PARAMS)] [directives]". nullopt for anything else opening a block.
std::optional<PtxFunction> function_header(std::string_view text) {
  const std::string h = normalize(text);
  static const std::regex keyword(R"((^|\s)\.(entry|func)(?=[\s(]|$))");
  std::smatch m;
  if (!std::regex_search(h, m, keyword)) return std::nullopt;
  PtxFunction f;
  f.entry = m[2] == "entry";
  std::size_t p = static_cast<std::size_t>(m.position(0) + m.length(0));
  auto skip_spaces = [&] { while (p < h.size() && h[p] == ' ') ++p; };
  auto close = [&] {  // parameter lists hold no parentheses
    const std::size_t c = h.find(')', p);
    if (c == std::string::npos) throw EvidenceError(fmt::format("malformed PTX: unclosed '(' in \"{}\"", h));
    return c;
  };
  skip_spaces();
  if (p < h.size() && h[p] == '(') p = close() + 1;  // .func return values
  skip_spaces();
  while (p < h.size() && is_ident(h[p])) f.name += h[p++];
  if (f.name.empty()) throw EvidenceError(fmt::format("malformed PTX: function header without a name: \"{}\"", h));
  skip_spaces();
  if (p < h.size() && h[p] == '(') {
    const std::size_t end = close();
    std::string_view params(h.data() + p + 1, end - p - 1);
    for (std::size_t start = 0; start <= params.size();) {
      const std::size_t comma = std::min(params.find(',', start), params.size());
      if (auto param = normalize(params.substr(start, comma - start)); !param.empty()) f.lines.push_back(param);
      start = comma + 1;
    }
    p = end + 1;
  }
  if (auto rest = normalize(h.substr(p)); !rest.empty()) f.lines.push_back(rest);
  f.display = display_name(f.name);
  return f;
}

std::regex compile(const std::string& regex, const std::string& where) {
  try {
    return std::regex(regex, std::regex::ECMAScript | std::regex::nosubs | std::regex::optimize);
  } catch (const std::regex_error& e) {
    throw EvidenceError(fmt::format("{}: \"regex\" is not a valid ECMAScript regular expression: {} ({})",
                                    where, json(regex).dump(), e.what()));
  }
}

std::string brief(const json& v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

std::string string_key(const json& entry, const char* key, const std::string& where, const char* what) {
  if (!entry.contains(key)) {
    if (what == nullptr) return {};
    throw EvidenceError(fmt::format("{}: missing \"{}\" ({})", where, key, what));
  }
  const json& v = entry.at(key);
  if (!v.is_string())
    throw EvidenceError(fmt::format("{}: \"{}\" must be a string, found {}", where, key, brief(v)));
  std::string s = v.get<std::string>();
  if (what != nullptr && s.empty())
    throw EvidenceError(fmt::format("{}: \"{}\" must not be empty ({})", where, key, what));
  return s;
}

std::string function_list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t k = 0; k < names.size() && k < 3; ++k) out += (k ? ", " : "") + names[k];
  if (names.size() > 3) out += fmt::format(", +{} more", names.size() - 3);
  return out;
}

}  // namespace

Pattern pattern_from_json(const json& entry, const std::string& where) {
  if (!entry.is_object())
    throw EvidenceError(fmt::format("{}: expected an object with \"name\", \"regex\" and \"description\", found {}",
                                    where, brief(entry)));
  static const std::vector<std::string> keys = {"name",      "regex",  "description", "hint",
                                                "min_count", "absent", "function",    "in_one_function"};
  for (const auto& [key, value] : entry.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw EvidenceError(fmt::format("{}: unknown key \"{}\" (expected name, regex, description, hint, "
                                      "min_count, absent, function, in_one_function)", where, key));
  Pattern p;
  p.name = string_key(entry, "name", where, "the pattern's name in reports, e.g. \"ld.shared\"");
  p.regex = string_key(entry, "regex", where, "an ECMAScript regular expression searched in each PTX statement");
  p.description = string_key(entry, "description", where, "what a match proves");
  p.hint = string_key(entry, "hint", where, nullptr);
  if (entry.contains("min_count")) {
    const json& v = entry.at("min_count");
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 1'000'000)
      throw EvidenceError(fmt::format("{}: \"min_count\" must be a positive integer, found {}", where, brief(v)));
    p.min_count = v.get<int>();
  }
  if (entry.contains("absent")) {
    const json& v = entry.at("absent");
    if (!v.is_boolean())
      throw EvidenceError(fmt::format("{}: \"absent\" must be true or false, found {}", where, brief(v)));
    p.absent = v.get<bool>();
  }
  if (entry.contains("function")) {
    p.function = string_key(entry, "function", where, "a regular expression on kernel names, e.g. \"<7>\"");
    compile(p.function, where);
  }
  if (entry.contains("in_one_function")) {
    const json& v = entry.at("in_one_function");
    if (!v.is_boolean())
      throw EvidenceError(fmt::format("{}: \"in_one_function\" must be true or false, found {}", where, brief(v)));
    p.in_one_function = v.get<bool>();
  }
  compile(p.regex, where);
  return p;
}

// One pass: comments, statements, and the brace depth that says whose statement it is.
std::vector<PtxFunction> parse_ptx(std::string_view s) {
  std::vector<PtxFunction> out;
  std::string cur;        // the statement being read
  int body = 0;           // brace depth inside out.back()'s body
  int skip = 0;           // brace depth inside a module-scope initializer or debug .section
  auto end_statement = [&] {
    std::string st = normalize(cur);
    cur.clear();
    if (body > 0 && !st.empty()) out.back().lines.push_back(std::move(st));
  };
  auto take_until = [&](std::size_t& i, char last) {  // from s[i - 1] through the next `last`
    const std::size_t end = std::min(s.find(last, i), s.size() - 1) + 1;
    cur.append(s.substr(i - 1, end - i + 1));
    i = end;
  };
  for (std::size_t i = 0; i < s.size();) {
    char c = s[i++];
    if (c == '/' && i < s.size() && s[i] == '/') {
      i = std::min(s.find('\n', i), s.size());  // the newline still ends a line directive
      continue;
    }
    if (c == '/' && i < s.size() && s[i] == '*') {
      const std::size_t end = std::min(s.find("*/", i + 1), s.size() - 2) + 2;
      c = s.substr(i, end - i).find('\n') == std::string_view::npos ? ' ' : '\n';
      i = end;
    }
    if (skip > 0) {
      skip += (c == '{') - (c == '}');
    } else if (c == '"') {
      take_until(i, '"');  // .file paths, .pragma: a "//" in a string is not a comment
    } else if (c == ';') {
      end_statement();  // at module scope: a declaration or prototype, not an instruction
    } else if (c == '\n' && is_line_directive(cur)) {
      cur.clear();
    } else if (c == '{' && body > 0 && !normalize(cur).empty()) {
      take_until(i, '}');  // a vector operand: "{%f1, %f2, %f3, %f4}"
    } else if (c == '{' && body > 0) {
      ++body;  // a scope, as inline asm wraps its instructions in one
    } else if (c == '{') {
      if (auto f = function_header(cur)) {
        out.push_back(std::move(*f));
        body = 1;
      } else {
        skip = 1;  // "= {1, 2, 3}" or ".section .debug_info { ... }"
      }
      cur.clear();
    } else if (c == '}' && body > 0) {
      end_statement();
      --body;
    } else if (c == ':' && body > 0 && (i == s.size() || s[i] != ':') && is_label(cur)) {
      cur.clear();  // "$L__BB0_2:" marks a place; it is not an instruction
    } else {
      cur += c;
    }
  }
  if (body > 0)
    throw EvidenceError(fmt::format("malformed PTX: the body of {} is not closed by '}}'", out.back().name));
  return out;
}

std::vector<std::vector<std::size_t>> call_graph(const std::vector<PtxFunction>& functions) {
  std::unordered_map<std::string, std::size_t> callable;  // .func only: kernels are launched, not called
  for (std::size_t i = 0; i < functions.size(); ++i)
    if (!functions[i].entry) callable.emplace(functions[i].name, i);
  std::vector<std::vector<std::size_t>> graph(functions.size());
  for (std::size_t i = 0; i < functions.size(); ++i) {
    for (const std::string& line : functions[i].lines) {
      if (!starts_with_word(line, "call") && !line.starts_with("call.")) continue;
      // Every identifier of the statement that names a function: the callee (the return and
      // parameter names are %-registers or param symbols, never a function's name).
      for (std::size_t p = 0; p < line.size();) {
        if (!is_ident(line[p]) || line[p] == '%') {
          ++p;
          continue;
        }
        std::size_t e = p;
        while (e < line.size() && is_ident(line[e])) ++e;
        const bool after_percent = p > 0 && line[p - 1] == '%';
        if (auto it = callable.find(line.substr(p, e - p)); !after_percent && it != callable.end()) {
          auto& out = graph[i];
          if (std::find(out.begin(), out.end(), it->second) == out.end()) out.push_back(it->second);
        }
        p = e;
      }
    }
  }
  return graph;
}

std::vector<std::size_t> reachable(const std::vector<std::vector<std::size_t>>& graph, std::size_t root) {
  std::vector<std::size_t> out{root};
  std::vector<bool> seen(graph.size(), false);
  seen.at(root) = true;
  for (std::size_t k = 0; k < out.size(); ++k)
    for (std::size_t next : graph.at(out[k]))
      if (!seen.at(next)) {
        seen[next] = true;
        out.push_back(next);
      }
  return out;
}

int count_matches(const std::vector<std::string>& lines, const std::string& regex, std::string* example) {
  const std::regex re = compile(regex, "evidence pattern");
  int n = 0;
  for (const std::string& line : lines)
    if (std::regex_search(line, re) && n++ == 0 && example != nullptr) *example = line;
  return n;
}

Report check(std::string_view ptx, const std::vector<Pattern>& patterns) {
  const std::vector<PtxFunction> functions = parse_ptx(ptx);
  Report report;
  report.kernels = static_cast<std::size_t>(
      std::count_if(functions.begin(), functions.end(), [](const PtxFunction& f) { return f.entry; }));
  report.ok = true;
  for (const Pattern& pattern : patterns) {
    const std::regex re = compile(pattern.regex, fmt::format("evidence pattern \"{}\"", pattern.name));
    const std::optional<std::regex> only =
        pattern.function.empty() ? std::nullopt
                                 : std::optional(compile(pattern.function, fmt::format("evidence pattern \"{}\"", pattern.name)));
    Finding finding;
    finding.pattern = pattern;
    for (const PtxFunction& f : functions) {
      if (only && !std::regex_search(f.display, *only)) continue;
      int here = 0;
      for (const std::string& line : f.lines) {
        if (!std::regex_search(line, re)) continue;
        if (finding.count++ == 0) finding.example = line;
        ++here;
      }
      finding.best = std::max(finding.best, here);
      auto& names = finding.functions;
      if (here > 0 && std::find(names.begin(), names.end(), f.display) == names.end()) names.push_back(f.display);
    }
    const int counted = pattern.in_one_function ? finding.best : finding.count;
    finding.ok = pattern.absent ? finding.count == 0 : counted >= pattern.min_count;
    report.ok = report.ok && finding.ok;
    report.findings.push_back(std::move(finding));
  }
  return report;
}

std::string read_ptx_file(const fs::path& path) {
  auto fail = [&](const std::string& what) { return EvidenceError(fmt::format("{}: {}", path.string(), what)); };
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found)
    throw fail("cannot read PTX (no such file; nvcc -ptx writes it when the lab is built)");
  if (fs::is_directory(status)) throw fail("cannot read PTX (it is a directory)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw fail(fmt::format("cannot read PTX ({})", std::strerror(errno)));
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw fail("cannot read PTX (read error)");
  if (text.find_first_not_of(" \t\r\n\f\v") == std::string::npos) throw fail("empty, expected PTX from nvcc -ptx");
  if (text.find(".version") == std::string::npos)
    throw fail("not PTX (no .version directive), expected the output of nvcc -ptx");
  return text;
}

namespace {

// "  found   ld.shared in tiled (93% of timed GPU time; needs 50%): loads from shared memory"
std::string executed_line(const Finding& f) {
  const Pattern& p = f.pattern;
  const std::string in = function_list(f.kernels);
  const std::string pct = f.share > 0 && f.share < 0.001 ? "<0.1%"
                          : f.share < 0.1                ? fmt::format("{:.1f}%", 100 * f.share)
                                                         : fmt::format("{:.0f}%", 100 * f.share);
  std::string detail;
  if (p.absent) {
    detail = f.ok ? "" : fmt::format(" in {} ({} of timed GPU time), must be absent", in, pct);
  } else if (f.ok) {
    detail = fmt::format(" in {} ({} of timed GPU time; needs {:.0f}%)", in, pct, 100 * f.needed_share);
  } else {
    detail = f.why.empty() ? "" : " " + f.why;
  }
  if (!f.ok && p.absent && !f.why.empty() && f.kernels.empty()) detail = " " + f.why;
  const char* tag = p.absent ? (f.ok ? "absent " : "PRESENT") : (f.ok ? "found  " : "MISSING");
  const std::string hint = f.ok || p.hint.empty() ? "" : " -> " + p.hint;
  return fmt::format("  {} {}{}: {}{}\n", tag, p.name, detail, p.description, hint);
}

}  // namespace

std::string format_report(const Report& report) {
  if (report.findings.empty()) return "  no evidence patterns\n";
  std::string out;
  if (report.executed && !report.unverified.empty())
    out += fmt::format("  unverified: {}; no evidence credit (the static PTX check does not stand in)\n", report.unverified);
  else if (report.executed && !report.summary.empty())
    out += fmt::format("  {}\n", report.summary);
  for (const Finding& f : report.findings) {
    if (report.executed) {
      out += executed_line(f);
      continue;
    }
    const Pattern& p = f.pattern;
    const std::string in = function_list(f.functions);
    std::string detail;
    if (p.absent && !f.ok) {
      detail = fmt::format(" (x{}, in {}; first: {}), must be absent", f.count, in, f.example);
    } else if (!p.absent && f.count > 0) {
      const std::string need =
          f.ok ? "" : fmt::format(" of {} needed{}", p.min_count, p.in_one_function ? fmt::format(" in one kernel, best {}", f.best) : "");
      detail = fmt::format(" (x{}{}, in {})", f.count, need, in);
    }
    if (!p.absent && f.count == 0 && !p.function.empty()) detail = " (none in the kernels the description names)";
    const char* tag = p.absent ? (f.ok ? "absent " : "PRESENT") : (f.ok ? "found  " : "MISSING");
    const std::string hint = f.ok || p.hint.empty() ? "" : " -> " + p.hint;
    out += fmt::format("  {} {}{}: {}{}\n", tag, p.name, detail, p.description, hint);
  }
  return out;
}

}  // namespace labkit::evidence
