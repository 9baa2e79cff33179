// labkit/roofline.h — how far a timed shape is from what the GPU can do at all, for the student
// (`labkit grade`'s roofline lines, `labkit report --compare`'s "% of floor").
//
// Contract
//   * Peaks: the device's rated limits, computed from its properties (SMs, peak SM clock, memory
//     clock and bus width) and a per-architecture table of lanes per SM; nothing is measured.
//     fp32 FMA: SMs x FP32 lanes x clock. Tensor (dense, fp32 accumulation; 0 where the
//     architecture has none or the table does not know it): SMs x MACs per SM and clock x clock.
//     Memory: 2 (double data rate) x memory clock x bus width. An architecture missing from the
//     table gets 128 FP32 lanes and no tensor peak, and `basis` says so.
//   * Roofline: one timed shape against the peaks: achieved GFLOP/s (2 FLOP per multiply-add)
//     and GB/s (inputs and output moved once: the least any implementation moves), the fraction
//     of each peak, and the floor: max(compute at the precision's peak, bytes at full bandwidth).
//     fp32 labs are held to the FMA peak; fp16 and tf32 to the tensor peak where there is one.
//   * This floor is the teaching limit. It is not the judge's plausibility bound (judge/remote.h
//     floor_ms, deliberately twice the fastest tensor rate), under which a time is refused.
#pragma once

#include <string>

namespace labkit::roofline {

struct Peaks {
  double fp32_macs_per_s = 0;     // FMA pipes
  double fp16_tensor_macs_per_s = 0;
  double tf32_tensor_macs_per_s = 0;
  double bytes_per_s = 0;         // device memory
  std::string basis;              // "sm_90: 132 SMs x 128 FP32 lanes at 1980 MHz; ..."
};

// Pure: the table and the arithmetic (unit-tested without a GPU).
Peaks peaks_for(int cc_major, int cc_minor, int sms, int sm_clock_khz, int mem_clock_khz, int bus_bits);
// The current device's (throws labkit::CudaError).
Peaks device_peaks();

// Which peak bounds the arithmetic of a lab of this precision ("fp32", "fp16", "tf32"; "any": fp16's).
double compute_peak(const Peaks& p, const std::string& precision);

struct Roofline {
  double gflops = 0, gbps = 0;                   // achieved (gflops 0 where macs are not counted)
  double pct_fp32 = 0, pct_tensor = -1, pct_memory = 0;  // pct_tensor -1: not applicable
  double floor_ms = 0;                           // the shape's roofline floor at the lab's precision
};

// `macs` 0: the workload's arithmetic is not counted (the map lab): memory only.
Roofline of(double macs, double bytes, double ms, const Peaks& p, const std::string& precision);

}  // namespace labkit::roofline
