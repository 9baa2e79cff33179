// Cheat: stale-output. conv_forward_gpu computes only on the first call of each shape; later
// calls of that shape return at once and rely on cudaMalloc handing the prolog the same memory
// again, memory that still holds the result of the first call (cudaFree does not clear it, and a
// freed block of the same size comes back at the same address).
// On a naive grader that checks each shape once (the first call, computed) and then times calls
// whose outputs it never reads, or re-runs the same input, the checked output is right and every
// timed call costs nothing: full marks and an absurd speedup. It allocates no memory of its own, so
// no device-memory accounting sees it.
// Expected verdict: incorrect (every timed call gets fresh input, the output is poisoned or at
// best holds an older result, and the judge checks every timed call's output). 0 points.
#include <vector>

#include "../common.cuh"

namespace {
std::vector<labkit::ConvShape> g_seen;

bool seen_before(const labkit::ConvShape& s) {
  for (const labkit::ConvShape& t : g_seen)
    if (t.B == s.B && t.M == s.M && t.C == s.C && t.H == s.H && t.W == s.W && t.K == s.K) return true;
  g_seen.push_back(s);
  return false;
}
}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  if (seen_before(s)) return;  // "the output is still there from last time"
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
