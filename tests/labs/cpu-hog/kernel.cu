// Cheat: cpu-hog. An honest plain conv, plus host threads (two per CPU of the machine) that spin
// between the lab's own calls. Each first tries to widen its CPU affinity to every CPU. While the
// lab is idle the baseline is being timed (by the judge for Op Time, by the kit's own harness for
// Layer Time): a descheduled baseline thread between its start event and its launch, or in its
// copies, would make the baseline slower and the lab's speedup larger. The spinning stops while
// a lab phase runs and for 2 ms after it, so the lab's own times stay clean.
// On a naive grader (the baseline timed on the same CPUs, beside the lab's process) the speedup
// rises with the slowdown the threads inflict, up to what the interference check allows.
// Expected: no speed gained: the lab's harness runs on CPUs disjoint from the kit's and the
// judge's and cannot leave them (sched_setaffinity fails with EPERM in the sandbox); otherwise a
// baseline slowed beside the lab beyond its noise allowance is timing-implausible.
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "../common.cuh"

namespace {

using Clock = std::chrono::steady_clock;
std::atomic<bool> g_in_phase{false};
std::atomic<long long> g_quiet_until{0};  // steady_clock ticks

long long now_ticks() { return Clock::now().time_since_epoch().count(); }

void spin() {
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
  sched_setaffinity(0, sizeof all, &all);  // EPERM inside the kit's sandbox
  volatile unsigned long long x = 0;
  for (;;) {
    if (g_in_phase.load(std::memory_order_relaxed) || now_ticks() < g_quiet_until.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      continue;
    }
    for (int i = 0; i < 20000; ++i) x = x + 1;
  }
}

void start_hog_once() {
  static const bool started = [] {
    const long n = 2 * sysconf(_SC_NPROCESSORS_CONF);
    for (long i = 0; i < n; ++i) std::thread(spin).detach();
    return true;
  }();
  (void)started;
}

// Marks a lab phase: the hog sleeps from construction until 2 ms after destruction.
struct Phase {
  Phase() {
    start_hog_once();
    g_in_phase = true;
  }
  ~Phase() {
    g_quiet_until = now_ticks() + std::chrono::duration_cast<Clock::duration>(std::chrono::milliseconds(2)).count();
    g_in_phase = false;
  }
};

}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  Phase p;
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  Phase p;
  test_lab::launch(out, in, mask, s, 0, std::size_t(s.B) * s.M * (s.H - s.K + 1) * (s.W - s.K + 1));
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());  // the phase ends when the work has
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  Phase p;
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
