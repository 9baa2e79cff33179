// Cheat: prolog-compute. The untimed prolog runs the whole conv on the input it was handed, into a
// buffer of its own; conv_forward_gpu (the timed Op Time) only copies that buffer into the output.
// On a grader that times the op alone, every output is right and the op costs one device copy:
// for conv2 at batch 1000, 74 MB read and written, estimated at about 0.05 ms against the
// baseline's 1.9 ms (not measured: the kit refilled the input before this lab was run), above the
// physical floor (the shape's bytes at 1.25x the memory's peak: about 0.02 ms).
// Expected verdict: incorrect, 0 points. Every timed call's conv_forward_gpu gets an input the
// prolog never saw: the harness writes fresh values into the device input inside the timed
// request, just before the call ("refill"), and the judge checks the output against those.
// Correctness cases (whole calls, no refill) pass: only the timed calls reveal it.
#include "../common.cuh"

namespace {
float* g_precomputed = nullptr;  // the prolog's output, kept for the op
std::size_t g_floats = 0;
}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
  if (g_floats != shape.output_size()) {
    if (g_precomputed != nullptr) LABKIT_CUDA_CHECK(cudaFree(g_precomputed));
    g_floats = shape.output_size();
    LABKIT_CUDA_CHECK(cudaMalloc(&g_precomputed, g_floats * sizeof(float)));
  }
  test_lab::launch(g_precomputed, *device_input, *device_mask, shape, 0, shape.output_size());
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
}

void labkit::conv_forward_gpu(float* device_output, const float*, const float*, const ConvShape& shape) {
  LABKIT_CUDA_CHECK(cudaMemcpyAsync(device_output, g_precomputed, shape.output_size() * sizeof(float),
                                    cudaMemcpyDeviceToDevice));
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
