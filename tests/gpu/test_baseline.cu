// The baseline kernels on every fixture (committed and built), through the same checked runner
// the grader uses: poisoned output, every element compared with the double reference, input and
// mask unchanged.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "labkit/compare.h"
#include "labkit/conv_run.h"
#include "labkit/cuda_check.h"
#include "labkit/device_buffer.h"
#include "labkit/fixtures.h"
#include "reference/baseline.h"

namespace fs = std::filesystem;

namespace {

std::vector<labkit::fixtures::FixtureSet> all_fixture_sets() {
  std::vector<labkit::fixtures::FixtureSet> sets;
  const char* small = std::getenv("LABKIT_FIXTURES");
  const char* large = std::getenv("LABKIT_FIXTURES_LARGE");
  REQUIRE_MESSAGE(small != nullptr, "LABKIT_FIXTURES is not set (run through meson test)");
  REQUIRE_MESSAGE(large != nullptr, "LABKIT_FIXTURES_LARGE is not set (run through meson test)");
  sets.push_back(labkit::fixtures::load(fs::path(small) / "manifest.json"));
  sets.push_back(labkit::fixtures::load(large));
  return sets;
}

// Every mismatch report says where and what: the first bad element, its value and the reference.
void check_matches(const labkit::Comparison& cmp) {
  CAPTURE(cmp.first_bad);
  CAPTURE(cmp.first_got);
  CAPTURE(cmp.first_expected);
  CHECK(cmp.nonfinite == 0);
  CHECK(cmp.passed);
}

}  // namespace

TEST_CASE("baseline conv matches the reference on every fixture") {
  int cases = 0;
  for (const auto& set : all_fixture_sets()) {
    for (const auto& f : set.conv) {
      CAPTURE(f.info.name);
      const auto run = labkit::run_conv_checked(labkit::baseline::conv_ops, f.shape, f.input, f.mask);
      const auto cmp = labkit::compare(run.output, f.expected, 1e-5);
      check_matches(cmp);
      CHECK(run.input_unchanged);
      CHECK(run.mask_unchanged);
      MESSAGE(f.info.name << ": max error " << cmp.max_error);
      ++cases;
    }
  }
  CHECK(cases >= 10);
}

TEST_CASE("baseline map matches the reference on every fixture") {
  int cases = 0;
  for (const auto& set : all_fixture_sets()) {
    for (const auto& f : set.map) {
      CAPTURE(f.info.name);
      labkit::DeviceBuffer<float> data(f.input.size());
      data.upload(f.input);
      labkit::baseline::map_forward_gpu(data.get(), f.dimx, f.dimy, f.niterations);
      LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<float> out = data.download();
      const auto cmp = labkit::compare(out, f.expected, 2e-5);
      check_matches(cmp);
      MESSAGE(f.info.name << ": max error " << cmp.max_error);
      ++cases;
    }
  }
  CHECK(cases >= 5);
}
