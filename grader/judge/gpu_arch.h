// grader/judge/gpu_arch.h — whether this build, and a lab, can run on the GPU at hand, said in one line
// before anything runs on it, instead of CUDA's "no kernel image is available for execution".
//
// Contract
//   * A compute capability is "major.minor" ("8.6"); family() names its architecture ("Ampere",
//     "Ada Lovelace", "Hopper", ...; "" for one this table does not know).
//   * A build's targets are meson's readable list (LABKIT_CUDA_ARCHS, from gpu_arch: "sm_80 sm_86
//     compute_90"). Machine code sm_XY runs on a GPU of major X and minor >= Y; PTX compute_XY is
//     compiled by the driver for any GPU of X.Y or newer (NVIDIA's CUDA C++ Programming Guide,
//     "Binary Compatibility" and "PTX Compatibility"). Arch-specific code (sm_90a) is never in the
//     list: a lab embeds it beside its portable code (lab.json "arch_specific").
//   * build_mismatch() is empty when the build has code for the GPU, else one line: the GPU, its
//     compute capability, the build's targets, and the reconfigure command that fixes it.
//   * lab_mismatch() is empty when the lab needs nothing (lab.json "requires_gpu") or the GPU has
//     it, else one line naming the lab, the compute capability and the features it needs, and the
//     GPU with its compute capability.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace labkit {

struct ComputeCapability {
  int major = 0, minor = 0;
  auto operator<=>(const ComputeCapability&) const = default;
};

// lab.json "requires_gpu": {"compute_capability": "8.0", "features": "cp.async ..."}.
struct GpuRequirement {
  ComputeCapability compute_capability;
  std::string features;
};

std::optional<ComputeCapability> parse_compute_capability(std::string_view text);  // "8.6"; "" -> nullopt
std::string to_string(ComputeCapability cc);                                       // "8.6"
std::string family(ComputeCapability cc);                                          // "Ampere"
// "8.6 (Ampere)", or "8.6" where the family is unknown.
std::string describe(ComputeCapability cc);

// Whether code built for `targets` ("sm_80 sm_90 compute_90") runs on a GPU of `cc`.
bool build_runs_on(std::string_view targets, ComputeCapability cc);
std::string build_mismatch(std::string_view targets, const std::string& gpu, ComputeCapability cc);
std::string lab_mismatch(const std::string& lab_id, const GpuRequirement& need, const std::string& gpu,
                         ComputeCapability cc);

}  // namespace labkit
