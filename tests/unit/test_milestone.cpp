// The milestone report's tables and chart (grader/network/milestone.h) from hand-made runs: every format
// has the columns of the milestone table, numbers in the stated units, failures printed in place
// (never dropped), and the comparison's speedup and differing-image count computed from the rows.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grader/network/milestone.h"

namespace ms = labkit::milestone;
using labkit::network::RunResult;

namespace {

RunResult run(int batch, double op1, double op2, double total, double accuracy, std::string predictions) {
  RunResult r;
  r.backend = "test";
  r.batch = batch;
  r.conv[0].op_ms = op1;
  r.conv[1].op_ms = op2;
  r.total_s = total;
  r.accuracy = accuracy;
  r.correct = static_cast<int>(accuracy * batch + 0.5);
  r.predictions = std::move(predictions);
  r.device = "NVIDIA Test GPU";
  return r;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<ms::Entry> three_batches() {
  return {{"06-fusion (solution)", 100, run(100, 0.0312, 0.0521, 0.41, 0.86, "0123"), ""},
          {"06-fusion (solution)", 1000, run(1000, 0.2, 0.3, 0.62, 0.886, "0123"), ""},
          {"06-fusion (solution)", 10000, std::nullopt, "the conv of 06-fusion failed in conv_forward_gpu: out of memory"}};
}

}  // namespace

TEST_CASE("milestone table, md: the five columns, units, and a failed batch in place") {
  const std::string t = ms::milestone_table("06-fusion (solution)", three_batches(), ms::Format::md);
  CHECK(contains(t, "| Batch Size | Op Time 1 | Op Time 2 | Total Execution Time | Accuracy |"));
  CHECK(contains(t, "| 100 | 0.031 ms | 0.052 ms | 0.41 s | 0.8600 |"));
  CHECK(contains(t, "| 1000 | 0.200 ms | 0.300 ms | 0.62 s | 0.8860 |"));
  CHECK(contains(t, "| 10000 | failed: the conv of 06-fusion failed in conv_forward_gpu: out of memory |"));
  CHECK(contains(t, "NVIDIA Test GPU"));
}

TEST_CASE("milestone table, csv: plain numbers, units in the header, an error column") {
  const std::string t = ms::milestone_table("x", three_batches(), ms::Format::csv);
  CHECK(contains(t, "batch_size,op_time_1_ms,op_time_2_ms,total_execution_time_s,accuracy,error\n"));
  CHECK(contains(t, "100,0.031200,0.052100,0.4100,0.8600,\n"));
  CHECK(contains(t, "10000,,,,,the conv of 06-fusion failed in conv_forward_gpu: out of memory\n"));
}

TEST_CASE("milestone table, tex: a tabular with escaped names") {
  const std::string t = ms::milestone_table("06_fusion", three_batches(), ms::Format::tex);
  CHECK(contains(t, "\\begin{tabular}{lrrrr}"));
  CHECK(contains(t, "Batch Size & Op Time 1 & Op Time 2 & Total Execution Time & Accuracy \\\\"));
  CHECK(contains(t, "100 & 0.031 ms & 0.052 ms & 0.41 s & 0.8600 \\\\"));
  CHECK(contains(t, "\\multicolumn{4}{l}{failed: "));
  CHECK(contains(t, "% 06_fusion on NVIDIA Test GPU"));
  CHECK(contains(t, "\\end{tabular}"));
}

TEST_CASE("milestone table, json: every run with its numbers, and the failure") {
  const auto j = nlohmann::json::parse(ms::milestone_table("x", three_batches(), ms::Format::json));
  REQUIRE(j.at("runs").size() == 3);
  CHECK(j["runs"][0]["conv"][0]["op_ms"].get<double>() == doctest::Approx(0.0312));
  CHECK(j["runs"][1]["accuracy"].get<double>() == doctest::Approx(0.886));
  CHECK(j["runs"][2]["error"].get<std::string>().find("out of memory") != std::string::npos);
  CHECK(j["runs"][2]["batch"] == 10000);
}

TEST_CASE("compare table: speedup of the conv total over the first row, images that differ") {
  std::vector<ms::Entry> rows{{"baseline", 1000, run(1000, 0.5, 2.0, 1.1, 0.88, "01234"), ""},
                              {"06-fusion (solution)", 1000, run(1000, 0.25, 0.25, 0.9, 0.88, "01234"), ""},
                              {"09-fp16 (solution)", 1000, run(1000, 0.1, 0.15, 0.8, 0.86, "01299"), ""},
                              {"cudnn", 1000, std::nullopt, "cuDNN: no fp32 (FMA) forward algorithm"}};
  const std::string md = ms::compare_table(1000, rows, ms::Format::md);
  CHECK(contains(md, "| Implementation | Conv 1 | Conv 2 | Conv total | Speedup | Floor | % of floor | Total Execution Time | Accuracy | Differs from baseline |"));
  CHECK(contains(md, "| baseline | 0.500 ms | 2.000 ms | 2.500 ms | 1.00x |  |  | 1.10 s | 0.8800 | 0 images |"));
  CHECK(contains(md, "| 06-fusion (solution) | 0.250 ms | 0.250 ms | 0.500 ms | 5.00x |  |  | 0.90 s | 0.8800 | 0 images |"));
  CHECK(contains(md, "| 09-fp16 (solution) | 0.100 ms | 0.150 ms | 0.250 ms | 10.00x |  |  | 0.80 s | 0.8600 | 2 images |"));
  CHECK(contains(md, "| cudnn | failed: cuDNN: no fp32 (FMA) forward algorithm |"));
  const std::string csv = ms::compare_table(1000, rows, ms::Format::csv);
  CHECK(contains(csv, "implementation,conv1_ms,conv2_ms,conv_total_ms,speedup,precision,floor_ms,floor_bound,pct_of_floor,"
                      "total_execution_time_s,accuracy,differs_from_first,error\n"));
  CHECK(contains(csv, "09-fp16 (solution),0.100000,0.150000,0.250000,10.000,fp32,,,,0.8000,0.8600,2,\n"));
}

TEST_CASE("compare table: each row against the floor of its own precision class, with the bound that decides it") {
  std::vector<ms::Entry> rows{{"baseline", 10000, run(10000, 5.0, 19.0, 1.1, 0.88, "01234"), ""},
                              {"11-register-tiling (solution)", 10000, run(10000, 0.55, 1.5, 0.9, 0.88, "01234"), ""},
                              {"12-tensor-cores (solution)", 10000, run(10000, 0.55, 0.6, 0.9, 0.88, "01234"), ""},
                              {"13-capstone (solution)", 10000, run(10000, 0.3, 0.3, 0.9, 0.88, "01234"), ""}};
  const char* memory = "memory (DRAM bandwidth)";
  const char* fma = "compute (fp32 FMA peak)";
  for (int k : {0, 1}) {  // fp32: conv1 is memory-bound, conv2 compute-bound at the FMA peak
    rows[k].run->conv[0].roofline_ms = 0.38;
    rows[k].run->conv[0].roofline_bound = memory;
    rows[k].run->conv[1].roofline_ms = 1.08;
    rows[k].run->conv[1].roofline_bound = fma;
  }
  for (int k : {2, 3}) {  // tf32 and any: both layers DRAM-bound at the tensor peaks
    rows[k].run->precision = k == 2 ? "tf32" : "any";
    rows[k].run->conv[0].roofline_ms = 0.38;
    rows[k].run->conv[0].roofline_bound = memory;
    rows[k].run->conv[1].roofline_ms = 0.28;
    rows[k].run->conv[1].roofline_bound = memory;
  }
  const std::string md = ms::compare_table(10000, rows, ms::Format::md);
  CHECK(contains(md, "| baseline | 5.000 ms | 19.000 ms | 24.000 ms | 1.00x | 1.460 ms, fp32: conv1 memory (DRAM bandwidth), "
                     "conv2 compute (fp32 FMA peak) | 6.1% |"));
  CHECK(contains(md, "| 11-register-tiling (solution) | 0.550 ms | 1.500 ms | 2.050 ms | 11.71x | 1.460 ms, fp32: conv1 memory "
                     "(DRAM bandwidth), conv2 compute (fp32 FMA peak) | 71.2% |"));
  // 1.15 ms against the fp32 floor would read 127%; against its tf32 floor, 57.4%.
  CHECK(contains(md, "| 12-tensor-cores (solution) | 0.550 ms | 0.600 ms | 1.150 ms | 20.87x | 0.660 ms, tf32: memory (DRAM "
                     "bandwidth) | 57.4% |"));
  // Faster than its floor: the row says the peaks table is wrong instead of printing 110%.
  CHECK(contains(md, "| 13-capstone (solution) | 0.300 ms | 0.300 ms | 0.600 ms | 40.00x | 0.660 ms, any: memory (DRAM "
                     "bandwidth) | above the floor: the peaks table for this GPU is wrong |"));
  CHECK_FALSE(contains(md, "110.0%"));
  CHECK(contains(md, "at the row's precision class"));
  const std::string csv = ms::compare_table(10000, rows, ms::Format::csv);
  CHECK(contains(csv, "12-tensor-cores (solution),0.550000,0.600000,1.150000,20.870,tf32,0.660000,memory (DRAM bandwidth),57.4,"));
  CHECK(contains(csv, ",any,0.660000,memory (DRAM bandwidth),above the floor: the peaks table for this GPU is wrong,"));
  // The chart: each bar's own tick, its share and bound after its total.
  const std::string svg = ms::compare_svg(10000, rows, "NVIDIA Test GPU");
  CHECK(contains(svg, "class=\"roofline\" data-name=\"12-tensor-cores (solution)\" data-ms=\"0.66"));
  CHECK(contains(svg, "1.150 \u00b7 57.4% of its tf32 floor (memory)"));
  CHECK(contains(svg, "2.050 \u00b7 71.2% of its fp32 floor (conv1 memory, conv2 compute)"));
  CHECK(contains(svg, "0.600 \u00b7 above the floor: the peaks table for this GPU is wrong (any floor, memory)"));
  // A report saved before the bounds were recorded (labkit report --from): its fp32 floor, no bound.
  for (auto& layer : rows[1].run->conv) layer.roofline_bound.clear();
  CHECK(contains(ms::compare_table(10000, rows, ms::Format::md), "| 11.71x | 1.460 ms, fp32 | 71.2% |"));
  CHECK(contains(ms::compare_svg(10000, rows, "GPU"), "2.050 \u00b7 71.2% of its fp32 floor</text>"));
}

TEST_CASE("compare chart: one stacked bar pair per row, failures labelled, well-formed") {
  std::vector<ms::Entry> rows{{"baseline", 10000, run(10000, 5.0, 19.0, 1.5, 0.88, ""), ""},
                              {"a<b>", 10000, std::nullopt, "crashed"}};
  const std::string svg = ms::compare_svg(10000, rows, "NVIDIA Test GPU");
  CHECK(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(svg.ends_with("</svg>\n"));
  CHECK(contains(svg, "Op Time at batch 10000"));
  CHECK(contains(svg, "24.000"));          // the baseline's conv total
  CHECK(contains(svg, "a&lt;b&gt;"));       // names are escaped
  CHECK(contains(svg, "failed: crashed"));
}

TEST_CASE("formats: names parse, others are refused with the list") {
  CHECK(ms::parse_format("tex") == ms::Format::tex);
  CHECK_THROWS_WITH_AS(ms::parse_format("html"), "unknown format 'html': use md, csv, tex or json", std::invalid_argument);
}

TEST_CASE("where the Total Execution Time went: each part, the rest as 'Other', under the last batch") {
  RunResult a = run(10000, 2.0, 3.0, 2.40, 0.92, "01");
  a.load_s = 0.35;
  a.conv[0].layer_ms = 450;
  a.conv[1].layer_ms = 250;
  a.cpu_layers_s = 0.30;
  a.conv[0].wait_ms = 200;      // conv1 waited for the harness's start
  a.conv[0].boundary_ms = 120;  // tensors into the shared-memory file and the output read back
  a.conv[1].boundary_ms = 80;
  const ms::Cells c = ms::breakdown_cells(10000, {{"06-fusion (solution)", 10000, a, ""}, {"cudnn", 10000, std::nullopt, "no"}}, false);
  REQUIRE(c.rows.size() == 1);  // a failed run has no parts (the comparison says why)
  CHECK(c.rows[0] == std::vector<std::string>{"06-fusion (solution)", "2.400 s", "0.350 s", "0.200 s", "0.450 s",
                                              "0.250 s", "0.200 s", "0.300 s", "0.650 s"});
  CHECK(c.header[3] == "Waiting for start-up");
  CHECK(c.header[6] == "Tensors moved and checked");
  // The parts travel in the json format and come back from it; a file older than them reads 0.
  const RunResult back = labkit::network::from_json(labkit::network::to_json(a));
  CHECK(back.conv[0].wait_ms == 200);
  CHECK(back.conv[1].boundary_ms == 80);
  nlohmann::json old_file = labkit::network::to_json(a);
  old_file["conv"][0].erase("wait_ms");
  old_file["conv"][0].erase("boundary_ms");
  CHECK(labkit::network::from_json(old_file).conv[0].wait_ms == 0);
  CHECK(contains(c.caption, "batch 10000 on NVIDIA Test GPU"));
  // Parts timed separately can exceed a short total: "Other" is never negative.
  a.total_s = 1.0;
  CHECK(ms::breakdown_cells(10000, {{"x", 10000, a, ""}}, true).rows[0].back() == "0.0000");
  // In the comparison's Markdown, after the last batch's table only; and under a lab's own table.
  ms::Report rep;
  rep.compare = true;
  rep.batches = {100, 10000};
  rep.runs = {{{"baseline", 100, run(100, 1, 1, 1, 0.9, "0"), ""}, {"baseline", 10000, a, ""}}};
  const std::string md = ms::render(rep, ms::Format::md);
  CHECK(md.find("Where the Total Execution Time went") == md.rfind("Where the Total Execution Time went"));
  CHECK(md.find("**Batch 10000**") < md.find("Where the Total Execution Time went"));
  CHECK_FALSE(contains(ms::render(rep, ms::Format::csv), "Where the Total"));
  rep.compare = false;
  CHECK(contains(ms::render(rep, ms::Format::md), "Where the Total Execution Time went** at batch 10000"));
}

TEST_CASE("where a harness's start-up went: its phases by name, in the json and back, only for rows that have them") {
  RunResult lab = run(10000, 0.4, 0.44, 0.9, 0.92, "01");
  lab.startup_ms = {{"judge's CUDA start-up", 180.4}, {"spawn to hello", 310.0}, {"of which the harness's CUDA", 150.2}};
  RunResult in_process = run(10000, 5.0, 19.1, 0.7, 0.92, "01");  // no harness: no phases
  RunResult other_kit = lab;  // a file whose phases are another kit's: what it lacks stays blank
  other_kit.startup_ms = {{"spawn to hello", 400.0}};
  const ms::Cells c = ms::startup_cells(
      10000, {{"12-tensor-cores (solution)", 10000, lab, ""}, {"baseline (in-process)", 10000, in_process, ""},
              {"older", 10000, other_kit, ""}, {"cudnn", 10000, std::nullopt, "no"}});
  REQUIRE(c.rows.size() == 2);
  CHECK(c.header == std::vector<std::string>{"Implementation", "judge's CUDA start-up", "spawn to hello",
                                             "of which the harness's CUDA"});
  CHECK(c.rows[0] == std::vector<std::string>{"12-tensor-cores (solution)", "180 ms", "310 ms", "150 ms"});
  CHECK(c.rows[1] == std::vector<std::string>{"older", "", "400 ms", ""});
  CHECK(contains(c.caption, "not a split of the total"));
  CHECK(ms::startup_cells(10000, {{"baseline (in-process)", 10000, in_process, ""}}).rows.empty());
  // The phases travel in the json format in their order; a file older than them has none.
  const RunResult back = labkit::network::from_json(labkit::network::to_json(lab));
  REQUIRE(back.startup_ms.size() == 3);
  CHECK(back.startup_ms[1].name == "spawn to hello");
  CHECK(back.startup_ms[1].ms == 310.0);
  nlohmann::json old_file = labkit::network::to_json(lab);
  old_file.erase("startup_ms");
  CHECK(labkit::network::from_json(old_file).startup_ms.empty());
  // In the Markdown under the breakdown, not in csv; absent where no row has phases.
  ms::Report rep;
  rep.compare = true;
  rep.batches = {10000};
  rep.runs = {{{"baseline (in-process)", 10000, in_process, ""}}, {{"12-tensor-cores (solution)", 10000, lab, ""}}};
  const std::string md = ms::render(rep, ms::Format::md);
  CHECK(md.find("Where the Total Execution Time went") < md.find("Where a harness's start-up went"));
  CHECK_FALSE(contains(ms::render(rep, ms::Format::csv), "start-up went"));
  rep.runs.pop_back();
  CHECK_FALSE(contains(ms::render(rep, ms::Format::md), "start-up went"));
}
