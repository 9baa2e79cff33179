// An honest conflict-free layout written another way than the solution: the skeleton's aligned
// rows (pitch a multiple of 32 floats) kept, and column col of row r stored at col ^ (r & 7). The
// 8 rows a warp reads at once are 8 consecutive r, so their (r & 7) are 8 different values and
// column j lands in 8 different banks: j ^ 0 .. j ^ 7 within j's aligned run of 8 words. The XOR
// keeps every column inside its row (col < 8 + K - 1 <= 14 gives col ^ 7 <= 15 < 32). Expected
// verdict: passed ("Executed counters: shared-load bank conflicts ...").
#include "../shared_layout.cuh"
#include "labkit/conv_buffers.h"

namespace {

struct SwizzledRows {
  int pitch, plane;
  static SwizzledRows make(int rows, int cols) {
    const int pitch = (cols + 31) / 32 * 32;  // col ^ 7 < pitch for every col < cols
    return {pitch, rows * pitch};
  }
  __device__ int at(int c, int r, int col) const { return c * plane + r * pitch + (col ^ (r & 7)); }
};

}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  shared_layout::forward<SwizzledRows>(out, in, mask, s);
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
