// cudnn_conv.cu — the conv through cuDNN (see cudnn_conv.h).
#include "reference/cudnn_conv.h"

#include <cudnn.h>

#include <stdexcept>
#include <string>

#include "labkit/cuda_check.h"

namespace labkit::cudnn {
namespace {

void check(cudnnStatus_t status, const char* call) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuDNN: ") + call + " failed: " + cudnnGetErrorString(status));
}
#define LABKIT_CUDNN_CHECK(call) check((call), #call)

// The state of the layer between prolog and epilog: the phases' signatures have no room for it.
struct Layer {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo{};
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};
Layer g_layer;

}  // namespace

void conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                             float** device_output, float** device_input, float** device_mask,
                             const ConvShape& s) {
  LABKIT_CUDA_CHECK(cudaMalloc(device_output, s.output_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMalloc(device_input, s.input_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMalloc(device_mask, s.mask_size() * sizeof(float)));
  LABKIT_CUDA_CHECK(cudaMemcpy(*device_input, host_input, s.input_size() * sizeof(float), cudaMemcpyHostToDevice));
  LABKIT_CUDA_CHECK(cudaMemcpy(*device_mask, host_mask, s.mask_size() * sizeof(float), cudaMemcpyHostToDevice));

  Layer& L = g_layer;
  LABKIT_CUDNN_CHECK(cudnnCreate(&L.handle));
  LABKIT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&L.x));
  LABKIT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&L.y));
  LABKIT_CUDNN_CHECK(cudnnCreateFilterDescriptor(&L.w));
  LABKIT_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&L.conv));
  LABKIT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(L.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, s.B, s.C, s.H, s.W));
  LABKIT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(L.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s.M, s.C, s.K, s.K));
  LABKIT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(L.conv, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  LABKIT_CUDNN_CHECK(cudnnSetConvolutionMathType(L.conv, CUDNN_FMA_MATH));
  LABKIT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(L.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, s.B, s.M, s.H_out(), s.W_out()));

  // Measured choice: cuDNN times its candidates on this GPU and this shape.
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  LABKIT_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(L.handle, L.x, L.w, L.conv, L.y,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf));
  int pick = -1;
  for (int i = 0; i < found && pick < 0; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].mathType == CUDNN_FMA_MATH) pick = i;
  }
  if (pick < 0) throw std::runtime_error("cuDNN: no fp32 (FMA) forward algorithm for " + to_string(s));
  L.algo = perf[pick].algo;
  L.workspace_bytes = perf[pick].memory;
  if (L.workspace_bytes > 0) LABKIT_CUDA_CHECK(cudaMalloc(&L.workspace, L.workspace_bytes));
}

void conv_forward_gpu(float* device_output, const float* device_input, const float* device_mask,
                      const ConvShape&) {
  const Layer& L = g_layer;
  const float one = 1.0f, zero = 0.0f;
  LABKIT_CUDNN_CHECK(cudnnConvolutionForward(L.handle, &one, L.x, device_input, L.w, device_mask, L.conv,
                                             L.algo, L.workspace, L.workspace_bytes, &zero, L.y,
                                             device_output));
}

void conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                             float* device_mask, const ConvShape& s) {
  LABKIT_CUDA_CHECK(cudaMemcpy(host_output, device_output, s.output_size() * sizeof(float), cudaMemcpyDeviceToHost));
  LABKIT_CUDA_CHECK(cudaFree(device_output));
  LABKIT_CUDA_CHECK(cudaFree(device_input));
  LABKIT_CUDA_CHECK(cudaFree(device_mask));
  Layer& L = g_layer;
  if (L.workspace) LABKIT_CUDA_CHECK(cudaFree(L.workspace));
  cudnnDestroyConvolutionDescriptor(L.conv);
  cudnnDestroyFilterDescriptor(L.w);
  cudnnDestroyTensorDescriptor(L.y);
  cudnnDestroyTensorDescriptor(L.x);
  cudnnDestroy(L.handle);
  L = Layer{};
}

}  // namespace labkit::cudnn
