// grader/core/device_buffer.h — an owned device array, for the kit's own code (students' kernels
// use cudaMalloc/cudaFree in their prolog and epilog, as the course does).
//
//   DeviceBuffer<float> d(n);     // cudaMalloc of n floats; freed when d goes out of scope
//   d.upload(host);               // host.size() must equal n
//   std::vector<float> h = d.download();
//   d.poison();                   // every byte 0xFF: NaN for float and double
// Failures throw labkit::CudaError (std::invalid_argument for a size mismatch).
#pragma once

#include <cuda_runtime.h>

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/cuda_check.h"

namespace labkit {

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) { LABKIT_CUDA_CHECK(cudaMalloc(&ptr_, bytes())); }
  ~DeviceBuffer() { cudaFree(ptr_); }  // a destructor must not throw
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

  void upload(std::span<const T> host) {
    if (host.size() != n_)
      throw std::invalid_argument("DeviceBuffer::upload: " + std::to_string(host.size()) +
                                  " elements into a buffer of " + std::to_string(n_));
    LABKIT_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    LABKIT_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  void poison() { LABKIT_CUDA_CHECK(cudaMemset(ptr_, 0xFF, bytes())); }

 private:
  T* ptr_ = nullptr;
  std::size_t n_;
};

}  // namespace labkit
