// compute-sanitizer logs (labkit/sanitizer.h): findings with their lines, host backtraces dropped,
// the error count from the summary, the lab's own file preferred as the location, a log without a
// summary reported as a sanitizer that did not run. The logs are compute-sanitizer's own output,
// recorded from `labkit grade --sanitize --sanitize-logs DIR` on an H200 (tests/unit/tools/).
#include <doctest/doctest.h>

#include <string>

#include "labkit/sanitizer.h"
#include "source_file.h"

namespace san = labkit::sanitizer;

namespace {

std::string fixture(const std::string& name) { return labkit::test::source_file("tests/unit/tools/" + name); }

}  // namespace

TEST_CASE("racecheck: a race between a write and a read, at the lab's lines") {
  const san::Report r = san::parse_log("racecheck", fixture("racecheck-tiling-race.log"), "tests/labs/tiling-race/kernel.cu");
  CHECK(r.completed);
  CHECK(r.errors > 0);
  REQUIRE(!r.findings.empty());
  const san::Finding& f = r.findings.front();
  CHECK(f.headline == "Race reported between Write access at tests/labs/tiling-race/kernel.cu:23 in racy_tiled");
  CHECK(f.location == "tests/labs/tiling-race/kernel.cu:23");
  REQUIRE(!f.detail.empty());
  CHECK(f.detail[0].starts_with("and Read access at tests/labs/tiling-race/kernel.cu:28 in racy_tiled ["));
  CHECK(r.errors == 12);  // racecheck's own summary: 13 hazards displayed (12 errors, 1 warning)
  CHECK(r.findings_total == 13);
  CHECK(san::explain(f).find("__syncthreads()") != std::string::npos);
  for (const san::Finding& x : r.findings)
    for (const std::string& d : x.detail) CHECK(d.find("Host Frame") == std::string::npos);
}

TEST_CASE("memcheck: an out-of-bounds write, its thread and its address") {
  const san::Report r = san::parse_log("memcheck", fixture("memcheck-oob-write.log"), "tests/labs/oob-write/kernel.cu");
  CHECK(r.completed);
  CHECK(r.errors > 0);
  REQUIRE(!r.findings.empty());
  const san::Finding& f = r.findings.front();
  CHECK(f.headline == "Invalid __global__ write of size 4 bytes");
  CHECK(f.location == "tests/labs/oob-write/kernel.cu:4");
  REQUIRE(f.detail.size() >= 3);
  CHECK(f.detail[0] == "at tests/labs/oob-write/kernel.cu:4 in stray");
  CHECK(f.detail[1] == "by thread (0,0,0) in block (0,0,0)");
  CHECK(r.errors == 33);
  CHECK(san::explain(f).find("out-of-bounds write") != std::string::npos);
  CHECK(r.findings.size() <= 3);
  CHECK(r.findings_total >= int(r.findings.size()));
}

TEST_CASE("clean runs: a summary with no errors and no findings (memcheck's and racecheck's own)") {
  for (const char* name : {"memcheck-clean.log", "racecheck-clean.log"}) {
    const san::Report r = san::parse_log("memcheck", fixture(name), "labs/03-tiling/kernel.cu");
    CHECK_MESSAGE(r.completed, name);
    CHECK(r.errors == 0);
    CHECK(r.findings.empty());
    CHECK(r.problem.empty());
  }
}

TEST_CASE("hand-written forms: both location styles, a synccheck barrier, misalignment in a detail line") {
  const std::string log =
      "========= COMPUTE-SANITIZER\n"
      "========= Barrier error detected. Divergent thread(s) in warp\n"
      "=========     at 0x1f0 in /kit/labs/03-tiling/kernel.cu:41:conv(float *)\n"
      "=========     by thread (3,0,0) in block (0,0,0)\n"
      "=========\n"
      "========= Invalid __global__ read of size 16 bytes\n"
      "=========     at conv(float *)+0x90 in kernel.cu:57\n"
      "=========     Address 0x7f0000000004 is misaligned\n"
      "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
      "=========         Host Frame: cuLaunchKernel [0x2d] in libcuda.so.1\n"
      "=========\n"
      "========= ERROR SUMMARY: 2 errors\n";
  const san::Report r = san::parse_log("synccheck", log, "labs/03-tiling/kernel.cu");
  CHECK(r.completed);
  CHECK(r.errors == 2);
  REQUIRE(r.findings.size() == 2);
  CHECK(r.findings[0].location == "/kit/labs/03-tiling/kernel.cu:41");  // not the "at 0x.. in" form: kept
  CHECK(san::explain(r.findings[0]).find("barrier") != std::string::npos);
  CHECK(r.findings[1].location == "labs/03-tiling/kernel.cu:57");
  CHECK(r.findings[1].detail[0] == "at labs/03-tiling/kernel.cu:57 in conv");
  CHECK(r.findings[1].detail.size() == 2);  // the host backtrace is not kept
  CHECK(san::explain(r.findings[1]).find("16-byte aligned") != std::string::npos);
  CHECK(san::relative_to(r.findings[0].location, "/kit") == "labs/03-tiling/kernel.cu:41");
}

TEST_CASE("a sanitizer that could not run: no summary, the problem is its first lines") {
  const san::Report r = san::parse_log("memcheck",
                                       "========= COMPUTE-SANITIZER\n========= Error: Device not supported\n", "");
  CHECK_FALSE(r.completed);
  CHECK(r.problem.find("Device not supported") != std::string::npos);
  CHECK_FALSE(san::parse_log("memcheck", "", "").completed);
  CHECK(san::parse_log("memcheck", "", "").problem == "compute-sanitizer wrote no log");
}
