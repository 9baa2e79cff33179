// grader/core/text_escape.h — the escapes the kit needs when it writes text others read: a shell
// word (single-quoted: the Slurm scripts of `labkit bulk`, `labkit report --dry-run`), a CSV field (RFC 4180: quoted when it holds a comma, a quote or a line break; quotes
// doubled), XML text for SVG charts (<, > and & as entities), and HTML text or attribute values
// for the web pages (grader/judge/html.h: quotes too, since a value may sit inside an attribute); and
// two guards for text that came from a lab (a kernel's name): utf8_prefix cuts it to a length
// without splitting a character, xml_chars replaces what XML 1.0 forbids even escaped (control
// characters, U+FFFE, U+FFFF, bytes that are not UTF-8) with '?', so a standalone SVG still parses.
#pragma once

#include <cstddef>
#include <string>

namespace labkit {

// `text` as one word a POSIX shell reads back unchanged: in single quotes, each ' as '\''. With
// `only_if_needed`, a word of letters, digits and _-./=,:+@% stays bare (a readable command line).
inline std::string shell_word(const std::string& text, bool only_if_needed = false) {
  if (only_if_needed && !text.empty() &&
      text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:+@%") ==
          std::string::npos)
    return text;
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

inline std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

inline std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else if (c == '\'') out += "&#39;";
    else out += c;
  }
  return out;
}

// The longest prefix of `s` of at most `max_bytes` bytes that ends on a character boundary.
inline std::string utf8_prefix(const std::string& s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // s[n]: a continuation byte
  return s.substr(0, n);
}

inline std::string xml_chars(const std::string& s) {
  std::string out;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = byte(i);
    const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool whole = len > 0 && i + len <= s.size();  // a lead byte and its continuation bytes
    for (std::size_t k = 1; whole && k < len; ++k) whole = (byte(i + k) & 0xC0) == 0x80;
    if (!whole) {  // not UTF-8: this byte alone becomes '?'
      out += '?';
      ++i;
      continue;
    }
    unsigned cp = len == 1 ? c : len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
    for (std::size_t k = 1; k < len; ++k) cp = cp << 6 | (byte(i + k) & 0x3Fu);
    static constexpr unsigned kLeast[] = {0, 0, 0x80, 0x800, 0x10000};  // shorter forms are not UTF-8
    const bool allowed = cp >= kLeast[len] && (cp >= 0x20 || cp == '\t' || cp == '\n' || cp == '\r') &&
                         !(cp >= 0x7F && cp <= 0x9F) && !(cp >= 0xD800 && cp <= 0xDFFF) && cp != 0xFFFE &&
                         cp != 0xFFFF && cp <= 0x10FFFF;
    if (allowed) out.append(s, i, len);
    else out += '?';
    i += len;
  }
  return out;
}

}  // namespace labkit
