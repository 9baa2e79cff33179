#include "digest_block.h"

#include "grader/protocol/fresh.h"

namespace labkit::judge {

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
#define LABKIT_DIGEST_X86 1
#define LABKIT_TARGET(isa) __attribute__((target(isa)))
#else
#define LABKIT_DIGEST_X86 0
#define LABKIT_TARGET(isa)
#endif

// One loop, compiled into each build below (inlined there, vectorized for that build's ISA).
[[gnu::always_inline]] inline std::uint64_t digest_loop(const std::uint32_t* block, std::size_t len, std::size_t first,
                                                        std::size_t& bad) {
  std::uint64_t digest = 0;
  std::size_t exponent_ones = 0;
  for (std::size_t j = 0; j < len; ++j) {
    digest += fresh::digest_term(block[j], first + j);
    // Poison (all ones) is a NaN pattern: one exponent test finds poison, NaN and inf.
    exponent_ones += (block[j] & 0x7F800000u) == 0x7F800000u;
  }
  bad = exponent_ones;
  return digest;
}

std::uint64_t digest_baseline(const std::uint32_t* b, std::size_t len, std::size_t first, std::size_t& bad) {
  return digest_loop(b, len, first, bad);
}
#if LABKIT_DIGEST_X86
LABKIT_TARGET("avx2")
std::uint64_t digest_avx2(const std::uint32_t* b, std::size_t len, std::size_t first, std::size_t& bad) {
  return digest_loop(b, len, first, bad);
}
LABKIT_TARGET("avx512f,avx512dq,avx512vl,avx512bw")
std::uint64_t digest_avx512(const std::uint32_t* b, std::size_t len, std::size_t first, std::size_t& bad) {
  return digest_loop(b, len, first, bad);
}
#endif

DigestIsa best_isa() {
  if (cpu_runs(DigestIsa::avx512)) return DigestIsa::avx512;
  if (cpu_runs(DigestIsa::avx2)) return DigestIsa::avx2;
  return DigestIsa::baseline;
}

}  // namespace

bool cpu_runs(DigestIsa isa) {
#if LABKIT_DIGEST_X86
  switch (isa) {
    case DigestIsa::baseline: return true;
    case DigestIsa::avx2: return __builtin_cpu_supports("avx2");
    case DigestIsa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  }
  return false;
#else
  return isa == DigestIsa::baseline;
#endif
}

std::uint64_t digest_block(DigestIsa isa, const std::uint32_t* block, std::size_t len, std::size_t first, std::size_t& bad) {
#if LABKIT_DIGEST_X86
  if (isa == DigestIsa::avx512 && cpu_runs(isa)) return digest_avx512(block, len, first, bad);
  if (isa == DigestIsa::avx2 && cpu_runs(isa)) return digest_avx2(block, len, first, bad);
#endif
  return digest_baseline(block, len, first, bad);
}

std::uint64_t digest_block(const std::uint32_t* block, std::size_t len, std::size_t first, std::size_t& bad) {
  static const DigestIsa best = best_isa();
  return digest_block(best, block, len, first, bad);
}

}  // namespace labkit::judge
