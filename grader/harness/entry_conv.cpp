// The entry point of a conv lab's harness: the lab's three phases, labkit's free functions or the
// course's GPUInterface methods, whichever the lab's sources define (lab_api.h; grader/harness/
// meson.build compiles one per lab folder with LABKIT_LAB_ID defined).
#include "harness.h"
#include "lab_api.h"

int main(int argc, char** argv) {
  static const labkit::harness::LabConv lab = labkit::harness::lab_conv(LABKIT_LAB_ID);
  return labkit::harness::main(argc, argv, {LABKIT_LAB_ID, &lab.ops, nullptr});
}
