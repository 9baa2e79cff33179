// labkit-network — the milestone network with a conv that is no lab's: the baseline, the CPU
// reference, or cuDNN when the toolkit has it (the rows `labkit report --compare` sets the labs
// against). Labs run the same program through their own executables (--network).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <chrono>
#include <cstring>
#include <map>
#include <string>

#include "labkit/exit_codes.h"
#include "labkit/network_run.h"
#include "reference/baseline.h"
#ifdef LABKIT_HAVE_CUDNN
#include "reference/cudnn_conv.h"
#endif

int main(int argc, char** argv) {
  const auto program_start = std::chrono::steady_clock::now();
  std::map<std::string, labkit::network::ConvBackend> backends{
      {"baseline", {"baseline", &labkit::baseline::conv_ops}},
      {"cpu", {"cpu-reference", nullptr}},
  };
#ifdef LABKIT_HAVE_CUDNN
  backends["cudnn"] = {"cudnn", &labkit::cudnn::conv_ops};
#endif
  // The first argument names the conv; the rest is the network program's (network_run.h).
  std::string names;
  for (const auto& [name, _] : backends) names += (names.empty() ? "" : "|") + name;
  if (argc < 2 || !backends.contains(argv[1])) {
    fmt::print(stderr, "usage: labkit-network {} --network --batch N --data DIR --model DIR [--op-repeats R]\n", names);
    if (argc >= 2 && std::strcmp(argv[1], "cudnn") == 0)
      fmt::print(stderr, "labkit-network: cuDNN was not found when the kit was configured\n");
    return labkit::exit_code::kUsage;
  }
  return labkit::network::program_main(argc - 1, argv + 1, backends.at(argv[1]), program_start);
}
