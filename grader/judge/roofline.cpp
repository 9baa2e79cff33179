// The roofline of a timed shape (grader/judge/roofline.h).
#include "grader/judge/roofline.h"

#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include <algorithm>

#include "labkit/cuda_check.h"

namespace labkit::roofline {
namespace {

// The peaks table. Boards NVIDIA publishes rated numbers for come first, by the name the driver
// reports (the name lab.json's targets_by_gpu uses); NVIDIA prints tensor peaks "with sparsity",
// twice the dense rate a convolution can use, so the table holds half of them.
struct Board {
  const char* name;
  const char* source;
  double fp32_tflops, tf32_tensor_tflops, fp16_tensor_tflops, memory_tbps;
};

constexpr Board kBoards[] = {
    // NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column (nvidia.com/en-us/data-center/h100,
    // "Technical Specifications"): FP32 67 teraFLOPS; TF32 Tensor Core 989 teraFLOPS*; FP16
    // Tensor Core 1,979 teraFLOPS*; GPU memory bandwidth 3.35 TB/s (* with sparsity).
    {"NVIDIA H100 80GB HBM3", "NVIDIA's H100 datasheet (H100 SXM)", 67, 989.0 / 2, 1979.0 / 2, 3.35},
    // NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column (nvidia.com/en-us/data-center/h200,
    // "Technical Specifications"): FP32 67 TFLOPS; TF32 Tensor Core 989 TFLOPS*; FP16 Tensor Core
    // 1,979 TFLOPS*; GPU memory bandwidth 4.8 TB/s (* with sparsity).
    {"NVIDIA H200", "NVIDIA's H200 datasheet (H200 SXM)", 67, 989.0 / 2, 1979.0 / 2, 4.8},
};

// Any other device: per-SM rates from NVIDIA's architecture whitepapers, times its properties.
// GeForce parts of sm_86/89 run fp16 with fp32 accumulation at half these, so their shares of a
// tensor floor read low, never above 100.
struct Arch {
  int major, minor;
  int fp32_lanes;        // FP32 FMA lanes per SM
  int fp16_tensor_macs;  // dense fp16 multiply-adds per SM and clock, fp32 accumulation
  int tf32_tensor_macs;
};

constexpr Arch kArchs[] = {
    {7, 0, 64, 512, 0},     // V100
    {7, 5, 64, 512, 0},     // T4, RTX 20
    {8, 0, 64, 1024, 512},  // A100
    {8, 6, 128, 256, 128},  // A10, RTX 30
    {8, 7, 128, 256, 128},  // Orin
    {8, 9, 128, 256, 128},  // L4, L40S, RTX 40
    {9, 0, 128, 2048, 1024},  // H100, H200 of other boards (PCIe, NVL)
    {10, 0, 128, 4096, 2048},  // B200
    {12, 0, 128, 256, 128},   // RTX 50
};

double tflops_to_macs(double tflops) { return tflops * 1e12 / 2; }

}  // namespace

Peaks peaks_for(const DeviceProps& d) {
  Peaks p;
  p.l2_bytes = d.l2_bytes;
  for (const Board& b : kBoards)
    if (d.name == b.name) {
      p.fp32_macs_per_s = tflops_to_macs(b.fp32_tflops);
      p.tf32_tensor_macs_per_s = tflops_to_macs(b.tf32_tensor_tflops);
      p.fp16_tensor_macs_per_s = tflops_to_macs(b.fp16_tensor_tflops);
      p.bytes_per_s = b.memory_tbps * 1e12;
      p.basis = fmt::format("{}: fp32 FMA {:g}, tf32 tensor {:g}, fp16 tensor {:g} TFLOP/s (dense: half the "
                            "datasheet's sparse figures), memory {:g} TB/s",
                            b.source, b.fp32_tflops, b.tf32_tensor_tflops, b.fp16_tensor_tflops, b.memory_tbps);
      return p;
    }
  const Arch* arch = nullptr;
  for (const Arch& a : kArchs)
    if (a.major == d.cc_major && a.minor == d.cc_minor) arch = &a;
  const int lanes = arch ? arch->fp32_lanes : 128;
  const double clock = double(d.sm_clock_khz) * 1e3;
  p.fp32_macs_per_s = double(d.sms) * lanes * clock;
  p.fp16_tensor_macs_per_s = arch ? double(d.sms) * arch->fp16_tensor_macs * clock : 0;
  p.tf32_tensor_macs_per_s = arch ? double(d.sms) * arch->tf32_tensor_macs * clock : 0;
  p.bytes_per_s = 2.0 * double(d.mem_clock_khz) * 1e3 * (d.bus_bits / 8.0);
  p.basis = fmt::format("sm_{}{}: {} SMs x {} FP32 lanes at {} MHz{}; memory {}-bit at {} MHz (double data rate)",
                        d.cc_major, d.cc_minor, d.sms, lanes, d.sm_clock_khz / 1000,
                        arch ? "" : " (architecture not in the kit's table: 128 lanes assumed, no tensor peak)",
                        d.bus_bits, d.mem_clock_khz / 1000);
  return p;
}

Peaks device_peaks() {
  int device = 0;
  LABKIT_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  LABKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceProps d;
  d.name = prop.name;
  int l2 = 0;
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&d.cc_major, cudaDevAttrComputeCapabilityMajor, device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&d.cc_minor, cudaDevAttrComputeCapabilityMinor, device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&d.bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  d.l2_bytes = l2;
  return peaks_for(d);
}

std::string to_string(Bound b) {
  switch (b) {
    case Bound::fp32_fma: return "compute (fp32 FMA peak)";
    case Bound::tf32_tensor: return "compute (tf32 tensor peak)";
    case Bound::fp16_tensor: return "compute (fp16 tensor peak)";
    case Bound::memory: return "memory (DRAM bandwidth)";
  }
  return "?";
}

Bound compute_bound(const Peaks& p, const std::string& precision) {
  if ((precision == "fp16" || precision == "any") && p.fp16_tensor_macs_per_s > 0) return Bound::fp16_tensor;
  if (precision == "tf32" && p.tf32_tensor_macs_per_s > 0) return Bound::tf32_tensor;
  return Bound::fp32_fma;
}

double compute_peak(const Peaks& p, const std::string& precision) {
  switch (compute_bound(p, precision)) {
    case Bound::fp16_tensor: return p.fp16_tensor_macs_per_s;
    case Bound::tf32_tensor: return p.tf32_tensor_macs_per_s;
    default: return p.fp32_macs_per_s;
  }
}

Roofline of(double macs, double read_bytes, double write_bytes, double ms, const Peaks& p, const std::string& precision) {
  Roofline r;
  const double peak = compute_peak(p, precision);
  r.compute_ms = peak > 0 ? macs / peak * 1e3 : 0;
  const double dram_bytes = read_bytes + std::max(0.0, write_bytes - p.l2_bytes);
  r.memory_ms = p.bytes_per_s > 0 ? dram_bytes / p.bytes_per_s * 1e3 : 0;
  r.floor_ms = std::max(r.compute_ms, r.memory_ms);
  r.bound = r.compute_ms > r.memory_ms ? compute_bound(p, precision) : Bound::memory;
  const double s = ms / 1e3;
  if (s <= 0) return r;
  const double macs_per_s = macs / s, bytes_per_s = (read_bytes + write_bytes) / s;
  r.gflops = 2 * macs_per_s / 1e9;
  r.gbps = bytes_per_s / 1e9;
  if (p.fp32_macs_per_s > 0) r.pct_fp32 = 100 * macs_per_s / p.fp32_macs_per_s;
  const double tensor = precision == "fp16" || precision == "any" ? p.fp16_tensor_macs_per_s
                        : precision == "tf32"                     ? p.tf32_tensor_macs_per_s
                                                                  : 0;
  if (tensor > 0) r.pct_tensor = 100 * macs_per_s / tensor;
  if (p.bytes_per_s > 0) r.pct_memory = 100 * bytes_per_s / p.bytes_per_s;
  r.pct_floor = 100 * r.floor_ms / ms;
  return r;
}

std::string share_text(double pct_floor) {
  return pct_floor > 100 ? std::string(kAboveFloor) : fmt::format("{:.1f}%", pct_floor);
}

}  // namespace labkit::roofline
