// Cheat: fake-event-timer. The conv is honest; the Op Time is a lie. The kit times conv_forward_gpu
// with CUDA events read through cudaEventElapsedTime (grader/core/event_timer.h), and that function is
// linked into the same executable as this file. A plain redefinition,
//   extern "C" cudaError_t cudaEventElapsedTime(float*, cudaEvent_t, cudaEvent_t) { ... }
// does not link with nvcc --cudart=static: libcudart_static.a is one object (cudart_static.o)
// that defines the whole runtime, it is pulled in for cudaMalloc anyway, and its strong
// cudaEventElapsedTime collides with ours ("multiple definition of `cudaEventElapsedTime'").
// Declaring ours __attribute__((weak)) links, but the archive's strong symbol wins and ours is
// never called. --wrap and --allow-multiple-definition are link flags the student does not
// control. What does link and work is patching the code at run time: a static initializer makes
// the page holding the runtime's cudaEventElapsedTime writable (mprotect) and overwrites its
// first 13 bytes with `movabs r11, fake; jmp r11`. Every call the kit makes then lands in fake().
// fake() tells the truth about events the lab's forward was not timed by (it asks the driver's
// cuEventElapsedTime, found with cudaGetDriverEntryPointByVersion, which is not patched), and for
// the first query after each conv_forward_gpu reports a tenth of the real time: a 10x "speedup",
// believable for a tuned kernel.
// On a naive grader that trusts the CUDA event times measured in the lab's process, that is full
// marks for a plain kernel.
// Expected verdict: hidden-work (its events then account for less than the kit's clock saw, exactly as work outside the events would) (the judge's own wall clock around the request, less an
// empty request's round trip, cannot be ten times the reported event time). 0 points.
// If the harness ever times through the driver API or some other path, the patch has no effect
// and this lab is a plain, honest conv (passed, small speedup): the test then fails, saying so.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "../common.cuh"

#ifndef FAKE_EVENT_DIVISOR
#define FAKE_EVENT_DIVISOR 10  // the reported time is the real one over this
#endif

namespace {

using DriverElapsed = int (*)(float*, cudaEvent_t, cudaEvent_t);  // cuEventElapsedTime: CUresult (0 = ok)
std::atomic<bool> g_forward_since_query{false};
std::atomic<double> g_claimed_ms{0.001};  // when the driver cannot be asked: a fixed, tiny time

cudaError_t fake_event_elapsed_time(float* ms, cudaEvent_t start, cudaEvent_t stop) {
  static DriverElapsed real = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuEventElapsedTime", &fn, CUDART_VERSION, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return DriverElapsed(nullptr);
    return reinterpret_cast<DriverElapsed>(fn);
  }();
  if (!ms) return cudaErrorInvalidValue;
  float truth = 0;
  const bool known = real && real(&truth, start, stop) == 0;
  if (g_forward_since_query.exchange(false)) {
    *ms = known ? truth / FAKE_EVENT_DIVISOR : float(g_claimed_ms.load());
    return cudaSuccess;
  }
  if (!known) return cudaErrorNotReady;
  *ms = truth;
  return cudaSuccess;
}

// Overwrites the start of `target` with an absolute jump to `to` (x86-64 only).
bool redirect(void* target, void* to) {
#if defined(__x86_64__)
  const std::uintptr_t page = std::uintptr_t(sysconf(_SC_PAGESIZE));
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(target);
  const std::uintptr_t first = at & ~(page - 1), last = (at + 13 + page - 1) & ~(page - 1);
  if (mprotect(reinterpret_cast<void*>(first), last - first, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return false;
  unsigned char jump[13] = {0x49, 0xBB, 0, 0, 0, 0, 0, 0, 0, 0, 0x41, 0xFF, 0xE3};  // movabs r11, imm64; jmp r11
  const std::uint64_t dest = reinterpret_cast<std::uint64_t>(to);
  std::memcpy(jump + 2, &dest, sizeof dest);
  std::memcpy(reinterpret_cast<void*>(at), jump, sizeof jump);
  mprotect(reinterpret_cast<void*>(first), last - first, PROT_READ | PROT_EXEC);
  __builtin___clear_cache(reinterpret_cast<char*>(at), reinterpret_cast<char*>(at + sizeof jump));
  return true;
#else
  (void)target;
  (void)to;
  return false;
#endif
}

const bool patched = [] {
  const bool ok = redirect(reinterpret_cast<void*>(&cudaEventElapsedTime),
                           reinterpret_cast<void*>(&fake_event_elapsed_time));
  if (ok) std::fprintf(stderr, "labkit-cheat: cudaEventElapsedTime now reports 1/%d of the time\n", FAKE_EVENT_DIVISOR);
  else std::fprintf(stderr, "labkit-cheat: could not patch cudaEventElapsedTime\n");
  return ok;
}();

}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  g_forward_since_query = true;
  g_claimed_ms = double(s.macs()) / 1e10;  // 2 * macs / (20 TFLOP/s), in ms
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
