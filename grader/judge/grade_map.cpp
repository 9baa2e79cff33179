// Grading a map (elementwise) lab, the judge's side: correctness on fixtures, fresh random shapes
// (dimx not a multiple of 4 among them) and sampled rows of the timed workload, then Op Time
// against the baseline with fresh data in every timed call. The data is updated in place, so it
// cannot be poisoned; it does not need to be: every iteration moves every value by at least 1
// (reference/map_workload.h), so an element the lab skipped is always wrong.
#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include <chrono>
#include <string>
#include <vector>

#include "grader/protocol/fresh.h"
#include "grading.h"
#include "grader/judge/check.h"
#include "grader/judge/clocks.h"
#include "labkit/cuda_check.h"
#include "grader/judge/fixtures.h"
#include "labkit/map.h"
#include "grader/core/random.h"
#include "grader/judge/roofline.h"
#include "grader/judge/stats.h"
#include "reference/map_workload.h"
#include "remote.h"
#include "timing_checks.h"

namespace labkit::judge {
namespace {

using nlohmann::json;

struct MapCase {
  std::string name, origin;
  int dimx = 0, dimy = 0, niterations = 0;
  std::vector<float> input;
  std::vector<double> expected;  // empty: computed for the checked rows only
};

std::string shape_of(int dimx, int dimy, int niterations) {
  return fmt::format("dimx={} dimy={} niterations={}", dimx, dimy, niterations);
}

MapCase random_case(const std::string& name, const std::string& origin, int dimx, int dimy, int niterations,
                    std::uint64_t seed) {
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

// `got` (the values of `rows`, one row after another) against the reference computed from
// `input_row(r)`.
CaseReport compare_rows(const std::string& name, const std::string& origin, int dimx, int dimy, int niterations,
                        std::span<const float> got, const std::vector<std::size_t>& rows,
                        const std::function<void(std::size_t, std::span<float>)>& input_row,
                        const std::vector<double>& full_expected) {
  CaseReport rep{name, origin, shape_of(dimx, dimy, niterations), false, "", "", 0};
  const std::size_t w = std::size_t(dimx);
  std::vector<float> in(rows.size() * w);
  std::vector<double> expected(rows.size() * w);
  for (std::size_t k = 0; k < rows.size(); ++k) input_row(rows[k], std::span<float>(in).subspan(k * w, w));
  if (!full_expected.empty() && rows.size() == std::size_t(dimy)) expected = full_expected;
  else reference::map_forward_cpu(expected, in, dimx, int(rows.size()), niterations);
  const check::Result cmp = check::compare(got, expected, expected, check::map_tolerance());
  rep.passed = cmp.passed();
  rep.worst = cmp.worst;
  rep.outcome = check::to_string(cmp.outcome);
  rep.detail = cmp.describe(check::map_layout(dimx, rows));
  if (rows.size() != std::size_t(dimy))
    rep.detail += fmt::format(" (rows checked: {} of {}, evenly spread)", rows.size(), dimy);
  return rep;
}

CaseReport check_case(Context& ctx, const MapCase& c) {
  Session& s = ctx.start();
  const std::size_t n = c.input.size();
  Regions r;
  const std::uint64_t in = r.add(n), out = r.add(n);
  s.tensors().reserve(r.total());
  std::copy(c.input.begin(), c.input.end(), s.tensors().floats(in, n).begin());
  const json reply = s.call({{"op", "check"}, {"dims", {c.dimx, c.dimy, c.niterations}}, {"in", in}, {"out", out}},
                            fmt::format("map_forward_gpu, case {} ({})", c.name, shape_of(c.dimx, c.dimy, c.niterations)));
  check_guards(reply, c.name);
  const std::size_t w = std::size_t(c.dimx);
  const std::vector<std::size_t> rows = checked_rows(c.dimy);
  const std::span<const float> all = s.tensors().floats(out, n);
  std::vector<float> got;
  for (std::size_t row : rows)
    got.insert(got.end(), all.begin() + static_cast<long>(row * w), all.begin() + static_cast<long>((row + 1) * w));
  return compare_rows(c.name, c.origin, c.dimx, c.dimy, c.niterations, got, rows,
                      [&](std::size_t row, std::span<float> dst) {
                        std::copy(c.input.begin() + static_cast<long>(row * w),
                                  c.input.begin() + static_cast<long>((row + 1) * w), dst.begin());
                      },
                      c.expected);
}

TimedSide remote_side(Session& s, const MapCase& c, L2Flush& flush, const RemoteCosts& costs, RemoteLog& log) {
  return {[&s, &c, &flush, &costs, &log] {
    const std::size_t n = std::size_t(c.dimx) * c.dimy;
    const int k = ++log.calls;
    const std::uint64_t seed = secret_draw();
    const std::string call = fmt::format("timed call {} of the workload", k);
    Regions r;
    const std::uint64_t out = r.add(n);
    const std::uint64_t records = r.add(executed::kRegionBytes / sizeof(float));
    s.tensors().reserve(r.total());
    CallClock clock(log);
    s.call({{"op", "prepare"}, {"dims", {c.dimx, c.dimy, c.niterations}}, {"seed", seed}}, "preparing " + call);
    clock.lap(&RemoteLog::prepare_ms);
    flush();
    LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
    clock.lap(&RemoteLog::flush_ms);
    double wall = 0;
    const json ran = s.call({{"op", "run"}}, "map_forward_gpu, " + call, &wall);
    clock.lap(&RemoteLog::run_ms);
    const double event = number(ran, "event_ms", 0, 1e7);
    const double host = number(ran, "host_ms", 0, 1e7);
    const std::uint64_t digest = unsigned_number(ran, "digest");
    // The records of the kernels that ran in the timed request come with this one, outside its clock.
    const json fin = s.call({{"op", "finish"}, {"out", out}, {"executed_out", executed_out(records)}}, "the end of " + call);
    check_guards(fin, call);
    log.windows.push_back(executed_window(s.tensors(), records, fin, "workload", wall, event));
    clock.lap(&RemoteLog::finish_ms);
    // Eight rows picked after the call, each checked exactly; the output read once where it lies.
    std::vector<std::size_t> rows;
    for (int i = 0; i < 8; ++i) rows.push_back(std::size_t(secret_draw() % std::uint64_t(c.dimy)));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    const std::size_t w = std::size_t(c.dimx);
    std::vector<std::size_t> positions;
    for (std::size_t row : rows)
      for (std::size_t j = 0; j < w; ++j) positions.push_back(row * w + j);
    const SealedRead got = read_sealed(s.tensors().floats(out, n), positions);
    if (got.digest != digest) throw output_changed(call, false);
    CaseReport rep = compare_rows(call, "timed", c.dimx, c.dimy, c.niterations, got.values, rows,
                                  [&](std::size_t row, std::span<float> dst) {
                                    for (std::size_t j = 0; j < w; ++j)
                                      dst[j] = fresh::fresh_value(seed, row * w + j, kMapInputMin, kMapInputMax);
                                  },
                                  {});
    if (!rep.passed) throw TimedCallWrong{std::move(rep)};
    clock.lap(&RemoteLog::check_ms);
    log.wall_ms.push_back(wall);
    log.event_ms.push_back(event);
    log.host_ms.push_back(host);
    return Sample{event, wall - costs.round_trip_ms - costs.overhead_ms};
  }};
}

// What a timed request costs beyond its events and the round trip (RemoteCosts), measured on the
// kit's own harness with no lab process alive.
double kit_overhead(Context& ctx, const MapCase& grading, L2Flush& flush) {
  SessionOptions so = ctx.kit_session("map");
  so.deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  Session kit(so);
  kit.start();
  RemoteCosts kc{median_round_trip(kit), 0};
  RemoteLog klog;
  const TimedSide side = remote_side(kit, grading, flush, kc, klog);
  side.sample();
  klog = {};
  for (int i = 0; i < 5; ++i) side.sample();
  std::vector<double> extra;
  for (std::size_t i = 0; i < klog.wall_ms.size(); ++i) extra.push_back(klog.wall_ms[i] - kc.round_trip_ms - klog.event_ms[i]);
  kit.close();
  return stats::median(extra);
}

ShapeTiming time_once(Context& ctx, const MapCase& grading, double overhead, Baselines& base, L2Flush& flush,
                      RemoteLog& log) {
  Session& s = ctx.start();
  RemoteCosts costs;
  costs.round_trip_ms = median_round_trip(s);
  costs.overhead_ms = overhead;
  // The baseline's samples with the lab's processes stopped and its GPU work drained (timing_checks.h).
  const PairTiming t = time_pairs(base.map_still_side(s, ctx.result.still), remote_side(s, grading, flush, costs, log),
                                  Measure::events, ctx.opt.stopping, 2);
  const SmClock clock = read_sm_clock();
  ShapeTiming st{grading.name, shape_of(grading.dimx, grading.dimy, grading.niterations), t.base_ms, t.lab_ms,
                 t.speedup.median, t.speedup.low, t.speedup.high, int(t.ratios.size()), t.noise, t.converged, false,
                 t.lab_extra_host_ms, clock.available ? clock.sm_mhz : 0};
  const double bytes = double(grading.input.size()) * 4;
  st.round_trip_ms = costs.round_trip_ms;
  st.lab_wall_ms = stats::median(log.wall_ms);
  st.base_samples_ms = t.base_samples;
  st.lab_samples_ms = t.lab_samples;
  st.floor_ms = floor_ms(0, bytes, bytes);
  check_lab_times(st, log, costs, false);
  // The map's arithmetic per element is not counted: memory only.
  if (!ctx.result.peaks) ctx.result.peaks = roofline::device_peaks();
  st.roofline = roofline::of(0, bytes, bytes, st.lab_ms, *ctx.result.peaks, "fp32");
  return st;
}

}  // namespace

void grade_map(Context& ctx) {
  GradeResult& result = ctx.result;
  const Options& opt = ctx.opt;
  const LabSpec& spec = ctx.spec;
  std::vector<MapCase> cases;
  for (const fixtures::MapCase& f : fixtures::load(opt.fixtures).map)
    cases.push_back({f.info.name, "fixture", f.dimx, f.dimy, f.niterations, f.input, f.expected});
  SplitMix64 pick_rng(seed_for(opt.seed, "random shapes"));
  auto pick = [&](int lo, int hi) { return lo + int(pick_rng.next() % std::uint64_t(hi - lo + 1)); };
  for (int i = 0; i < opt.random_cases; ++i)
    cases.push_back(random_case(fmt::format("random-{}", i + 1), "random", pick(1, 1100), pick(1, 40), pick(1, 300), opt.seed));
  const MapCase grading = random_case("workload", "grading", spec.map.dimx, spec.map.dimy, spec.map.niterations, opt.seed);
  if (!opt.under_sanitizer) cases.push_back(grading);
  result.tolerance = check::map_tolerance().rule;

  std::unique_ptr<L2Flush> flush;
  std::unique_ptr<Baselines> base;
  const bool timing = !opt.correctness_only;
  if (timing) {
    flush = std::make_unique<L2Flush>();
    base = std::make_unique<Baselines>(TimedRegion::op, *flush);
    base->add_map(grading.dimx, grading.dimy, grading.niterations, grading.input);
    base->time_clean();
    ctx.phase_done("baseline timed alone");
  }
  // What a timed request costs beyond its events and the round trip, on the kit's own harness.
  const double overhead = timing ? kit_overhead(ctx, grading, *flush) : 0;
  if (timing) ctx.phase_done("kit harness overhead");
  for (const MapCase& c : cases) result.cases.push_back(check_case(ctx, c));
  ctx.phase_done("checked cases (harness start included)");
  if (!all_passed(result) || !timing) return;

  RemoteLog log;
  ShapeTiming st;
  try {
    try {
      st = time_once(ctx, grading, overhead, *base, *flush, log);
    } catch (const WallClockDisagrees&) {
      // Measured again, overhead included, before it counts (timing_checks.h).
      ctx.phase_done(fmt::format("timed pairs of the workload ({} lab calls): the kit's clock disagreed, measured again", log.calls));
      record_call_costs(result, log);
      ctx.restart_harness();
      const double again = kit_overhead(ctx, grading, *flush);
      ctx.phase_done(fmt::format("kit harness overhead again ({:.3f} ms, was {:.3f} ms)", again, overhead));
      log = {};
      st = time_once(ctx, grading, again, *base, *flush, log);
    }
  } catch (TimedCallWrong& w) {
    result.cases.push_back(std::move(w.report));
    all_passed(result);
    return;
  }
  ctx.phase_done(fmt::format("timed pairs of the workload ({} lab calls)", log.calls));
  record_call_costs(result, log);
  ctx.windows = std::move(log.windows);
  result.timing.push_back(st);
  result.timed = true;
  ctx.harness->close();
  base->check_interference(result);
  ctx.phase_done("baseline timed alone again, harness closed");
}

}  // namespace labkit::judge
