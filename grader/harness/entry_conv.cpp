// The entry point of a conv lab's harness: the lab's three phases, from its kernel.cu
// (grader/harness/meson.build compiles one per lab folder with LABKIT_LAB_ID defined).
#include "harness.h"

namespace {
constexpr labkit::ConvOps kOps{LABKIT_LAB_ID, &labkit::conv_forward_gpu_prolog, &labkit::conv_forward_gpu,
                               &labkit::conv_forward_gpu_epilog};
}

int main(int argc, char** argv) {
  return labkit::harness::main(argc, argv, {LABKIT_LAB_ID, &kOps, nullptr});
}
