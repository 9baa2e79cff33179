// Cheat: the baseline's one-element-a-thread map kernel (copied here, so it is the lab's own)
// does all the timed work; a float4 kernel that is never launched holds lab 04's evidence
// (16-byte loads and stores). The PTX, searched as a whole, shows the technique; the judge counts a
// pattern only in the kernels that ran in the timed calls: expected verdict missing-evidence
// ("which never ran in a timed call").
#include <cstddef>

#include "labkit/cuda_check.h"
#include "labkit/map.h"
#include "reference/map_workload.h"

__global__ void plain_map(float* data, int dimx, int dimy, int niterations) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= dimx) return;
  for (int row = blockIdx.y; row < dimy; row += gridDim.y) {
    float* element = data + std::size_t(row) * dimx + col;
    float v = *element;
    for (int it = 0; it < niterations; ++it) v = labkit::map_step(v, col % 4);
    *element = v;
  }
}

__global__ void dead_float4(float4* data) {
  float4 v = data[threadIdx.x];
  v.x += 1.0f;
  v.y += 1.0f;
  v.z += 1.0f;
  v.w += 1.0f;
  data[threadIdx.x] = v;
}

void labkit::map_forward_gpu(float* data, int dimx, int dimy, int niterations) {
  if (dimx <= 0 || dimy <= 0) return;
  const dim3 grid((dimx + 255) / 256, dimy < 65535 ? dimy : 65535);
  plain_map<<<grid, 256>>>(data, dimx, dimy, niterations);
  LABKIT_CUDA_CHECK_LAUNCH();
}
