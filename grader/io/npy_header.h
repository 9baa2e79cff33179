// npy_header.h — private to npy.cpp: the parser of a .npy header, a Python dict literal.
//
// Only the literal forms a header can hold are understood (quoted strings, ints, True/False/None,
// tuples and lists); that is enough to read every numpy version's headers and to say precisely
// what is wrong with a hand-made one.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "grader/io/npy.h"

namespace labkit::npy::detail {

template <class... Args>
[[noreturn]] void fail(std::string_view name, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format("{}: {}", name, fmt::format(f, std::forward<Args>(args)...)));
}

// Bytes as they would appear in Python source: printable ASCII as is, the rest as \xNN, so that
// an error message stays one line whatever the file holds.
inline std::string escaped(std::string_view s, std::size_t max = 60) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\')
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (s.size() > max) out += "...";
  return out;
}

struct Value {
  enum class Kind { Str, Int, Bool, None, Tuple, List } kind = Kind::None;
  std::string str;
  std::int64_t num = 0;  // Int, and Bool as 0/1
  std::vector<Value> items;
};

inline std::string describe(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Str: return fmt::format("the string '{}'", escaped(v.str));
    case Value::Kind::Int: return fmt::format("the int {}", v.num);
    case Value::Kind::Bool: return v.num ? "True" : "False";
    case Value::Kind::None: return "None";
    case Value::Kind::Tuple: return "a tuple";
    case Value::Kind::List: return "a list";
  }
  return "?";
}

class HeaderParser {
 public:
  static constexpr int kMaxDepth = 32;  // bounds the recursion whatever the file holds

  HeaderParser(std::string_view text, std::string_view name) : text_(text), name_(name) {}

  std::vector<std::pair<std::string, Value>> dict() {
    skip_space();
    if (!eat('{'))
      fail(name_, "header is not a Python dict: expected '{{' at column {}, found {} (header: {})", pos_ + 1,
           found(), excerpt());
    std::vector<std::pair<std::string, Value>> entries;
    while (true) {
      skip_space();
      if (eat('}')) break;
      Value key = value(0);
      if (key.kind != Value::Kind::Str) error("a string key", describe(key));
      skip_space();
      if (!eat(':')) error(fmt::format("':' after key '{}'", escaped(key.str)));
      entries.emplace_back(key.str, value(0));
      skip_space();
      if (eat(',')) continue;
      if (eat('}')) break;
      error("',' or '}'");
    }
    skip_space();
    if (pos_ < text_.size()) error("nothing but spaces after the closing '}'");
    return entries;
  }

 private:
  [[noreturn]] void error(std::string_view expected, std::string what_found = "") {
    if (what_found.empty()) what_found = found();
    fail(name_, "bad header: expected {} at column {}, found {} (header: {})", expected, pos_ + 1, what_found,
         excerpt());
  }
  // The header around the error, padding trimmed: enough to spot the problem on one line.
  std::string excerpt() const {
    std::string_view shown = text_.substr(0, text_.find_last_not_of(" \t\r\n") + 1);
    const std::size_t start = pos_ > 60 ? pos_ - 40 : 0;
    return (start > 0 ? "..." : "") + escaped(shown.substr(std::min(start, shown.size())), 100);
  }
  std::string found() const {
    if (pos_ >= text_.size()) return "the end of the header";
    if (text_[pos_] == '\'') return "\"'\"";
    return fmt::format("'{}'", escaped(text_.substr(pos_, 1)));
  }
  bool eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

  Value value(int depth) {
    if (depth > kMaxDepth) error(fmt::format("at most {} levels of nesting", kMaxDepth));
    skip_space();
    if (pos_ >= text_.size()) error("a value");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') return string(c);
    if (is_digit(c) || c == '-' || c == '+') return integer();
    if (c == '(' || c == '[') return sequence(depth);
    if (is_alpha(c)) {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && (is_alpha(text_[pos_]) || is_digit(text_[pos_]))) ++pos_;
      const std::string_view word = text_.substr(start, pos_ - start);
      if (word == "True" || word == "False") return Value{Value::Kind::Bool, {}, word == "True", {}};
      if (word == "None") return Value{};
      pos_ = start;
      error("True, False or None", fmt::format("'{}'", escaped(word)));
    }
    error("a value (string, int, True/False/None, tuple)");
  }

  Value string(char quote) {
    const std::size_t start = pos_++;
    Value v{Value::Kind::Str, {}, 0, {}};
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;  // dtype strings never need more
      v.str += text_[pos_++];
    }
    if (pos_ >= text_.size()) {
      pos_ = start;
      error("a string closed by its quote", "an unterminated string");
    }
    ++pos_;
    return v;
  }

  Value integer() {
    const std::size_t start = pos_;
    const bool negative = text_[pos_] == '-';
    if (text_[pos_] == '-' || text_[pos_] == '+') ++pos_;
    if (pos_ >= text_.size() || !is_digit(text_[pos_])) error("a digit");
    // Accumulated as a negative number so that INT64_MIN fits too.
    std::int64_t n = 0;
    for (; pos_ < text_.size() && is_digit(text_[pos_]); ++pos_) {
      const int d = text_[pos_] - '0';
      if (n < (std::numeric_limits<std::int64_t>::min() + d) / 10)
        fail(name_, "bad header: integer {} at column {} does not fit in 64 bits",
             escaped(text_.substr(start, 40), 40), start + 1);
      n = n * 10 - d;
    }
    if (!negative && n == std::numeric_limits<std::int64_t>::min())
      fail(name_, "bad header: integer at column {} does not fit in 64 bits", start + 1);
    return Value{Value::Kind::Int, {}, negative ? n : -n, {}};
  }

  // Python semantics: "(5)" is the int 5, "(5,)" a one-element tuple.
  Value sequence(int depth) {
    const char close = text_[pos_] == '(' ? ')' : ']';
    Value v{close == ')' ? Value::Kind::Tuple : Value::Kind::List, {}, 0, {}};
    ++pos_;
    bool comma = false;
    while (true) {
      skip_space();
      if (eat(close)) break;
      v.items.push_back(value(depth + 1));
      skip_space();
      if (eat(',')) {
        comma = true;
        continue;
      }
      if (eat(close)) break;
      error(fmt::format("',' or '{}'", close));
    }
    if (close == ')' && v.items.size() == 1 && !comma) return std::move(v.items[0]);
    return v;
  }

  std::string_view text_;
  std::string_view name_;
  std::size_t pos_ = 0;
};

}  // namespace labkit::npy::detail
