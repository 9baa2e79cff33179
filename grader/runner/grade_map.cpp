// Grading a map (elementwise) lab: correctness on fixtures, fresh random shapes (dimx not a
// multiple of 4 among them) and sampled rows of the timed workload, then Op Time against the
// baseline. The data is updated in place, so it cannot be poisoned; it does not need to be:
// every iteration moves every value by at least 1 (reference/map_workload.h), so an element the
// lab skipped is always wrong.
#include <cuda_profiler_api.h>
#include <fmt/core.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "guard.h"
#include "labkit/check.h"
#include "labkit/clocks.h"
#include "labkit/cuda_check.h"
#include "labkit/device_buffer.h"
#include "labkit/fixtures.h"
#include "labkit/phase.h"
#include "labkit/random.h"
#include "reference/baseline.h"
#include "reference/map_workload.h"
#include "runner.h"

namespace labkit::runner {
namespace {

struct MapCase {
  std::string name, origin;
  int dimx = 0, dimy = 0, niterations = 0;
  std::vector<float> input;
  std::vector<double> expected;  // empty: computed for the checked rows only
};

std::string shape_of(const MapCase& c) {
  return fmt::format("dimx={} dimy={} niterations={}", c.dimx, c.dimy, c.niterations);
}

MapCase random_case(const std::string& name, const std::string& origin, int dimx, int dimy,
                    int niterations, std::uint64_t seed) {
  MapCase c{name, origin, dimx, dimy, niterations, std::vector<float>(std::size_t(dimx) * dimy), {}};
  fill_uniform(c.input, kMapInputMin, kMapInputMax, seed_for(seed, name));
  return c;
}

// Rows checked against the CPU reference: all of them for small cases; for the timed workload
// (67 M elements, too many for a double-precision CPU pass) 64 rows spread over the matrix plus
// the first and the last. Rows are independent, so a sampled row is checked exactly.
std::vector<std::size_t> checked_rows(int dimy) {
  std::vector<std::size_t> rows;
  if (dimy <= 66) {
    for (int r = 0; r < dimy; ++r) rows.push_back(r);
    return rows;
  }
  for (int i = 0; i < 64; ++i) rows.push_back(std::size_t(dimy) * i / 64);
  rows.push_back(std::size_t(dimy) - 1);
  return rows;
}

CaseReport check_case(const LabUnderTest& lab, const MapCase& c) {
  CaseReport rep{c.name, c.origin, shape_of(c), false, "", "", 0};
  set_phase_case(c.name.c_str());
  set_phase("map_forward_gpu");
  DeviceBuffer<float> data(c.input.size());
  data.upload(c.input);
  lab.map->forward(data.get(), c.dimx, c.dimy, c.niterations);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> out = data.download();

  set_phase("the kit's reference computation");
  const std::vector<std::size_t> rows = checked_rows(c.dimy);
  const std::size_t w = std::size_t(c.dimx);
  std::vector<float> got, in;
  std::vector<double> expected(rows.size() * w);
  for (std::size_t r : rows) {
    got.insert(got.end(), out.begin() + r * w, out.begin() + (r + 1) * w);
    in.insert(in.end(), c.input.begin() + r * w, c.input.begin() + (r + 1) * w);
  }
  if (!c.expected.empty() && rows.size() == std::size_t(c.dimy))
    expected = c.expected;
  else
    reference::map_forward_cpu(expected, in, c.dimx, int(rows.size()), c.niterations);
  const check::Result cmp = check::compare(got, expected, expected, check::map_tolerance());
  rep.passed = cmp.passed();
  rep.worst = cmp.worst;
  rep.outcome = check::to_string(cmp.outcome);
  rep.detail = cmp.describe(check::map_layout(c.dimx, rows));
  if (rows.size() != std::size_t(c.dimy))
    rep.detail += fmt::format(" (rows checked: {} of {}, evenly spread)", rows.size(), c.dimy);
  return rep;
}

ShapeTiming time_case(const LabUnderTest& lab, const MapCase& c, const Options& opt, L2Flush& flush) {
  set_phase_case(c.name.c_str());
  set_phase("timing map_forward_gpu");
  DeviceBuffer<float> pristine(c.input.size()), base(c.input.size()), mine(c.input.size());
  pristine.upload(c.input);
  auto restore = [&](DeviceBuffer<float>& d) {
    return [&] {
      LABKIT_CUDA_CHECK(cudaMemcpy(d.get(), pristine.get(), d.bytes(), cudaMemcpyDeviceToDevice));
    };
  };
  const TimedSide b{[&] { baseline::map_ops.forward(base.get(), c.dimx, c.dimy, c.niterations); }, restore(base)};
  const TimedSide l{[&] { lab.map->forward(mine.get(), c.dimx, c.dimy, c.niterations); }, restore(mine)};
  const PairTiming t = time_pairs(b, l, Measure::events, opt.stopping, 2, flush);
  const SmClock clock = read_sm_clock();
  return {c.name, shape_of(c), t.base_ms, t.lab_ms, t.speedup.median, t.speedup.low, t.speedup.high,
          int(t.ratios.size()), t.noise, t.converged, t.hidden_work, t.lab_extra_host_ms,
          clock.available ? clock.sm_mhz : 0};
}

}  // namespace

void grade_map(const LabUnderTest& lab, const LabSpec& spec, const Options& opt, GradeResult& result) {
  std::vector<MapCase> cases;
  set_phase("loading the fixtures");
  for (const fixtures::MapCase& f : fixtures::load(opt.fixtures).map)
    cases.push_back({f.info.name, "fixture", f.dimx, f.dimy, f.niterations, f.input, f.expected});
  SplitMix64 rng(seed_for(opt.seed, "random shapes"));
  auto pick = [&](int lo, int hi) { return lo + int(rng.next() % std::uint64_t(hi - lo + 1)); };
  for (int i = 0; i < opt.random_cases; ++i)
    cases.push_back(random_case(fmt::format("random-{}", i + 1), "random", pick(1, 1100),
                                pick(1, 40), pick(1, 300), opt.seed));
  const MapCase grading = random_case("workload", "grading", spec.map.dimx, spec.map.dimy,
                                      spec.map.niterations, opt.seed);
  if (!opt.under_sanitizer) cases.push_back(grading);
  result.tolerance = check::map_tolerance().rule;

  for (const MapCase& c : cases) {
    CaseReport rep;
    if (!guarded(result, c.name, [&] { rep = check_case(lab, c); })) return;
    result.cases.push_back(std::move(rep));
  }
  if (!all_passed(result) || opt.correctness_only) return;

  L2Flush flush;
  ShapeTiming t;
  if (!guarded(result, grading.name, [&] { t = time_case(lab, grading, opt, flush); })) return;
  result.timing.push_back(t);
  result.timed = true;
}

ProfiledShape profile_map(const LabUnderTest& lab, const LabSpec& spec, const Options& opt) {
  if (opt.profile_case != 0) throw std::out_of_range("a map lab has one grading shape");
  const MapCase c = random_case("workload", "grading", spec.map.dimx, spec.map.dimy, spec.map.niterations, opt.seed);
  set_phase_case(c.name.c_str());
  DeviceBuffer<float> data(c.input.size());
  data.upload(c.input);
  set_phase("map_forward_gpu (profiled)");
  LABKIT_CUDA_CHECK(cudaProfilerStart());
  if (opt.profile_side == "baseline") baseline::map_ops.forward(data.get(), c.dimx, c.dimy, c.niterations);
  else lab.map->forward(data.get(), c.dimx, c.dimy, c.niterations);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  LABKIT_CUDA_CHECK(cudaProfilerStop());
  return {c.name, shape_of(c), 1};
}

}  // namespace labkit::runner
