// The kernel's file of a two-file course submission (see kernel.cu): the mask lives in this
// file's __constant__ memory, so uploading it and launching are both done here (without
// relocatable device code a __constant__ array is seen only by its own file).
#pragma once

#include <cuda_runtime.h>

constexpr int kMaxMaskFloats = 8192;  // 32 KiB of constant memory: conv2's 3136 floats and every fixture's

void upload_mask(const float* host_mask, int count);
void launch_conv(float* output, const float* input, int Batch, int Map_out, int Channel, int Height, int Width,
                 int K);
