// labkit/text_escape.h — the two escapes the kit's reports need when they write a file others
// read: a CSV field (RFC 4180: quoted when it holds a comma, a quote or a line break; quotes
// doubled), XML text for SVG charts (<, > and & as entities), and HTML text or attribute values
// for the web pages (labkit/html.h: quotes too, since a value may sit inside an attribute).
#pragma once

#include <string>

namespace labkit {

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

}  // namespace labkit
