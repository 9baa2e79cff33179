// grader/judge/clocks.h — the SM clock at the moment of measurement.
//
// A speedup measured while the GPU throttles (power, heat) or while another job shares it is not
// the lab's speedup; reports record the SM clock read right after each timed shape, next to the
// peak clock, so an instructor can see it. NVML is loaded at run time (dlopen of the driver's
// libnvidia-ml.so.1): the kit builds without NVML headers, and a machine without NVML reports
// "unavailable" instead of failing.
#pragma once

#include <string>

namespace labkit {

struct SmClock {
  bool available = false;
  int sm_mhz = 0;      // current SM clock
  int max_sm_mhz = 0;  // the maximum SM clock NVML reports
  std::string why;     // when not available
};

SmClock read_sm_clock();  // of the current CUDA device; never throws

}  // namespace labkit
