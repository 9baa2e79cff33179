// Cheat: copy-hog-layer. An honest layer on Layer Time (lab 10's contract: prolog + conv_forward_gpu
// + epilog, host to host): the baseline's own code, so that its honest speedup is 1.00 on every
// GPU (baseline-self-layer), plus a host thread that keeps the copy engines busy with its own
// 8 MiB copies whenever the lab is not inside one of its calls, at 50% duty (copy_hog.cuh). The
// kit times the baseline's layer between the lab's calls, and that layer's copies go through the
// same engines. Measured on an H100 before the judge stopped the lab for the baseline: the
// 10-streams solution with such a thread passed at 1.40x (25% duty) and 1.44x (50% duty) where it
// alone got 1.31x [1.262, 1.388] (issue 37).
// Expected: no speed gained. Every process of the lab is stopped (SIGSTOP) around each of the
// baseline's samples and the GPU drained of its copies first, so the baseline runs alone:
// passed at the honest level (speedup at most 1.05), or timing-implausible if the baseline beside
// the lab still ran slower than its clean runs allow.
#include "../copy_hog.cuh"
#include "labkit/conv.h"
#include "../../../reference/baseline.h"  // the kit's own header, by its path: not the lab API (api/README.md)

namespace labkit {
void conv_forward_gpu_prolog(const float* ho, const float* hi, const float* hm, float** dout, float** din,
                             float** dmask, const ConvShape& s) {
  const test_lab::CopyHog::Phase phase;
  baseline::conv_forward_gpu_prolog(ho, hi, hm, dout, din, dmask, s);
}
void conv_forward_gpu(float* dout, const float* din, const float* dmask, const ConvShape& s) {
  const test_lab::CopyHog::Phase phase;
  baseline::conv_forward_gpu(dout, din, dmask, s);
}
void conv_forward_gpu_epilog(float* ho, float* dout, float* din, float* dmask, const ConvShape& s) {
  const test_lab::CopyHog::Phase phase;
  baseline::conv_forward_gpu_epilog(ho, dout, din, dmask, s);
}
}  // namespace labkit
