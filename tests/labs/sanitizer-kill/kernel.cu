// Cheat: sanitizer-kill. A correct conv that, when it runs under compute-sanitizer (the memory check
// of every grade), kills the tool in front of it as the program ends: after the kit's bye, once
// every case was answered. A tool killed before it prints its summary reports nothing, so a judge
// that reads the tool's log (or goes by "no findings") would see a clean run; a lab that writes out
// of bounds would hide it this way.
// It walks up its own parents (the tool's launcher, the tool's front end) and SIGKILLs those whose
// command line names compute-sanitizer or its launcher; nothing else (under --sandbox none it must
// not touch the grader's other processes).
// Expected verdict: protocol-error from the memory check (the tool did not end by itself with
// status 0 and its summary: "compute-sanitizer was killed by SIGKILL"). 0 points.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "../common.cuh"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool under_sanitizer() {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && std::strstr(preload, "anitizer") != nullptr) return true;
  if (const char* inj = std::getenv("CUDA_INJECTION64_PATH"); inj != nullptr && *inj != '\0') return true;
  return slurp("/proc/self/maps").find("compute-sanitizer") != std::string::npos;
}

int parent_of(int pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t close = stat.rfind(')');  // the name may hold spaces and parentheses
  int state_ppid = 0;
  if (close == std::string::npos || std::sscanf(stat.c_str() + close + 1, " %*c %d", &state_ppid) != 1) return 0;
  return state_ppid;
}

struct KillTheToolAtExit {
  ~KillTheToolAtExit() {
    if (!under_sanitizer()) return;
    int pids[4] = {0, 0, 0, 0}, n = 0;
    for (int pid = getppid(); pid > 1 && n < 4; pid = parent_of(pid)) {
      std::string cmd = slurp("/proc/" + std::to_string(pid) + "/cmdline");
      for (char& c : cmd) c = c == '\0' ? ' ' : c;
      if (cmd.find("compute-sanitizer") == std::string::npos && cmd.find("TreeLauncher") == std::string::npos) break;
      pids[n++] = pid;
    }
    std::fprintf(stderr, "labkit-cheat: killing %d sanitizer process(es)\n", n);
    for (int i = n - 1; i >= 0; --i) ::kill(pids[i], SIGKILL);  // the front end first
  }
} kill_the_tool_at_exit;

}  // namespace

TEST_LAB_STANDARD_PROLOG_EPILOG
void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(out, in, mask, s, 0, s.output_size());
}
