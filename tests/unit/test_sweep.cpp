// `labkit sweep` without a GPU: the --param text, the check that a kernel.cu declares the macro,
// the build recipe taken from ninja's own commands (a captured `ninja -t commands` and `-t query`
// of a lab's harness), and the table and chart a sweep prints (grader/tools/sweep.h,
// grader/judge/variant_build.h). tests/cli/test_sweep.sh builds real variants through ninja.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "grader/tools/sweep.h"
#include "grader/judge/variant_build.h"

namespace sw = labkit::sweep;
namespace vb = labkit::variant;
using Words = std::vector<std::string>;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::string param_error(const std::string& text) {
  try {
    sw::parse_param(text);
  } catch (const sw::ParamError& e) {
    return e.what();
  }
  return "";
}

std::string declared_error(const std::string& source) {
  try {
    sw::require_declared(source, "labs/03-tiling/kernel.cu", "TILE");
  } catch (const sw::ParamError& e) {
    return e.what();
  }
  return "";
}

// `ninja -C build -t commands grader/harness/harness-03-tiling` (meson 1.0, ninja 1.11), trimmed:
// the static library's `rm && ar` line must be skipped, the kernel's compile and the link found.
const char* kCommands =
    "c++ -Igrader/harness/liblabkit_harness.a.p -O3 -o grader/harness/liblabkit_harness.a.p/harness.cpp.o -c ../grader/harness/harness.cpp\n"
    "rm -f grader/harness/liblabkit_harness.a && gcc-ar csrDT grader/harness/liblabkit_harness.a grader/harness/liblabkit_harness.a.p/harness.cpp.o\n"
    "c++ -Igrader/harness/harness-03-tiling.p -O3 '-DLABKIT_LAB_ID=\"03-tiling\"' -MD -MQ grader/harness/harness-03-tiling.p/entry_conv.cpp.o "
    "-MF grader/harness/harness-03-tiling.p/entry_conv.cpp.o.d -o grader/harness/harness-03-tiling.p/entry_conv.cpp.o -c ../grader/harness/entry_conv.cpp\n"
    "/usr/local/cuda/bin/nvcc -DNDEBUG -Igrader/harness/harness-03-tiling.p -Xcompiler=-Wall,-Winvalid-pch,-Wextra --std=c++20 -O3 "
    "-gencode arch=compute_90,code=sm_90 -lineinfo -I../grader/harness -o grader/harness/harness-03-tiling.p/_src_labs_03-tiling_kernel.cu.o "
    "-c /src/labs/03-tiling/kernel.cu\n"
    "/usr/local/cuda/bin/nvcc  -o grader/harness/harness-03-tiling grader/harness/harness-03-tiling.p/entry_conv.cpp.o "
    "grader/harness/harness-03-tiling.p/_src_labs_03-tiling_kernel.cu.o '-Xcompiler=-Wl\\,-O1' --cudart=static "
    "-Xlinker=grader/harness/liblabkit_harness.a -Xlinker -rpath=/usr/local/cuda/lib64 -lcupti\n";

const char* kQuery =
    "grader/harness/harness-03-tiling:\n"
    "  input: cuda_LINKER\n"
    "    grader/harness/harness-03-tiling.p/entry_conv.cpp.o\n"
    "    grader/harness/harness-03-tiling.p/_src_labs_03-tiling_kernel.cu.o\n"
    "    | grader/harness/liblabkit_harness.a\n"
    "    | reference/liblabkit_npy.a\n"
    "    || meson-generated-header\n"
    "  outputs:\n"
    "    all\n";

labkit::ShapeTiming shape(const std::string& name, double lab_ms, double base_ms) {
  labkit::ShapeTiming t;
  t.name = name;
  t.shape = "B=1000 ...";
  t.lab_ms = lab_ms;
  t.base_ms = base_ms;
  t.speedup = base_ms / lab_ms;
  return t;
}

sw::Row passed(const std::string& value, double conv1, double conv2) {
  sw::Row r;
  r.value = value;
  r.built = true;
  r.result.verdict = labkit::verdict::kPassed;
  r.result.cases = {{"k3", "fixture", "", true, "ok", "", 0.1}, {"random-1", "random", "", true, "ok", "", 0.2}};
  r.result.timing = {shape("conv1 B=1000", conv1, 0.5), shape("conv2 B=1000", conv2, 1.9)};
  r.result.speedup = 2;
  return r;
}

sw::Sweep example() {
  sw::Sweep s{"03-tiling", "lab", "TILE", "op", "GPU <b>&\"'", 42, 1000, {}};
  s.rows.push_back(passed("8", 0.30, 1.2));
  sw::Row broken;
  broken.value = "16";
  broken.build_log = "the compile failed:\nlabs/03-tiling/kernel.cu(40): error: expected a \";\"\n";
  s.rows.push_back(broken);
  s.rows.push_back(passed("32", 0.25, 1.0));
  s.rows.back().result.verdict = labkit::verdict::kIncorrect;
  s.rows.back().result.message = "wrong values at (b=0, m=1, h=2, w=3)\nmore";
  s.rows.back().result.timing.clear();
  s.rows.back().result.speedup = 0;
  return s;
}

}  // namespace

TEST_CASE("sweep: --param NAME=V1,V2,... in the order given; every mistake named") {
  const sw::Param p = sw::parse_param("TILE=8,16,32");
  CHECK(p.name == "TILE");
  CHECK(p.values == Words{"8", "16", "32"});
  CHECK(sw::parse_param("COARSEN_2=4,1").values == Words{"4", "1"});
  CHECK(contains(param_error("TILE"), "no '='"));
  CHECK(contains(param_error("TILE="), "no values"));
  CHECK(contains(param_error("=8"), "not a macro name"));
  CHECK(contains(param_error("2TILE=8"), "not a macro name"));
  CHECK(contains(param_error("TI-LE=8"), "not a macro name"));
  CHECK(contains(param_error("TILE=8,,16"), "empty value"));
  CHECK(contains(param_error("TILE=8,16,"), "empty value"));
  CHECK(contains(param_error("TILE=8,x"), "\"x\" is not a positive integer"));
  CHECK(contains(param_error("TILE=0"), "\"0\" is not a positive integer"));
  CHECK(contains(param_error("TILE=-8"), "not a positive integer"));
  CHECK(contains(param_error("TILE=8.5"), "not a positive integer"));
  CHECK(contains(param_error("TILE=08"), "not a positive integer"));
  CHECK(contains(param_error("TILE=2147483648"), "not a positive integer"));
  CHECK(sw::parse_param("TILE=2147483647").values == Words{"2147483647"});
  CHECK(contains(param_error("TILE=8,16,8"), "8 is given twice"));
}

TEST_CASE("sweep: the kernel.cu must declare the parameter as a macro a -D overrides") {
  CHECK(declared_error("#ifndef TILE\n#define TILE 16  // sweep\n#endif\n").empty());
  CHECK(declared_error("  #  ifndef TILE\n").empty());
  CHECK(declared_error("#if !defined(TILE)\n#define TILE 16\n#endif\n").empty());
  const std::string missing = declared_error("#ifndef TILES\n#define TILES 2\n#endif\n// #ifndef TILE\n");
  CHECK(contains(missing, "labs/03-tiling/kernel.cu: declares no TILE"));
  const std::string unguarded = declared_error("#define TILE 16\n");
  CHECK(contains(unguarded, "labs/03-tiling/kernel.cu: TILE is #defined without an `#ifndef TILE`"));
  const std::string constant = declared_error("constexpr int TILE = 16;  // output patch side\n");
  CHECK(contains(constant, "labs/03-tiling/kernel.cu: TILE is a constexpr constant"));
  CHECK(contains(constant, "#ifndef TILE / #define TILE <its value> / #endif"));
}

TEST_CASE("variant: command lines split as /bin/sh would; what needs a shell is refused") {
  CHECK(vb::split_command("nvcc  -o a.o -c k.cu") == Words{"nvcc", "-o", "a.o", "-c", "k.cu"});
  CHECK(vb::split_command("c++ '-DLABKIT_LAB_ID=\"03-tiling\"' x") == Words{"c++", "-DLABKIT_LAB_ID=\"03-tiling\"", "x"});
  CHECK(vb::split_command("nvcc '-Xcompiler=-Wl\\,-O1'") == Words{"nvcc", "-Xcompiler=-Wl\\,-O1"});
  CHECK(vb::split_command("a \"b c\" d\\ e \"q\\\"x\" ''") == Words{"a", "b c", "d e", "q\"x", ""});
  CHECK(vb::split_command("a b#c '~' \\~") == Words{"a", "b#c", "~", "~"});
  for (const char* bad : {"rm -f x && ar x", "a; b", "a | b", "a > f", "a $HOME", "a \"$X\"", "a `b`", "a *.o", "a 'open",
                          "a \"open", "a ~/x", "a #c", "a (b)"})
    CHECK_THROWS_AS(vb::split_command(bad), std::invalid_argument);
}

TEST_CASE("variant: the recipe is ninja's own compile of kernel.cu and its link, with our -D and our paths") {
  const vb::Recipe r = vb::extract_recipe(kCommands, "grader/harness/harness-03-tiling", "/src/labs/03-tiling/kernel.cu", "/src/build");
  CHECK(r.object == "grader/harness/harness-03-tiling.p/_src_labs_03-tiling_kernel.cu.o");
  CHECK(r.compile.front() == "/usr/local/cuda/bin/nvcc");
  CHECK(r.compile.back() == "/src/labs/03-tiling/kernel.cu");
  CHECK(r.link[1] == "-o");
  CHECK(r.link[2] == "grader/harness/harness-03-tiling");
  CHECK(std::find(r.link.begin(), r.link.end(), "-Xcompiler=-Wl\\,-O1") != r.link.end());

  const vb::Recipe v = vb::for_value(r, "TILE", "8", "/src/build/sweep/harness-03-tiling/TILE-8");
  const Words compile_tail(v.compile.end() - 5, v.compile.end());
  CHECK(compile_tail == Words{"-o", "/src/build/sweep/harness-03-tiling/TILE-8/kernel.cu.o", "-DTILE=8", "-c",
                              "/src/labs/03-tiling/kernel.cu"});
  CHECK(v.link[2] == "/src/build/sweep/harness-03-tiling/TILE-8/harness-03-tiling");
  CHECK(v.link[4] == "/src/build/sweep/harness-03-tiling/TILE-8/kernel.cu.o");
  CHECK(v.link[3] == "grader/harness/harness-03-tiling.p/entry_conv.cpp.o");  // the kit's part is shared
  CHECK(v.compile.size() == r.compile.size() + 1);
  CHECK(v.link.size() == r.link.size());

  // A relative source path resolves against the build dir; a compile with a depfile moves it too.
  const std::string cpp = "c++ -MD -MQ obj/k.o -MF obj/k.o.d -o obj/k.o -c ../labs/x/kernel.cu\nld -o harness obj/k.o\n";
  const vb::Recipe c = vb::for_value(vb::extract_recipe(cpp, "harness", "/src/labs/x/kernel.cu", "/src/build"), "N", "2", "/d");
  CHECK(c.compile == Words{"c++", "-MD", "-MQ", "/d/kernel.cu.o", "-MF", "/d/kernel.cu.o.d", "-o", "/d/kernel.cu.o", "-DN=2", "-c",
                           "../labs/x/kernel.cu"});
  CHECK(c.link == Words{"ld", "-o", "/d/harness", "/d/kernel.cu.o"});

  CHECK_THROWS_AS(vb::extract_recipe(kCommands, "grader/harness/harness-03-tiling", "/src/labs/05-unroll-matmul/kernel.cu", "/src/build"),
                  vb::RecipeError);
  CHECK_THROWS_AS(vb::extract_recipe(kCommands, "grader/harness/harness-04-float4", "/src/labs/03-tiling/kernel.cu", "/src/build"),
                  vb::RecipeError);
}

TEST_CASE("variant: the inputs ninja must bring up to date, and a compiler's output made readable") {
  CHECK(vb::query_inputs(kQuery) == Words{"grader/harness/harness-03-tiling.p/entry_conv.cpp.o",
                                          "grader/harness/harness-03-tiling.p/_src_labs_03-tiling_kernel.cu.o",
                                          "grader/harness/liblabkit_harness.a", "reference/liblabkit_npy.a"});
  std::string log = "/src/kit/labs/03-tiling/kernel.cu(40): error: expected a \";\"\n";
  for (int i = 0; i < 30; ++i) log += "line\n";
  const std::string readable = vb::readable_log(log, "/src/kit", 5);
  CHECK(readable.starts_with("labs/03-tiling/kernel.cu(40): error"));
  CHECK(contains(readable, "... 26 more lines"));
  CHECK(count(readable, "\n") == 6);
}

TEST_CASE("sweep: the table in md, csv and json; failed values say why") {
  const sw::Sweep s = example();
  const std::string md = sw::render(s, sw::Format::md);
  CHECK(contains(md, "| TILE | verdict | cases | conv1 Op Time (ms) | conv1 speedup | conv2 Op Time (ms) | conv2 speedup | speedup (geomean) |"));
  CHECK(contains(md, "| 8 | passed | 2/2 | 0.3000 | 1.67x | 1.2000 | 1.58x | 2.00x |"));
  CHECK(contains(md, "| 16 | build failed |"));
  CHECK(contains(md, "- TILE=16: build failed: labs/03-tiling/kernel.cu(40): error: expected a \";\""));
  CHECK(contains(md, "- TILE=32: incorrect: wrong values at (b=0, m=1, h=2, w=3)\n"));
  CHECK(contains(md, "on GPU <b>&\"'"));  // Markdown for a terminal: not escaped, but no table break
  const std::string csv = sw::render(s, sw::Format::csv);
  CHECK(csv.starts_with("TILE,verdict,cases_passed,cases_total,conv1_ms,conv1_speedup,conv2_ms,conv2_speedup,speedup,error\n"));
  CHECK(contains(csv, "\n8,passed,2,2,0.300000,1.6667,1.200000,1.5833,2.0000,\n"));
  CHECK(contains(csv, "\n16,build failed,,,,,,,,\"build failed: labs/03-tiling/kernel.cu(40): error: expected a \"\";\"\"\"\n"));
  const auto j = nlohmann::json::parse(sw::render(s, sw::Format::json));
  CHECK(j["param"] == "TILE");
  CHECK(j["rows"].size() == 3);
  CHECK(j["rows"][0]["value"] == 8);
  CHECK(j["rows"][0]["shapes"][1]["name"] == "conv2");
  CHECK(j["rows"][0]["shapes"][1]["lab_ms"] == 1.2);
  CHECK(j["rows"][1]["built"] == false);
  CHECK(contains(j["rows"][1]["build_log"].get<std::string>(), "error: expected"));
  CHECK(j["rows"][2]["verdict"] == "incorrect");
  CHECK(j["seed"] == "42");
  CHECK_THROWS_AS(sw::parse_format("tex"), std::invalid_argument);
}

TEST_CASE("sweep: the chart has a line per grading shape, escaped text, and a log2 axis for powers of two") {
  sw::Sweep s = example();
  const std::string svg = sw::svg(s);
  CHECK(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(svg.ends_with("</svg>\n"));
  CHECK(count(svg, "<polyline class=\"line\"") == 2);
  CHECK(count(svg, "<g class=\"series\"") == 2);
  CHECK(contains(svg, "data-shape=\"conv1\""));
  CHECK(count(svg, "<circle class=\"point\"") == 2);  // only value 8 was timed
  CHECK(count(svg, "<line class=\"baseline\"") == 2);
  CHECK(contains(svg, "03-tiling: Op Time against TILE on GPU &lt;b&gt;&amp;\"'</text>"));
  CHECK(!contains(svg, "<b>"));
  CHECK(contains(svg, "TILE (log2 axis)"));
  CHECK(contains(svg, ">build failed</text>"));
  CHECK(contains(svg, ">incorrect</text>"));
  // Every element closed: as many openings as closings of each container.
  CHECK(count(svg, "<g ") == count(svg, "</g>"));
  CHECK(count(svg, "<circle ") == count(svg, "</circle>"));
  CHECK(count(svg, "<text") == count(svg, "</text>"));

  s.rows[2].value = "24";  // not a power of two: one category per value, in the order given
  s.role = "solution";
  s.timed_region = "layer";
  const std::string cat = sw::svg(s);
  CHECK(!contains(cat, "log2"));
  CHECK(contains(cat, "03-tiling (solution): Layer Time against TILE"));
  CHECK(contains(cat, ">Layer Time (ms)</text>"));

  s.rows.clear();  // nothing timed: still a valid chart
  CHECK(contains(sw::svg(s), "no value was timed"));
}
