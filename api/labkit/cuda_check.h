// labkit/cuda_check.h — CUDA error checks that say where and what.
//
//   LABKIT_CUDA_CHECK(cudaMalloc(&p, bytes));   // throws labkit::CudaError on failure
//   kernel<<<grid, block>>>(...);
//   LABKIT_CUDA_CHECK_LAUNCH();                  // launch-configuration errors, right away
//
// The message names the file and line, the call as written, and CUDA's name and description of
// the error, e.g.
//   labs/03-tiling/kernel.cu:57: cudaMemcpy(...) failed: cudaErrorIllegalAddress
//   (an illegal memory access was encountered)
// Errors are thrown, not printed-and-exited, so the grader can turn them into a verdict.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace labkit {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const char* file, int line, const char* call)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                           " failed: " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")"),
        code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

inline void cuda_check(cudaError_t code, const char* file, int line, const char* call) {
  if (code != cudaSuccess) throw CudaError(code, file, line, call);
}

// True when a CUDA device can be used. Without a driver or a device the runtime reports an error
// here; callers turn that into "skip" (exit code 77), never into a failure.
inline bool cuda_device_available() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return false;
  }
  return count > 0;
}

}  // namespace labkit

#define LABKIT_CUDA_CHECK(call) ::labkit::cuda_check((call), __FILE__, __LINE__, #call)
#define LABKIT_CUDA_CHECK_LAUNCH() \
  ::labkit::cuda_check(cudaGetLastError(), __FILE__, __LINE__, "kernel launch")
