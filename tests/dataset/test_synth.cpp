// The synthetic image set (datasets/synth.h): determinism across calls and thread counts,
// balance, pixel range, independence of seeds and splits, and a golden checksum.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <set>
#include <string>

#include "datasets/synth.h"
#include "grader/network/dataset.h"

namespace ds = labkit::datasets;
using labkit::ImageSet;

namespace {

constexpr std::size_t kPixels = std::size_t(labkit::kImageSetSide) * labkit::kImageSetSide;

// FNV-1a of one image, to compare images across sets.
std::uint64_t image_hash(const ImageSet& s, int i) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (std::size_t k = 0; k < kPixels; ++k) h = (h ^ s.images[std::size_t(i) * kPixels + k]) * 0x100000001B3ull;
  return h;
}

}  // namespace

TEST_CASE("same seed, same bytes, for every thread count") {
  const ImageSet a = ds::generate(64, ds::kTestSeed, 1);
  const ImageSet b = ds::generate(64, ds::kTestSeed, 2);
  const ImageSet c = ds::generate(64, ds::kTestSeed, 5);
  CHECK(a.images == b.images);
  CHECK(a.labels == b.labels);
  CHECK(a.images == c.images);
  CHECK(labkit::checksum_hex(a) == labkit::checksum_hex(ds::generate(64, ds::kTestSeed, 1)));
}

TEST_CASE("a shorter set is a prefix of a longer one") {
  const ImageSet a = ds::generate(23, ds::kTrainSeed, 2);
  const ImageSet b = ds::generate(100, ds::kTrainSeed, 2);
  CHECK(labkit::checksum_hex(a) == labkit::checksum_hex(b.first(23)));
}

TEST_CASE("golden checksum of the first 16 test images") {
  // If this fails, the generator's output changed: bump kGeneratorVersion in datasets/synth.h,
  // retrain the committed model (datasets/model/README.md) and update this checksum.
  const ImageSet s = ds::generate(16, ds::kTestSeed, 2);
  CHECK(labkit::checksum_hex(s) == "e0ca40ea85117548");
}

TEST_CASE("labels are balanced and pixels span the byte range") {
  const ImageSet s = ds::generate(2000, ds::kTestSeed);
  REQUIRE(s.n == 2000);
  REQUIRE(s.images.size() == 2000 * kPixels);
  std::array<int, labkit::kImageSetClasses> count{};
  for (auto l : s.labels) {
    REQUIRE(l < labkit::kImageSetClasses);
    ++count[l];
  }
  for (int c = 0; c < labkit::kImageSetClasses; ++c) {
    INFO("class " << c << " (" << ds::class_name(c) << ")");
    CHECK(count[c] == 200);  // one permutation of 0..9 per block of ten
  }
  const auto [lo, hi] = std::minmax_element(s.images.begin(), s.images.end());
  CHECK(*lo == 0);
  CHECK(*hi == 255);
  // Not mostly clipped: the middle of the range holds most pixels.
  const auto mid = std::count_if(s.images.begin(), s.images.end(), [](auto v) { return v > 10 && v < 245; });
  CHECK(double(mid) / double(s.images.size()) > 0.8);
  // Every image has contrast (no blank image).
  for (int i = 0; i < s.n; ++i) {
    const auto first = s.images.begin() + std::ptrdiff_t(i * kPixels);
    const auto [a, b] = std::minmax_element(first, first + std::ptrdiff_t(kPixels));
    INFO("image " << i);
    CHECK(int(*b) - int(*a) > 40);
  }
}

TEST_CASE("different seeds and the two splits give different images") {
  const ImageSet a = ds::generate(10, 1), b = ds::generate(10, 2);
  CHECK(labkit::checksum_hex(a) != labkit::checksum_hex(b));
  CHECK(a.images != b.images);

  const ImageSet test = ds::generate(500, ds::kTestSeed), train = ds::generate(500, ds::kTrainSeed);
  std::set<std::uint64_t> test_hashes;
  for (int i = 0; i < test.n; ++i) test_hashes.insert(image_hash(test, i));
  CHECK(test_hashes.size() == std::size_t(test.n));  // no duplicate inside a split either
  for (int i = 0; i < train.n; ++i) {
    INFO("training image " << i);
    CHECK(test_hashes.count(image_hash(train, i)) == 0);
  }
}

TEST_CASE("class names") {
  std::set<std::string> names;
  for (int c = 0; c < labkit::kImageSetClasses; ++c) names.insert(std::string(ds::class_name(c)));
  CHECK(names.size() == 10);
  CHECK(ds::class_name(0) == "disk");
  CHECK_THROWS_AS(ds::class_name(10), std::out_of_range);
  CHECK_THROWS_AS(ds::class_name(-1), std::out_of_range);
  CHECK_THROWS_AS(ds::generate(-1, 1), std::invalid_argument);
  CHECK(ds::generate(0, 1).n == 0);
}
