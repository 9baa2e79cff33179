// grader/judge/gpu_arch.h: which GPUs a build's targets run on, and the one-line messages a grade gives
// instead of CUDA's "no kernel image" (a build without code for the GPU, a lab the GPU is too old for).
#include <doctest/doctest.h>

#include "grader/judge/gpu_arch.h"

using labkit::ComputeCapability;

TEST_CASE("compute capabilities parse as major.minor and name their family") {
  CHECK(labkit::parse_compute_capability("8.6") == ComputeCapability{8, 6});
  CHECK(labkit::parse_compute_capability("12.0") == ComputeCapability{12, 0});
  for (const char* bad : {"", "8", "8.", ".6", "8.60", "sm_86", "8,6", "x.y", "0.0"})
    CHECK_MESSAGE(!labkit::parse_compute_capability(bad), bad);
  CHECK(labkit::family({7, 0}) == "Volta");
  CHECK(labkit::family({7, 5}) == "Turing");
  CHECK(labkit::family({8, 0}) == "Ampere");
  CHECK(labkit::family({8, 6}) == "Ampere");
  CHECK(labkit::family({8, 9}) == "Ada Lovelace");
  CHECK(labkit::family({9, 0}) == "Hopper");
  CHECK(labkit::family({10, 0}) == "Blackwell");
  CHECK(labkit::family({12, 0}) == "Blackwell");
  CHECK(labkit::family({42, 0}).empty());
  CHECK(labkit::describe({8, 6}) == "8.6 (Ampere)");
  CHECK(labkit::describe({42, 1}) == "42.1");
}

TEST_CASE("machine code runs on its major version at its minor or above; PTX on anything as new or newer") {
  // The fallback list of a build without a GPU (tools/gpu_arch.py).
  const char* fallback = "sm_80 sm_86 sm_90 compute_90";
  CHECK(labkit::build_runs_on(fallback, {8, 0}));   // A100
  CHECK(labkit::build_runs_on(fallback, {8, 6}));   // RTX 3090, A10
  CHECK(labkit::build_runs_on(fallback, {8, 7}));   // Orin: sm_86 code
  CHECK(labkit::build_runs_on(fallback, {8, 9}));   // L4, RTX 4090: sm_86 code
  CHECK(labkit::build_runs_on(fallback, {9, 0}));   // H100, H200
  CHECK(labkit::build_runs_on(fallback, {10, 0}));  // B200: compute_90 PTX, compiled by the driver
  CHECK(labkit::build_runs_on(fallback, {12, 0}));  // RTX 5090: the same
  CHECK_FALSE(labkit::build_runs_on(fallback, {7, 5}));  // T4: nothing older than 8.0
  CHECK_FALSE(labkit::build_runs_on(fallback, {7, 0}));
  // Machine code alone never runs on a newer major version, nor on an older minor.
  CHECK_FALSE(labkit::build_runs_on("sm_90", {10, 0}));
  CHECK_FALSE(labkit::build_runs_on("sm_86", {8, 0}));
  CHECK(labkit::build_runs_on("sm_80", {8, 6}));
  CHECK(labkit::build_runs_on("sm_100", {10, 3}));
  CHECK(labkit::build_runs_on("compute_75", {8, 6}));
  CHECK_FALSE(labkit::build_runs_on("compute_90", {8, 9}));
  CHECK_FALSE(labkit::build_runs_on("", {9, 0}));
  CHECK_FALSE(labkit::build_runs_on("sm_ compute_x9 bogus", {9, 0}));
}

TEST_CASE("build_mismatch: empty when the build runs here, else the GPU, the targets and the fix") {
  CHECK(labkit::build_mismatch("sm_90 compute_90", "NVIDIA H100 80GB HBM3", {9, 0}).empty());
  const std::string m = labkit::build_mismatch("sm_80 sm_86 sm_90 compute_90", "Tesla T4", {7, 5});
  CHECK(m.find("no code for this GPU, Tesla T4 (compute capability 7.5, Turing)") != std::string::npos);
  CHECK(m.find("built for sm_80 sm_86 sm_90 compute_90") != std::string::npos);
  CHECK(m.find("-Dgpu_arch=auto") != std::string::npos);
  CHECK(m.find("-Dgpu_arch=7.5") != std::string::npos);
}

TEST_CASE("lab_mismatch: one line naming the lab, what it needs and for what, and the GPU") {
  const labkit::GpuRequirement need{{8, 0}, "TF32 mma.sync and cvt.rna.tf32"};
  CHECK(labkit::lab_mismatch("12-tensor-cores", need, "NVIDIA A100-SXM4-80GB", {8, 0}).empty());
  CHECK(labkit::lab_mismatch("12-tensor-cores", need, "NVIDIA GeForce RTX 3090", {8, 6}).empty());
  CHECK(labkit::lab_mismatch("12-tensor-cores", need, "NVIDIA H100 80GB HBM3", {9, 0}).empty());
  const std::string m = labkit::lab_mismatch("12-tensor-cores", need, "Tesla T4", {7, 5});
  CHECK(m == "12-tensor-cores needs a GPU of compute capability 8.0 (Ampere) or newer for TF32 mma.sync and "
             "cvt.rna.tf32; this GPU, Tesla T4, is 7.5 (Turing).");
  CHECK(m.find('\n') == std::string::npos);
}
