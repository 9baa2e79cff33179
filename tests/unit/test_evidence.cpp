// Technique evidence: the patterns lab authors will write find each technique in real nvcc PTX
// (tests/unit/ptx, made from the .cu files beside them) and nowhere else; the parser's splitting
// of functions and statements; lab.json pattern errors and PTX file errors.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "grader/judge/evidence.h"

namespace fs = std::filesystem;
namespace ev = labkit::evidence;
using nlohmann::json;

namespace {

fs::path ptx_dir() {
  const char* root = std::getenv("LABKIT_SOURCE_DIR");
  REQUIRE_MESSAGE(root != nullptr, "LABKIT_SOURCE_DIR is not set: run this test through meson test, or "
                                   "set it to the repository root (it holds tests/unit/ptx)");
  const fs::path dir = fs::path(root) / "tests" / "unit" / "ptx";
  REQUIRE_MESSAGE(fs::is_directory(dir), dir.string() << " is not a directory (LABKIT_SOURCE_DIR="
                                                      << root << " must be the repository root)");
  return dir;
}

std::string ptx(const std::string& name) { return ev::read_ptx_file(ptx_dir() / (name + ".ptx")); }

ev::Pattern pattern(const std::string& json_text) { return ev::pattern_from_json(json::parse(json_text), "test"); }

// The patterns handed to lab authors, written the way lab.json holds them.
const std::map<std::string, std::string>& technique_patterns() {
  static const std::map<std::string, std::string> p = {
      {"restrict", R"({"name": "ld.global.nc", "regex": "^ld\\.global\\.nc\\b", "description": "read-only loads"})"},
      {"constant", R"({"name": "ld.const", "regex": "^ld\\.const\\b", "description": "constant loads"})"},
      {"shared", R"j({"name": "ld.shared", "regex": "^ld\\.shared\\b", "description": "loads from shared memory (the tiles)"})j"},
      {"barrier", R"({"name": "bar.sync", "regex": "^(bar|barrier)(\\.cta)?\\.sync\\b", "description": "a barrier"})"},
      {"atomic", R"({"name": "atomic add", "regex": "^(atom|red)(\\.\\w+)*\\.add\\.f32\\b", "description": "float atomic add"})"},
      {"fp16", R"({"name": "f16x2", "regex": "^(fma|mul|add|sub)(\\.\\w+)*\\.f16x2\\b", "description": "paired fp16 math"})"},
      {"v4-load", R"({"name": "ld.v4", "regex": "^ld\\.global(\\.nc)?\\.v4\\.(f32|b32|u32)\\b", "description": "16-byte loads"})"},
      {"v4-store", R"({"name": "st.v4", "regex": "^st\\.global\\.v4\\.(f32|b32|u32)\\b", "description": "16-byte stores"})"},
  };
  return p;
}

const ev::Finding& only(const ev::Report& r) {
  REQUIRE(r.findings.size() == 1);
  return r.findings[0];
}

ev::Finding find(const std::string& ptx_name, const ev::Pattern& p) { return only(ev::check(ptx(ptx_name), {p})); }

std::string json_error(const json& entry) {
  try {
    ev::pattern_from_json(entry, "labs/03-tiling/lab.json: evidence[1]");
  } catch (const ev::EvidenceError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string read_error(const fs::path& p) {
  try {
    ev::read_ptx_file(p);
  } catch (const ev::EvidenceError& e) {
    return e.what();
  }
  return "(no error)";
}

struct TempDir {
  fs::path path = fs::temp_directory_path() /
                  fmt::format("labkit-evidence-{}-{}", std::rand(), reinterpret_cast<std::uintptr_t>(this));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return path / name;
  }
};

}  // namespace

TEST_CASE("each technique pattern matches its own PTX and none of the others") {
  // Which files each technique shows up in; float4.ptx reads through __restrict__ too.
  const std::map<std::string, std::set<std::string>> expected = {
      {"restrict", {"restrict", "float4"}}, {"constant", {"constant"}},
      {"shared", {"tiled", "tiled-lineinfo"}}, {"barrier", {"tiled", "tiled-lineinfo", "tiled-debug"}},
      {"atomic", {"atomics"}},              {"fp16", {"half2"}},
      {"v4-load", {"float4"}},              {"v4-store", {"float4"}},
  };
  const std::vector<std::string> files = {"plain", "restrict", "constant", "tiled", "tiled-lineinfo",
                                          "tiled-debug", "atomics", "half2", "float4"};
  for (const auto& [technique, json_text] : technique_patterns()) {
    const ev::Pattern p = pattern(json_text);
    for (const std::string& file : files) {
      const ev::Finding f = find(file, p);
      const bool want = expected.at(technique).count(file) > 0;
      CHECK_MESSAGE(f.ok == want, technique << " in " << file << ".ptx: count " << f.count);
      CHECK_MESSAGE((f.count > 0) == want, technique << " in " << file << ".ptx");
    }
  }
}

TEST_CASE("counts, functions and examples of the techniques") {
  auto finding = [](const std::string& file, const std::string& technique) {
    return find(file, pattern(technique_patterns().at(technique)));
  };
  const ev::Finding shared = finding("tiled", "shared");
  CHECK(shared.count == 7);  // K = 7 unrolled reads of the tile
  CHECK(shared.functions == std::vector<std::string>{"tiled_conv_kernel"});
  CHECK(shared.example == "ld.shared.f32 %f5, [%r16]");
  CHECK(finding("tiled", "barrier").example == "bar.sync 0");
  CHECK(finding("constant", "constant").example.starts_with("ld.const.f32 "));
  CHECK(finding("half2", "fp16").count == 5);  // inline asm "{fma.rn.f16x2 ...;" reads as a statement
  CHECK(finding("half2", "fp16").example == "fma.rn.f16x2 %r31,%r32,%r33,%r61");
  CHECK(finding("float4", "v4-load").count == 2);
  CHECK(finding("float4", "v4-store").example == "st.global.v4.f32 [%rd4], {%f24, %f23, %f22, %f21}");

  // nvcc 13 writes atom. even where atomicAdd's result is unused (turning it into RED is left to
  // ptxas), so a lab's pattern must accept atom.; the int atomic is not a float add.
  const ev::Finding atomic = finding("atomics", "atomic");
  CHECK(atomic.count == 2);
  CHECK(atomic.functions == std::vector<std::string>{"atomic_reduce_kernel", "atomic_ticket_kernel"});
  CHECK(find("atomics", pattern(R"({"name": "red", "regex": "^red\\.", "description": "-"})")).count == 0);
  CHECK(find("atomics", pattern(R"({"name": "int", "regex": "^atom\\.global\\.add\\.u32 ", "description": "-"})")).count == 1);
}

TEST_CASE("-G hides the shared-memory space: evidence needs the optimized PTX") {
  // Debug builds address the tile through generic pointers (cvta.shared + ld.f32).
  CHECK(find("tiled-debug", pattern(technique_patterns().at("shared"))).count == 0);
  CHECK(find("tiled-debug", pattern(R"({"name": "cvta", "regex": "^cvta\\.shared\\.", "description": "-"})")).ok);
}

TEST_CASE("absent patterns hold only when nothing matches") {
  const ev::Pattern no_barrier = pattern(
      R"({"name": "bar.sync", "regex": "^bar\\.sync\\b", "description": "no block-wide barrier",
          "hint": "this lab needs no __syncthreads", "absent": true, "min_count": 5})");
  CHECK(no_barrier.absent);
  const ev::Report plain = ev::check(ptx("plain"), {no_barrier});
  CHECK(plain.ok);
  CHECK(only(plain).count == 0);
  CHECK(ev::format_report(plain) == "  absent  bar.sync: no block-wide barrier\n");

  const ev::Report tiled = ev::check(ptx("tiled"), {no_barrier});
  CHECK_FALSE(tiled.ok);
  CHECK(only(tiled).count == 1);
  CHECK(only(tiled).example == "bar.sync 0");
  CHECK(ev::format_report(tiled) ==
        "  PRESENT bar.sync (x1, in tiled_conv_kernel; first: bar.sync 0), must be absent: no block-wide "
        "barrier -> this lab needs no __syncthreads\n");
}

TEST_CASE("min_count") {
  const std::string base = R"("name": "ld.shared", "regex": "^ld\\.shared\\.", "description": "tile reads")";
  CHECK(ev::check(ptx("tiled"), {pattern("{" + base + R"(, "min_count": 7})")}).ok);
  const ev::Report r = ev::check(ptx("tiled"), {pattern("{" + base + R"(, "min_count": 8, "hint": "unroll"})")});
  CHECK_FALSE(r.ok);
  CHECK(only(r).count == 7);
  CHECK(ev::format_report(r) == "  MISSING ld.shared (x7 of 8 needed, in tiled_conv_kernel): tile reads -> unroll\n");
}

TEST_CASE("function and in_one_function: which functions count, and all of it in one") {
  // plain.ptx: dot_row (.func) and plain_conv_kernel (.entry), each ending in one "ret".
  const std::string base = R"("name": "ret", "regex": "^ret\\b", "description": "returns")";
  CHECK(find("plain", pattern("{" + base + R"(, "min_count": 2})")).ok);
  const ev::Finding one = find("plain", pattern("{" + base + R"(, "min_count": 2, "in_one_function": true})"));
  CHECK_FALSE(one.ok);
  CHECK(one.count == 2);
  CHECK(one.best == 1);
  const ev::Finding named = find("plain", pattern("{" + base + R"(, "function": "^plain_conv"})"));
  CHECK(named.ok);
  CHECK(named.count == 1);
  CHECK(named.functions == std::vector<std::string>{"plain_conv_kernel"});
  const ev::Report none = ev::check(ptx("plain"), {pattern("{" + base + R"(, "function": "<7>"})")});
  CHECK_FALSE(none.ok);
  CHECK(ev::format_report(none) == "  MISSING ret (none in the kernels the description names): returns\n");
  CHECK_THROWS_WITH_AS(pattern("{" + base + R"(, "in_one_function": 1})"),
                       "test: \"in_one_function\" must be true or false, found 1", ev::EvidenceError);
}

TEST_CASE("report: every pattern must hold; kernels counts .entry only; readable lines") {
  const ev::Pattern shared = pattern(technique_patterns().at("shared"));
  ev::Pattern barrier = pattern(technique_patterns().at("barrier"));
  barrier.hint = "call __syncthreads() between filling the tile and reading it";

  const ev::Report tiled = ev::check(ptx("tiled"), {shared, barrier});
  CHECK(tiled.ok);
  CHECK(tiled.kernels == 1);
  CHECK(ev::format_report(tiled) ==
        "  found   ld.shared (x7, in tiled_conv_kernel): loads from shared memory (the tiles)\n"
        "  found   bar.sync (x1, in tiled_conv_kernel): a barrier\n");

  const ev::Report plain = ev::check(ptx("plain"), {shared, barrier});
  CHECK_FALSE(plain.ok);
  CHECK(plain.kernels == 1);  // dot_row is a .func
  CHECK(ev::format_report(plain) ==
        "  MISSING ld.shared: loads from shared memory (the tiles)\n"
        "  MISSING bar.sync: a barrier -> call __syncthreads() between filling the tile and reading it\n");

  CHECK(ev::check(ptx("atomics"), {}).kernels == 2);
  CHECK(ev::check(ptx("atomics"), {}).ok);
  CHECK(ev::format_report(ev::check(ptx("atomics"), {})) == "  no evidence patterns\n");

  // Matches in a .func count, and no kernels at all is for the grader to judge, not an error.
  const ev::Report func_only = ev::check(".version 9.0\n.func f()\n{\nld.shared.f32 %f1, [%r1];\nret;\n}\n", {shared});
  CHECK(func_only.kernels == 0);
  CHECK(func_only.ok);
  CHECK(ev::check("", {shared}).kernels == 0);
  CHECK_FALSE(ev::check("", {shared}).ok);
}

TEST_CASE("comments and module-scope declarations never match") {
  const std::string text = R"(.version 9.0
.target sm_90
.const .align 4 .b8 mask[16];   // declared, never read
// ld.const.f32 %f1, [mask];
.visible .entry k(.param .u64 p)
{
  /* bar.sync 0;
     ld.shared.f32 %f1, [%r1]; */
  ld.global.f32 %f1, [%rd1]; // ld.const.f32 %f2, [mask];
  ret;
}
)";
  for (const char* key : {"constant", "shared", "barrier"})
    CHECK_MESSAGE(only(ev::check(text, {pattern(technique_patterns().at(key))})).count == 0, key);
  CHECK(only(ev::check(text, {pattern(R"({"name": "g", "regex": "^ld\\.global\\.f32 %f1, \\[%rd1\\]$", "description": "-"})")})).count == 1);
  // The real files: nvcc's header comment and the inline asm markers.
  CHECK(find("half2", pattern(R"({"name": "c", "regex": "inline asm|NVIDIA|Compiler", "description": "-"})")).count == 0);
}

TEST_CASE("parse_ptx splits nvcc's functions and statements") {
  const auto plain = ev::parse_ptx(ptx("plain"));
  REQUIRE(plain.size() == 2);
  CHECK(plain[0].name == "_Z7dot_rowPKfS0_i");
  CHECK(plain[0].display == "dot_row");
  CHECK_FALSE(plain[0].entry);
  CHECK(plain[1].name == "_Z17plain_conv_kernelPfPKfS1_ii");
  CHECK(plain[1].display == "plain_conv_kernel");
  CHECK(plain[1].entry);
  CHECK(plain[1].lines.front() == ".param .u64 _Z17plain_conv_kernelPfPKfS1_ii_param_0");
  CHECK(plain[1].lines.back() == "ret");
  CHECK(std::count(plain[1].lines.begin(), plain[1].lines.end(),
                   "call.uni (retval0), _Z7dot_rowPKfS0_i, ( param0, param1, param2 )") == 5);

  const auto atomics = ev::parse_ptx(ptx("atomics"));
  REQUIRE(atomics.size() == 2);
  CHECK(atomics[0].display == "atomic_reduce_kernel");
  CHECK(atomics[1].display == "atomic_ticket_kernel");
  CHECK((atomics[0].entry && atomics[1].entry));

  for (const std::string file : {"plain", "restrict", "constant", "tiled", "tiled-lineinfo", "tiled-debug",
                                 "atomics", "half2", "float4"}) {
    const auto functions = ev::parse_ptx(ptx(file));
    CHECK_MESSAGE(functions.size() == (file == "plain" || file == "atomics" || file == "float4" ? 2u : 1u), file);
    for (const auto& f : functions) {
      for (const std::string& line : f.lines) {
        INFO(file << ".ptx " << f.name << ": \"" << line << "\"");
        CHECK(!line.empty());
        CHECK(line.find_first_of("\t\n;") == std::string::npos);
        CHECK(line.find("  ") == std::string::npos);
        CHECK(line.front() != ' ');
        CHECK(line.back() != ' ');
        CHECK(line.find("//") == std::string::npos);
        CHECK_FALSE(line.starts_with("$L__"));      // labels
        CHECK_FALSE(line.starts_with(".loc"));      // -lineinfo
        CHECK_FALSE(line.starts_with(".b8"));       // -G debug sections
        CHECK_FALSE(line.starts_with("{"));         // inline asm scopes
        CHECK(line != "}");
      }
    }
  }
  const auto half2 = ev::parse_ptx(ptx("half2"));
  const auto& h = half2.at(0).lines;
  CHECK(std::find(h.begin(), h.end(), "mov.b32 %r61, {low,low}") != h.end());  // a vector operand, not a scope
  const auto f4 = ev::parse_ptx(ptx("float4"));
  CHECK(std::find(f4.at(1).lines.begin(), f4.at(1).lines.end(),
                  "ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd5]") != f4.at(1).lines.end());
}

TEST_CASE("parse_ptx: prototypes, initializers, labels, header directives, names") {
  const std::string text = R"(.version 9.0
.target sm_90
.address_size 64
.extern .func (.param .b32 r) vprintf (.param .b64 a, .param .b64 b);
.global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
.visible .func _Z6helperv;
.visible .entry plain_c_kernel(
  .param .u64 plain_c_kernel_param_0
)
.maxntid 256, 1, 1
{
  .reg .f32 %f<3>;
$L__BB0_1: ld.shared::cta.f32 %f1, [%r1];
  @%p1 bra
      $L__BB0_1;
  { .reg .b64 %tmp; cvta.shared.u64 %rd1, %tmp; }
  .loc 1 12 3 /* a comment
  spanning lines */
  .pragma "nounroll; // not a comment";
  st.global.v2.f32 [%rd2], {%f1, %f2};
  ret;
}
.visible .func _Z6helperv()
{
  ret;
}
.visible .entry _Z5tiledILi16EEvPf(.param .u64 p)
{
  ret;
}
.visible .entry _ZN12_GLOBAL__N_16hiddenEPf(.param .u64 p) { ret; }
.file 1 "/tmp/a//b.cu"
.section .debug_str
{
$L__info_string0: .b8 95,90,0 // a brace } in a comment
}
)";
  const auto f = ev::parse_ptx(text);
  REQUIRE(f.size() == 4);
  CHECK(f[0].name == "plain_c_kernel");
  CHECK(f[0].display == "plain_c_kernel");  // extern "C": nothing to demangle
  CHECK(f[0].entry);
  CHECK(f[0].lines == std::vector<std::string>{
                          ".param .u64 plain_c_kernel_param_0", ".maxntid 256, 1, 1", ".reg .f32 %f<3>",
                          "ld.shared::cta.f32 %f1, [%r1]", "@%p1 bra $L__BB0_1", ".reg .b64 %tmp",
                          "cvta.shared.u64 %rd1, %tmp", ".pragma \"nounroll; // not a comment\"",
                          "st.global.v2.f32 [%rd2], {%f1, %f2}", "ret"});
  CHECK(f[1].name == "_Z6helperv");
  CHECK(f[1].display == "helper");
  CHECK_FALSE(f[1].entry);
  CHECK(f[1].lines == std::vector<std::string>{"ret"});
  CHECK(f[2].display == "tiled<16>");
  CHECK(f[3].display == "(anonymous namespace)::hidden");
  // Newer PTX spells the state space with a scope: "ld.shared::cta"; the lab pattern still holds.
  CHECK(only(ev::check(text, {pattern(technique_patterns().at("shared"))})).count == 1);

  CHECK_THROWS_WITH_AS(ev::parse_ptx(".entry k()\n{\n ret;\n"), doctest::Contains("body of k is not closed"),
                       ev::EvidenceError);
}

TEST_CASE("pattern_from_json: a full entry and the defaults") {
  const ev::Pattern p = ev::pattern_from_json(
      json{{"name", "ld.shared"}, {"regex", "^ld\\.shared\\."}, {"description", "tile reads"},
           {"hint", "use __shared__"}, {"min_count", 4}, {"absent", false}},
      "x");
  CHECK(p.name == "ld.shared");
  CHECK(p.regex == "^ld\\.shared\\.");
  CHECK(p.description == "tile reads");
  CHECK(p.hint == "use __shared__");
  CHECK(p.min_count == 4);
  CHECK_FALSE(p.absent);
  const ev::Pattern d = pattern(R"({"name": "n", "regex": "r", "description": "d"})");
  CHECK(d.hint.empty());
  CHECK(d.min_count == 1);
  CHECK_FALSE(d.absent);
}

TEST_CASE("pattern_from_json: one-line errors naming the entry and the key") {
  const json good = {{"name", "ld.shared"}, {"regex", "^ld\\.shared\\."}, {"description", "tile reads"}};
  auto with = [&](const char* key, const json& value) {
    json j = good;
    j[key] = value;
    return j;
  };
  auto without = [&](const char* key) {
    json j = good;
    j.erase(key);
    return j;
  };
  struct Case {
    json entry;
    std::vector<std::string> says;
  };
  const std::vector<Case> cases = {
      {without("regex"), {"missing \"regex\"", "regular expression"}},
      {without("name"), {"missing \"name\""}},
      {without("description"), {"missing \"description\""}},
      {with("regex", 42), {"\"regex\" must be a string, found 42"}},
      {with("name", json::array({"a"})), {"\"name\" must be a string, found [\"a\"]"}},
      {with("hint", false), {"\"hint\" must be a string, found false"}},
      {with("regex", ""), {"\"regex\" must not be empty"}},
      {with("regex", "ld.shared["), {"\"regex\" is not a valid ECMAScript regular expression", "\"ld.shared[\""}},
      {with("regex", "(bar|barrier"), {"\"regex\" is not a valid", "\"(bar|barrier\""}},
      {with("min_count", 0), {"\"min_count\" must be a positive integer, found 0"}},
      {with("min_count", "3"), {"\"min_count\" must be a positive integer, found \"3\""}},
      {with("min_count", 1.5), {"\"min_count\" must be a positive integer, found 1.5"}},
      {with("absent", "yes"), {"\"absent\" must be true or false, found \"yes\""}},
      {with("min-count", 2), {"unknown key \"min-count\"", "min_count"}},
      {json::array({1, 2}), {"expected an object with \"name\", \"regex\" and \"description\", found [1,2]"}},
      {json("ld.shared"), {"expected an object", "found \"ld.shared\""}},
  };
  for (const Case& c : cases) {
    const std::string e = json_error(c.entry);
    INFO(c.entry.dump() << " -> " << e);
    CHECK(e.starts_with("labs/03-tiling/lab.json: evidence[1]: "));
    CHECK(e.find('\n') == std::string::npos);
    for (const std::string& s : c.says) CHECK(e.find(s) != std::string::npos);
  }
}

TEST_CASE("check rejects an invalid regex built in code, naming the pattern") {
  ev::Pattern p;
  p.name = "broken";
  p.regex = "ld.shared[";
  CHECK_THROWS_WITH_AS(ev::check(ptx("tiled"), {p}), doctest::Contains("evidence pattern \"broken\""),
                       ev::EvidenceError);
}

TEST_CASE("read_ptx_file: missing, directory, empty and non-PTX files") {
  TempDir dir;
  const fs::path missing = dir.path / "kernel.ptx";
  CHECK(read_error(missing) == missing.string() + ": cannot read PTX (no such file; nvcc -ptx writes it when the lab is built)");
  CHECK(read_error(dir.path) == dir.path.string() + ": cannot read PTX (it is a directory)");
  const fs::path empty = dir.write("empty.ptx", "");
  CHECK(read_error(empty) == empty.string() + ": empty, expected PTX from nvcc -ptx");
  const fs::path blank = dir.write("blank.ptx", " \n\t\n");
  CHECK(read_error(blank) == blank.string() + ": empty, expected PTX from nvcc -ptx");
  const fs::path source = dir.write("kernel.cu", "__global__ void k() {}\n");
  CHECK(read_error(source) == source.string() + ": not PTX (no .version directive), expected the output of nvcc -ptx");
  const fs::path good = dir.write("good.ptx", ".version 9.0\n");
  CHECK(ev::read_ptx_file(good) == ".version 9.0\n");
}

TEST_CASE("a long PTX is checked statement by statement") {
  // The size of a fully unrolled solution: statements are matched one at a time, so the cost is
  // linear and std::regex (which recurses per character) never sees more than one statement.
  std::string text = ".version 9.0\n.visible .entry big(.param .u64 p)\n{\n";
  for (int k = 0; k < 5000; ++k) text += fmt::format("  ld.shared.f32 %f{}, [%r1+{}];\n  add.f32 %f0, %f0, %f{};\n", k, 4 * k, k);
  text += "  ret;\n}\n";
  std::vector<ev::Pattern> patterns;
  for (const auto& [technique, json_text] : technique_patterns()) patterns.push_back(pattern(json_text));
  const ev::Report r = ev::check(text, patterns);
  CHECK(r.kernels == 1);
  for (const auto& f : r.findings) CHECK_MESSAGE(f.count == (f.pattern.name == "ld.shared" ? 5000 : 0), f.pattern.name);
}
