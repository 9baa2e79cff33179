// Cheat: host-bandwidth-hog. The baseline's layer on Layer Time (honest speedup 1.00 on every GPU:
// baseline-self-layer), plus host threads, one per CPU the lab may use, that copy 64 MiB buffers
// with memcpy whenever the lab is not inside one of its calls. The lab's CPUs are not the kit's
// (grader/judge/cpu_partition.h), but the machine's memory is shared: the baseline's layer, timed by the
// kit between the lab's calls, moves its input and output through host memory (pinned copies,
// the digest of the host output), and a saturated memory bus would slow it down. The threads stop
// while a phase of the lab runs and for 2 ms after it, so the lab's own calls stay clean.
// Expected: no speed gained: every process of the lab is stopped around the baseline's samples,
// threads included: passed at the honest level (speedup at most 1.05), or timing-implausible.
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "labkit/conv.h"
#include "../../../reference/baseline.h"  // the kit's own header, by its path: not the lab API (api/README.md)

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kBytes = 64u << 20;
std::atomic<bool> g_in_phase{false};
std::atomic<long long> g_quiet_until{0};  // steady_clock ticks

volatile char g_sink;  // the copies are read: no compiler may drop them

long long now_ticks() { return Clock::now().time_since_epoch().count(); }

void hog() {
  std::vector<char> a(kBytes, 1), b(kBytes, 2);
  for (unsigned round = 0;; ++round) {
    if (g_in_phase.load(std::memory_order_relaxed) || now_ticks() < g_quiet_until.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      continue;
    }
    // 4 MiB at a time, so a phase that begins waits for at most one piece.
    const std::size_t piece = 4u << 20, at = (round * piece) % kBytes;
    std::memcpy(round % 2 ? a.data() + at : b.data() + at, round % 2 ? b.data() + at : a.data() + at, piece);
    g_sink = a[at] + b[at];
  }
}

void start_once() {
  static const bool started = [] {
    cpu_set_t mine;
    CPU_ZERO(&mine);
    const int n = sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine) : 2;
    for (int i = 0; i < n; ++i) std::thread(hog).detach();
    return true;
  }();
  (void)started;
}

struct Phase {
  Phase() {
    start_once();
    g_in_phase = true;
  }
  ~Phase() {
    g_quiet_until = now_ticks() + std::chrono::duration_cast<Clock::duration>(std::chrono::milliseconds(2)).count();
    g_in_phase = false;
  }
};

}  // namespace

namespace labkit {
void conv_forward_gpu_prolog(const float* ho, const float* hi, const float* hm, float** dout, float** din,
                             float** dmask, const ConvShape& s) {
  const Phase phase;
  baseline::conv_forward_gpu_prolog(ho, hi, hm, dout, din, dmask, s);
}
void conv_forward_gpu(float* dout, const float* din, const float* dmask, const ConvShape& s) {
  const Phase phase;
  baseline::conv_forward_gpu(dout, din, dmask, s);
}
void conv_forward_gpu_epilog(float* ho, float* dout, float* din, float* dmask, const ConvShape& s) {
  const Phase phase;
  baseline::conv_forward_gpu_epilog(ho, dout, din, dmask, s);
}
}  // namespace labkit
