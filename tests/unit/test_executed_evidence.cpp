// Executed-kernel evidence (grader/judge/executed_evidence.h) on hand-made PTX and records: the call
// graph's closure, patterns per kernel, the share of the timed GPU time, per-shape averaging, and
// every cross-check that makes the records unverified. No GPU, no CUPTI.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "grader/judge/evidence.h"
#include "grader/judge/executed_evidence.h"

namespace ev = labkit::evidence;
namespace ex = labkit::executed;
using labkit::activity::Kind;
using nlohmann::json;

namespace {

constexpr std::uint64_t us = 1000;  // CUPTI timestamps are in ns

// conv_mma reaches an mma through two .func levels; dead holds one itself and is never launched;
// conv_plain has fp32 FMAs only; conv<7> splits 49 FMAs between itself and a callee; atomic_k
// adds atomically; spin calls itself (a cycle) and through a register (no edge).
const char* kPtx = R"(
.version 8.0
.target sm_80
.address_size 64

.extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);

.func _Z6helperv()
{
	mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};
	ret;
}
.func _Z5innerv()
{
	call.uni _Z6helperv, ();
	ret;
}
.func (.param .b32 func_retval0) _Z8fma24hlpf(.param .b32 _Z8fma24hlpf_param_0)
{
)" R"(FMA24
	st.param.b32 [func_retval0+0], %f1;
	ret;
}
.func _Z4spinv()
{
	call.uni _Z4spinv, ();
	call %rd1, (), proto_1;
	ret;
}
.visible .entry _Z10conv_plainv()
{
	fma.rn.f32 %f1, %f2, %f3, %f4;
	ret;
}
.visible .entry _Z8conv_mmav()
{
	call.uni _Z5innerv, ();
	ret;
}
.visible .entry _Z4deadv()
{
	cvt.rna.tf32.f32 %r1, %f1;
	mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};
	ret;
}
.visible .entry _Z4convILi7EEvv()
{
FMA25
	{
	.param .b32 param0;
	.param .b32 retval0;
	call.uni (retval0), _Z8fma24hlpf, (param0);
	}
	ret;
}
.visible .entry _Z4convILi5EEvv()
{
FMA25
FMA25
	ret;
}
.visible .entry _Z8atomic_kv()
{
	red.global.add.f32 [%rd1], %f1;
	call.uni _Z4spinv, ();
	ret;
}
)";

std::string ptx() {
  std::string s = kPtx;
  auto fmas = [](int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += "\tfma.rn.f32 %f1, %f2, %f3, %f1;\n";
    return out;
  };
  for (auto [mark, n] : {std::pair{"FMA24", 24}, {"FMA25", 25}})
    for (std::size_t p; (p = s.find(mark)) != std::string::npos;) s.replace(p, 5, fmas(n));
  return s;
}

ev::Pattern pattern(const std::string& text) { return ev::pattern_from_json(json::parse(text), "test"); }

const ev::Pattern kMma = pattern(R"({"name": "tf32 mma", "regex": "^(w|wg)?mma(\\.\\w+)*\\.tf32\\b", "description": "tensor cores"})");
const ev::Pattern kCvt = pattern(R"({"name": "cvt.rna.tf32", "regex": "^cvt\\.rna\\.tf32\\.f32\\b", "description": "rounding"})");
const ev::Pattern kAtomic = pattern(
    R"({"name": "no atomics", "regex": "^(atom|red)(\\.\\w+)*\\.add\\.f32\\b", "description": "no atomics", "absent": true})");
const ev::Pattern kUnrolled = pattern(R"({"name": "unrolled 7 x 7 loop", "regex": "^fma\\.rn\\.f32\\b", "description": "49 FMAs",
                                         "min_count": 49, "function": "[<,] ?7u?[,>]", "in_one_function": true})");

ex::Record kernel(const std::string& name, std::uint64_t start_us, std::uint64_t end_us) {
  return {Kind::kernel, name, start_us * us, end_us * us, 7, 1024};
}

// A verified window of [0, length_us] µs reporting `reported_ms`, with the judge's clock a bit longer.
ex::Window window(std::vector<ex::Record> records, std::uint64_t length_us = 1000, double reported_ms = 1.0,
                  std::string group = "conv2 B=1000") {
  ex::Window w;
  w.group = std::move(group);
  w.available = true;
  w.start_ns = 0;
  w.end_ns = length_us * us;
  w.records = std::move(records);
  w.wall_ms = double(length_us) / 1000 + 0.05;
  w.reported_ms = reported_ms;
  return w;
}

const ev::Finding& finding(const ev::Report& r, std::size_t i) {
  REQUIRE(r.findings.size() > i);
  return r.findings[i];
}

}  // namespace

TEST_CASE("executed evidence: the call graph links `call` statements to .func bodies, transitively") {
  const std::vector<ev::PtxFunction> f = ev::parse_ptx(ptx());
  auto index = [&](const std::string& name) {
    for (std::size_t i = 0; i < f.size(); ++i)
      if (f[i].name == name) return i;
    FAIL("no function " << name);
    return std::size_t(0);
  };
  const auto graph = ev::call_graph(f);
  const std::vector<std::size_t> mma = ev::reachable(graph, index("_Z8conv_mmav"));
  CHECK(mma == std::vector<std::size_t>{index("_Z8conv_mmav"), index("_Z5innerv"), index("_Z6helperv")});
  // A call with a return value and parameters, inside an inline scope.
  CHECK(graph[index("_Z4convILi7EEvv")] == std::vector<std::size_t>{index("_Z8fma24hlpf")});
  // Recursion ends; an indirect call through a register names no function.
  CHECK(graph[index("_Z4spinv")] == std::vector<std::size_t>{index("_Z4spinv")});
  CHECK(ev::reachable(graph, index("_Z8atomic_kv")).size() == 2);
  CHECK(graph[index("_Z10conv_plainv")].empty());
  CHECK(ev::count_matches(f[index("_Z4convILi5EEvv")].lines, "^fma\\.rn\\.f32\\b") == 50);
}

TEST_CASE("executed evidence: a pattern counts for the kernels that took the timed time") {
  SUBCASE("found in a kernel's callees, at 93% of the time") {
    const ev::Report r = ex::check(ptx(), {kMma}, {window({kernel("_Z8conv_mmav", 0, 930), kernel("_Z10conv_plainv", 930, 1000)})}, 0.5);
    CHECK(r.executed);
    CHECK(r.basis == "executed kernels (CUPTI)");
    CHECK(r.ok);
    CHECK(finding(r, 0).share == doctest::Approx(0.93));
    CHECK(finding(r, 0).kernels == std::vector<std::string>{"conv_mma"});
    const std::string text = ev::format_report(r);
    CHECK(text.find("found   tf32 mma in conv_mma (93% of timed GPU time; needs 50%): tensor cores") != std::string::npos);
    CHECK(text.find("timed call(s) (CUPTI)") != std::string::npos);
  }
  SUBCASE("a dead kernel carries nothing") {
    const ev::Report r = ex::check(ptx(), {kMma, kCvt}, {window({kernel("_Z10conv_plainv", 0, 1000)})}, 0.5);
    CHECK_FALSE(r.ok);
    CHECK_FALSE(finding(r, 0).ok);
    // The mma also sits in conv_mma (through its callees): neither ran.
    CHECK(finding(r, 0).why == "in conv_mma, dead, which never ran in a timed call");
    CHECK(finding(r, 1).why == "in dead, which never ran in a timed call");
    CHECK(finding(r, 1).share == 0);
    CHECK(ev::format_report(r).find("MISSING cvt.rna.tf32 in dead, which never ran in a timed call") != std::string::npos);
  }
  SUBCASE("a token launch is not enough; the share is the lab's choice") {
    const std::vector<ex::Window> w = {window({kernel("_Z10conv_plainv", 0, 997), kernel("_Z8conv_mmav", 997, 1000)})};
    const ev::Report r = ex::check(ptx(), {kMma}, w, 0.5);
    CHECK_FALSE(r.ok);
    CHECK(finding(r, 0).why == "in conv_mma: 0.3% of timed GPU time; needs 50%");
    CHECK(ex::check(ptx(), {kMma}, w, 0.0).ok);
    CHECK(ex::check(ptx(), {kMma}, {window({kernel("_Z10conv_plainv", 0, 500), kernel("_Z8conv_mmav", 500, 1000)})}, 0.5).ok);
  }
  SUBCASE("absent: only a kernel that ran for some time breaks it") {
    CHECK(ex::check(ptx(), {kAtomic}, {window({kernel("_Z10conv_plainv", 0, 1000)})}, 0.5).ok);
    const ev::Report r =
        ex::check(ptx(), {kAtomic}, {window({kernel("_Z10conv_plainv", 0, 999), kernel("_Z8atomic_kv", 999, 1000)})}, 0.5);
    CHECK_FALSE(r.ok);
    CHECK(ev::format_report(r).find("PRESENT no atomics in atomic_k (0.1% of timed GPU time), must be absent") != std::string::npos);
  }
  SUBCASE("min_count in one kernel with its callees, and the function filter on the kernel's name") {
    // conv<7>: 25 FMAs of its own and 24 in the function it calls.
    CHECK(ex::check(ptx(), {kUnrolled}, {window({kernel("_Z4convILi7EEvv", 0, 1000)})}, 0.5).ok);
    // conv<5> has 50 but is not the K = 7 kernel.
    const ev::Report r = ex::check(ptx(), {kUnrolled}, {window({kernel("_Z4convILi5EEvv", 0, 1000)})}, 0.5);
    CHECK_FALSE(r.ok);
    CHECK(finding(r, 0).why == "in conv<7>, which never ran in a timed call");
  }
  SUBCASE("no kernel ran at all") {
    ex::Window w = window({{Kind::memcpy, "DtoD", 0, 1000 * us, 7, 0}});
    const ev::Report r = ex::check(ptx(), {kMma}, {w}, 0.5);
    CHECK_FALSE(r.ok);
    CHECK(finding(r, 0).why == "(no kernel ran in the timed calls)");
  }
}

TEST_CASE("executed evidence: each grading shape weighs as one call of it, however many calls it took") {
  // 2 calls of conv1 with the plain kernel (800 µs each), 10 of conv2 with the mma kernel (200 µs).
  std::vector<ex::Window> w;
  for (int i = 0; i < 2; ++i) w.push_back(window({kernel("_Z10conv_plainv", 0, 800)}, 800, 0.8, "conv1"));
  for (int i = 0; i < 10; ++i) w.push_back(window({kernel("_Z8conv_mmav", 0, 200)}, 200, 0.2, "conv2"));
  const ex::Attribution a = ex::attribute(w, ev::parse_ptx(ptx()));
  REQUIRE(a.verified);
  CHECK(a.kernel_ms == doctest::Approx(1.0));
  REQUIRE(a.kernels.size() == 2);
  CHECK(a.kernels[0].display == "conv_plain");
  CHECK(a.kernels[0].share == doctest::Approx(0.8));
  CHECK(a.kernels[1].share == doctest::Approx(0.2));
  // Only the part of a record inside its window counts.
  const ex::Attribution clipped =
      ex::attribute({window({kernel("_Z10conv_plainv", 0, 1000), {Kind::kernel, "_Z8conv_mmav", 500 * us, 3000 * us, 7, 1}})},
                    ev::parse_ptx(ptx()));
  REQUIRE(clipped.verified);
  CHECK(clipped.kernel_ms == doctest::Approx(1.5));
}

TEST_CASE("executed evidence: records the judge cannot believe earn nothing") {
  const auto functions = ev::parse_ptx(ptx());
  auto why = [&](const std::vector<ex::Window>& w) {
    const ex::Attribution a = ex::attribute(w, functions);
    CHECK_FALSE(a.verified);
    CHECK(a.kernels.empty());
    return a.why;
  };
  const ex::Record mma = kernel("_Z8conv_mmav", 0, 1000);
  SUBCASE("CUPTI unavailable or records lost") {
    ex::Window off = window({mma});
    off.available = false;
    off.why = "cuptiSubscribe failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
    CHECK(why({off}) == "CUPTI recorded nothing in timed call 1 (conv2 B=1000): " + off.why);
    ex::Window lost = window({mma});
    lost.dropped = 3;
    CHECK(why({window({mma}), lost}) == "CUPTI lost 3 record(s) around timed call 2 (conv2 B=1000)");
    CHECK(why({}) == "no timed call sent its records");
  }
  SUBCASE("a window longer than the judge's clock") {
    ex::Window w = window({mma});
    w.wall_ms = 0.7;
    CHECK(why({w}).find("the harness's window (1.000 ms) is longer than the judge's clock around the request (0.700 ms)") !=
          std::string::npos);
    w.wall_ms = 0.85;  // within the 0.2 ms of slack
    CHECK(ex::attribute({w}, functions).verified);
    ex::Window backwards = window({mma});
    backwards.start_ns = 2000 * us;
    CHECK(why({backwards}).find("ends before it starts") != std::string::npos);
  }
  SUBCASE("records outside their window, backwards, or of a kernel the PTX does not have") {
    CHECK(why({window({mma, kernel("_Z10conv_plainv", 1200, 1300)})}).find("lies outside the timed window") != std::string::npos);
    CHECK(why({window({{Kind::kernel, "_Z8conv_mmav", 900 * us, 100 * us, 7, 1}})}).find("ends before it starts") !=
          std::string::npos);
    CHECK(why({window({mma, kernel("_Z6helperv", 0, 10)})}) ==
          "timed call 1 (conv2 B=1000): kernel _Z6helperv is not a kernel of the lab's PTX");
    CHECK(why({window({kernel("_Z12cublas_sgemmv", 0, 1000)})}).find("not a kernel of the lab's PTX") != std::string::npos);
  }
  SUBCASE("recorded work that covers too little of the reported time") {
    // 300 µs of kernels in a call that reported 1 ms: the records do not describe the call.
    CHECK(why({window({kernel("_Z8conv_mmav", 0, 300)})}).find("covers 0.300 ms of the 1.000 ms the lab reported") !=
          std::string::npos);
    // Overlapping records count once; copies and memsets count towards the union.
    CHECK(ex::attribute({window({kernel("_Z8conv_mmav", 0, 300), kernel("_Z10conv_plainv", 100, 400),
                                 {Kind::memset, "memset", 400 * us, 600 * us, 7, 0}})},
                        functions).verified);
    CHECK_FALSE(ex::attribute({window({kernel("_Z8conv_mmav", 0, 300), kernel("_Z10conv_plainv", 100, 400)})}, functions).verified);
    // Summed over a shape's calls: one short call with launch gaps among well-covered ones passes,
    // the same gap in every call does not.
    const ex::Window gap = window({kernel("_Z8conv_mmav", 0, 300)});
    const ex::Window full = window({kernel("_Z8conv_mmav", 0, 950)});
    CHECK(ex::attribute({full, gap, full, full}, functions).verified);
    CHECK(why({gap, gap, gap, full}).find("the timed calls of conv2 B=1000: the recorded GPU work covers 1.850 ms of "
                                         "the 4.000 ms") != std::string::npos);
  }
  SUBCASE("every pattern fails, with the reason, whatever the PTX holds") {
    ex::Window w = window({mma});
    w.dropped = 1;
    const ev::Report r = ex::check(ptx(), {kMma, kAtomic}, {w}, 0.5);
    CHECK_FALSE(r.ok);
    CHECK_FALSE(finding(r, 0).ok);
    CHECK_FALSE(finding(r, 1).ok);
    CHECK(r.unverified == "CUPTI lost 1 record(s) around timed call 1 (conv2 B=1000)");
    CHECK(ev::format_report(r).find("unverified: CUPTI lost 1 record(s)") == 2);
  }
}

TEST_CASE("executed evidence: the harness's JSON, and malformed JSON as an unavailable window") {
  const json good = {{"available", true}, {"why", ""}, {"start_ns", 1000}, {"end_ns", 5000}, {"dropped", 0},
                     {"names", {"_Z8conv_mmav", "memset"}},
                     {"records", {{0, 0, 1500, 4000, 7, 4096}, {2, 1, 1000, 1200, 7, 0}}}};
  const ex::Window w = ex::window_from_text(good.dump(), "workload", 0.01, 0.002);
  REQUIRE(w.available);
  REQUIRE(w.records.size() == 2);
  CHECK(w.records[0].name == "_Z8conv_mmav");
  CHECK(w.records[0].threads == 4096);
  CHECK(w.records[1].kind == Kind::memset);
  CHECK(w.group == "workload");
  CHECK(w.wall_ms == 0.01);

  json bad_kind = good;
  bad_kind["records"][0][0] = 5;
  CHECK(ex::window_from_text(bad_kind.dump(), "w", 1, 1).why.find("unknown kind 5") != std::string::npos);
  json bad_name = good;
  bad_name["records"][0][1] = 9;
  CHECK_FALSE(ex::window_from_text(bad_name.dump(), "w", 1, 1).available);
  CHECK(ex::window_from_text("{\"available\": tru", "w", 1, 1).why == "the harness sent malformed records: not JSON");
  CHECK_FALSE(ex::window_from_text(json{{"available", true}}.dump(), "w", 1, 1).available);
  const ex::Window off = ex::window_from_text(json{{"available", false}, {"why", "no driver"}}.dump(), "w", 1, 1);
  CHECK_FALSE(off.available);
  CHECK(off.why == "no driver");
}

TEST_CASE("executed evidence: a call's GPU time is the union of its records inside the window") {
  // Two overlapping kernels and a copy after them: 0-400 and 300-600 us overlap, 800-900 us apart.
  ex::Window w = window({kernel("a", 0, 400), kernel("b", 300, 600), {Kind::memcpy, "DtoH", 800 * us, 900 * us, 7, 0}});
  REQUIRE(ex::busy_ms(w).has_value());
  CHECK(*ex::busy_ms(w) == doctest::Approx(0.7));
  // A record past the window counts only inside it.
  w = window({kernel("a", 900, 1500)}, 1000);
  CHECK(*ex::busy_ms(w) == doctest::Approx(0.1));
  // Windows that cannot be believed have no GPU time.
  w.dropped = 1;
  CHECK_FALSE(ex::busy_ms(w).has_value());
  w = window({});
  w.available = false;
  CHECK_FALSE(ex::busy_ms(w).has_value());
}

