// grader/core/json_fields.h — lenient reads of a result's JSON fields for the kit's own reports: a
// result written by an older kit, cut short by a crash or missing a section still renders, with
// "" / 0 / {} / [] where a field is absent or of another type. Never used to trust a value: the
// judge validates what a harness sends with its own checks (grader/protocol).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace labkit::json_fields {

inline std::string str(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : std::string();
}
inline double num(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : 0.0;
}
inline const nlohmann::json& sub(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  return j.is_object() && j.contains(key) && j.at(key).is_object() ? j.at(key) : empty;
}
inline const nlohmann::json& list(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::array();
  return j.is_object() && j.contains(key) && j.at(key).is_array() ? j.at(key) : empty;
}

}  // namespace labkit::json_fields
