// A correct, otherwise fast kernel with bank conflicts: lab 14's skeleton with its store filled in
// and its layout left as given, every tile row padded to a multiple of 32 floats. The 8 rows a warp
// reads at once then share one bank: each window read takes 8 wavefronts instead of 1. Its PTX is
// the solution's but for an address stride, so only what executed can tell them apart. Expected
// verdict, where Nsight Compute can read the GPU's counters: missing-evidence ("Executed counters":
// about 7 conflicts in every 8 window-read wavefronts; the lab allows 10% of the shared-load
// wavefronts). Where it cannot, the target is what it misses (a passed grade without full marks).
#include "../shared_layout.cuh"
#include "labkit/conv_buffers.h"

namespace {

struct AlignedRows {
  int pitch, plane;
  static AlignedRows make(int rows, int cols) {
    const int pitch = (cols + 31) / 32 * 32;
    return {pitch, rows * pitch};
  }
  __device__ int at(int c, int r, int col) const { return c * plane + r * pitch + col; }
};

}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  shared_layout::forward<AlignedRows>(out, in, mask, s);
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
