// A conv lab's timed pairs (conv_timing.h): the harness's side of a pair, the kit's overhead, the
// baseline in the kit's own harness, and a shape measured again.
#include "conv_timing.h"

#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>

#include "grader/judge/clocks.h"
#include "labkit/cuda_check.h"
#include "grader/judge/roofline.h"
#include "grader/judge/stats.h"

namespace labkit::judge {

using nlohmann::json;

namespace {
// The median of what the requests in `log` cost beyond their reported time and the round trip.
double overhead_of(const RemoteLog& log, const RemoteCosts& costs) {
  std::vector<double> extra;
  for (std::size_t i = 0; i < log.wall_ms.size(); ++i) extra.push_back(log.wall_ms[i] - costs.round_trip_ms - log.event_ms[i]);
  return stats::median(extra);
}

}  // namespace

// The lab's side of a timed pair: fresh inputs through the lab's prolog, the judge's L2 flush,
// the timed request, the epilog, and the check of that call's output. `trusted`: the kit's own
// harness timing the baseline: the same requests, but its output is neither sent back
// nor checked (nothing of it is graded).
TimedSide remote_side(Session& s, bool layer, Precision precision, const ConvCase& c, L2Flush& flush,
                      const RemoteCosts& costs, RemoteLog& log, bool trusted) {
  return {[&s, layer, precision, &c, &flush, &costs, &log, trusted] {
    const ConvShape& sh = c.shape;
    const int n = ++log.calls;
    const FreshConv fresh{sh, secret_draw(), secret_draw(), c.lo, c.hi};  // what the prolog gets
    // Op Time: conv_forward_gpu computes from another input, written inside the timed request
    // ("refill"), so nothing the prolog computed can be its output. A layer-timed call runs its
    // prolog under the clock: its input stays.
    const FreshConv timed = layer ? fresh : FreshConv{sh, secret_draw(), fresh.mask_seed, c.lo, c.hi};
    Regions r;
    const std::uint64_t out = r.add(sh.output_size());
    const std::uint64_t records = r.add(executed::kRegionBytes / sizeof(float));
    s.tensors().reserve(r.total());
    const std::string call = fmt::format("timed call {} of {}", n, c.name);
    CallClock clock(log);
    s.call({{"op", "prepare"}, {"shape", {sh.B, sh.M, sh.C, sh.H, sh.W, sh.K}}, {"layer", layer},
            {"memory", layer ? "pinned" : "pageable"}, {"input", {{"seed", fresh.input_seed}, {"lo", c.lo}, {"hi", c.hi}}},
            {"mask", {{"seed", fresh.mask_seed}, {"lo", -0.5}, {"hi", 0.5}}}, {"spacer", n % 3}},
           (layer ? "preparing " : "conv_forward_gpu_prolog, ") + call);
    clock.lap(&RemoteLog::prepare_ms);
    flush();
    LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
    clock.lap(&RemoteLog::flush_ms);
    double wall = 0;
    json run = {{"op", layer ? "layer" : "run"}, {"out", out}};
    if (!layer) run["refill"] = {{"seed", timed.input_seed}, {"lo", c.lo}, {"hi", c.hi}};
    const json ran = s.call(run, (layer ? "the layer (prolog, conv_forward_gpu, epilog), " : "conv_forward_gpu, ") + call, &wall);
    const double reported = number(ran, layer ? "host_ms" : "event_ms", 0, 1e7);
    const double host = number(ran, "host_ms", 0, 1e7);
    const std::uint64_t digest = unsigned_number(ran, "digest");
    clock.lap(&RemoteLog::run_ms);
    // The records of the kernels that ran in the timed request come with this one: the harness's
    // CUPTI flush is outside the clock. The kit's own harness takes them too, and sends nothing.
    json fin_request = {{"op", "finish"}, {"out", out}, {"discard", trusted}};
    if (!trusted) fin_request["executed_out"] = executed_out(records);
    const json fin = s.call(fin_request, "conv_forward_gpu_epilog, " + call);
    check_guards(fin, call);
    if (!trusted) log.windows.push_back(executed_window(s.tensors(), records, fin, c.name, wall, reported));
    clock.lap(&RemoteLog::finish_ms);
    if (trusted) {
      log.wall_ms.push_back(wall);
      log.event_ms.push_back(reported);
      log.host_ms.push_back(host);
      return Sample{reported, wall - costs.round_trip_ms - costs.overhead_ms};
    }
    // Positions picked after the call; the output read once where it lies (remote.h).
    auto check = [&s, &log, out, timed, digest, call, layer, precision] {
      const std::vector<std::size_t> positions = pick_positions(timed.shape.output_size(), secret_draw(), 2048);
      const SealedRead got = read_sealed(s.tensors().floats(out, timed.shape.output_size()), positions);
      if (got.digest != digest) throw output_changed(call, layer);
      CaseReport rep = check_fresh_conv(timed, got, positions, precision, call);
      if (!rep.passed) throw TimedCallWrong{std::move(rep)};
      ++log.checked;
    };
    // Which calls are checked is drawn after the call has returned, where the lab cannot see it:
    // the first, one in three, and the last (log.check_last). Reading 100 MB was a fifth of a
    // pair's time; a lab that cheats on enough calls to move a median is caught on one of them.
    if (n == 1 || secret_draw() % 3 == 0) {
      check();
      log.check_last = nullptr;
    } else {
      log.check_last = check;
    }
    clock.lap(&RemoteLog::check_ms);
    log.wall_ms.push_back(wall);
    log.event_ms.push_back(reported);
    log.host_ms.push_back(host);
    return Sample{reported, wall - costs.round_trip_ms - costs.overhead_ms};
  }};
}

namespace {

ShapeTiming time_once(Context& ctx, const ConvCase& c, std::size_t i, double clean_overhead, KitBaseline& kit,
                      Baselines& base, L2Flush& flush, RemoteLog& log) {
  Session& s = ctx.start();
  const bool layer = ctx.spec.timed == TimedRegion::layer;
  RemoteCosts costs;
  costs.round_trip_ms = median_round_trip(s);
  costs.overhead_ms = clean_overhead;
  const TimedSide lab = remote_side(s, layer, ctx.spec.precision, c, flush, costs, log);
  // The baseline's samples with the lab's processes stopped and its GPU work drained; the lab's
  // own with it running (timing_checks.h).
  const TimedSide baseline = base.still_side(c.shape, s, ctx.result.still);
  kit.begin_pairs(i);
  const PairTiming t = time_pairs(baseline, lab, Measure::events, ctx.opt.stopping, layer ? 2 : 3);
  costs.overhead_ms = kit.overhead_beside(i, clean_overhead);
  if (log.check_last) log.check_last();
  const double macs = double(c.shape.macs());
  const double bytes_in = double(c.shape.input_size() + c.shape.mask_size()) * 4, bytes_out = double(c.shape.output_size()) * 4;
  const SmClock clock = read_sm_clock();
  ShapeTiming st{c.name, to_string(c.shape), t.base_ms, t.lab_ms, t.speedup.median, t.speedup.low,
                 t.speedup.high, int(t.ratios.size()), t.noise, t.converged, false, t.lab_extra_host_ms,
                 clock.available ? clock.sm_mhz : 0};
  st.round_trip_ms = costs.round_trip_ms;
  st.lab_wall_ms = stats::median(log.wall_ms);
  st.base_samples_ms = t.base_samples;
  st.lab_samples_ms = t.lab_samples;
  st.floor_ms = layer ? 0 : floor_ms(macs, bytes_in, bytes_out);
  st.overhead_clean_ms = clean_overhead;
  check_lab_times(st, log, costs, layer);
  if (!layer) {
    if (!ctx.result.peaks) ctx.result.peaks = roofline::device_peaks();
    st.roofline = roofline::of(macs, bytes_in, bytes_out, st.lab_ms, *ctx.result.peaks, to_string(ctx.spec.precision));
  }
  return st;
}

}  // namespace

// A shape's pairs, measured a second time, overhead included, when the judge's clock disagreed
// (timing_checks.h): the second measurement is the result, whatever it finds.
ShapeTiming time_case(Context& ctx, const ConvCase& c, std::size_t i, double clean_overhead, KitBaseline& kit,
                      Baselines& base, L2Flush& flush, RemoteLog& log) {
  try {
    return time_once(ctx, c, i, clean_overhead, kit, base, flush, log);
  } catch (const WallClockDisagrees& first) {
    ctx.phase_done(fmt::format("timed pairs of {} ({} lab calls): the kit's clock disagreed ({:.3f} ms unaccounted for, "
                               "allowed {:.3f} ms), measured again", c.name, log.calls, first.gap_ms, first.allowed_ms));
    record_call_costs(ctx.result, log);
    ctx.restart_harness();  // a new lab process: nothing of the first measurement's carries over
    log = {};
    return time_once(ctx, c, i, clean_overhead, kit, base, flush, log);
  }
}

timeline::Timeline timeline_of(const json& activity, const std::string& side, const std::string& shape) {
  std::uint64_t start = 0, end = 0;
  const auto it = activity.is_object() ? activity.find("layer_ns") : activity.end();
  if (it != activity.end() && it->is_array() && it->size() == 2 && (*it)[0].is_number_unsigned() &&
      (*it)[1].is_number_unsigned()) {
    start = (*it)[0].get<std::uint64_t>();
    end = (*it)[1].get<std::uint64_t>();
  }
  return timeline::from_activity(activity_from_json(activity), start, end, side, shape);
}

json recorded_layer(Session& s, const ConvCase& c, bool discard, const std::string& what) {
  Regions r;
  const std::uint64_t out = r.add(c.shape.output_size());
  s.tensors().reserve(r.total());
  s.call({{"op", "prepare"}, {"shape", {c.shape.B, c.shape.M, c.shape.C, c.shape.H, c.shape.W, c.shape.K}},
          {"layer", true}, {"memory", "pinned"}, {"input", {{"seed", secret_draw()}, {"lo", c.lo}, {"hi", c.hi}}},
          {"mask", {{"seed", secret_draw()}, {"lo", -0.5}, {"hi", 0.5}}}},
         "preparing " + what);
  json reply = s.call({{"op", "layer"}, {"out", out}, {"record", true}}, what);
  s.call({{"op", "finish"}, {"out", out}, {"discard", discard}}, "the end of " + what);
  return reply;
}

struct KitBaseline::Shape {
  RemoteCosts costs;
  RemoteLog log;
};

KitBaseline::KitBaseline(Context& ctx, const std::vector<ConvCase>& grading, L2Flush& flush, Baselines& base)
{
  const bool layer = ctx.spec.timed == TimedRegion::layer;
  kit_ = std::make_unique<Session>(ctx.kit_session("conv"));  // kit_time_limit: it lives until the lab is graded
  kit_->start();
  for (const ConvCase& c : grading) {
    auto sh = std::make_unique<Shape>();
    sh->costs.round_trip_ms = median_round_trip(*kit_);
    base.add_remote(c.shape, remote_side(*kit_, layer, Precision::fp32, c, flush, sh->costs, sh->log, true));
    shapes_.push_back(std::move(sh));
  }
}

KitBaseline::~KitBaseline() = default;

std::vector<double> KitBaseline::overheads() {
  std::vector<double> out;
  for (auto& sh : shapes_) {
    // The clean samples' first one was their warm-up.
    if (sh->log.wall_ms.size() > 1) {
      sh->log.wall_ms.erase(sh->log.wall_ms.begin());
      sh->log.event_ms.erase(sh->log.event_ms.begin());
    }
    sh->costs.overhead_ms = overhead_of(sh->log, sh->costs);
    out.push_back(sh->costs.overhead_ms);
    sh->log = {};
  }
  return out;
}

void KitBaseline::begin_pairs(std::size_t i) { shapes_.at(i)->log = {}; }

double KitBaseline::overhead_beside(std::size_t i, double clean) {
  Shape& sh = *shapes_.at(i);
  const double beside = sh.log.wall_ms.size() >= 5 ? overhead_of(sh.log, sh.costs) : clean;
  return std::min(beside, 2 * clean + 0.1);
}

timeline::Timeline KitBaseline::record_layer(const ConvCase& c) {
  try {
    const json reply = recorded_layer(*kit_, c, true, "the baseline's layer recorded for the timeline");
    return timeline_of(reply.value("activity", json::object()), "baseline", c.name);
  } catch (const std::exception& e) {
    timeline::Timeline t;
    t.side = "baseline";
    t.shape = c.name;
    t.why = std::string("the kit's harness could not record the baseline's layer: ") + e.what();
    return t;
  }
}

void KitBaseline::close() {
  if (kit_) kit_->close();
  kit_.reset();
}

}  // namespace labkit::judge
