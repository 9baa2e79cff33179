// copy_hog.cuh — the copy-engine hog of the copy-hog-* test labs (tests/labs/copy-hog-*): a host
// thread of the lab's process that, whenever the lab is not inside one of its calls, keeps the
// GPU's copy engines busy with its own 8 MiB copies (host to device and device to host at once,
// pinned memory, streams of its own), half of the time (copies for as long as the last round
// took, then as long idle: the duty at which the issue's cheat passed unseen). Not a lab: this
// folder has no kernel.cu.
//
// Each phase of the lab is bracketed: Phase's constructor stops the hog and waits for its copies
// in flight (at most one round, under a millisecond), its destructor lets it copy again once the
// phase's work has finished on the device and the kit has had half a millisecond to synchronize
// and reply. Between the lab's calls the kit times the baseline, whose layer (Layer Time) copies
// through the same engines: a naive grader sees a slower baseline and a larger speedup.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <cuda_runtime.h>

#include "labkit/cuda_check.h"

namespace test_lab {

class CopyHog {
 public:
  static constexpr std::size_t kBytes = 8u << 20;

  static CopyHog& instance() {
    static CopyHog* h = new CopyHog;  // never destroyed: the detached thread may outlive statics
    return *h;
  }

  void phase_begins() {
    if (!started_) start();
    {
      std::lock_guard<std::mutex> lock(m_);
      inside_ = true;
    }
    // Nothing new is enqueued from here on; what is in flight finishes first.
    LABKIT_CUDA_CHECK(cudaStreamSynchronize(up_));
    LABKIT_CUDA_CHECK(cudaStreamSynchronize(down_));
  }

  void phase_ends() {
    cudaEventRecord(phase_done_, nullptr);
    std::lock_guard<std::mutex> lock(m_);
    inside_ = false;
    ++generation_;
  }

  struct Phase {
    Phase() { instance().phase_begins(); }
    ~Phase() { instance().phase_ends(); }
  };

 private:
  void start() {
    LABKIT_CUDA_CHECK(cudaHostAlloc(&host_, 2 * kBytes, cudaHostAllocDefault));
    LABKIT_CUDA_CHECK(cudaMalloc(&device_, 2 * kBytes));
    LABKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&up_, cudaStreamNonBlocking));
    LABKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&down_, cudaStreamNonBlocking));
    LABKIT_CUDA_CHECK(cudaEventCreateWithFlags(&phase_done_, cudaEventDisableTiming));
    started_ = true;
    std::thread([this] { run(); }).detach();
    std::atexit([] { instance().quit_ = true; });
  }

  void run() {
    using Clock = std::chrono::steady_clock;
    unsigned seen = 0;
    while (!quit_) {
      unsigned generation;
      {
        std::lock_guard<std::mutex> lock(m_);
        generation = generation_;
      }
      if (generation != seen) {
        // A phase just ended: let its work finish and the kit reply before the engines fill.
        cudaEventSynchronize(phase_done_);
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        seen = generation;
      }
      const auto t0 = Clock::now();
      bool copying = false;
      {
        std::lock_guard<std::mutex> lock(m_);
        if (!inside_ && !quit_ && generation_ == seen) {
          char* h = static_cast<char*>(host_);
          char* d = static_cast<char*>(device_);
          cudaMemcpyAsync(d, h, kBytes, cudaMemcpyHostToDevice, up_);
          cudaMemcpyAsync(h + kBytes, d + kBytes, kBytes, cudaMemcpyDeviceToHost, down_);
          copying = true;
        }
      }
      if (!copying) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        continue;
      }
      cudaStreamSynchronize(up_);
      cudaStreamSynchronize(down_);
      std::this_thread::sleep_for(Clock::now() - t0);  // 50% duty
    }
  }

  std::mutex m_;
  bool inside_ = false;
  unsigned generation_ = 0;
  std::atomic<bool> quit_{false};
  bool started_ = false;
  void* host_ = nullptr;
  void* device_ = nullptr;
  cudaStream_t up_ = nullptr, down_ = nullptr;
  cudaEvent_t phase_done_ = nullptr;
};

}  // namespace test_lab
