// Nsight Compute's CSV (grader/tools/ncu.h): kernels in launch order with their metrics in base units,
// thousands separators, the units row and ncu's own lines skipped, a missing metric shown as n/a,
// and ncu's complaints told apart. The CSV files are ncu's own output, recorded from `labkit
// profile 03-tiling --solution --keep` on an H200 (tests/unit/tools/).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "grader/tools/ncu.h"
#include "source_file.h"

namespace ncu = labkit::ncu;

namespace {

std::string fixture(const std::string& name) { return labkit::test::source_file("tests/unit/tools/" + name); }

}  // namespace

TEST_CASE("ncu's raw CSV of one baseline kernel: every metric the summary shows") {
  const std::vector<ncu::Kernel> ks = ncu::parse_csv(fixture("ncu-baseline-conv1.csv"));
  REQUIRE(ks.size() == 1);
  const ncu::Kernel& k = ks[0];
  CHECK(!k.name.empty());
  for (const ncu::Row& row : ncu::rows())
    for (const std::string& m : row.metrics) CHECK_MESSAGE(k.values.count(m) == 1, "missing " << m);
  CHECK(k.values.at("gpu__time_duration.sum") > 1000);  // ns: a batch-1000 conv takes far more than 1 us
  CHECK(k.values.at("launch__registers_per_thread") > 0);
  const std::string table = ncu::format_shape({"conv1 B=1000", "[shape]", ks, ncu::parse_csv(fixture("ncu-lab-conv1.csv"))});
  CHECK(table.find("L2 hit rate") != std::string::npos);
  CHECK(table.find("kernel time") != std::string::npos);
  CHECK(table.find("n/a") == std::string::npos);
  // ncu names it "unnamed>::conv_forward_kernel(float *, ...)": the table shows the function's name.
  CHECK(table.find(" conv_forward_kernel ") != std::string::npos);
  CHECK(table.find("unnamed") == std::string::npos);
}

TEST_CASE("hand-written CSV: quoting, thousands separators, units row, n/a, several kernels") {
  const std::string csv =
      "==PROF== Connected to process 1 (/x)\n"
      "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"gpu__time_duration.sum\",\"launch__registers_per_thread\"\n"
      "\"\",\"\",\"\",\"\",\"nsecond\",\"register/thread\"\n"
      "\"0\",\"im2col, \"\"fast\"\"\",\"(256, 1, 1)\",\"(1,024, 1, 1)\",\"1,234,567\",\"32\"\n"
      "\"1\",\"matmul\",\"(128, 1, 1)\",\"(10, 4, 1)\",\"2000\",\"n/a\"\n"
      "==PROF== Disconnected from process 1\n";
  const std::vector<ncu::Kernel> ks = ncu::parse_csv(csv);
  REQUIRE(ks.size() == 2);
  CHECK(ks[0].name == "im2col, \"fast\"");
  CHECK(ks[0].block == "(256, 1, 1)");
  CHECK(ks[0].values.at("gpu__time_duration.sum") == doctest::Approx(1234567));
  CHECK(ks[1].values.count("launch__registers_per_thread") == 0);
  const std::string table = ncu::format_shape({"conv2 B=1000", "[s]", {ks[1]}, ks});
  CHECK(table.find("lab 2") != std::string::npos);
  CHECK(table.find("n/a") != std::string::npos);
  CHECK(table.find("1.237 ms lab (2 kernels)") != std::string::npos);
}

TEST_CASE("ncu's complaints: counters not permitted, nothing profiled, another error") {
  CHECK(ncu::problem_of("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n").problem ==
        ncu::Problem::no_permission);
  CHECK(ncu::problem_of("==WARNING== No kernels were profiled.\n").problem == ncu::Problem::no_kernels);
  const ncu::Complaint c = ncu::problem_of("==PROF== x\n==ERROR== Failed to initialize the profiler\n");
  CHECK(c.problem == ncu::Problem::other);
  CHECK(c.text.find("Failed to initialize") != std::string::npos);
  CHECK(ncu::problem_of("==PROF== Disconnected\n").problem == ncu::Problem::none);
  CHECK(ncu::metric_list().find("lts__t_sector_hit_rate.pct") != std::string::npos);
}

TEST_CASE("the 'output not written' warning: no stores and no DRAM writes, not atomics into the output") {
  ncu::Kernel base{"conv_forward_kernel", "(1,1,1)", "(1,1,1)",
                   {{"gpu__time_duration.sum", 2e6}, {"l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum", 1e8},
                    {"dram__bytes_write.sum", 1e8}}};
  // 07's solution adds into the output with red.global.add: no plain store, 100 MB reach DRAM.
  ncu::Kernel atomics{"conv_atomic_kernel", "(1,1,1)", "(1,1,1)",
                      {{"gpu__time_duration.sum", 1.6e6}, {"l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum", 0},
                       {"dram__bytes_write.sum", 1e8}}};
  const std::string ok = ncu::format_shape({"conv1 B=1000", "[shape]", {base}, {atomics}});
  CHECK(ok.find("not written") == std::string::npos);
  CHECK(ok.find("1.25x") != std::string::npos);
  // The untouched skeleton: launches a kernel that writes nothing anywhere.
  ncu::Kernel empty{"conv_atomic_kernel", "(1,1,1)", "(1,1,1)",
                    {{"gpu__time_duration.sum", 3e3}, {"l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum", 0},
                     {"dram__bytes_write.sum", 0}}};
  const std::string skeleton = ncu::format_shape({"conv1 B=1000", "[shape]", {base}, {empty}});
  CHECK(skeleton.find("the output is not written") != std::string::npos);
  CHECK(skeleton.find("x\n") == std::string::npos);  // no ratio
}

TEST_CASE("Nsight Compute's CLI: the target/<platform>/ncu whose ELF machine is this process's, behind a script") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "labkit-test-ncu-cli";
  fs::remove_all(root);
  fs::create_directories(root / "bin");
  fs::create_directories(root / "nc" / "target" / "linux-desktop-t210-a64");
  fs::create_directories(root / "nc" / "target" / "linux-desktop-glibc_2_11_3-x64");
  // This process's own header, and the same header claiming another machine (aarch64, 183).
  std::ifstream self("/proc/self/exe", std::ios::binary);
  std::string header(64, '\0');
  self.read(header.data(), 64);
  std::string other = header;
  other[18] = char(183);
  other[19] = 0;
  std::ofstream(root / "nc" / "target" / "linux-desktop-t210-a64" / "ncu", std::ios::binary) << other;
  std::ofstream(root / "nc" / "target" / "linux-desktop-glibc_2_11_3-x64" / "ncu", std::ios::binary) << header;
  std::ofstream(root / "bin" / "ncu") << "#!/bin/sh\nexec ../nc/ncu \"$@\"\n";
  std::ofstream(root / "nc" / "ncu") << "#!/bin/sh\nexec target/linux-desktop-glibc_2_11_3-x64/ncu \"$@\"\n";
  // Beside the script in the version folder.
  CHECK(ncu::cli_binary(root / "nc" / "ncu", {}) == fs::canonical(root / "nc" / "target" / "linux-desktop-glibc_2_11_3-x64" / "ncu"));
  // The toolkit's bin/ncu: found through the install folders.
  CHECK(ncu::cli_binary(root / "bin" / "ncu", {}).empty());
  CHECK(ncu::cli_binary(root / "bin" / "ncu", {root / "nc"}) ==
        fs::canonical(root / "nc" / "target" / "linux-desktop-glibc_2_11_3-x64" / "ncu"));
  // Only another machine's binary: none.
  fs::remove(root / "nc" / "target" / "linux-desktop-glibc_2_11_3-x64" / "ncu");
  CHECK(ncu::cli_binary(root / "nc" / "ncu", {root / "nc"}).empty());
  fs::remove_all(root);
}
