// 12-tensor-cores — instructor solution.
//
// The kernels, and the design they follow, are in conv_rows_mma.cuh (few maps: pixels in the MMA's
// m dimension), maps_mma.cuh (many maps: maps in m) and warpgroup_mma.cuh (conv2's shape on
// Hopper's wgmma, sm_90a) beside this file; tensor_cores.cuh picks one per shape (13-capstone's
// solution uses it too). Here is the lab's API around them.
//
// Its tuning constants, declared here so that `labkit sweep --solution 12-tensor-cores --param
// NAME=V1,V2,...` can override them (conv_rows_mma.cuh explains each and has the same defaults,
// for the capstone's build):
#ifndef TC_CONV1_ROWS
#define TC_CONV1_ROWS 8  // output rows per strip, M <= 4 (conv1)
#endif
#ifndef TC_CONV2_ROWS
#define TC_CONV2_ROWS 5  // output rows per strip, 4 < M <= 8 (test shapes)
#endif
#ifndef TC_WARPS
#define TC_WARPS 4  // warps per block
#endif
#ifndef TC_SM_WARPS
#define TC_SM_WARPS 16  // warps per SM the registers are budgeted for (16: 128 per thread)
#endif
#ifndef TC_MAPS_ROWS
#define TC_MAPS_ROWS 17  // maps_mma's output rows per work item on conv2 (J)
#endif
#ifndef TC_MAPS_BLOCKS
#define TC_MAPS_BLOCKS (TC_MAPS_ROWS <= 12 ? 4 : 2)  // maps_mma's blocks per SM in __launch_bounds__
#endif
#ifndef TC_TILE_WARPS
#define TC_TILE_WARPS 5  // band_tiles_mma's warps per block (conv1)
#endif
#ifndef TC_TILE_WARP_ITEMS
#define TC_TILE_WARP_ITEMS 1  // band_tiles_mma's warp items per warp and work item
#endif
#ifndef TC_TILE_BLOCKS
#define TC_TILE_BLOCKS 4  // band_tiles_mma's blocks per SM in __launch_bounds__
#endif
#ifndef TC_TILE_STORES
#define TC_TILE_STORES 2  // band_tiles_mma's output: 2 bulk copies from a stage in shared memory (sm_90+), 1 from registers
#endif
#ifndef TC_CONV2_KERNEL
#define TC_CONV2_KERNEL 2  // conv2: 2 warpgroup_mma.cuh (sm_90a GPUs), 1 maps_mma.cuh
#endif
#ifndef TC_WG_GROUPS
#define TC_WG_GROUPS 2  // warpgroup_mma's warpgroups per block
#endif
#ifndef TC_WG_BLOCKS
#define TC_WG_BLOCKS 2  // warpgroup_mma's blocks per SM in __launch_bounds__
#endif
#ifndef TC_WG_SHIFTS
#define TC_WG_SHIFTS 2  // warpgroup_mma's output columns per MMA row: 2 (n = 32: maps x shifts), 1 (n = 16)
#endif
#ifndef TC_STREAM_STORES
#define TC_STREAM_STORES 0  // 1: output stores with st.global.cs
#endif
#include "tensor_cores.cuh"

void labkit::conv_forward_gpu_prolog(const float* host_output, const float* host_input,
                                     const float* host_mask, float** device_output,
                                     float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  (void)host_output;
  tensor_cores::check_shape(shape);
  standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

// The timed region (Op Time).
void labkit::conv_forward_gpu(float* device_output, const float* device_input,
                              const float* device_mask, const ConvShape& shape) {
  tensor_cores::forward(device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
