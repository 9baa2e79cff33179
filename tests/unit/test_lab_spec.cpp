// lab.json validation: a good file loads; every kind of mistake is one line naming the key.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "grader/judge/lab_spec.h"

namespace {

std::filesystem::path write(const std::string& text) {
  static int n = 0;
  const auto dir = std::filesystem::temp_directory_path() / "labkit-test-lab-spec";
  std::filesystem::create_directories(dir);
  const auto p = dir / ("lab" + std::to_string(n++) + ".json");
  std::ofstream(p) << text;
  return p;
}

const char* kGood = R"({"id": "03-tiling", "title": "Tiling", "points": 2, "kind": "conv",
  "precision": "fp32", "timed": "op", "target_speedup": 1.8, "correctness_share": 0.5,
  "evidence": [{"name": "ld.shared", "regex": "ld\\.shared", "description": "tile loads", "hint": "use shared memory"}],
  "hints": {"performance": "bigger tiles"}})";

std::string error_of(const std::string& text, const std::string& id = "") {
  try {
    labkit::load_lab_spec(write(text), id);
  } catch (const labkit::LabSpecError& e) {
    return e.what();
  }
  return "";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

}  // namespace

TEST_CASE("a good lab.json loads") {
  const auto s = labkit::load_lab_spec(write(kGood), "03-tiling");
  CHECK(s.points == 2);
  CHECK(s.target_speedup == 1.8);
  CHECK(s.evidence.size() == 1);
  CHECK(s.hint_performance == "bigger tiles");
  CHECK(s.kind == labkit::LabKind::conv);
}

TEST_CASE("mistakes are named") {
  const std::string g = kGood;
  CHECK(error_of("{").find("not valid JSON") != std::string::npos);
  CHECK(error_of(g, "04-float4").find("\"id\" is \"03-tiling\" but the lab's folder is \"04-float4\"") != std::string::npos);
  CHECK(error_of(replace(g, "\"points\": 2", "\"points\": -1")).find("\"points\" must be a positive number") != std::string::npos);
  CHECK(error_of(replace(g, "\"conv\"", "\"matmul\"")).find("\"kind\" must be \"conv\" or \"map\"") != std::string::npos);
  CHECK(error_of(replace(g, "\"target_speedup\"", "\"target_speedups\"")).find("unknown key \"target_speedups\"") != std::string::npos);
  CHECK(error_of(replace(g, "1.8", "1.0")).find("\"target_speedup\" must be a number above 1") != std::string::npos);
  CHECK(error_of(replace(g, "0.5", "1.5")).find("correctness_share") != std::string::npos);
  CHECK(error_of(replace(g, "\"performance\"", "\"speed\"")).find("unknown hint \"speed\"") != std::string::npos);
  CHECK(error_of(replace(g, "ld\\\\.shared\"", "ld[\"")).find("evidence[0]") != std::string::npos);
  const std::string with_map = replace(g, "\"hints\": {\"performance\": \"bigger tiles\"}",
                                       "\"map\": {\"dimx\": 4, \"dimy\": 4, \"niterations\": 4}");
  CHECK(error_of(with_map).find("\"map\" is only allowed when \"kind\" is \"map\"") != std::string::npos);
  const auto map_lab = labkit::load_lab_spec(write(replace(with_map, "\"conv\"", "\"map\"")));
  CHECK(map_lab.map.dimx == 4);
  CHECK(map_lab.map.niterations == 4);
}

TEST_CASE("a capstone: any precision, its own batch, the total's speedup and tiers") {
  const std::string g = replace(replace(kGood, "\"fp32\"", "\"any\""), "\"target_speedup\": 1.8,",
                                "\"target_speedup\": 20, \"batch\": 10000, \"speedup_of\": \"total\", \"tiers\": [4, 10, 20],");
  const auto s = labkit::load_lab_spec(write(g));
  CHECK(s.precision == labkit::Precision::any);
  CHECK(s.batch == 10000);
  CHECK(s.speedup_of == labkit::SpeedupOf::total);
  CHECK(s.tiers == std::vector<double>{4, 10, 20});
  CHECK(labkit::load_lab_spec(write(kGood)).batch == 1000);
  CHECK(labkit::precision_from_string("any") == labkit::Precision::any);
  CHECK(labkit::precision_from_string("tf32") == labkit::Precision::tf32);
  CHECK_THROWS_AS(labkit::precision_from_string("bf16"), std::invalid_argument);
  CHECK(error_of(replace(g, "[4, 10, 20]", "[4, 20, 10]")).find("\"tiers\" must ascend: tiers[2] = 10") != std::string::npos);
  CHECK(error_of(replace(g, "[4, 10, 20]", "[4, 10]")).find("the last of \"tiers\" (10) must equal \"target_speedup\" (20)") != std::string::npos);
  CHECK(error_of(replace(g, "[4, 10, 20]", "[]")).find("non-empty array") != std::string::npos);
  CHECK(error_of(replace(g, "\"total\"", "\"sum\"")).find("\"speedup_of\" must be \"geometric-mean\" or \"total\"") != std::string::npos);
  CHECK(error_of(replace(g, "10000", "20000")).find("\"batch\" must be an integer from 1 to 10000") != std::string::npos);
  CHECK(error_of(replace(g, "\"tiers\"", "\"targets_by_gpu\": {\"X\": {\"target_speedup\": 2}}, \"tiers\""))
            .find("a lab with \"tiers\" has no \"targets_by_gpu\"") != std::string::npos);
}

TEST_CASE("arch_specific: off unless lab.json says true") {
  CHECK_FALSE(labkit::load_lab_spec(write(kGood)).arch_specific);
  CHECK(labkit::load_lab_spec(write(replace(kGood, "\"timed\": \"op\",", "\"timed\": \"op\", \"arch_specific\": true,")))
            .arch_specific);
  CHECK(error_of(replace(kGood, "\"timed\": \"op\",", "\"timed\": \"op\", \"arch_specific\": \"sm_90a\","))
            .find("\"arch_specific\" must be true or false") != std::string::npos);
}

TEST_CASE("requires_gpu: none unless lab.json says; a compute capability and what needs it") {
  CHECK_FALSE(labkit::load_lab_spec(write(kGood)).requires_gpu);
  auto with = [](const std::string& value) {
    return replace(kGood, "\"timed\": \"op\",", "\"timed\": \"op\", \"requires_gpu\": " + value + ",");
  };
  const auto spec = labkit::load_lab_spec(write(with(R"({"compute_capability": "8.0", "features": "cp.async"})")));
  REQUIRE(spec.requires_gpu);
  CHECK(spec.requires_gpu->compute_capability == labkit::ComputeCapability{8, 0});
  CHECK(spec.requires_gpu->features == "cp.async");
  CHECK(error_of(with(R"({"compute_capability": "sm_80", "features": "cp.async"})"))
            .find("\"compute_capability\" must look like \"8.0\", found \"sm_80\"") != std::string::npos);
  CHECK(error_of(with(R"({"compute_capability": "8.0"})")).find("\"requires_gpu\" must be {") != std::string::npos);
  CHECK(error_of(with(R"("8.0")")).find("\"requires_gpu\" must be {") != std::string::npos);
  CHECK(error_of(with(R"({"compute_capability": "8.0", "features": ""})")).find("\"features\" must be a non-empty string") !=
        std::string::npos);
}

TEST_CASE("sanitize: memcheck unless lab.json names the tools; unknown or repeated tools are errors") {
  CHECK(labkit::load_lab_spec(write(kGood)).sanitize == std::vector<std::string>{"memcheck"});
  const auto with = [](const std::string& tools) {
    return replace(kGood, "\"timed\": \"op\",", "\"timed\": \"op\", \"sanitize\": " + tools + ",");
  };
  CHECK(labkit::load_lab_spec(write(with(R"(["memcheck", "racecheck"])"))).sanitize ==
        std::vector<std::string>{"memcheck", "racecheck"});
  CHECK(labkit::load_lab_spec(write(with("[]"))).sanitize.empty());
  CHECK(error_of(with(R"(["memcheck", "leakcheck"])")).find("sanitize[1]") != std::string::npos);
  CHECK(error_of(with(R"(["racecheck", "racecheck"])")).find("named twice") != std::string::npos);
  CHECK(error_of(with(R"("memcheck")")).find("must be an array") != std::string::npos);
}

TEST_CASE("evidence_share: 0.5 unless lab.json says, from 0 to 1") {
  CHECK(labkit::load_lab_spec(write(kGood)).evidence_share == 0.5);
  const auto with = [](const std::string& v) { return replace(kGood, "\"timed\": \"op\",", "\"timed\": \"op\", \"evidence_share\": " + v + ","); };
  CHECK(labkit::load_lab_spec(write(with("0.3"))).evidence_share == 0.3);
  CHECK(labkit::load_lab_spec(write(with("1"))).evidence_share == 1.0);
  CHECK(error_of(with("1.5")).find("\"evidence_share\" must be a number from 0 to 1") != std::string::npos);
  CHECK(error_of(with("-0.1")).find("\"evidence_share\"") != std::string::npos);
  CHECK(error_of(with("\"half\"")).find("\"evidence_share\"") != std::string::npos);
}

TEST_CASE("counters: none unless lab.json names them; each a name, metric names, per_count and min_fraction") {
  CHECK(labkit::load_lab_spec(write(kGood)).counters.empty());
  const auto with = [](const std::string& v) { return replace(kGood, "\"timed\": \"op\",", "\"timed\": \"op\", \"counters\": " + v + ","); };
  const labkit::LabSpec s = labkit::load_lab_spec(write(with(
      R"([{"name": "tf32 math", "metrics": ["sm__a.sum", "sm__b.sum"], "per_count": 0.5, "min_fraction": 0.4}])")));
  REQUIRE(s.counters.size() == 1);
  CHECK(s.counters[0].name == "tf32 math");
  CHECK(s.counters[0].metrics == std::vector<std::string>{"sm__a.sum", "sm__b.sum"});
  CHECK(s.counters[0].per_count == 0.5);
  CHECK(s.counters[0].min_fraction == 0.4);
  const labkit::LabSpec d = labkit::load_lab_spec(write(with(R"([{"name": "x", "metrics": ["sm__a.sum"]}])")));
  CHECK(d.counters[0].per_count == 1);
  CHECK(d.counters[0].min_fraction == 0.5);
  CHECK(error_of(with(R"([{"name": "x", "metrics": []}])")).find("counters[0].metrics must be a non-empty array") != std::string::npos);
  CHECK(error_of(with(R"([{"name": "x", "metrics": ["a,b"]}])")).find("is not one Nsight Compute metric name") != std::string::npos);
  CHECK(error_of(with(R"([{"name": "x", "metrics": ["a"], "share": 1}])")).find("unknown key \"share\"") != std::string::npos);
  CHECK(error_of(with(R"({"name": "x"})")).find("\"counters\" must be an array") != std::string::npos);
}

TEST_CASE("counters: a ceiling (max_fraction) over the sum of other metrics (over)") {
  const auto with = [](const std::string& v) { return replace(kGood, "\"timed\": \"op\",", "\"timed\": \"op\", \"counters\": " + v + ","); };
  const labkit::LabSpec s = labkit::load_lab_spec(write(with(
      R"([{"name": "conflicts", "metrics": ["l1tex__c.sum"], "over": ["l1tex__w.sum", "l1tex__v.sum"], "max_fraction": 0.1}])")));
  REQUIRE(s.counters.size() == 1);
  CHECK(s.counters[0].over == std::vector<std::string>{"l1tex__w.sum", "l1tex__v.sum"});
  REQUIRE(s.counters[0].max_fraction.has_value());
  CHECK(*s.counters[0].max_fraction == 0.1);
  CHECK(s.counters[0].min_fraction == 0);  // a ceiling alone has no floor
  const labkit::LabSpec band = labkit::load_lab_spec(write(with(
      R"([{"name": "x", "metrics": ["a"], "min_fraction": 0.02, "max_fraction": 0.5}])")));
  CHECK(band.counters[0].min_fraction == 0.02);
  CHECK(band.counters[0].over.empty());
  CHECK_FALSE(labkit::load_lab_spec(write(with(R"([{"name": "x", "metrics": ["a"]}])"))).counters[0].max_fraction);
  CHECK(error_of(with(R"([{"name": "x", "metrics": ["a"], "over": []}])")).find("counters[0].over must be a non-empty array") !=
        std::string::npos);
  CHECK(error_of(with(R"([{"name": "x", "metrics": ["a"], "over": ["b c"]}])")).find("counters[0].over: \"b c\" is not one") !=
        std::string::npos);
  CHECK(error_of(with(R"([{"name": "x", "metrics": ["a"], "max_fraction": -1}])")).find("\"max_fraction\" must be a fraction") !=
        std::string::npos);
  CHECK(error_of(with(R"([{"name": "x", "metrics": ["a"], "min_fraction": 0.5, "max_fraction": 0.1}])"))
            .find("min_fraction 0.5 is above max_fraction 0.1") != std::string::npos);
}

TEST_CASE("targets_by_gpu: the target of the GPU model grading, else the default, and why") {
  const auto spec = labkit::load_lab_spec(write(replace(kGood, R"("target_speedup": 1.8,)",
      R"("target_speedup": 1.8, "targets_by_gpu": {
        "NVIDIA H100 80GB HBM3": {"target_speedup": 1.05, "solution_speedup": 1.08, "date": "2026-11-25"},
        "NVIDIA H200": {"target_speedup": 1.25}},)")));
  REQUIRE(spec.targets_by_gpu.size() == 2);
  const auto h100 = spec.target_for("NVIDIA H100 80GB HBM3");
  CHECK(h100.calibrated);
  CHECK(h100.target_speedup == doctest::Approx(1.05));
  CHECK(h100.why == "calibrated for NVIDIA H100 80GB HBM3 on 2026-11-25 (instructor solution 1.08x)");
  CHECK(spec.target_for("NVIDIA H200").target_speedup == doctest::Approx(1.25));
  const auto other = spec.target_for("NVIDIA A100-SXM4-40GB");
  CHECK_FALSE(other.calibrated);
  CHECK(other.target_speedup == doctest::Approx(1.8));
  CHECK(other.why == "lab.json's default target: no calibration for NVIDIA A100-SXM4-40GB "
                     "(calibrated: NVIDIA H100 80GB HBM3, NVIDIA H200)");
  CHECK(labkit::load_lab_spec(write(kGood)).target_for("X").why == "lab.json's target: no calibration for X");

  CHECK(error_of(replace(kGood, R"("target_speedup": 1.8,)", R"("target_speedup": 1.8, "targets_by_gpu": [],)"))
            .find("\"targets_by_gpu\" must be an object") != std::string::npos);
  CHECK(error_of(replace(kGood, R"("target_speedup": 1.8,)",
                         R"("target_speedup": 1.8, "targets_by_gpu": {"G": {"solution_speedup": 2}},)"))
            .find("targets_by_gpu[\"G\"] has no \"target_speedup\"") != std::string::npos);
  CHECK(error_of(replace(kGood, R"("target_speedup": 1.8,)",
                         R"("target_speedup": 1.8, "targets_by_gpu": {"G": {"target_speedup": 2, "targt": 1}},)"))
            .find("targets_by_gpu[\"G\"]: unknown key \"targt\"") != std::string::npos);
  CHECK(error_of(replace(kGood, R"("target_speedup": 1.8,)",
                         R"("target_speedup": 1.8, "targets_by_gpu": {"G": {"target_speedup": 0.9}},)"))
            .find("target_speedup") != std::string::npos);
}

TEST_CASE("write_gpu_target adds, replaces and sorts one line per GPU and keeps the rest of the file") {
  const std::string layout = "{\n  \"id\": \"03-tiling\",\n  \"title\": \"Tiling\",\n  \"points\": 2,\n"
                             "  \"kind\": \"conv\",\n  \"precision\": \"fp32\",\n  \"timed\": \"op\",\n"
                             "  \"target_speedup\": 1.8,\n  \"correctness_share\": 0.5,\n  \"evidence\": []\n}\n";
  const auto file = write(layout);
  labkit::GpuTarget h200{"NVIDIA H200", 1.254, 1.33, 1.31, 1.35, 0.2, 1000, "13.0", "2026-11-25"};
  labkit::write_gpu_target(file, h200);
  const auto text = [&] {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  CHECK(text() == replace(layout, "  \"target_speedup\": 1.8,\n",
                          "  \"target_speedup\": 1.8,\n  \"targets_by_gpu\": {\n"
                          "    \"NVIDIA H200\": {\"target_speedup\": 1.25, \"solution_speedup\": 1.33, "
                          "\"solution_low\": 1.31, \"solution_high\": 1.35, \"batch\": 1000, \"margin\": 0.2, "
                          "\"driver\": \"13.0\", \"date\": \"2026-11-25\"}\n  },\n"));
  labkit::GpuTarget h100{"NVIDIA H100 80GB HBM3", 1.05, 1.08, 0, 0, 0, 0, "", ""};
  labkit::write_gpu_target(file, h100);
  h200.target_speedup = 1.3;
  labkit::write_gpu_target(file, h200);  // replaced, not added
  const auto spec = labkit::load_lab_spec(file);
  REQUIRE(spec.targets_by_gpu.size() == 2);
  CHECK(spec.targets_by_gpu[0].gpu == "NVIDIA H100 80GB HBM3");
  CHECK(spec.target_for("NVIDIA H200").target_speedup == doctest::Approx(1.3));
  CHECK(spec.target_for("NVIDIA H100 80GB HBM3").target_speedup == doctest::Approx(1.05));
  CHECK(text().find("\"NVIDIA H100 80GB HBM3\": {\"target_speedup\": 1.05, \"solution_speedup\": 1.08},\n") !=
        std::string::npos);
  CHECK(spec.target_speedup == doctest::Approx(1.8));
  labkit::write_default_target(file, 1.3);
  CHECK(labkit::load_lab_spec(file).target_speedup == doctest::Approx(1.3));
  CHECK(labkit::load_lab_spec(file).targets_by_gpu.size() == 2);

  // A target the lab.json rules refuse leaves the file as it was.
  const std::string before = text();
  h100.target_speedup = 0.5;
  CHECK_THROWS_AS(labkit::write_gpu_target(file, h100), labkit::LabSpecError);
  CHECK(text() == before);
}

TEST_CASE("course_evidence: replaces evidence and its hint under the course contract only") {
  const auto with = [](const std::string& v) {
    return replace(kGood, "\"timed\": \"op\",", "\"timed\": \"op\", \"course_evidence\": " + v + ",");
  };
  const std::string course = with(
      R"([{"name": "any shared", "regex": "^(ld|st)\\.shared", "description": "shared memory", "hint": "stage a tile"}])");
  labkit::LabSpec s = labkit::load_lab_spec(write(course));
  REQUIRE(s.course_evidence);
  CHECK(s.course_evidence->size() == 1);
  CHECK(s.evidence.front().name == "ld.shared");  // loading changes nothing
  labkit::LabSpec general = s;
  CHECK_FALSE(general.apply_contract(labkit::Contract::general));
  CHECK(general.evidence.front().name == "ld.shared");
  CHECK(general.contract == labkit::Contract::general);
  CHECK(s.apply_contract(labkit::Contract::course));
  CHECK(s.contract == labkit::Contract::course);
  CHECK(s.evidence.size() == 1);
  CHECK(s.evidence.front().name == "any shared");
  CHECK(s.hint_evidence == "stage a tile");
  // Without course_evidence the course contract keeps the lab's own patterns.
  labkit::LabSpec plain = labkit::load_lab_spec(write(kGood));
  CHECK_FALSE(plain.course_evidence);
  CHECK_FALSE(plain.apply_contract(labkit::Contract::course));
  CHECK(plain.evidence.front().name == "ld.shared");
  // Mistakes are named like evidence's.
  CHECK(error_of(with("{}")).find("\"course_evidence\" must be an array of patterns") != std::string::npos);
  CHECK(error_of(with(R"([{"name": "x", "regex": "(", "description": "d"}])")).find("course_evidence[0]") !=
        std::string::npos);
}

// Lab 09 under both contracts, on the statements a scalar-half course submission, the paired
// solution and a float conv of halves compile to (nvcc -ptx, compute_90); and the copy of its
// patterns in the test lab the evidence suite grades (tests/labs/course-fp16-scalar), which must
// not drift from labs/09-fp16/lab.json (nor the branch cheat's, tests/labs/branch-fp16-scalar).
TEST_CASE("09-fp16: scalar half arithmetic counts under the course contract only") {
  const char* root = std::getenv("LABKIT_SOURCE_DIR");
  REQUIRE_MESSAGE(root != nullptr, "LABKIT_SOURCE_DIR is not set: run this test through meson test");
  const std::filesystem::path lab = std::filesystem::path(root) / "labs" / "09-fp16" / "lab.json";
  const labkit::LabSpec spec = labkit::load_lab_spec(lab, "09-fp16");
  REQUIRE(spec.course_evidence);
  const auto body = [](const std::string& statements) {
    return ".version 8.8\n.target sm_90\n.address_size 64\n.visible .entry k(\n.param .u64 p\n)\n{\n" + statements + "\n}\n";
  };
  const std::string scalar = body("cvt.rn.f16.f32 %rs1, %f1;\n{mul.f16 %rs3,%rs1,%rs2;\n}\n{add.f16 %rs4,%rs3,%rs1;\n}\nret;");
  const std::string paired = body("{fma.rn.f16x2 %r3,%r1,%r2,%r3;\n}\nret;");
  const std::string widened = body("cvt.rn.f16.f32 %rs1, %f1;\ncvt.f32.f16 %f2, %rs1;\nfma.rn.f32 %f3, %f2, %f2, %f3;\nret;");
  const auto holds = [&](labkit::Contract c, const std::string& ptx) {
    labkit::LabSpec s = spec;
    s.apply_contract(c);
    return labkit::evidence::check(ptx, s.evidence).ok;
  };
  CHECK_FALSE(holds(labkit::Contract::general, scalar));
  CHECK(holds(labkit::Contract::course, scalar));
  CHECK(holds(labkit::Contract::general, paired));
  CHECK(holds(labkit::Contract::course, paired));
  CHECK_FALSE(holds(labkit::Contract::general, widened));
  CHECK_FALSE(holds(labkit::Contract::course, widened));

  // The test labs graded with copies of 09's patterns (evidence suite, and the branch cheat).
  const auto same = [](const std::vector<labkit::evidence::Pattern>& a, const std::vector<labkit::evidence::Pattern>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i].name != b[i].name || a[i].regex != b[i].regex || a[i].min_count != b[i].min_count || a[i].absent != b[i].absent)
        return false;
    return true;
  };
  for (const char* id : {"course-fp16-scalar", "branch-fp16-scalar"}) {
    const std::filesystem::path copy = std::filesystem::path(root) / "tests" / "labs" / id / "lab.json";
    if (!std::filesystem::exists(copy)) continue;  // a student distribution has no test labs
    const labkit::LabSpec test_lab = labkit::load_lab_spec(copy, id);
    CHECK_MESSAGE(same(test_lab.evidence, spec.evidence), copy.string() << ": evidence differs from " << lab.string());
    REQUIRE(test_lab.course_evidence);
    CHECK_MESSAGE(same(*test_lab.course_evidence, *spec.course_evidence),
                  copy.string() << ": course_evidence differs from " << lab.string());
  }
}
