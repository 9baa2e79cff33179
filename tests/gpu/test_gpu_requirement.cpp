// The grade on this GPU of a lab it cannot run (grader/judge/gpu_arch.h): a lab.json "requires_gpu"
// above this GPU's compute capability is SKIPPED with one line naming the lab, what it needs and
// the GPU; a lab the build has no harness for is a kit-error naming why and this GPU. Both are
// decided before anything runs: no harness is started (the one named here does not exist).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "grader/judge/device.h"
#include "grader/core/exit_codes.h"
#include "grader/judge/judge.h"

namespace {

namespace fs = std::filesystem;

labkit::judge::LabUnderTest lab_needing(const std::string& requires_gpu) {
  const fs::path dir = fs::temp_directory_path() / "labkit-test-gpu-requirement";
  fs::create_directories(dir);
  std::ofstream(dir / "lab.json")
      << R"({"id": "needs-newer", "title": "t", "points": 1, "kind": "conv", "precision": "fp32", "timed": "op",
             "target_speedup": 2, "correctness_share": 0.5, "evidence": [])"
      << (requires_gpu.empty() ? "" : R"(, "requires_gpu": )" + requires_gpu) << "}";
  // PTX with no function: the judge reads the lab's PTX before it looks at the GPU.
  std::ofstream(dir / "lab.ptx") << ".version 8.0\n.target sm_80\n.address_size 64\n";
  return {"needs-newer", "test", (dir / "lab.json").string(), (dir / "lab.ptx").string(), "tests/labs/needs-newer/kernel.cu",
          (dir / "kernel.cu").string(), (dir / "no-such-harness").string(), ""};
}

labkit::judge::Options no_sandbox() {
  labkit::judge::Options o;
  o.sandbox = labkit::sandbox::Mode::none;
  return o;
}

}  // namespace

TEST_CASE("a lab that needs a newer GPU than this one: SKIPPED, one line naming the lab, the need and the GPU") {
  const labkit::DeviceInfo d = labkit::device_info();
  const auto lab = lab_needing(R"({"compute_capability": "99.0", "features": "instructions from the future"})");
  const labkit::GradeResult r = labkit::judge::judge_lab(lab, no_sandbox());
  CHECK(r.verdict == "no-device");
  CHECK(r.exit_code == labkit::exit_code::kNoDevice);
  CHECK(r.message == "needs-newer needs a GPU of compute capability 99.0 or newer for instructions from the future; "
                     "this GPU, " + d.name + ", is " + labkit::describe({d.cc_major, d.cc_minor}) + ".");
  CHECK(r.device == d.name);
}

TEST_CASE("a requirement this GPU meets is no reason to skip") {
  const labkit::DeviceInfo d = labkit::device_info();
  const labkit::ComputeCapability cc{d.cc_major, d.cc_minor};
  CHECK(labkit::lab_mismatch("x", {cc, "what this GPU has"}, d.name, cc).empty());
  CHECK(labkit::lab_mismatch("x", {{8, 0}, "cp.async"}, d.name, cc).empty() == (cc >= labkit::ComputeCapability{8, 0}));
}

TEST_CASE("a lab the build has no harness for, on a GPU that could run it: kit-error naming why and the GPU") {
  const labkit::DeviceInfo d = labkit::device_info();
  auto lab = lab_needing("");
  lab.unbuilt = "needs compute capability 8.0 or newer (cp.async); this build also targets sm_75 (gpu_arch)";
  const labkit::GradeResult r = labkit::judge::judge_lab(lab, no_sandbox());
  CHECK(r.verdict == "kit-error");
  CHECK(r.message.find("needs-newer has no harness in this build: it needs compute capability 8.0") == 0);
  CHECK(r.message.find("This GPU, " + d.name + ", is ") != std::string::npos);
  CHECK(r.message.find("-Dgpu_arch=auto") != std::string::npos);
}
