// Bad: input-memset. The conv is correct, but the kernel uses its device input as scratch once the
// conv has read it (scratch in the input buffer is "free": no allocation, so no device-memory
// accounting sees a workspace) and then clears it with cudaMemsetAsync, queued on the same stream
// right after the launch, so the conv has finished reading before the input is zeroed.
// On a naive grader that compares only the output (and times with the same buffers, whose
// input is then all zeros: the later timed calls write zeros fast) this is full marks; the next
// layer, or the next call on the same input, sees zeros.
// Expected verdict: input-modified (the judge compares the device input after the call with what
// it sent). 0 points.
#include "../common.cuh"

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
  LABKIT_CUDA_CHECK(cudaMemsetAsync(const_cast<float*>(in), 0, s.input_size() * sizeof(float)));
}
