// Cheat: copy-hog-op. copy-hog-layer's code (the baseline's own conv, so that its honest speedup
// is 1.00 on every GPU as baseline-self's is, plus a host thread that keeps the copy engines busy
// with 8 MiB copies whenever the lab is not inside one of its calls), graded on Op Time: there the
// kit's harness times the baseline's conv_forward_gpu between the lab's calls, and the request
// around it (the fresh input written on the device, the digest) shares the GPU with the copies.
// Expected: no speed gained. The lab's processes are stopped around each of the baseline's
// samples and the GPU drained first: passed at the honest level (speedup at most 1.05), or
// timing-implausible if the baseline beside the lab still ran slower than its clean runs allow.
#include "../copy-hog-layer/kernel.cu"
