// Cheat: fake-event-timer-half. fake-event-timer's hot patch of cudaEventElapsedTime, reporting
// half of the real time instead of a tenth: a 2x "speedup" of an honest kernel. Aimed at the
// milestone network (`labkit report`), whose Op Time repeats were bounded only by "at least half
// the request time, minus 0.2 ms": half the real time passed that bound for any kernel.
// Expected verdicts: `labkit grade`, hidden-work (0 points); `labkit report --batches 10000`,
// timing-implausible (the request time it does not account for is a few ms).
#define FAKE_EVENT_DIVISOR 2
#include "../fake-event-timer/kernel.cu"
