// The roofline (labkit/roofline.h): the peaks of known GPUs from their properties, one shape's
// fractions and floor, and the report's lines for it.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <algorithm>

#include "labkit/conv.h"
#include "labkit/grade_result.h"
#include "labkit/pages.h"
#include "labkit/report.h"
#include "labkit/roofline.h"

namespace rf = labkit::roofline;

// An H100 SXM as the CUDA runtime describes it: 132 SMs, 1980 MHz, HBM3 at 2619 MHz on 5120 bits.
rf::Peaks h100() { return rf::peaks_for(9, 0, 132, 1980000, 2619000, 5120); }

TEST_CASE("peaks from the device's properties: the H100's rated numbers") {
  const rf::Peaks p = h100();
  CHECK(2 * p.fp32_macs_per_s / 1e12 == doctest::Approx(66.9).epsilon(0.01));  // NVIDIA: 67 TFLOP/s
  CHECK(2 * p.fp16_tensor_macs_per_s / 1e12 == doctest::Approx(1070.4).epsilon(0.01));
  CHECK(p.tf32_tensor_macs_per_s * 2 == doctest::Approx(p.fp16_tensor_macs_per_s));
  CHECK(p.bytes_per_s / 1e9 == doctest::Approx(3352).epsilon(0.01));  // NVIDIA: 3.35 TB/s
  CHECK(p.basis.find("sm_90: 132 SMs x 128 FP32 lanes at 1980 MHz") != std::string::npos);
  // A100: half the FP32 lanes per SM.
  CHECK(2 * rf::peaks_for(8, 0, 108, 1410000, 1215000, 5120).fp32_macs_per_s / 1e12 == doctest::Approx(19.5).epsilon(0.01));
  // An architecture the table lacks: assumed lanes, no tensor peak, and the basis says so.
  const rf::Peaks unknown = rf::peaks_for(11, 0, 10, 1000000, 1000000, 128);
  CHECK(unknown.fp16_tensor_macs_per_s == 0);
  CHECK(unknown.basis.find("not in the kit's table") != std::string::npos);
  CHECK(rf::compute_peak(unknown, "fp16") == unknown.fp32_macs_per_s);
}

TEST_CASE("one shape against the peaks: GFLOP/s, fractions and the floor at the lab's precision") {
  const rf::Peaks p = h100();
  // conv2 of the network at batch 10000: 3.63e10 multiply-adds.
  const labkit::ConvShape conv2{10000, 16, 4, 40, 40, 7};
  const double macs = double(conv2.macs());
  const double bytes = double(conv2.input_size() + conv2.mask_size() + conv2.output_size()) * 4;
  const rf::Roofline at_peak = rf::of(macs, bytes, macs / p.fp32_macs_per_s * 1e3, p, "fp32");
  CHECK(at_peak.pct_fp32 == doctest::Approx(100));
  CHECK(at_peak.pct_tensor == -1);  // fp32: no tensor peak applies
  CHECK(at_peak.floor_ms == doctest::Approx(macs / p.fp32_macs_per_s * 1e3));  // compute-bound
  const rf::Roofline slow = rf::of(macs, bytes, 4 * at_peak.floor_ms, p, "fp32");
  CHECK(slow.pct_fp32 == doctest::Approx(25));
  CHECK(slow.gflops == doctest::Approx(2 * macs / (4 * at_peak.floor_ms / 1e3) / 1e9));
  // fp16: held to the tensor peak, a floor 16 times lower than fp32's.
  const rf::Roofline half = rf::of(macs, bytes, 1.0, p, "fp16");
  CHECK(half.pct_tensor > 0);
  CHECK(half.floor_ms == doctest::Approx(std::max(macs / p.fp16_tensor_macs_per_s, bytes / p.bytes_per_s) * 1e3));
  // Memory only (the map lab): no arithmetic counted, the floor is the bytes at full bandwidth.
  const rf::Roofline map = rf::of(0, 1e9, 1.0, p, "fp32");
  CHECK(map.gflops == 0);
  CHECK(map.gbps == doctest::Approx(1000));
  CHECK(map.floor_ms == doctest::Approx(1e9 / p.bytes_per_s * 1e3));
  CHECK(rf::of(macs, bytes, 0, p, "fp32").gflops == 0);  // no time, no rate (never a division by 0)
}

TEST_CASE("the report prints a roofline line per timed shape, with the peaks it used") {
  labkit::GradeResult r;
  r.id = "06-fusion";
  r.precision = "fp32";
  r.verdict = labkit::verdict::kPassed;
  r.timed = true;
  r.peaks = h100();
  labkit::ShapeTiming t;
  t.name = "conv2-batch100";
  t.lab_ms = 0.0438;
  t.samples = 20;
  t.roofline = rf::of(3.63e8, 2.3e7, t.lab_ms, *r.peaks, "fp32");
  r.timing.push_back(t);
  const std::string text = labkit::format_text(labkit::to_json(r));
  CHECK(text.find("Roofline") != std::string::npos);
  CHECK(text.find("fp32 FMA 66.9 TFLOP/s") != std::string::npos);
  CHECK(text.find("conv2-batch100") != std::string::npos);
  CHECK(text.find(fmt::format("{:.1f}%", t.roofline->pct_fp32)) != std::string::npos);
  CHECK(text.find("sm_90: 132 SMs") != std::string::npos);
  // The grade page: the same numbers in a table of its own.
  const std::string page = labkit::pages::grade_page(labkit::to_json(r));
  CHECK(page.find("id=\"roofline\"") != std::string::npos);
  CHECK(page.find(fmt::format("{:.1f}%", t.roofline->pct_fp32)) != std::string::npos);
  CHECK(page.find(fmt::format("{:.4f}", t.roofline->floor_ms)) != std::string::npos);
  // No roofline (Layer Time): no section.
  r.peaks.reset();
  r.timing[0].roofline.reset();
  CHECK(labkit::format_text(labkit::to_json(r)).find("Roofline") == std::string::npos);
  CHECK(labkit::pages::grade_page(labkit::to_json(r)).find("id=\"roofline\"") == std::string::npos);
}
