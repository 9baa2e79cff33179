// Cheat: cpu-hog-layer. cpu-hog's code (an honest conv, host threads spinning on every CPU
// between the lab's calls), graded on Layer Time as 10-streams is: there the baseline's layer
// (pinned copies and kernels) runs in the kit's own harness process between the lab's calls.
// Expected: no speed gained (the kit's harness runs on CPUs the lab's cannot reach); otherwise a
// baseline slowed beside the lab beyond its noise allowance is timing-implausible.
#include "../cpu-hog/kernel.cu"
