#include "network_case.h"

#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>

#include "grader/harness/device_ops.h"
#include "grader/protocol/chunks.h"
#include "labkit/cuda_check.h"
#include "grader/core/device_buffer.h"
#include "grader/network/dataset.h"
#include "grader/core/random.h"
#include "grader/judge/stats.h"
#include "reference/baseline.h"
#include "reference/network.h"
#include "remote.h"
#include "timing_checks.h"

namespace labkit::judge {

using nlohmann::json;

namespace {
json shape_json(const ConvShape& s) { return {s.B, s.M, s.C, s.H, s.W, s.K}; }

// The network case's allowance for request time that no reported time, round trip, refill or digest
// explains: min(0.4 ms + E, 1.0 ms + E / 4) for a reported median E. Measured on an H200 (before
// the refill) for the honest solutions 03, 06, 09, 10, 11, 12 and 13 (five repeats each, batch 1000
// and 10000): 0.21 to 0.64 ms (09-fp16's conv1 at batch 10000); a lab whose events report half of
// its time (tests/labs/fake-event-timer-half) leaves 4.6 ms unaccounted for on conv1 at batch
// 10000. The first term was this check's only one: "at least half of the request, minus 0.2 ms".
constexpr double kUnaccountedMs = 0.4;
constexpr double kUnaccountedMostMs = 1.0;
constexpr double kUnaccountedShare = 0.25;

// The median host time of three synchronous calls of `call`, after a first that loads its kernel.
template <class Call>
double median_call_ms(Call call) {
  std::vector<double> ms;
  for (int k = 0; k < 4; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    if (k > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return stats::median(ms);
}

// What the harness's digest of an output of n floats adds to a "run" request, timed on the
// judge's own copy of the digest kernel: the lab's process could slow its own copy down to widen
// the allowance. At batch 10000 conv1's output is 1 GB, and its digest is as long as the fastest
// conv1 itself, so a check that left it out failed honest labs.
double digest_ms(std::size_t n) {
  DeviceBuffer<float> out(n);
  harness::device_fill(out.get(), n, secret_draw(), -1.0f, 1.0f);
  return median_call_ms([&] { harness::device_digest(out.get(), n); });
}

// What the harness's refill adds to a "run" request (device_ops.h: the input written fresh, the
// output poisoned again, the legacy stream synchronized), timed the same way on the judge's own
// buffers.
double refill_ms(const ConvShape& sh) {
  DeviceBuffer<float> in(sh.input_size()), out(sh.output_size());
  return median_call_ms([&] {
    harness::refill(in.get(), sh.input_size(), secret_draw(), 0.0f, 1.0f, out.get(), sh.output_size());
  });
}
}  // namespace

std::uint64_t network_conv_bytes(const ConvShape& sh) {
  Regions r;
  r.add(sh.input_size());
  r.add(sh.mask_size());
  r.add(sh.output_size());
  return r.total();
}

network::RemoteConv remote_conv(Session& s, L2Flush& flush) {
  return [&s, &flush](const ConvShape& sh, std::span<const float> input, std::span<const float> mask,
                      std::span<float> output, network::LayerTiming& t) {
    const std::string what = fmt::format("the network's conv layer ({})", to_string(sh));
    Regions r;  // the layout network_conv_bytes sizes
    const std::uint64_t in = r.add(sh.input_size()), msk = r.add(sh.mask_size()), out = r.add(sh.output_size());
    // The judge's clock outside the three requests: the tensors into and out of the file, the checks.
    const auto copy_in = std::chrono::steady_clock::now();
    s.tensors().reserve(r.total());  // already done when labkit-network reserved network_conv_bytes ahead

    fresh::parallel_copy(s.tensors().floats(in, sh.input_size()), input);
    fresh::parallel_copy(s.tensors().floats(msk, sh.mask_size()), mask);
    const double copy_in_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - copy_in).count();
    double w_prepare = 0, w_run = 0, w_finish = 0;
    s.call({{"op", "prepare"}, {"shape", shape_json(sh)}, {"memory", "pinned"}, {"input", {{"offset", in}}},
            {"mask", {{"offset", msk}}}}, "conv_forward_gpu_prolog, " + what, &w_prepare);
    flush();
    LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
    const json ran = s.call({{"op", "run"}}, "conv_forward_gpu, " + what, &w_run);
    const double event = number(ran, "event_ms", 0, 1e7);
    const std::uint64_t digest = unsigned_number(ran, "digest");
    const json fin = s.call({{"op", "finish"}, {"out", out}}, "conv_forward_gpu_epilog, " + what, &w_finish);
    const auto read_back = std::chrono::steady_clock::now();
    check_guards(fin, what);
    const SealedRead got = read_sealed(s.tensors().floats(out, sh.output_size()), {}, output);
    t.boundary_ms += copy_in_ms + std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - read_back).count();
    if (got.digest != digest) throw output_changed(what, false);
    const double floor = floor_ms(double(sh.macs()), double(sh.input_size() + sh.mask_size()) * 4, double(sh.output_size()) * 4);
    if (event > w_run || event < floor)
      throw LabFailure(verdict::kTimingImplausible,
                       fmt::format("The lab reported {:.4f} ms for {}: the kit's clock saw {:.4f} ms for the whole "
                                   "request and no implementation runs under {:.4f} ms.", event, what, w_run, floor));
    t.first_ms = t.op_ms = event;
    t.layer_ms = w_prepare + w_run + w_finish;
    t.nonfinite = got.nonfinite + got.unwritten;
    t.floor_ms = floor;  // the report's chart draws it
  };
}

std::function<void(const ConvShape&, float, float, int, network::LayerTiming&)> remote_repeats(
    Session& s, L2Flush& flush, Precision precision) {
  return [&s, &flush, precision](const ConvShape& sh, float lo, float hi, int repeats, network::LayerTiming& t) {
    const double rtt = median_round_trip(s);
    const double kit = digest_ms(sh.output_size()) + refill_ms(sh);  // the harness's own work in a run request
    std::vector<double> walls;
    for (int k = 0; k < repeats; ++k) {
      const FreshConv fresh{sh, secret_draw(), secret_draw(), lo, hi};     // what the prolog gets
      const FreshConv timed{sh, secret_draw(), fresh.mask_seed, lo, hi};  // conv_forward_gpu's input (refill)
      const std::string what = fmt::format("Op Time repeat {} of {}", k + 1, to_string(sh));
      Regions r;
      const std::uint64_t out = r.add(sh.output_size());
      s.tensors().reserve(r.total());
      s.call({{"op", "prepare"}, {"shape", shape_json(sh)}, {"memory", "pageable"},
              {"input", {{"seed", fresh.input_seed}, {"lo", lo}, {"hi", hi}}},
              {"mask", {{"seed", fresh.mask_seed}, {"lo", -0.5}, {"hi", 0.5}}}, {"spacer", k % 3}},
             "conv_forward_gpu_prolog, " + what);
      flush();
      LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
      double wall = 0;
      const json ran = s.call({{"op", "run"}, {"refill", {{"seed", timed.input_seed}, {"lo", lo}, {"hi", hi}}}},
                              "conv_forward_gpu, " + what, &wall);
      const double event = number(ran, "event_ms", 0, 1e7);
      const std::uint64_t digest = unsigned_number(ran, "digest");
      check_guards(s.call({{"op", "finish"}, {"out", out}}, "conv_forward_gpu_epilog, " + what), what);
      const std::vector<std::size_t> positions = pick_positions(sh.output_size(), secret_draw(), 2048);
      const SealedRead got = read_sealed(s.tensors().floats(out, sh.output_size()), positions);
      if (got.digest != digest) throw output_changed(what, false);
      const CaseReport rep = check_fresh_conv(timed, got, positions, precision, what);
      if (!rep.passed)
        throw LabFailure(verdict::kIncorrect, fmt::format("{} ({}): {}\n{}", what, rep.shape, rep.outcome, rep.detail));
      const double floor = floor_ms(double(sh.macs()), double(sh.input_size() + sh.mask_size()) * 4, double(sh.output_size()) * 4);
      // Per repeat, only what no hiccup explains: a time longer than the request, or below the floor.
      if (event > wall || event < floor)
        throw LabFailure(verdict::kTimingImplausible,
                         fmt::format("The lab reported {:.4f} ms for {}; the kit's clock saw {:.4f} ms for the request "
                                     "(round trip {:.4f} ms, floor {:.4f} ms).", event, what, wall, rtt, floor));
      t.samples_ms.push_back(event);
      walls.push_back(wall);
    }
    t.op_ms = stats::median(t.samples_ms);
    // What the kit's clock saw beyond the reported time, the round trip and the kit's refill of
    // the input and digest of the output, in the medians (a request that ran long once is the
    // machine's: measured on an H100, 0.64 ms around a 0.04 ms op, one repeat in hundreds). Left
    // in it: the switch between the judge's and the harness's GPU contexts, the device
    // synchronize, the reply.
    const double wall = stats::median(walls);
    const double gap = wall - rtt - kit - t.op_ms;
    const double allowed = std::min(kUnaccountedMs + t.op_ms, kUnaccountedMostMs + kUnaccountedShare * t.op_ms);
    if (gap > allowed)
      throw LabFailure(verdict::kTimingImplausible,
                       fmt::format("The lab reported a median of {:.4f} ms for Op Time of {} over {} repeats; the kit's "
                                   "clock saw a median of {:.4f} ms per request (round trip {:.4f} ms, the kit's refill of the "
                                   "input and digest of the output {:.4f} ms): {:.4f} ms that the reported time does "
                                   "not account for (allowed {:.4f} ms).",
                                   t.op_ms, to_string(sh), repeats, wall, rtt, kit, gap, allowed));
  };
}

void NetworkCase::prepare(Context& ctx, const NetworkAccuracy& want) {
  want_ = want;
  const ImageSet set = load_image_set(ctx.opt.data_dir, Split::test);
  if (set.n < want.images)
    throw std::runtime_error(fmt::format("lab.json asks for the network on {} test images, but {} holds {}",
                                         want.images, set.source, set.n));
  network::RunOptions ro;
  ro.batch = want.images;
  ro.data_dir = ctx.opt.data_dir;
  ro.model_dir = ctx.opt.model_dir;
  ro.op_repeats = 0;
  base_ = network::run_network({"baseline", &baseline::conv_ops, {}}, ro);
  flush_ = std::make_unique<L2Flush>();
}

CaseReport NetworkCase::run(Context& ctx) {
  Session& s = ctx.start();
  L2Flush& flush = *flush_;
  network::RunOptions ro;
  ro.batch = want_.images;
  ro.data_dir = ctx.opt.data_dir;
  ro.model_dir = ctx.opt.model_dir;
  ro.op_repeats = 0;
  const network::RunResult mine = network::run_network({ctx.lab.id, nullptr, remote_conv(s, flush)}, ro);
  const int differ = network::count_differing(base_.predictions, mine.predictions);
  const double drop = 100.0 * (base_.accuracy - mine.accuracy);
  CaseReport rep;
  rep.name = "network accuracy";
  rep.origin = "network";
  rep.shape = fmt::format("the milestone network on the first {} test images", want_.images);
  rep.passed = drop <= want_.max_drop_points;
  rep.outcome = rep.passed ? "accuracy kept" : "accuracy lost";
  rep.worst = want_.max_drop_points > 0 ? std::max(drop, 0.0) / want_.max_drop_points : (drop > 0 ? 1e9 : 0);
  rep.detail = fmt::format(
      "accuracy {:.4f} with this conv, {:.4f} with the fp32 baseline's: {:.2f} points lost, at most {:g} allowed; "
      "{} of {} images classified differently{}",
      mine.accuracy, base_.accuracy, std::max(drop, 0.0), want_.max_drop_points, differ, want_.images,
      rep.passed ? "" : ". Every element passed its tolerance, but the errors all lean the same way and move the "
                        "network's decisions: accumulate fewer terms at low precision");
  return rep;
}

}  // namespace labkit::judge
