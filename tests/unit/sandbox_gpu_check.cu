// What test-sandbox runs inside the sandbox as `/labkit/harness --gpu-check` (itself) on a
// machine with NVIDIA device nodes: the driver library, the device nodes, an allocation, a kernel
// and a copy must all work there. Prints "gpu-ok <name>" and returns 0, or names what failed.
#include <cuda_runtime_api.h>

#include <cstdio>

namespace {

__global__ void fill(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 3 * i;
}

}  // namespace

#define CHECK_CUDA(call)                                                                    \
  do {                                                                                      \
    if (const cudaError_t e = (call); e != cudaSuccess) {                                   \
      std::printf("%s failed: %s (%s)\n", #call, cudaGetErrorName(e), cudaGetErrorString(e)); \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

namespace sandbox_test {

int gpu_check() {
  constexpr int n = 1 << 20;
  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, n * sizeof(int)));
  fill<<<(n + 255) / 256, 256>>>(d, n);
  CHECK_CUDA(cudaGetLastError());
  static int h[n];
  CHECK_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(d));
  for (int i = 0; i < n; ++i)
    if (h[i] != 3 * i) {
      std::printf("wrong value at %d: %d\n", i, h[i]);
      return 1;
    }
  std::printf("gpu-ok %s\n", prop.name);
  return 0;
}

}  // namespace sandbox_test
