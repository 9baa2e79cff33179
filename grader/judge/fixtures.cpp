#include "grader/judge/fixtures.h"

#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "grader/io/npy.h"

namespace labkit::fixtures {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& file, const std::string& what) {
  throw FixtureError(fmt::format("{}: {}", file.string(), what));
}

// A required member of a manifest object, with the case named in the error. `where` is taken by
// value: the result refers into `object` only, whatever temporary names the place.
const json& member(const json& object, const char* key, const fs::path& manifest,
                   std::string_view where) {
  if (!object.is_object() || !object.contains(key))
    fail(manifest, fmt::format("{}: missing \"{}\"", where, key));
  return object.at(key);
}

int positive_int(const json& object, const char* key, const fs::path& manifest,
                 std::string_view where) {
  const json& v = member(object, key, manifest, where);
  if (!v.is_number_integer() || v.get<long long>() <= 0 || v.get<long long>() > 1'000'000'000)
    fail(manifest, fmt::format("{}: \"{}\" must be a positive integer, found {}", where, key, v.dump()));
  return v.get<int>();
}

// Reads one array of a case and insists on its dtype and shape; a mismatch names the file, the
// case and both shapes.
template <class T>
std::vector<T> load_array(const fs::path& manifest, const json& files, const char* role,
                          const std::string& case_name, std::vector<std::int64_t> expected_shape) {
  const std::string where = fmt::format("case \"{}\"", case_name);
  const json& rel = member(files, role, manifest, where + " files");
  if (!rel.is_string()) fail(manifest, fmt::format("{}: files.{} must be a path", where, role));
  const fs::path path = manifest.parent_path() / rel.get<std::string>();
  npy::Array a;
  try {
    a = npy::read(path);
  } catch (const npy::Error& e) {
    throw FixtureError(fmt::format("{} (fixture {} of case \"{}\" in {})", e.what(), role,
                                   case_name, manifest.string()));
  }
  const std::string name = fmt::format("{} of case \"{}\"", role, case_name);
  try {
    a.require_dtype(npy::dtype_of<T>(), name);
    a.require_shape(expected_shape, name);
  } catch (const npy::Error& e) {
    throw FixtureError(e.what());
  }
  auto values = a.template as<T>();
  return std::vector<T>(values.begin(), values.end());
}

ConvCase load_conv(const fs::path& manifest, const json& c, CaseInfo info) {
  const std::string where = fmt::format("case \"{}\"", info.name);
  const json& s = member(c, "shape", manifest, where);
  ConvShape shape{positive_int(s, "B", manifest, where), positive_int(s, "M", manifest, where),
                  positive_int(s, "C", manifest, where), positive_int(s, "H", manifest, where),
                  positive_int(s, "W", manifest, where), positive_int(s, "K", manifest, where)};
  if (!shape.valid())
    fail(manifest, fmt::format("{}: invalid shape {} (K must not exceed H or W)", where, to_string(shape)));
  const json& files = member(c, "files", manifest, where);
  ConvCase out;
  out.info = std::move(info);
  out.shape = shape;
  out.input = load_array<float>(manifest, files, "input", out.info.name, {shape.B, shape.C, shape.H, shape.W});
  out.mask = load_array<float>(manifest, files, "mask", out.info.name, {shape.M, shape.C, shape.K, shape.K});
  out.expected = load_array<double>(manifest, files, "expected", out.info.name,
                                    {shape.B, shape.M, shape.H_out(), shape.W_out()});
  return out;
}

MapCase load_map(const fs::path& manifest, const json& c, CaseInfo info) {
  const std::string where = fmt::format("case \"{}\"", info.name);
  MapCase out;
  out.info = std::move(info);
  out.dimx = positive_int(c, "dimx", manifest, where);
  out.dimy = positive_int(c, "dimy", manifest, where);
  out.niterations = positive_int(c, "niterations", manifest, where);
  const json& files = member(c, "files", manifest, where);
  out.input = load_array<float>(manifest, files, "input", out.info.name, {out.dimy, out.dimx});
  out.expected = load_array<double>(manifest, files, "expected", out.info.name, {out.dimy, out.dimx});
  return out;
}

}  // namespace

FixtureSet load(const fs::path& manifest) {
  std::ifstream in(manifest);
  if (!in) fail(manifest, "cannot open the fixture manifest (generate it with labkit-gen-fixtures)");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    fail(manifest, fmt::format("not valid JSON: {}", e.what()));
  }
  const json& cases = member(doc, "cases", manifest, "manifest");
  if (!cases.is_array()) fail(manifest, "\"cases\" must be a list");

  FixtureSet set;
  set.manifest = manifest;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string where = fmt::format("case #{}", i);
    CaseInfo info;
    const json& name = member(c, "name", manifest, where);
    const json& kind = member(c, "kind", manifest, where);
    if (!name.is_string() || !kind.is_string()) fail(manifest, where + ": name and kind must be strings");
    info.name = name.get<std::string>();
    info.kind = kind.get<std::string>();
    info.description = c.value("description", "");
    if (info.kind == "conv") {
      set.conv.push_back(load_conv(manifest, c, std::move(info)));
    } else if (info.kind == "map") {
      set.map.push_back(load_map(manifest, c, std::move(info)));
    } else {
      fail(manifest, fmt::format("case \"{}\": unknown kind \"{}\" (expected conv or map)", info.name, info.kind));
    }
  }
  return set;
}

}  // namespace labkit::fixtures
