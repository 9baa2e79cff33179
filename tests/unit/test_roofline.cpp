// The roofline (grader/judge/roofline.h): the peaks of known GPUs (datasheet boards by name, others from
// their properties), the floor of each precision class and the bound that decides it, the share of
// it (never a percentage above 100), and the report's and the grade page's lines for it.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <algorithm>

#include "labkit/conv.h"
#include "grader/judge/grade_result.h"
#include "grader/judge/pages.h"
#include "grader/judge/report.h"
#include "grader/judge/roofline.h"

namespace rf = labkit::roofline;

namespace {

constexpr double kL2 = 50.0 * 1024 * 1024;  // the H100's and H200's L2, as the runtime reports it

// An H100 SXM as the CUDA runtime describes it: 132 SMs, 1980 MHz, HBM3 at 2619 MHz on 5120 bits.
rf::DeviceProps h100_props(std::string name = "NVIDIA H100 80GB HBM3") {
  return {std::move(name), 9, 0, 132, 1980000, 2619000, 5120, kL2};
}
rf::Peaks h100() { return rf::peaks_for(h100_props()); }

// The network's layers at batch 10000: what `labkit report --compare --batches 10000` floors.
struct Layer {
  double macs, read, write;
};
Layer layer(const labkit::ConvShape& s) {
  return {double(s.macs()), double(s.input_size() + s.mask_size()) * 4, double(s.output_size()) * 4};
}
const Layer conv1 = layer({10000, 4, 1, 86, 86, 7});
const Layer conv2 = layer({10000, 16, 4, 40, 40, 7});

double floor_of(const Layer& l, const rf::Peaks& p, const char* precision) {
  return rf::of(l.macs, l.read, l.write, 0, p, precision).floor_ms;
}

}  // namespace

TEST_CASE("peaks: NVIDIA's datasheet numbers for the H100 SXM and the H200, by the name the driver reports") {
  const rf::Peaks p = h100();
  CHECK(2 * p.fp32_macs_per_s / 1e12 == doctest::Approx(67));           // FP32 67 TFLOPS
  CHECK(2 * p.tf32_tensor_macs_per_s / 1e12 == doctest::Approx(494.5));  // TF32 989 with sparsity
  CHECK(2 * p.fp16_tensor_macs_per_s / 1e12 == doctest::Approx(989.5));  // FP16 1,979 with sparsity
  CHECK(p.bytes_per_s == doctest::Approx(3.35e12));
  CHECK(p.l2_bytes == kL2);
  CHECK(p.basis.find("H100 datasheet (H100 SXM)") != std::string::npos);
  const rf::Peaks h200 = rf::peaks_for({"NVIDIA H200", 9, 0, 132, 1980000, 2619000, 6144, kL2});
  CHECK(2 * h200.fp32_macs_per_s / 1e12 == doctest::Approx(67));
  CHECK(2 * h200.tf32_tensor_macs_per_s / 1e12 == doctest::Approx(494.5));
  CHECK(2 * h200.fp16_tensor_macs_per_s / 1e12 == doctest::Approx(989.5));
  CHECK(h200.bytes_per_s == doctest::Approx(4.8e12));  // not the 4.0 TB/s its clocks would say
  CHECK(h200.basis.find("H200 datasheet (H200 SXM)") != std::string::npos);
}

TEST_CASE("peaks: any other device from its properties and the per-architecture table") {
  // Hopper on a board the table does not name: the per-SM rates at its clocks.
  const rf::Peaks pcie = rf::peaks_for(h100_props("NVIDIA H100 PCIe"));
  CHECK(2 * pcie.fp32_macs_per_s / 1e12 == doctest::Approx(66.9).epsilon(0.01));
  CHECK(2 * pcie.fp16_tensor_macs_per_s / 1e12 == doctest::Approx(1070.4).epsilon(0.01));
  CHECK(pcie.tf32_tensor_macs_per_s * 2 == doctest::Approx(pcie.fp16_tensor_macs_per_s));
  CHECK(pcie.bytes_per_s / 1e9 == doctest::Approx(3352).epsilon(0.01));
  CHECK(pcie.basis.find("sm_90: 132 SMs x 128 FP32 lanes at 1980 MHz") != std::string::npos);
  // A100: half the FP32 lanes per SM.
  CHECK(2 * rf::peaks_for({"NVIDIA A100-SXM4-40GB", 8, 0, 108, 1410000, 1215000, 5120, 40e6}).fp32_macs_per_s / 1e12 ==
        doctest::Approx(19.5).epsilon(0.01));
  // An architecture the table lacks: assumed lanes, no tensor peak, and the basis says so.
  const rf::Peaks unknown = rf::peaks_for({"Future GPU", 11, 0, 10, 1000000, 1000000, 128, 0});
  CHECK(unknown.fp16_tensor_macs_per_s == 0);
  CHECK(unknown.basis.find("not in the kit's table") != std::string::npos);
  CHECK(rf::compute_peak(unknown, "fp16") == unknown.fp32_macs_per_s);
  CHECK(rf::compute_bound(unknown, "tf32") == rf::Bound::fp32_fma);
}

TEST_CASE("the floor of each precision class: fp32 at the FMA peak, tf32 and fp16 at their tensor peak, or DRAM") {
  const rf::Peaks p = h100();
  // fp32: conv2 is compute-bound at the FMA peak, conv1 (one input channel) memory-bound.
  const rf::Roofline c2 = rf::of(conv2.macs, conv2.read, conv2.write, 0, p, "fp32");
  CHECK(c2.bound == rf::Bound::fp32_fma);
  CHECK(c2.floor_ms == doctest::Approx(conv2.macs / p.fp32_macs_per_s * 1e3));
  CHECK(c2.floor_ms == doctest::Approx(1.0822).epsilon(0.001));
  const rf::Roofline c1 = rf::of(conv1.macs, conv1.read, conv1.write, 0, p, "fp32");
  CHECK(c1.bound == rf::Bound::memory);
  // Inputs once, the output once less the 50 MiB the L2 still holds when the clock stops.
  CHECK(c1.memory_ms == doctest::Approx((conv1.read + conv1.write - kL2) / 3.35e12 * 1e3));
  CHECK(c1.compute_ms == doctest::Approx(conv1.macs / p.fp32_macs_per_s * 1e3));
  CHECK(c1.floor_ms == c1.memory_ms);
  CHECK(c1.floor_ms + c2.floor_ms == doctest::Approx(1.4605).epsilon(0.001));
  // tf32, fp16 and any: both layers are DRAM-bound at the tensor peaks; the same floor for all three.
  for (const char* precision : {"tf32", "fp16", "any"}) {
    CAPTURE(precision);
    const rf::Roofline t1 = rf::of(conv1.macs, conv1.read, conv1.write, 0, p, precision);
    const rf::Roofline t2 = rf::of(conv2.macs, conv2.read, conv2.write, 0, p, precision);
    CHECK(t1.bound == rf::Bound::memory);
    CHECK(t2.bound == rf::Bound::memory);
    CHECK(t1.floor_ms + t2.floor_ms == doctest::Approx(0.6599).epsilon(0.001));
  }
  CHECK(rf::of(conv2.macs, conv2.read, conv2.write, 0, p, "tf32").compute_ms ==
        doctest::Approx(conv2.macs / p.tf32_tensor_macs_per_s * 1e3));
  // Where arithmetic dominates, the class's own tensor peak decides: tf32 at half fp16's rate.
  const double macs = 1e12, bytes = 1e6;
  const rf::Roofline tf32 = rf::of(macs, bytes, bytes, 0, p, "tf32");
  const rf::Roofline fp16 = rf::of(macs, bytes, bytes, 0, p, "fp16");
  CHECK(tf32.bound == rf::Bound::tf32_tensor);
  CHECK(tf32.floor_ms == doctest::Approx(macs / p.tf32_tensor_macs_per_s * 1e3));
  CHECK(fp16.bound == rf::Bound::fp16_tensor);
  CHECK(fp16.floor_ms == doctest::Approx(macs / p.fp16_tensor_macs_per_s * 1e3));
  CHECK(fp16.floor_ms < tf32.floor_ms / 1.9);
  CHECK(rf::of(macs, bytes, bytes, 0, p, "any").bound == rf::Bound::fp16_tensor);  // the fastest it may use
  CHECK(rf::of(macs, bytes, bytes, 0, p, "fp32").floor_ms == doctest::Approx(macs / p.fp32_macs_per_s * 1e3));
  CHECK(rf::to_string(rf::Bound::tf32_tensor) == "compute (tf32 tensor peak)");
  CHECK(rf::to_string(rf::Bound::memory) == "memory (DRAM bandwidth)");
  // An output the L2 holds whole costs no DRAM time inside the clock; inputs always do.
  CHECK(rf::of(0, 1e6, 1e6, 0, p, "fp32").memory_ms == doctest::Approx(1e6 / 3.35e12 * 1e3));
}

TEST_CASE("the floor is never stricter than the judge's plausibility bound's rates") {
  // judge/remote.h floor_ms: 4096 multiply-adds per SM and clock, bandwidth from the clocks x 1.25.
  const rf::Peaks p = h100();
  const double judge_macs = 132 * 4096.0 * 1980e6, judge_bytes = 2.0 * 2619e6 * 640 * 1.25;
  for (const double peak : {p.fp32_macs_per_s, p.tf32_tensor_macs_per_s, p.fp16_tensor_macs_per_s}) CHECK(peak < judge_macs);
  CHECK(p.bytes_per_s < judge_bytes);
}

TEST_CASE("rates and shares of one timed shape; above the floor, the share says the peaks are wrong") {
  const rf::Peaks p = h100();
  const rf::Roofline at_peak = rf::of(conv2.macs, conv2.read, conv2.write, conv2.macs / p.fp32_macs_per_s * 1e3, p, "fp32");
  CHECK(at_peak.pct_fp32 == doctest::Approx(100));
  CHECK(at_peak.pct_tensor == -1);  // fp32: no tensor peak applies
  CHECK(at_peak.pct_floor == doctest::Approx(100));
  const rf::Roofline slow = rf::of(conv2.macs, conv2.read, conv2.write, 4 * at_peak.floor_ms, p, "fp32");
  CHECK(slow.pct_fp32 == doctest::Approx(25));
  CHECK(slow.pct_floor == doctest::Approx(25));
  CHECK(slow.gflops == doctest::Approx(2 * conv2.macs / (4 * at_peak.floor_ms / 1e3) / 1e9));
  CHECK(slow.gbps == doctest::Approx((conv2.read + conv2.write) / (4 * at_peak.floor_ms / 1e3) / 1e9));
  // The 12-tensor-cores solution's conv total on an H100 (issue 40: 1.149 ms): against the fp32
  // floor it would read 127%; against its own (tf32) class's floor, 57%.
  const double tf32_floor = floor_of(conv1, p, "tf32") + floor_of(conv2, p, "tf32");
  CHECK(100 * tf32_floor / 1.149 == doctest::Approx(57.4).epsilon(0.005));
  CHECK(100 * (floor_of(conv1, p, "fp32") + floor_of(conv2, p, "fp32")) / 1.149 > 100);
  // Faster than the floor: what is wrong is the table, and the share says so instead of a number.
  const rf::Roofline fast = rf::of(conv2.macs, conv2.read, conv2.write, at_peak.floor_ms / 1.29, p, "fp32");
  CHECK(fast.pct_floor == doctest::Approx(129));
  CHECK(rf::share_text(fast.pct_floor) == "above the floor: the peaks table for this GPU is wrong");
  CHECK(rf::share_text(72.04) == "72.0%");
  CHECK(rf::share_text(100) == "100.0%");
  // Memory only (the map lab): no arithmetic counted, the floor is the bytes at full bandwidth.
  const rf::Roofline map = rf::of(0, 256e6, 256e6, 1.0, p, "fp32");
  CHECK(map.gflops == 0);
  CHECK(map.gbps == doctest::Approx(512));
  CHECK(map.bound == rf::Bound::memory);
  CHECK(map.floor_ms == doctest::Approx((512e6 - kL2) / p.bytes_per_s * 1e3));
  const rf::Roofline none = rf::of(conv2.macs, conv2.read, conv2.write, 0, p, "fp32");
  CHECK(none.gflops == 0);  // no time, no rate (never a division by 0)
  CHECK(none.pct_floor == 0);
  CHECK(none.floor_ms > 0);  // the floor needs no time
}

namespace {

labkit::GradeResult graded(const char* precision, double lab_ms, const rf::Roofline& f) {
  labkit::GradeResult r;
  r.id = "12-tensor-cores";
  r.precision = precision;
  r.verdict = labkit::verdict::kPassed;
  r.timed = true;
  r.peaks = h100();
  labkit::ShapeTiming t;
  t.name = "conv2-batch1000";
  t.lab_ms = lab_ms;
  t.samples = 20;
  t.roofline = f;
  r.timing.push_back(t);
  return r;
}

}  // namespace

TEST_CASE("the report prints a roofline line per timed shape: its class's floor, the bound, the share") {
  const rf::Peaks p = h100();
  const labkit::ConvShape s{1000, 16, 4, 40, 40, 7};
  const Layer l = layer(s);
  const rf::Roofline fp32 = rf::of(l.macs, l.read, l.write, 0.25, p, "fp32");
  labkit::GradeResult r = graded("fp32", 0.25, fp32);
  r.id = "06-fusion";
  std::string text = labkit::format_text(labkit::to_json(r));
  CHECK(text.find("Roofline") != std::string::npos);
  CHECK(text.find("fp32 FMA 67.0 TFLOP/s") != std::string::npos);
  CHECK(text.find("conv2-batch1000") != std::string::npos);
  CHECK(text.find(fmt::format("{:.1f}%", fp32.pct_fp32)) != std::string::npos);
  CHECK(text.find("compute (fp32 FMA peak)") != std::string::npos);
  CHECK(text.find(fmt::format("{:.1f}%", fp32.pct_floor)) != std::string::npos);
  CHECK(text.find("H100 datasheet") != std::string::npos);
  // A tf32 lab: the tensor peak in the heading, the tf32 floor, its share. At batch 1000 the L2
  // holds 50 of conv2's 74 MB of output when the clock stops: the tensor peak decides, barely.
  const rf::Roofline tf32 = rf::of(l.macs, l.read, l.write, 0.06, p, "tf32");
  CHECK(tf32.bound == rf::Bound::tf32_tensor);
  CHECK(tf32.memory_ms > 0.9 * tf32.compute_ms);
  r = graded("tf32", 0.06, tf32);
  text = labkit::format_text(labkit::to_json(r));
  CHECK(text.find("tf32 tensor 494.5 TFLOP/s") != std::string::npos);
  CHECK(text.find("compute (tf32 tensor peak)") != std::string::npos);
  CHECK(text.find(fmt::format("{:.1f}%", tf32.pct_floor)) != std::string::npos);
  CHECK(text.find("for the lab's precision class (tf32)") != std::string::npos);
  // "any" is held to the fp16 tensor peak, and its column shows.
  r = graded("any", 0.06, rf::of(l.macs, l.read, l.write, 0.06, p, "any"));
  CHECK(labkit::format_text(labkit::to_json(r)).find("fp16 tensor 989.5 TFLOP/s") != std::string::npos);
  // The grade page: the same numbers in a table of its own.
  r = graded("tf32", 0.06, tf32);
  const std::string page = labkit::pages::grade_page(labkit::to_json(r));
  CHECK(page.find("id=\"roofline\"") != std::string::npos);
  CHECK(page.find(fmt::format("{:.4f}", tf32.floor_ms)) != std::string::npos);
  CHECK(page.find("compute (tf32 tensor peak)") != std::string::npos);
  CHECK(page.find(fmt::format("{:.1f}%", tf32.pct_floor)) != std::string::npos);
  // The JSON: floor, both limits, the bound and the share.
  const auto j = labkit::to_json(r)["timing"]["shapes"][0]["roofline"];
  CHECK(j["bound"] == "compute (tf32 tensor peak)");
  CHECK(j["pct_of_floor"].get<double>() == doctest::Approx(tf32.pct_floor));
  CHECK(j["above_floor"] == false);
  CHECK(j["memory_ms"].get<double>() == doctest::Approx(tf32.memory_ms));
  // No roofline (Layer Time): no section.
  r.peaks.reset();
  r.timing[0].roofline.reset();
  CHECK(labkit::format_text(labkit::to_json(r)).find("Roofline") == std::string::npos);
  CHECK(labkit::pages::grade_page(labkit::to_json(r)).find("id=\"roofline\"") == std::string::npos);
}

TEST_CASE("a time under the floor: the report, the page and the JSON say the peaks table is wrong, not 129%") {
  const rf::Peaks p = h100();
  const Layer l = layer({1000, 16, 4, 40, 40, 7});
  const double floor = rf::of(l.macs, l.read, l.write, 0, p, "fp32").floor_ms;
  const rf::Roofline f = rf::of(l.macs, l.read, l.write, floor / 1.29, p, "fp32");
  const labkit::GradeResult r = graded("fp32", floor / 1.29, f);
  const std::string text = labkit::format_text(labkit::to_json(r));
  const std::size_t row = text.find("  conv2-batch1000", text.find("Roofline"));
  REQUIRE(row != std::string::npos);
  const std::string line = text.substr(row, text.find('\n', row) - row);
  // The last column, where the share would be: the message (129% of the FMA peak stays in its own
  // column: a rate, not a share of the floor).
  CHECK(line.ends_with("compute (fp32 FMA peak)     above the floor: the peaks table for this GPU is wrong"));
  const std::string page = labkit::pages::grade_page(labkit::to_json(r));
  CHECK(page.find("above the floor: the peaks table for this GPU is wrong") != std::string::npos);
  CHECK(labkit::to_json(r)["timing"]["shapes"][0]["roofline"]["above_floor"] == true);
}
