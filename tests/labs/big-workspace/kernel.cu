// Correct, but the first forward allocates a 256 MiB workspace and keeps it (as an unrolled
// matrix would be kept). Expected: missing-evidence, found on the lab's first call.
#include "../common.cuh"

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  static void* workspace = [] {
    void* p = nullptr;
    LABKIT_CUDA_CHECK(cudaMalloc(&p, std::size_t(256) << 20));
    return p;
  }();
  LABKIT_CUDA_CHECK(cudaMemsetAsync(workspace, 0, 1024));
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
