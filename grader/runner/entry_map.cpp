// The entry point of a map lab's grading executable: the lab's map_forward_gpu, from its
// kernel.cu. grader/runner/meson.build defines the LABKIT_LAB_* macros for each lab.
#include "runner.h"

namespace {
constexpr labkit::MapOps kOps{LABKIT_LAB_ID, &labkit::map_forward_gpu};
}

int main(int argc, char** argv) {
  const labkit::runner::LabUnderTest lab{LABKIT_LAB_ID, LABKIT_LAB_ROLE, LABKIT_LAB_JSON,
                                         LABKIT_LAB_PTX, LABKIT_LAB_SOURCE,
                                         LABKIT_LAB_SOURCE_PATH, nullptr, &kOps};
  return labkit::runner::main(argc, argv, lab);
}
