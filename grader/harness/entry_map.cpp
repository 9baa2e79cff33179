// The entry point of a map lab's harness: the lab's map_forward_gpu, from its kernel.cu.
#include "harness.h"

namespace {
constexpr labkit::MapOps kOps{LABKIT_LAB_ID, &labkit::map_forward_gpu};
}

int main(int argc, char** argv) {
  return labkit::harness::main(argc, argv, {LABKIT_LAB_ID, nullptr, &kOps});
}
