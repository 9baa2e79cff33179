// The entry point of a conv lab's grading executable: the lab's three phases, from its kernel.cu.
// grader/runner/meson.build defines the LABKIT_LAB_* macros for each lab.
#include "runner.h"

namespace {
constexpr labkit::ConvOps kOps{LABKIT_LAB_ID, &labkit::conv_forward_gpu_prolog,
                               &labkit::conv_forward_gpu, &labkit::conv_forward_gpu_epilog};
}

int main(int argc, char** argv) {
  const labkit::runner::LabUnderTest lab{LABKIT_LAB_ID, LABKIT_LAB_ROLE, LABKIT_LAB_JSON,
                                         LABKIT_LAB_PTX, LABKIT_LAB_SOURCE,
                                         LABKIT_LAB_SOURCE_PATH, &kOps, nullptr};
  return labkit::runner::main(argc, argv, lab);
}
