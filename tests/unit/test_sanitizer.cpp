// compute-sanitizer logs (grader/tools/sanitizer.h): findings with their lines, host backtraces dropped,
// the error count from the summary, the lab's own file preferred as the location, a log without a
// summary reported as a sanitizer that did not run. The logs are compute-sanitizer's own output,
// recorded from `labkit grade --sanitize --sanitize-logs DIR` on an H200 (tests/unit/tools/).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "grader/tools/sanitizer.h"
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

TEST_CASE("unanchored: junk before a tool line does not hide it; a forged summary never lowers the count") {
  const std::string log =
      "========= COMPUTE-SANITIZER\n"
      "labkit-cheat: no newline here ========= Invalid __global__ write of size 4 bytes\n"
      "=========     at overrun(float *)+0x80 in kernel.cu:17\n"
      "=========     by thread (0,0,0) in block (0,0,0)\n"
      "=========\n"
      "========= ERROR SUMMARY: 0 errors\n"
      "x==========ERROR SUMMARY: 0 errors\n"
      "========= ERROR SUMMARY: 32 errors\n";
  const san::Report r = san::parse_log("memcheck", log, "tests/labs/oob-own-buffer/kernel.cu");
  CHECK(r.banner);
  CHECK(r.completed);
  CHECK(r.errors == 32);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].location == "tests/labs/oob-own-buffer/kernel.cu:17");
  CHECK(r.out_of_bounds == 1);
  CHECK(r.first_out_of_bounds.headline == "Invalid __global__ write of size 4 bytes");
}

TEST_CASE("out-of-bounds findings: invalid global, shared and local accesses, not misaligned ones") {
  CHECK(san::is_out_of_bounds({"Invalid __shared__ read of size 4 bytes", {}, {}}));
  CHECK(san::is_out_of_bounds({"Invalid __local__ write of size 8 bytes", {}, {}}));
  CHECK_FALSE(san::is_out_of_bounds({"Invalid __global__ read of size 16 bytes", {"Address 0x7f04 is misaligned"}, {}}));
  CHECK_FALSE(san::is_out_of_bounds({"Race reported between Write access at kernel.cu:23", {}, {}}));
  CHECK_FALSE(san::is_out_of_bounds({"Program hit cudaErrorLaunchFailure (error 719)", {}, {}}));
}

namespace {

// A run of the memory check that ended as a finished run does: after bye, by itself, status 0.
san::Run finished(int status = 0) {
  san::Run r;
  r.tool = "memcheck";
  r.started = r.by_itself = r.after_bye = r.exited = true;
  r.exit_code = status;
  r.how = "exited with code " + std::to_string(status);
  r.verdict = "passed";
  r.message = "Correct on all 9 cases.";
  r.log_bytes = 100;
  return r;
}

const char* kClean = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n";
const char* kOob =
    "========= COMPUTE-SANITIZER\n"
    "========= Invalid __global__ write of size 4 bytes\n"
    "=========     at overrun(float *)+0x80 in kernel.cu:17\n"
    "=========\n"
    "========= Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified launch failure\"\n"
    "========= ERROR SUMMARY: 33 errors\n";

san::Decision decide(const std::string& log, const san::Run& run) {
  return san::decide(san::parse_log(run.tool, log, "tests/labs/oob-own-buffer/kernel.cu"), run);
}

}  // namespace

TEST_CASE("memory check: clean only for status 0, after bye, by itself, with a summary and right cases") {
  CHECK(decide(kClean, finished()).verdict.empty());
  san::Run r = finished();
  r.verdict = "missing-evidence";  // the technique is not the memory check's business
  CHECK(decide(kClean, r).verdict.empty());
  // The same log with any other end is never clean.
  r = finished();
  r.after_bye = false;
  CHECK(decide(kClean, r).verdict == "protocol-error");
  r = finished();
  r.by_itself = false;
  CHECK(decide(kClean, r).verdict == "protocol-error");
  r = finished();
  r.exited = false;
  r.signal = 9;
  r.how = "was killed by SIGKILL";
  const san::Decision killed = decide("========= COMPUTE-SANITIZER\n", r);
  CHECK(killed.verdict == "protocol-error");
  CHECK(killed.message.find("was killed by SIGKILL after the kit's bye; its log has no summary") != std::string::npos);
  CHECK(decide(kClean, finished(1)).verdict == "protocol-error");
  // A status 0 whose summary is gone (the lab read it out of the pipe) is not clean either.
  CHECK(decide("========= COMPUTE-SANITIZER\n", finished()).verdict == "protocol-error");
}

TEST_CASE("memory check: status 86 is a finding, whatever the log says") {
  const san::Decision d = decide(kOob, finished(san::kFoundErrors));
  CHECK(d.verdict == "out-of-bounds");
  CHECK(d.message.find("tests/labs/oob-own-buffer/kernel.cu:17") != std::string::npos);
  CHECK(d.hint.find("out-of-bounds write") != std::string::npos);
  // The lab forged a clean log: the status still decides.
  CHECK(decide(std::string(kOob) + kClean, finished(san::kFoundErrors)).verdict == "out-of-bounds");
  // The lab took every line out of the pipe: a finding without a line.
  const san::Decision stolen = decide("", finished(san::kFoundErrors));
  CHECK(stolen.verdict == "sanitizer-error");
  CHECK(stolen.message.find("log holds none of them") != std::string::npos);
  // A race is not out of bounds.
  const std::string race =
      "========= Error: Race reported between Write access at racy(float *)+0x10 in kernel.cu:23\n"
      "=========     and Read access at racy(float *)+0x20 in kernel.cu:28 [4 hazards]\n"
      "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n";
  san::Run rc = finished(san::kFoundErrors);
  rc.tool = "racecheck";
  CHECK(decide(race, rc).verdict == "sanitizer-error");
}

TEST_CASE("memory check: the log's out-of-bounds finding names a run that was killed; other failures stay the lab's") {
  san::Run r = finished();
  r.exited = false;
  r.signal = 9;
  r.how = "was killed by SIGKILL";
  CHECK(decide(kOob, r).verdict == "out-of-bounds");
  // The lab's cases failed under the tool (memcheck stopped a kernel: a CUDA error), and it exited
  // early: its own verdict.
  r = finished(0);
  r.after_bye = false;
  r.verdict = "protocol-error";
  r.message = "The lab's program exited with code 0 during conv_forward_gpu.";
  const san::Decision d = decide(kClean, r);
  CHECK(d.verdict == "protocol-error");
  CHECK(d.message.find("exited with code 0 during conv_forward_gpu") != std::string::npos);
  // More log than the tool writes: the lab wrote into it.
  r = finished();
  r.log_bytes = san::kMaxLogBytes + 1;
  CHECK(decide(kClean, r).verdict == "protocol-error");
  // The tool never wrote a line and the run did not finish: it could not start (the kit's).
  r = finished();
  r.exited = true;
  r.exit_code = 1;
  r.after_bye = false;
  r.verdict = "protocol-error";
  r.log_bytes = 0;
  CHECK(decide("", r).verdict == "kit-error");
}

TEST_CASE("front_end: CUDA's bin/ launcher script is replaced by the binary it execs; its folder is shown") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("labkit-test-sanitizer-" + std::to_string(::getpid()));
  fs::create_directories(root / "cuda" / "bin");
  fs::create_directories(root / "cuda" / "compute-sanitizer");
  std::ofstream(root / "cuda" / "bin" / "compute-sanitizer") << "#!/bin/sh\nexec \"$DIR\"/../compute-sanitizer/compute-sanitizer \"$@\"\n";
  std::ofstream(root / "cuda" / "compute-sanitizer" / "compute-sanitizer") << "binary";
  fs::create_directory_symlink(root / "cuda", root / "cuda-link");  // /usr/local/cuda -> cuda-13.0
  const fs::path real = fs::canonical(root / "cuda" / "compute-sanitizer" / "compute-sanitizer");
  CHECK(san::front_end(root / "cuda-link" / "bin" / "compute-sanitizer") == real);
  CHECK(san::folders(real) == std::vector<fs::path>{real.parent_path()});
  // Anywhere else (a PATH entry of its own): the program itself.
  std::ofstream(root / "other") << "binary";
  CHECK(san::front_end(root / "other") == fs::canonical(root / "other"));
  CHECK(san::front_end("/nonexistent/bin/compute-sanitizer") == "/nonexistent/bin/compute-sanitizer");
  CHECK(san::folders("/nonexistent/compute-sanitizer").empty());
  fs::remove_all(root);
}
