// A layer-timed conv on two streams: each stream copies its part of the batch in, convolves it and
// copies the result out, so one part's copies overlap the other part's kernel. The host arrays are
// pinned by the grader for layer-timed labs (pageable copies would not overlap). Expected: passed,
// with the streams evidence found.
#include "../common.cuh"

namespace {
constexpr int kStreams = 2;
cudaStream_t g_streams[kStreams];
}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& s) {
  LABKIT_CUDA_CHECK(cudaMalloc(device_output, s.output_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMalloc(device_input, s.input_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMalloc(device_mask, s.mask_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMemcpy(*device_mask, host_mask, s.mask_size() * sizeof(float), cudaMemcpyHostToDevice));
  for (cudaStream_t& st : g_streams) LABKIT_CUDA_CHECK(cudaStreamCreate(&st));
  // The input goes in per stream, in forward's segments; only the pointer is needed here.
  const std::size_t per_image = std::size_t(s.C) * s.H * s.W;
  for (int k = 0; k < kStreams; ++k) {
    const int b0 = s.B * k / kStreams, b1 = s.B * (k + 1) / kStreams;
    LABKIT_CUDA_CHECK(cudaMemcpyAsync(*device_input + b0 * per_image, host_input + b0 * per_image,
                                      (b1 - b0) * per_image * sizeof(float), cudaMemcpyHostToDevice, g_streams[k]));
  }
}

void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  const std::size_t per_image = std::size_t(s.M) * s.H_out() * s.W_out();
  for (int k = 0; k < kStreams; ++k) {
    const int b0 = s.B * k / kStreams, b1 = s.B * (k + 1) / kStreams;
    test_lab::launch(out, in, mask, s, b0 * per_image, b1 * per_image, g_streams[k]);
  }
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& s) {
  const std::size_t per_image = std::size_t(s.M) * s.H_out() * s.W_out();
  for (int k = 0; k < kStreams; ++k) {
    const int b0 = s.B * k / kStreams, b1 = s.B * (k + 1) / kStreams;
    LABKIT_CUDA_CHECK(cudaMemcpyAsync(host_output + b0 * per_image, device_output + b0 * per_image,
                                      (b1 - b0) * per_image * sizeof(float), cudaMemcpyDeviceToHost, g_streams[k]));
  }
  for (cudaStream_t st : g_streams) {
    LABKIT_CUDA_CHECK(cudaStreamSynchronize(st));
    LABKIT_CUDA_CHECK(cudaStreamDestroy(st));
  }
  LABKIT_CUDA_CHECK(cudaFree(device_output));
  LABKIT_CUDA_CHECK(cudaFree(device_input));
  LABKIT_CUDA_CHECK(cudaFree(device_mask));
}
