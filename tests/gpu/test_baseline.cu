// The baseline kernels on every fixture (committed and built), through the same checked runner
// the grader uses: poisoned output, every element compared with the double reference, input and
// mask unchanged.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "grader/judge/check.h"
#include "grader/harness/conv_run.h"
#include "labkit/cuda_check.h"
#include "grader/core/device_buffer.h"
#include "grader/judge/fixtures.h"
#include "reference/baseline.h"
#include "reference/conv_reference.h"

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

// A mismatch report says where and what: the grader's description, first bad elements included.
void check_matches(const labkit::check::Result& cmp, const labkit::check::Layout& layout) {
  CAPTURE(cmp.describe(layout));
  CHECK(cmp.nonfinite == 0);
  CHECK(cmp.passed());
}

}  // namespace

TEST_CASE("baseline conv matches the reference on every fixture") {
  int cases = 0;
  for (const auto& set : all_fixture_sets()) {
    for (const auto& f : set.conv) {
      CAPTURE(f.info.name);
      const auto run = labkit::run_conv_checked(labkit::baseline::conv_ops, f.shape, f.input, f.mask);
      const auto cmp = labkit::check::compare(
          run.output, f.expected, labkit::reference::conv_error_scale_gpu(f.shape, f.input, f.mask),
          labkit::check::conv_tolerance(f.shape, labkit::Precision::fp32, labkit::check::max_abs(f.input),
                                         labkit::check::max_abs(f.mask)));
      check_matches(cmp, labkit::check::conv_layout(f.shape));
      CHECK(run.input_unchanged);
      CHECK(run.mask_unchanged);
      MESSAGE(f.info.name << ": worst error " << cmp.worst << " of allowed");
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
      const auto cmp = labkit::check::compare(out, f.expected, f.expected, labkit::check::map_tolerance());
      check_matches(cmp, labkit::check::map_layout(f.dimx, f.dimy));
      MESSAGE(f.info.name << ": worst error " << cmp.worst << " of allowed");
      ++cases;
    }
  }
  CHECK(cases >= 5);
}
