// Bad: input-kernel. The conv is correct, but afterwards a kernel scales the device input in place
// by (1 + 1e-7f), i.e. by 1 + 2^-23: most values move by one unit in the last place. This is what
// an in-place "prescale, compute, unscale" (x *= s ... x /= s) leaves behind, since x * s / s is not
// x in fp32.
// On a naive grader that checks the input with a tolerance (np.allclose, a relative 1e-5) or not at
// all, nothing changed: full marks. The next layer sees different data.
// Expected verdict: input-modified (the judge compares the device input after the call with what it
// sent, bit for bit). 0 points.
#include "../common.cuh"

__global__ void rescale_in_place(float* in, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    in[i] *= 1.0f + 1e-7f;
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
  rescale_in_place<<<1024, 256>>>(const_cast<float*>(in), s.input_size());
  LABKIT_CUDA_CHECK_LAUNCH();
}
