// Bad: a kernel that never returns (it waits for a value no one writes). Expected verdict: timeout.
#include "../common.cuh"

__global__ void spin(const float* in) {
  // volatile: the load is repeated every iteration, so the loop cannot be optimized away.
  while (*static_cast<const volatile float*>(in) == *static_cast<const volatile float*>(in)) {
  }
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float*, const float* in, const float*, const ConvShape&) {
  spin<<<1, 1>>>(in);
  LABKIT_CUDA_CHECK_LAUNCH();
}
