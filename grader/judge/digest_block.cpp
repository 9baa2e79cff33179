#include "digest_block.h"

#include <stdexcept>

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

namespace {
using Build = std::uint64_t (*)(const std::uint32_t*, std::size_t, std::size_t, std::size_t&);

Build build_of(DigestIsa isa) {
  if (!cpu_runs(isa)) throw std::invalid_argument("digest_block: this CPU cannot run the build asked for");
#if LABKIT_DIGEST_X86
  if (isa == DigestIsa::avx512) return &digest_avx512;
  if (isa == DigestIsa::avx2) return &digest_avx2;
#endif
  return &digest_baseline;
}

// The best build this CPU runs, found once (not per block: the read calls it every 4096 elements).
Build best_build() {
  for (DigestIsa isa : {DigestIsa::avx512, DigestIsa::avx2})
    if (cpu_runs(isa)) return build_of(isa);
  return build_of(DigestIsa::baseline);
}
}  // namespace

std::uint64_t digest_block(DigestIsa isa, const std::uint32_t* block, std::size_t len, std::size_t first, std::size_t& bad) {
  return build_of(isa)(block, len, first, bad);
}

std::uint64_t digest_block(const std::uint32_t* block, std::size_t len, std::size_t first, std::size_t& bad) {
  static const Build best = best_build();
  return best(block, len, first, bad);
}

}  // namespace labkit::judge
