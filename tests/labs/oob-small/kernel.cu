// Bad: oob-small. A correct conv whose "last tile" store is not bounds-checked: it also writes
// 16 KiB (4096 floats) right after the end of the output. cudaMalloc rounds allocations up (to
// 2 MiB pages, and packs small buffers next to each other), so so small an overrun does not fault:
// it lands in the allocation's padding or in a neighbouring buffer.
// On a naive grader that reads back only the output's own elements (and sees no CUDA error) this
// is full marks; in a real network it corrupts whatever buffer follows the output.
// Expected verdict: out-of-bounds (the kit's guard regions after the buffers changed). 0 points.
#include "../common.cuh"

// The overhang of the last tile: 4096 floats from `past_end` on (a ramp, as partial sums would be).
__global__ void store_overhang(float* past_end) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 4096; i += gridDim.x * blockDim.x) past_end[i] = 1.0f + i;
}

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
  store_overhang<<<16, 256>>>(out + s.output_size());
  LABKIT_CUDA_CHECK_LAUNCH();
}
