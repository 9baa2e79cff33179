// The entry point of a conv lab's grading executable: the lab's three phases, from its kernel.cu.
// grader/runner/meson.build defines the LABKIT_LAB_* macros for each lab. With --network the same
// executable runs the milestone network with the lab's conv instead of grading it (labkit report).
#include <chrono>
#include <cstring>
#include <string>

#include "labkit/network_run.h"
#include "runner.h"

namespace {
constexpr labkit::ConvOps kOps{LABKIT_LAB_ID, &labkit::conv_forward_gpu_prolog,
                               &labkit::conv_forward_gpu, &labkit::conv_forward_gpu_epilog};
}

int main(int argc, char** argv) {
  const auto program_start = std::chrono::steady_clock::now();
  if (argc > 1 && std::strcmp(argv[1], "--network") == 0) {
    const labkit::network::ConvBackend backend{
        std::string(LABKIT_LAB_ID) + (std::string(LABKIT_LAB_ROLE) == "lab" ? "" : " (" LABKIT_LAB_ROLE ")"), &kOps};
    return labkit::network::program_main(argc, argv, backend, program_start);
  }
  const labkit::runner::LabUnderTest lab{LABKIT_LAB_ID, LABKIT_LAB_ROLE, LABKIT_LAB_JSON,
                                         LABKIT_LAB_PTX, LABKIT_LAB_SOURCE,
                                         LABKIT_LAB_SOURCE_PATH, &kOps, nullptr};
  return labkit::runner::main(argc, argv, lab);
}
