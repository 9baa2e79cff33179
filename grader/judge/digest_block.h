// grader/judge/digest_block.h — the judge's digest of one block of an output read back, built for
// the CPU it runs on.
//
// Contract
//   * digest_block(block, len, first, bad): the sum of fresh::digest_term(block[j], first + j)
//     over j < len (mod 2^64), the harness's digest formula; `bad` receives how many of the
//     elements have an all-ones exponent (poison, NaN, inf). Every build gives the same result.
//   * digest_block(isa, ...): the same with one build named, for tests; std::invalid_argument
//     for an `isa` that cpu_runs(isa) says this CPU lacks.
// Why: the digest's two 64-bit multiplies an element are most of the judge's read of an output
// (conv1's 1 GB at batch 10000: 82 ms on 16 threads of an H100 host). SSE2, the x86-64 baseline,
// has no 64-bit vector multiply; AVX2 builds it from 32-bit ones and AVX-512 has one (measured on
// one core: 3.0, 1.7 and 1.2 ns an element).
#pragma once

#include <cstddef>
#include <cstdint>

namespace labkit::judge {

enum class DigestIsa { baseline, avx2, avx512 };

bool cpu_runs(DigestIsa isa);
std::uint64_t digest_block(DigestIsa isa, const std::uint32_t* block, std::size_t len, std::size_t first, std::size_t& bad);
std::uint64_t digest_block(const std::uint32_t* block, std::size_t len, std::size_t first, std::size_t& bad);

}  // namespace labkit::judge
