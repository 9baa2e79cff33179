// A course submission of the FP16 milestone in the form a student report used: each value is cast
// to __half with __float2half and the products and sums are scalar __hmul and __hadd on __half, one
// row of the K x K window at a time (the row's sum in half, then added into a float, so that the
// 196-term sum does not drift); the output stays float32. No __half2 anywhere: the course asks for
// FP16 arithmetic, the lab (09) for paired arithmetic.
// Expected (evidence suite, the 09 patterns copied in this lab.json; test_lab_spec checks the copy):
// under the general contract missing-evidence (no f16x2), under the course contract the evidence
// holds (mul.f16 / add.f16).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gpu-new-forward.h"

// out[b][m][h][w], in[b][c][h][w], mask[m][c][p][q], all row-major.
#define OUT_4D(b, m, h, w) output[(((size_t)(b) * Map_out + (m)) * H_out + (h)) * W_out + (w)]
#define IN_4D(b, c, h, w) input[(((size_t)(b) * Channel + (c)) * Height + (h)) * Width + (w)]
#define MASK_4D(m, c, p, q) mask[(((size_t)(m) * Channel + (c)) * K + (p)) * K + (q)]

__global__ void conv_half_scalar(float* output, const float* input, const float* mask, int Batch, int Map_out,
                                 int Channel, int Height, int Width, int K) {
  const int H_out = Height - K + 1, W_out = Width - K + 1;
  const size_t total = (size_t)Batch * Map_out * H_out * W_out;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
    const int w = (int)(i % W_out), h = (int)(i / W_out % H_out), m = (int)(i / ((size_t)W_out * H_out) % Map_out);
    const int b = (int)(i / ((size_t)W_out * H_out * Map_out));
    float acc = 0.0f;
    for (int c = 0; c < Channel; ++c)
      for (int p = 0; p < K; ++p) {
        __half row = __float2half(0.0f);
        for (int q = 0; q < K; ++q)
          row = __hadd(row, __hmul(__float2half(IN_4D(b, c, h + p, w + q)), __float2half(MASK_4D(m, c, p, q))));
        acc += __half2float(row);
      }
    OUT_4D(b, m, h, w) = acc;
  }
}

__host__ void GPUInterface::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                                    float** device_output_ptr, float** device_input_ptr,
                                                    float** device_mask_ptr, const int Batch, const int Map_out,
                                                    const int Channel, const int Height, const int Width,
                                                    const int K) {
  const size_t in_n = (size_t)Batch * Channel * Height * Width;
  const size_t out_n = (size_t)Batch * Map_out * (Height - K + 1) * (Width - K + 1);
  const size_t mask_n = (size_t)Map_out * Channel * K * K;
  cudaMalloc((void**)device_input_ptr, in_n * sizeof(float));
  cudaMalloc((void**)device_output_ptr, out_n * sizeof(float));
  cudaMalloc((void**)device_mask_ptr, mask_n * sizeof(float));
  cudaMemcpy(*device_input_ptr, host_input, in_n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(*device_mask_ptr, host_mask, mask_n * sizeof(float), cudaMemcpyHostToDevice);
}

__host__ void GPUInterface::conv_forward_gpu(float* device_output, const float* device_input,
                                             const float* device_mask, const int Batch, const int Map_out,
                                             const int Channel, const int Height, const int Width, const int K) {
  conv_half_scalar<<<1024, 256>>>(device_output, device_input, device_mask, Batch, Map_out, Channel, Height, Width, K);
}

__host__ void GPUInterface::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                                    float* device_mask, const int Batch, const int Map_out,
                                                    const int, const int Height, const int Width, const int K) {
  const size_t out_n = (size_t)Batch * Map_out * (Height - K + 1) * (Width - K + 1);
  cudaMemcpy(host_output, device_output, out_n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(device_output);
  cudaFree(device_input);
  cudaFree(device_mask);
}

__host__ void GPUInterface::get_device_properties() {}
