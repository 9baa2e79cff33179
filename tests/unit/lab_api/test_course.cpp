// The harness's adapter (grader/harness/lab_api.h) linked with a lab that defines only the course's
// GPUInterface methods, declared by the kit's gpu-new-forward.h: they are found under the names the
// adapter references, get the shape in the course's order, and get_device_properties runs once.
#include <doctest/doctest.h>

#include <vector>

#include "gpu-new-forward.h"
#include "lab_api.h"

namespace {
std::vector<int> g_last;           // the six ints of the last call
int g_properties = 0, g_calls = 0;
float* g_marker = reinterpret_cast<float*>(0x1000);
}  // namespace

void GPUInterface::get_device_properties() { ++g_properties; }
void GPUInterface::conv_forward_gpu_prolog(const float*, const float*, const float*, float** device_output_ptr,
                                           float**, float**, const int Batch, const int Map_out, const int Channel,
                                           const int Height, const int Width, const int K) {
  *device_output_ptr = g_marker;
  g_last = {Batch, Map_out, Channel, Height, Width, K};
  ++g_calls;
}
void GPUInterface::conv_forward_gpu(float* device_output, const float*, const float*, const int Batch,
                                    const int Map_out, const int Channel, const int Height, const int Width,
                                    const int K) {
  CHECK(device_output == g_marker);
  g_last = {Batch, Map_out, Channel, Height, Width, K};
  ++g_calls;
}
void GPUInterface::conv_forward_gpu_epilog(float*, float* device_output, float*, float*, const int Batch,
                                           const int Map_out, const int Channel, const int Height, const int Width,
                                           const int K) {
  CHECK(device_output == g_marker);
  g_last = {Batch, Map_out, Channel, Height, Width, K};
  ++g_calls;
}

TEST_CASE("a lab of the course's GPUInterface is called through the adapter, shape in the course's order") {
  const labkit::harness::LabConv lab = labkit::harness::lab_conv("course-lab");
  REQUIRE(lab.api == labkit::harness::ConvApi::course);
  CHECK(std::string(lab.ops.name) == "course-lab");
  const labkit::ConvShape s{3, 16, 4, 40, 41, 7};  // B M C H W K, all different
  const std::vector<int> course_order{3, 16, 4, 40, 41, 7};
  float* d_out = nullptr;
  float *d_in = nullptr, *d_mask = nullptr;
  lab.ops.prolog(nullptr, nullptr, nullptr, &d_out, &d_in, &d_mask, s);
  CHECK(d_out == g_marker);
  CHECK(g_last == course_order);
  lab.ops.prolog(nullptr, nullptr, nullptr, &d_out, &d_in, &d_mask, s);
  CHECK(g_properties == 1);  // once, before the first prolog
  g_last.clear();
  lab.ops.forward(d_out, d_in, d_mask, s);
  CHECK(g_last == course_order);
  g_last.clear();
  lab.ops.epilog(nullptr, d_out, d_in, d_mask, s);
  CHECK(g_last == course_order);
  CHECK(g_calls == 4);
}
