// The adapter linked with a lab that defines labkit's three phases (and, as a lab might by
// leftover, the course's methods too): labkit's are the ones called.
#include <doctest/doctest.h>

#include "gpu-new-forward.h"
#include "lab_api.h"

namespace {
int g_labkit = 0, g_course = 0;
}

void labkit::conv_forward_gpu_prolog(const float*, const float*, const float*, float**, float**, float**,
                                     const ConvShape&) { ++g_labkit; }
void labkit::conv_forward_gpu(float*, const float*, const float*, const ConvShape&) { ++g_labkit; }
void labkit::conv_forward_gpu_epilog(float*, float*, float*, float*, const ConvShape&) { ++g_labkit; }
void GPUInterface::conv_forward_gpu_prolog(const float*, const float*, const float*, float**, float**, float**,
                                           const int, const int, const int, const int, const int, const int) { ++g_course; }
void GPUInterface::conv_forward_gpu(float*, const float*, const float*, const int, const int, const int, const int,
                                    const int, const int) { ++g_course; }
void GPUInterface::conv_forward_gpu_epilog(float*, float*, float*, float*, const int, const int, const int,
                                           const int, const int, const int) { ++g_course; }

TEST_CASE("labkit's free functions win over the course's methods when a lab defines both") {
  const labkit::harness::LabConv lab = labkit::harness::lab_conv("both");
  REQUIRE(lab.api == labkit::harness::ConvApi::labkit);
  const labkit::ConvShape s{1, 4, 1, 86, 86, 7};
  float *o = nullptr, *i = nullptr, *m = nullptr;
  lab.ops.prolog(nullptr, nullptr, nullptr, &o, &i, &m, s);
  lab.ops.forward(o, i, m, s);
  lab.ops.epilog(nullptr, o, i, m, s);
  CHECK(g_labkit == 3);
  CHECK(g_course == 0);
}
