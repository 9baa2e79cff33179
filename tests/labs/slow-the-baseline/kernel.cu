// Cheat: slow-the-baseline. The conv itself is honest; the cheat is aimed at the baseline, which the
// grader times between the lab's calls. Each phase (prolog, forward, epilog) ends by waking a
// detached host thread; once the phase's own work has finished and the grader had half a
// millisecond to sync, take its digest and reply, that thread launches a kernel that fills every
// SM and spins for up to 20 ms on its own non-blocking stream. The GPU is time-sliced between
// processes, so whatever the grader runs meanwhile (the baseline's samples) runs slower. The spin
// ends early as soon as the lab's next phase starts (it polls a counter in mapped host memory), so
// the lab's own calls never wait for it.
// On a naive grader that times the baseline in its own process beside the live lab process and
// trusts the ratio, the baseline looks several times slower: a large "speedup", full marks.
// Expected: no speed gained. The judge times the baseline in its own process, and also with no
// harness alive before and after; a baseline slowed by more than 10% beside the lab is
// timing-implausible. Measured on an H100, this spin slowed the baseline by under 2% (0.5217 vs
// 0.5123 ms clean): the lab then grades as the plain conv it is (passed, 0.77x, correctness only).
// Since Op Time calls refill their input inside the timed request, a spin launched after the
// prolog still fills every SM when the refill's kernel wants to run: the refill waits for it,
// inside the judge's clock, and the grade can be hidden-work (0 points) instead.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "../common.cuh"

namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Busy on every thread until *generation moves on from `mine` or `max_ns` have passed.
__global__ void occupy(const volatile unsigned* generation, unsigned mine, unsigned long long max_ns,
                       float* sink) {
  __shared__ int stop;
  const unsigned long long t0 = global_ns();
  float x = threadIdx.x;
  for (;;) {
    for (int j = 0; j < 512; ++j) x = fmaf(x, 0.9999f, 0.5f);
    if (threadIdx.x == 0) stop = *generation != mine || global_ns() - t0 > max_ns;
    __syncthreads();
    const bool done = stop;
    __syncthreads();
    if (done) break;
  }
  if (x == -1.0f) *sink = x;  // never true: keeps the arithmetic
}

struct Spinner {
  volatile unsigned* generation = nullptr;  // mapped host memory: the kernel sees every bump
  float* sink = nullptr;
  cudaEvent_t phase_done = nullptr;
  int blocks = 0;
  std::mutex m;
  std::condition_variable cv;
  bool requested = false, quit = false, exited = false;
  unsigned requested_generation = 0;

  void start() {
    LABKIT_CUDA_CHECK(cudaHostAlloc(const_cast<unsigned**>(&generation), sizeof(unsigned), cudaHostAllocMapped));
    *generation = 1;
    LABKIT_CUDA_CHECK(cudaMalloc(&sink, sizeof(float)));
    LABKIT_CUDA_CHECK(cudaEventCreateWithFlags(&phase_done, cudaEventDisableTiming));
    int device = 0, sms = 0;
    LABKIT_CUDA_CHECK(cudaGetDevice(&device));
    LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    blocks = 8 * sms;  // 8 blocks of 256 threads: every SM full
    std::thread([this] { run(); }).detach();
    std::atexit([] { instance().stop_thread(); });
  }

  // A phase of the lab begins: any spin stops within microseconds.
  void phase_begins() {
    if (!generation) start();
    *generation = *generation + 1;
  }

  // A phase ends: spin once its work is done and the grader has moved on.
  void phase_ends() {
    LABKIT_CUDA_CHECK(cudaEventRecord(phase_done, nullptr));
    std::lock_guard<std::mutex> lock(m);
    requested = true;
    requested_generation = *generation;
    cv.notify_one();
  }

  void run() {
    cudaStream_t stream;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return;
    std::unique_lock<std::mutex> lock(m);
    for (;;) {
      cv.wait(lock, [this] { return requested || quit; });
      if (quit) break;
      requested = false;
      const unsigned mine = requested_generation;
      lock.unlock();
      cudaEventSynchronize(phase_done);
      std::this_thread::sleep_for(std::chrono::microseconds(500));
      if (*generation == mine) occupy<<<blocks, 256, 0, stream>>>(generation, mine, 20'000'000ull, sink);
      lock.lock();
    }
    exited = true;
    cv.notify_all();
  }

  // At exit: no launch may race the CUDA runtime's own teardown.
  void stop_thread() {
    if (generation) *generation = *generation + 1;
    std::unique_lock<std::mutex> lock(m);
    quit = true;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::milliseconds(200), [this] { return exited; });
  }

  static Spinner& instance() {
    static Spinner* s = new Spinner;  // never destroyed: the detached thread may outlive statics
    return *s;
  }
};

}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  Spinner::instance().phase_begins();
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
  Spinner::instance().phase_ends();
}

void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  Spinner::instance().phase_begins();
  test_lab::launch(out, in, mask, s, 0, s.output_size());
  Spinner::instance().phase_ends();
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  Spinner::instance().phase_begins();
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
  Spinner::instance().phase_ends();
}
