#include "remote.h"

#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <thread>

#include "grader/protocol/fresh.h"
#include "grader/protocol/host_digest.h"
#include "labkit/check.h"
#include "labkit/cuda_check.h"
#include "labkit/random.h"

namespace labkit::judge {

std::uint64_t host_digest(std::span<const float> data) { return fresh::host_digest(data); }

Snapshot snapshot(std::span<const float> shared) {
  Snapshot s;
  s.values.resize(shared.size());
  const std::size_t threads =
      shared.size() < (1u << 20) ? 1 : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  std::vector<std::uint64_t> part(threads, 0);
  std::vector<std::thread> pool;
  for (std::size_t k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      std::uint64_t acc = 0;
      const std::size_t first = shared.size() * k / threads, last = shared.size() * (k + 1) / threads;
      std::copy(shared.begin() + static_cast<long>(first), shared.begin() + static_cast<long>(last),
                s.values.begin() + static_cast<long>(first));
      for (std::size_t i = first; i < last; ++i) acc += fresh::digest_term(std::bit_cast<std::uint32_t>(s.values[i]), i);
      part[k] = acc;
    });
  for (std::thread& t : pool) t.join();
  for (std::uint64_t p : part) s.digest += p;
  return s;
}

double floor_ms(double macs, double read_bytes, double write_bytes) {
  int device = 0, sms = 0, clock_khz = 0, mem_khz = 0, bus_bits = 0, l2 = 0;
  LABKIT_CUDA_CHECK(cudaGetDevice(&device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  LABKIT_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  // 4096 multiply-adds per SM and clock is twice Hopper's dense fp16 tensor rate: no precision a
  // lab may use is faster. Bytes: double data rate on the bus, with 25% margin.
  const double mac_rate = double(sms) * 4096.0 * clock_khz * 1e3;
  const double compute_ms = mac_rate > 0 ? macs / mac_rate * 1e3 : 0;
  const double bandwidth = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) * 1.25;
  const double bytes = read_bytes + std::max(0.0, write_bytes - double(l2));
  const double memory_ms = bandwidth > 0 ? bytes / bandwidth * 1e3 : 0;
  return std::max(compute_ms, memory_ms);
}

CaseReport check_fresh_conv(const FreshConv& c, std::span<const float> out, Precision precision,
                            std::uint64_t pick_seed, const std::string& name, int samples) {
  const ConvShape& s = c.shape;
  CaseReport rep{name, "timed", to_string(s), false, "", "", 0};
  std::vector<float> mask(s.mask_size());
  for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = fresh::fresh_value(c.mask_seed, i, -0.5f, 0.5f);
  // Every element: the poison and NaN/inf cost one pass (on several threads); the values are
  // checked where sampled. Positions of the first bad ones are found only when there are some.
  std::vector<std::size_t> positions;
  std::size_t unwritten = 0, nonfinite = 0;
  {
    const std::size_t threads = out.size() < (1u << 20) ? 1 : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
    std::vector<std::size_t> u(threads, 0), nf(threads, 0);
    std::vector<std::thread> pool;
    for (std::size_t k = 0; k < threads; ++k)
      pool.emplace_back([&, k] {
        for (std::size_t i = out.size() * k / threads; i < out.size() * (k + 1) / threads; ++i) {
          if (std::bit_cast<std::uint32_t>(out[i]) == 0xFFFFFFFFu) ++u[k];
          else if (!std::isfinite(out[i])) ++nf[k];
        }
      });
    for (std::thread& t : pool) t.join();
    for (std::size_t k = 0; k < threads; ++k) unwritten += u[k], nonfinite += nf[k];
  }
  for (std::size_t i = 0, found = 0; (unwritten || nonfinite) && i < out.size() && found < 2 * check::kMaxReported; ++i)
    if (std::bit_cast<std::uint32_t>(out[i]) == 0xFFFFFFFFu || !std::isfinite(out[i])) {
      positions.push_back(i);
      ++found;
    }
  SplitMix64 rng(pick_seed);
  for (int k = 0; k < samples; ++k) positions.push_back(std::size_t(rng.next() % out.size()));
  positions.push_back(out.size() - 1);
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());

  std::vector<float> got;
  std::vector<double> expected, bound;
  const int ho = s.H_out(), wo = s.W_out();
  for (std::size_t i : positions) {
    const int w = int(i % wo), h = int(i / wo % ho), m = int(i / (std::size_t(wo) * ho) % s.M);
    const std::size_t b = i / (std::size_t(wo) * ho * s.M);
    double acc = 0, mag = 0;
    for (int ch = 0; ch < s.C; ++ch)
      for (int p = 0; p < s.K; ++p)
        for (int q = 0; q < s.K; ++q) {
          const std::size_t xi = ((b * s.C + ch) * s.H + h + p) * s.W + w + q;
          const double x = fresh::fresh_value(c.input_seed, xi, c.lo, c.hi);
          const double wv = mask[((std::size_t(m) * s.C + ch) * s.K + p) * s.K + q];
          acc += x * wv;
          mag += std::fabs(x * wv);
        }
    got.push_back(out[i]);
    expected.push_back(acc);
    bound.push_back(mag);
  }
  check::Result cmp = check::compare(got, expected, bound, check::conv_tolerance(s, precision, std::max(std::fabs(double(c.lo)), std::fabs(double(c.hi))), 0.5));
  for (check::Mismatch& m : cmp.first) m.index = positions[m.index];
  rep.passed = cmp.passed() && unwritten == 0 && nonfinite == 0;
  rep.worst = cmp.worst;
  rep.outcome = check::to_string(cmp.outcome);
  rep.detail = cmp.describe(check::conv_layout(s)) +
               fmt::format("\n    (a timed call with fresh inputs: every element scanned for NaN/inf/poison "
                           "({} never written, {} NaN/inf), {} positions checked against the reference)",
                           unwritten, nonfinite, positions.size());
  return rep;
}

}  // namespace labkit::judge
