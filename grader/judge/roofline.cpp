// The roofline of a timed shape (labkit/roofline.h).
#include "labkit/roofline.h"

#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include <algorithm>

#include "labkit/cuda_check.h"

namespace labkit::roofline {
namespace {

struct Arch {
  int major, minor;
  int fp32_lanes;        // FP32 FMA lanes per SM
  int fp16_tensor_macs;  // dense fp16 multiply-adds per SM and clock, fp32 accumulation
  int tf32_tensor_macs;
};

// From NVIDIA's architecture whitepapers (per-SM rates; GeForce parts of sm_86/89 run fp16 with
// fp32 accumulation at half these, so their percentages read low, never above 100).
constexpr Arch kArchs[] = {
    {7, 0, 64, 512, 0},     // V100
    {7, 5, 64, 512, 0},     // T4, RTX 20
    {8, 0, 64, 1024, 512},  // A100
    {8, 6, 128, 256, 128},  // A10, RTX 30
    {8, 7, 128, 256, 128},  // Orin
    {8, 9, 128, 256, 128},  // L4, L40S, RTX 40
    {9, 0, 128, 2048, 1024},  // H100, H200
    {10, 0, 128, 4096, 2048},  // B200
    {12, 0, 128, 256, 128},   // RTX 50
};

}  // namespace

Peaks peaks_for(int cc_major, int cc_minor, int sms, int sm_clock_khz, int mem_clock_khz, int bus_bits) {
  const Arch* arch = nullptr;
  for (const Arch& a : kArchs)
    if (a.major == cc_major && a.minor == cc_minor) arch = &a;
  const int lanes = arch ? arch->fp32_lanes : 128;
  const double clock = double(sm_clock_khz) * 1e3;
  Peaks p;
  p.fp32_macs_per_s = double(sms) * lanes * clock;
  p.fp16_tensor_macs_per_s = arch ? double(sms) * arch->fp16_tensor_macs * clock : 0;
  p.tf32_tensor_macs_per_s = arch ? double(sms) * arch->tf32_tensor_macs * clock : 0;
  p.bytes_per_s = 2.0 * double(mem_clock_khz) * 1e3 * (bus_bits / 8.0);
  p.basis = fmt::format("sm_{}{}: {} SMs x {} FP32 lanes at {} MHz{}; memory {}-bit at {} MHz (double data rate)",
                        cc_major, cc_minor, sms, lanes, sm_clock_khz / 1000,
                        arch ? "" : " (architecture not in the kit's table: 128 lanes assumed, no tensor peak)",
                        bus_bits, mem_clock_khz / 1000);
  return p;
}

Peaks device_peaks() {
  int device = 0, major = 0, minor = 0, sms = 0, clock_khz = 0, mem_khz = 0, bus_bits = 0;
  LABKIT_CUDA_CHECK(cudaGetDevice(&device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  return peaks_for(major, minor, sms, clock_khz, mem_khz, bus_bits);
}

double compute_peak(const Peaks& p, const std::string& precision) {
  if ((precision == "fp16" || precision == "any") && p.fp16_tensor_macs_per_s > 0) return p.fp16_tensor_macs_per_s;
  if (precision == "tf32" && p.tf32_tensor_macs_per_s > 0) return p.tf32_tensor_macs_per_s;
  return p.fp32_macs_per_s;
}

Roofline of(double macs, double bytes, double ms, const Peaks& p, const std::string& precision) {
  Roofline r;
  const double s = ms / 1e3;
  if (s <= 0) return r;
  const double macs_per_s = macs / s, bytes_per_s = bytes / s;
  r.gflops = 2 * macs_per_s / 1e9;
  r.gbps = bytes_per_s / 1e9;
  if (p.fp32_macs_per_s > 0) r.pct_fp32 = 100 * macs_per_s / p.fp32_macs_per_s;
  const double tensor = precision == "fp16" || precision == "any" ? p.fp16_tensor_macs_per_s : precision == "tf32" ? p.tf32_tensor_macs_per_s : 0;
  if (tensor > 0) r.pct_tensor = 100 * macs_per_s / tensor;
  if (p.bytes_per_s > 0) r.pct_memory = 100 * bytes_per_s / p.bytes_per_s;
  const double peak = compute_peak(p, precision);
  const double compute_ms = peak > 0 ? macs / peak * 1e3 : 0;
  const double memory_ms = p.bytes_per_s > 0 ? bytes / p.bytes_per_s * 1e3 : 0;
  r.floor_ms = std::max(compute_ms, memory_ms);
  return r;
}

}  // namespace labkit::roofline
