// grader/judge/roofline.h — how far a timed shape is from what the GPU can do at all, for the student
// (`labkit grade`'s roofline lines and page, `labkit report --compare`'s "% of floor", its chart).
//
// Contract
//   * Peaks: the device's rated limits, from one table (judge/roofline.cpp); nothing is measured.
//     A board the table names (cudaDeviceProp::name, "NVIDIA H100 80GB HBM3", "NVIDIA H200") gets
//     NVIDIA's datasheet numbers, cited there (tensor peaks dense: half the "with sparsity"
//     figures). Any other device gets peaks computed from its properties and a per-architecture
//     table of lanes per SM: fp32 FMA = SMs x FP32 lanes x peak SM clock; tensor (dense, fp32
//     accumulation; 0 where the table does not know it) = SMs x MACs per SM and clock x clock;
//     memory = 2 (double data rate) x memory clock x bus width; an architecture missing from the
//     table gets 128 FP32 lanes and no tensor peak. `basis` says which, and why.
//   * Precision class (lab.json "precision") picks the compute peak: fp32 -> the fp32 FMA peak;
//     tf32 -> the tf32 tensor peak; fp16 and any -> the fp16 tensor peak (the fastest a lab of that
//     class may use). A tensor peak the table lacks falls back to the FMA peak, so a tensor-core lab
//     there can read above its floor: the share then says the table is wrong, which it is.
//   * Roofline of one timed shape: achieved GFLOP/s (2 FLOP per multiply-add) and GB/s (inputs and
//     output moved once), the fraction of each peak, and the floor = max(compute time at the class's
//     peak, memory time at full bandwidth); `bound` names the longer one. Memory time counts the
//     least any implementation moves through DRAM inside the clock: the inputs read once (the kit
//     pushes them out of the L2 before every timed call) and the output written once, less what the
//     L2 can still hold when the clock stops (a write-back cache: those bytes reach DRAM later).
//   * Share of the floor = floor / time. No implementation reads above 100% unless the peaks are
//     wrong for this GPU; share_text() then says so instead of a percentage.
//   * This floor is the teaching limit. It is not the judge's plausibility bound (judge/remote.h
//     floor_ms, deliberately twice the fastest tensor rate and 1.25x the bandwidth: lower than this
//     floor for every class), under which a time is refused.
#pragma once

#include <string>

namespace labkit::roofline {

struct Peaks {
  double fp32_macs_per_s = 0;     // FMA pipes
  double fp16_tensor_macs_per_s = 0;
  double tf32_tensor_macs_per_s = 0;
  double bytes_per_s = 0;         // device memory (DRAM)
  double l2_bytes = 0;            // the L2's size (the device's property)
  std::string basis;              // where the numbers come from: a datasheet, or the properties
};

// What the CUDA runtime says of a device (cudaDeviceProp).
struct DeviceProps {
  std::string name;
  int cc_major = 0, cc_minor = 0, sms = 0, sm_clock_khz = 0, mem_clock_khz = 0, bus_bits = 0;
  double l2_bytes = 0;
};

// Pure: the table and the arithmetic (unit-tested without a GPU).
Peaks peaks_for(const DeviceProps& d);
// The current device's (throws labkit::CudaError).
Peaks device_peaks();

// Which limit decides a floor.
enum class Bound { fp32_fma, tf32_tensor, fp16_tensor, memory };
// "compute (fp32 FMA peak)", "compute (tf32 tensor peak)", "compute (fp16 tensor peak)", "memory (DRAM bandwidth)".
std::string to_string(Bound b);

// The compute bound of a precision class ("fp32", "fp16", "tf32", "any"), after the fallback above.
Bound compute_bound(const Peaks& p, const std::string& precision);
double compute_peak(const Peaks& p, const std::string& precision);  // multiply-adds per second

struct Roofline {
  double gflops = 0, gbps = 0;                   // achieved (gflops 0 where macs are not counted)
  double pct_fp32 = 0, pct_tensor = -1, pct_memory = 0;  // pct_tensor -1: not applicable
  double compute_ms = 0, memory_ms = 0;          // the two limits at the class's peaks
  double floor_ms = 0;                           // the longer of them
  Bound bound = Bound::memory;                   // which one it is
  double pct_floor = 0;                          // floor / time, in %; 0 without a time
};

// `macs` 0: the workload's arithmetic is not counted (the map lab): memory only. `ms` 0: the
// floor alone (no rates, no shares).
Roofline of(double macs, double read_bytes, double write_bytes, double ms, const Peaks& p, const std::string& precision);

// The share of the floor as every report prints it: "72.0%", or above 100% what that means.
inline constexpr const char* kAboveFloor = "above the floor: the peaks table for this GPU is wrong";
std::string share_text(double pct_floor);

}  // namespace labkit::roofline
