#include "remote.h"

#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <sys/random.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "grader/protocol/chunks.h"
#include "grader/protocol/fresh.h"
#include "grader/judge/check.h"
#include "grader/judge/digest_block.h"
#include "labkit/cuda_check.h"
#include "grader/core/random.h"

namespace labkit::judge {

std::uint64_t secret_draw() {
  std::uint64_t v = 0;
  char* p = reinterpret_cast<char*>(&v);
  std::size_t got = 0;
  while (got < sizeof v) {
    const ssize_t n = ::getrandom(p + got, sizeof v - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(fmt::format("getrandom failed: {}", std::strerror(errno)));
    got += std::size_t(n);
  }
  return v;
}

namespace {
// The judge's own copy of an output (conv1's is 1 GB at batch 10000) is read next by the CPU
// layers, long after it has left every cache: non-temporal stores write it without first reading
// each destination line into the cache, a third of the copy's memory traffic.
void copy_streaming(float* dst, const std::uint32_t* src, std::size_t len) {
  std::size_t j = 0;
#if defined(__SSE2__)
  for (; j < len && reinterpret_cast<std::uintptr_t>(dst + j) % 16 != 0; ++j) dst[j] = std::bit_cast<float>(src[j]);
  for (; j + 4 <= len; j += 4)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + j), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j)));
#endif
  for (; j < len; ++j) dst[j] = std::bit_cast<float>(src[j]);
}

}  // namespace

SealedRead read_sealed(std::span<const float> shared, std::span<const std::size_t> positions,
                       std::span<float> copy_to, std::size_t max_bad) {
  const std::size_t n = shared.size();
  const std::size_t chunks = fresh::chunk_count(n);
  struct Part {
    std::uint64_t digest = 0;
    std::size_t unwritten = 0, nonfinite = 0;
    std::vector<std::pair<std::size_t, float>> bad;
  };
  std::vector<Part> parts(chunks);
  SealedRead r;
  r.values.resize(positions.size());
  const bool copy = !copy_to.empty();
  fresh::for_chunks(n, [&](std::size_t first, std::size_t last, std::size_t k) {
    Part& p = parts[k];
    std::size_t next = std::size_t(std::lower_bound(positions.begin(), positions.end(), first) - positions.begin());
    // Each element is loaded from the shared file exactly once, by the volatile copy into a
    // block on this thread's stack; the digest, the scan and the samples all read that block.
    // (Volatile loads in the checking loop itself kept it from vectorizing: 3x slower.)
    constexpr std::size_t kBlock = 4096;
    std::uint32_t block[kBlock];
    const volatile std::uint32_t* bits = reinterpret_cast<const volatile std::uint32_t*>(shared.data());
    for (std::size_t b0 = first; b0 < last; b0 += kBlock) {
      const std::size_t len = std::min(kBlock, last - b0);
      for (std::size_t j = 0; j < len; ++j) block[j] = bits[b0 + j];
      std::size_t bad = 0;
      p.digest += digest_block(block, len, b0, bad);
      if (copy) copy_streaming(copy_to.data() + b0, block, len);
      for (; next < positions.size() && positions[next] < b0 + len; ++next)
        r.values[next] = std::bit_cast<float>(block[positions[next] - b0]);
      if (bad == 0) continue;
      for (std::size_t j = 0; j < len; ++j) {
        const std::uint32_t b = block[j];
        if ((b & 0x7F800000u) != 0x7F800000u) continue;
        b == 0xFFFFFFFFu ? ++p.unwritten : ++p.nonfinite;
        if (p.bad.size() < max_bad) p.bad.emplace_back(b0 + j, std::bit_cast<float>(b));
      }
    }
#if defined(__SSE2__)
    if (copy) _mm_sfence();  // the streamed stores seen by every thread once this one is joined
#endif
  });
  for (const Part& p : parts) {
    r.digest += p.digest;
    r.unwritten += p.unwritten;
    r.nonfinite += p.nonfinite;
    for (const auto& b : p.bad)
      if (r.bad.size() < max_bad) r.bad.push_back(b);
  }
  return r;
}

std::vector<std::size_t> pick_positions(std::size_t n, std::uint64_t seed, int samples) {
  std::vector<std::size_t> positions;
  if (n == 0) return positions;
  SplitMix64 rng(seed);
  for (int k = 0; k < samples; ++k) positions.push_back(std::size_t(rng.next() % n));
  positions.push_back(n - 1);
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  return positions;
}

void record_call_costs(GradeResult& result, const RemoteLog& log) {
  const std::pair<const char*, double> parts[] = {{"prepare (fresh inputs, prolog)", log.prepare_ms},
                                                  {"L2 flush", log.flush_ms},
                                                  {"timed request", log.run_ms},
                                                  {"finish (epilog, output)", log.finish_ms},
                                                  {"judge's check", log.check_ms}};
  for (const auto& [name, ms] : parts) result.phases.emplace_back(fmt::format("  lab calls: {}", name), ms / 1e3);
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

CaseReport check_fresh_conv(const FreshConv& c, const SealedRead& out, std::span<const std::size_t> positions,
                            Precision precision, const std::string& name) {
  const ConvShape& s = c.shape;
  CaseReport rep{name, "timed", to_string(s), false, "", "", 0};
  std::vector<float> mask(s.mask_size());
  for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = fresh::fresh_value(c.mask_seed, i, -0.5f, 0.5f);
  // The first bad elements found by the scan are reported with the sampled ones.
  std::vector<std::pair<std::size_t, float>> checked = out.bad;
  for (std::size_t k = 0; k < positions.size(); ++k) checked.emplace_back(positions[k], out.values[k]);
  std::sort(checked.begin(), checked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  checked.erase(std::unique(checked.begin(), checked.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
                checked.end());

  std::vector<float> got;
  std::vector<double> expected, bound;
  const int ho = s.H_out(), wo = s.W_out();
  for (const auto& [i, value] : checked) {
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
    got.push_back(value);
    expected.push_back(acc);
    bound.push_back(mag);
  }
  check::Result cmp = check::compare(got, expected, bound, check::conv_tolerance(s, precision, std::max(std::fabs(double(c.lo)), std::fabs(double(c.hi))), 0.5));
  for (check::Mismatch& m : cmp.first) m.index = checked[m.index].first;
  rep.passed = cmp.passed() && out.unwritten == 0 && out.nonfinite == 0;
  rep.worst = cmp.worst;
  rep.outcome = check::to_string(cmp.outcome);
  rep.detail = cmp.describe(check::conv_layout(s)) +
               fmt::format("\n    (a timed call with fresh inputs; on Op Time, written into the device input just "
                           "before conv_forward_gpu, so an output computed in the prolog or kept from an earlier "
                           "call fails. Every element scanned for NaN/inf/poison "
                           "({} never written, {} NaN/inf), {} positions checked against the reference)",
                           out.unwritten, out.nonfinite, checked.size());
  return rep;
}

}  // namespace labkit::judge
