// 04-float4 — your kernel. Read README.md in this folder first.
//
// The workload (labkit/map.h, reference/map_workload.h): data is dimy rows x dimx columns of
// float32, row-major, on the device; every element is updated niterations times in place by the
// rule of its column class col % 4:  v = labkit::map_step(v, col % 4).
//
// The baseline (reference/baseline_map.cu) gives each thread one element, so the 32 threads of a
// warp hold all four classes and the warp runs all four code paths one after another. Your kernel
// gives each thread four consecutive elements of a row, loaded and stored as one float4:
//   * the four elements then hold the four classes, and all threads run the same code;
//   * a float4 access must be 16-byte aligned. Row `row` starts at element row * dimx, which is
//     aligned only when that is a multiple of 4: in other rows, do the elements before the first
//     aligned address (the "head") and the 0-3 left over at the end (the "tail") one by one, and
//     note that the body's first element then has class head % 4, not 0.
// Grade it with:  meson test -C build 04-float4 --verbose
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "labkit/cuda_check.h"
#include "labkit/map.h"
#include "reference/map_workload.h"

namespace {

constexpr int kBlockX = 256;
constexpr int kMaxGridY = 65535;  // the hardware limit of grid.y

// Grid: (blocks along a row's float4s, min(dimy, 65535)); a block row handles every gridDim.y-th row.
__global__ void map_float4_kernel(float* data, int dimx, int dimy, int niterations) {
  for (int row = blockIdx.y; row < dimy; row += gridDim.y) {
    [[maybe_unused]] float* r = data + std::size_t(row) * dimx;  // this row's first element
    [[maybe_unused]] const int t = blockIdx.x * blockDim.x + threadIdx.x;  // this thread's float4 in the row
    // TODO(student): find the row's head (elements before the first 16-byte boundary), update the body as float4s (t-th float4 after the head), then the head and tail one by one.
    (void)dimx;
    (void)niterations;
  }
}

}  // namespace

// The timed region (Op Time).
void labkit::map_forward_gpu(float* device_data, int dimx, int dimy, int niterations) {
  if (dimx < 0 || dimy < 0 || niterations < 0) {
    throw std::invalid_argument("04-float4: negative argument (dimx=" + std::to_string(dimx) +
                                " dimy=" + std::to_string(dimy) +
                                " niterations=" + std::to_string(niterations) + ")");
  }
  if (dimx == 0 || dimy == 0) return;  // nothing to update, and an empty grid is a launch error
  const int n4_max = dimx / 4 + 1;  // float4s a row can hold, whatever its alignment
  const dim3 block(kBlockX, 1, 1);
  const dim3 grid((unsigned(n4_max) + kBlockX - 1) / kBlockX, std::min(dimy, kMaxGridY), 1);
  map_float4_kernel<<<grid, block>>>(device_data, dimx, dimy, niterations);
  LABKIT_CUDA_CHECK_LAUNCH();
}
