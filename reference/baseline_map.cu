// baseline_map.cu — the map baseline (seed 004's starting point; see baseline.h).
//
// One thread per element, 256 x 1 blocks, grid (ceil(dimx / 256), rows). Every iteration picks the
// element's update with a switch on column % 4: neighbouring threads of a warp hold neighbouring
// columns, so every warp takes all four cases and runs them one after the other: four times the
// instructions of a warp whose threads agree. The float4 lab removes the divergence by giving
// each thread four consecutive columns, one of every class.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "labkit/cuda_check.h"
#include "reference/baseline.h"
#include "reference/map_workload.h"

namespace labkit::baseline {
namespace {

constexpr int kBlockX = 256;
constexpr int kMaxGridY = 65535;  // the hardware limit of grid.y

__global__ void map_kernel(float* data, int dimx, int dimy, int niterations) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= dimx) return;  // the last block of a row reaches past dimx unless 256 divides it
  // More rows than grid.y allows: each block row handles every gridDim.y-th row.
  for (int row = blockIdx.y; row < dimy; row += gridDim.y) {
    float* element = data + std::size_t(row) * dimx + col;
    float v = *element;
    for (int it = 0; it < niterations; ++it) {
      switch (col % 4) {  // the divergence this baseline exists to show
        case 0: v = map_step(v, 0); break;  // v += sqrt(log(v) + 2)
        case 1: v = map_step(v, 1); break;  // v += sqrt(cos(v) + 2)
        case 2: v = map_step(v, 2); break;  // v += sqrt(sin(v) + 2)
        case 3: v = map_step(v, 3); break;  // v += sqrt(tan(pi/4 * sin(v)) + 2)
      }
    }
    *element = v;
  }
}

}  // namespace

void map_forward_gpu(float* device_data, int dimx, int dimy, int niterations) {
  if (dimx < 0 || dimy < 0 || niterations < 0) {
    throw std::invalid_argument("baseline map: negative argument (dimx=" + std::to_string(dimx) +
                                " dimy=" + std::to_string(dimy) +
                                " niterations=" + std::to_string(niterations) + ")");
  }
  if (dimx == 0 || dimy == 0) return;  // nothing to update, and an empty grid is a launch error
  const dim3 block(kBlockX, 1, 1);
  const dim3 grid((unsigned(dimx) + kBlockX - 1) / kBlockX, std::min(dimy, kMaxGridY), 1);
  // No synchronization: the caller times this call.
  map_kernel<<<grid, block>>>(device_data, dimx, dimy, niterations);
  LABKIT_CUDA_CHECK_LAUNCH();
}

}  // namespace labkit::baseline
