// Cheat: slow-the-layer-baseline. slow-the-baseline's code (an honest conv, then after each phase
// a detached thread that fills every SM with a spinning kernel for up to 20 ms), graded on Layer
// Time as 10-streams is. There the baseline's layer runs in the kit's own harness process between
// the lab's calls (grader/judge/conv_timing.h), so that process's copies and kernels are what the
// spin would slow down.
// Expected: no speed gained: the baseline slowed beside the lab by more than the layer's noise
// allowance is timing-implausible; otherwise the lab grades as the synchronous layer it is
// (speedup about 1).
#include "../slow-the-baseline/kernel.cu"
