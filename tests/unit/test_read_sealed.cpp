// The judge's one read of a harness's output (grader/judge/remote.h read_sealed): the digest is
// the harness's formula over every element, poison (all ones) and NaN/inf are counted apart and
// the first few named in index order, the values at the asked positions come back in their order,
// and the judge's own copy (written with streaming stores where the CPU has them) equals the
// source, whatever the alignment of the copy and wherever the chunks of the threads begin. Each
// build of the block digest this CPU runs (baseline, AVX2, AVX-512) gives the formula's sum.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "grader/judge/digest_block.h"
#include "grader/judge/remote.h"
#include "grader/protocol/fresh.h"
#include "grader/protocol/host_digest.h"

namespace {

std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 9973) * 0.25f - 1000.0f;
  return v;
}

}  // namespace

TEST_CASE("read_sealed: digest, scan, samples and the copy of a multi-threaded read") {
  const std::size_t n = (std::size_t(1) << 21) + 13;  // above one thread's share, not a multiple of 4
  std::vector<float> shared = ramp(n);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::size_t poison_at[] = {5, n / 2 + 1, n - 1};
  for (std::size_t i : poison_at) shared[i] = std::bit_cast<float>(0xFFFFFFFFu);
  shared[7] = nan;
  shared[n / 3] = -inf;
  const std::vector<std::size_t> positions{0, 6, 4096, n / 2, n - 2};

  for (std::size_t skew : {0u, 1u, 2u, 3u}) {  // the copy's start 0, 4, 8, 12 bytes past 16-byte alignment
    CAPTURE(skew);
    std::vector<float> storage(n + 8, 42.0f);
    float* base = storage.data();
    while (reinterpret_cast<std::uintptr_t>(base) % 16 != 0) ++base;
    std::span<float> copy(base + skew, n);
    const labkit::judge::SealedRead r = labkit::judge::read_sealed(shared, positions, copy);

    CHECK(r.digest == labkit::fresh::host_digest(shared));
    CHECK(r.unwritten == 3);
    CHECK(r.nonfinite == 2);
    REQUIRE(r.bad.size() == 5);
    CHECK(r.bad[0].first == 5);
    CHECK(r.bad[1].first == 7);
    CHECK(r.bad[2].first == n / 3);
    CHECK(r.bad[3].first == n / 2 + 1);
    CHECK(r.bad[4].first == n - 1);
    REQUIRE(r.values.size() == positions.size());
    for (std::size_t k = 0; k < positions.size(); ++k)
      CHECK(std::bit_cast<std::uint32_t>(r.values[k]) == std::bit_cast<std::uint32_t>(shared[positions[k]]));
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i) differ += std::bit_cast<std::uint32_t>(copy[i]) != std::bit_cast<std::uint32_t>(shared[i]);
    CHECK(differ == 0);
    if (skew > 0) CHECK(base[skew - 1] == 42.0f);  // nothing written before the copy
    CHECK(base[skew + n] == 42.0f);                // nor after it
  }
}

TEST_CASE("read_sealed: without a copy, and at most max_bad named") {
  std::vector<float> shared(1000, 1.0f);
  for (std::size_t i = 100; i < 200; ++i) shared[i] = std::bit_cast<float>(0xFFFFFFFFu);
  const labkit::judge::SealedRead r = labkit::judge::read_sealed(shared, {}, {}, 4);
  CHECK(r.unwritten == 100);
  CHECK(r.nonfinite == 0);
  REQUIRE(r.bad.size() == 4);
  CHECK(r.bad.front().first == 100);
  CHECK(r.bad.back().first == 103);
  CHECK(r.digest == labkit::fresh::host_digest(shared));
}

TEST_CASE("digest_block: every build this CPU runs gives the formula's sum and count") {
  std::vector<std::uint32_t> block(4096 + 7);
  std::uint64_t x = 0x243F6A8885A308D3ull;
  for (auto& b : block) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    b = static_cast<std::uint32_t>(x >> 32);
  }
  block[3] = 0xFFFFFFFFu;
  block[100] = 0x7F800000u;  // inf
  block[4100] = 0x7FC00001u;  // a NaN
  for (std::size_t len : {std::size_t(0), std::size_t(1), std::size_t(15), std::size_t(4096), block.size()}) {
    const std::size_t first = 123456789;
    std::uint64_t want = 0;
    std::size_t want_bad = 0;
    for (std::size_t j = 0; j < len; ++j) {
      want += labkit::fresh::digest_term(block[j], first + j);
      want_bad += (block[j] & 0x7F800000u) == 0x7F800000u;
    }
    for (labkit::judge::DigestIsa isa : {labkit::judge::DigestIsa::baseline, labkit::judge::DigestIsa::avx2,
                                         labkit::judge::DigestIsa::avx512}) {
      if (!labkit::judge::cpu_runs(isa)) {
        std::size_t bad = 0;
        CHECK_THROWS_AS(labkit::judge::digest_block(isa, block.data(), len, first, bad), std::invalid_argument);
        continue;
      }
      CAPTURE(len);
      CAPTURE(static_cast<int>(isa));
      std::size_t bad = 99;
      CHECK(labkit::judge::digest_block(isa, block.data(), len, first, bad) == want);
      CHECK(bad == want_bad);
    }
    std::size_t bad = 99;
    CHECK(labkit::judge::digest_block(block.data(), len, first, bad) == want);
    CHECK(bad == want_bad);
  }
  CHECK(labkit::judge::cpu_runs(labkit::judge::DigestIsa::baseline));
}
