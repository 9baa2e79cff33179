// baseline.h — the implementations every lab is timed against.
//
// Conv baseline (milestone-2 style, the naive forward pass the course starts from): one thread
// per output element, 16 x 16 thread blocks tiling the output plane, grid (tiles of the plane,
// M, B) so any batch up to 65535 fits (B * M planes in one grid dimension would not: conv2 at
// batch 10000 has 160000), global memory only, no restrict, no unrolling, float accumulation in
// the order c, p, q. Its three phases are plain cudaMalloc / cudaMemcpy on the default stream;
// conv_forward_gpu does not synchronize. Throws std::invalid_argument for an invalid shape, B or
// M above 65535, or a tensor of more than INT_MAX elements (the kernel indexes with int).
// Everything a lab does is measured as a ratio to this.
//
// Map baseline (seed 004's starting point): one thread per element, 256 x 1 blocks, and a
// `switch (column % 4)` inside the iteration loop, so neighbouring threads of a warp take
// different branches on every iteration.
#pragma once

#include "labkit/conv.h"
#include "labkit/map.h"

namespace labkit::baseline {

void conv_forward_gpu_prolog(const float* host_output, const float* host_input, const float* host_mask,
                             float** device_output, float** device_input, float** device_mask,
                             const ConvShape& shape);
void conv_forward_gpu(float* device_output, const float* device_input, const float* device_mask,
                      const ConvShape& shape);
void conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                             float* device_mask, const ConvShape& shape);

void map_forward_gpu(float* device_data, int dimx, int dimy, int niterations);

inline constexpr ConvOps conv_ops{"baseline", &conv_forward_gpu_prolog, &conv_forward_gpu,
                                  &conv_forward_gpu_epilog};
inline constexpr MapOps map_ops{"baseline", &map_forward_gpu};

}  // namespace labkit::baseline
