// labkit-network — the milestone program, run once per row of `labkit report`: the network with
// the baseline's conv, the CPU reference, cuDNN when the toolkit has it, or a lab's conv run in
// the lab's sandboxed harness (`lab --harness EXE --lab ID`): this program is then the judge of
// that lab's layers, and every time and output it prints was checked on this side.
#include <CLI/CLI.hpp>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "grader/judge/network_case.h"
#include "grader/protocol/host_pages.h"
#include "labkit/cuda_check.h"
#include "grader/judge/device.h"
#include "grader/core/exit_codes.h"
#include "grader/judge/judge.h"
#include "grader/judge/lab_spec.h"
#include "grader/network/network_run.h"
#include "grader/core/random.h"
#include "grader/judge/session.h"
#include "reference/baseline.h"
#include "reference/network.h"
#ifdef LABKIT_HAVE_CUDNN
#include "reference/cudnn_conv.h"
#endif

extern char** environ;

namespace {

// `labkit-network populate-tensor-file BYTES`, with the tensor file as descriptor 3: makes its
// pages (labkit/host_pages.h) and exits. run_lab starts it beside its own CUDA start-up, so the
// 1.3 GB of conv1's tensors at batch 10000 are allocated and zeroed in a process of their own:
// populating them in this one held its memory map lock and stalled CUDA's start-up (0.5 s on an
// H100 host), and leaving them to the harness put 0.2-0.4 s before conv1's first request.
int populate_tensor_file(const char* bytes_text) {
  const std::size_t bytes = std::strtoull(bytes_text, nullptr, 10);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0);
  if (p == MAP_FAILED) return 1;
  return labkit::fresh::populate(p, bytes) ? 0 : 1;
}

// Starts that child; -1 when it cannot (the pages then come as before, at their first touch).
pid_t spawn_populate(int fd, std::size_t bytes) {
  if (fd == 3) return -1;  // dup2(3, 3) would keep its close-on-exec flag
  posix_spawn_file_actions_t actions;
  if (::posix_spawn_file_actions_init(&actions) != 0) return -1;
  ::posix_spawn_file_actions_adddup2(&actions, fd, 3);
  std::string size = std::to_string(bytes), name = "labkit-network", mode = "populate-tensor-file";
  char* argv[] = {name.data(), mode.data(), size.data(), nullptr};
  pid_t pid = -1;
  if (::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv, environ) != 0) pid = -1;
  ::posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// `lab --harness EXE --lab ID [--precision P] [--sandbox MODE]`, then the network's own options.
int run_lab(int argc, char** argv, std::chrono::steady_clock::time_point program_start) {
  std::string harness, lab, precision = "fp32", mode = "bubblewrap";
  std::vector<std::string> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& into) {
      if (i + 1 < argc) into = argv[++i];
    };
    if (a == "--harness") value(harness);
    else if (a == "--lab") value(lab);
    else if (a == "--precision") value(precision);
    else if (a == "--sandbox") value(mode);
    else rest.push_back(a);
  }
  // The batch the network will run, read ahead of its own parsing: conv1's tensors are the
  // biggest the lab's harness gets, and the file holding them is made while the data loads.
  int batch = labkit::network::RunOptions{}.batch;
  for (std::size_t i = 1; i + 1 < rest.size(); ++i)
    if (rest[i] == "--batch") batch = std::atoi(rest[i + 1].c_str());
  if (harness.empty() || lab.empty()) {
    fmt::print(stderr, "usage: labkit-network lab --harness EXE --lab ID [--precision fp32|fp16|tf32|any] [--sandbox bubblewrap|none] "
                       "--network --batch N --data DIR --model DIR [--op-repeats R]\n");
    return labkit::exit_code::kUsage;
  }
  const char* no_device = "no usable CUDA device: the lab's conv needs one";
  // This side's CUDA start-up (the device check, the context, the L2 flush buffer) begins first
  // and goes on beside the sandbox's probe, the harness's start and the loading of the test set:
  // all of it counts in Total Execution Time, and none of it needs the others. The first conv
  // waits for it: without a device it throws network::NoDevice there (exit 77).
  std::promise<bool> device_found;
  std::future<bool> has_device = device_found.get_future();
  std::unique_ptr<labkit::L2Flush> flush;
  // Where the harness's start-up went (RunResult::startup_ms), each phase timed where it ran.
  using Clock = std::chrono::steady_clock;
  const auto ms_between = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  double judge_cuda_ms = 0, spawn_ms = 0, hello_ms = 0, tensor_file_ms = 0, pages_wait_ms = 0, ready_ms = 0;
  std::future<void> started = std::async(std::launch::async, [&] {
    const auto t0 = Clock::now();
    const bool found = labkit::cuda_device_available();
    device_found.set_value(found);
    if (!found) throw labkit::network::NoDevice(no_device);
    flush = std::make_unique<labkit::L2Flush>();
    judge_cuda_ms = ms_between(t0, Clock::now());
  });
  try {
    labkit::SessionOptions so;
    so.harness = harness;
    so.lab_id = lab;
    so.kind = "conv";
    so.sandbox = labkit::sandbox::parse_mode(mode);
    // bwrap is not probed before the spawn (its three runs came before the harness's start, all
    // in Total Execution Time); a harness that does not start is explained by the probe then.
    const bool sandboxed = so.sandbox == labkit::sandbox::Mode::bubblewrap;
    if (sandboxed) {
      so.probe = labkit::sandbox::assume();
      if (!so.probe.available) throw std::runtime_error("the sandbox (bubblewrap) cannot start here: " + so.probe.why);
      for (const std::string& h : labkit::judge::kit_paths_to_hide()) so.policy.hide.push_back(h);
    }
    const auto explain_sandbox = [sandboxed] {
      if (!sandboxed) return;
      const labkit::sandbox::Probe p = labkit::sandbox::probe();
      if (!p.available) throw std::runtime_error("the sandbox (bubblewrap) cannot start here: " + p.why);
    };
    so.deadline = std::chrono::steady_clock::now() + std::chrono::minutes(20);
    // conv1's pinned host arrays (1.3 GB at batch 10000; conv2's fit in them, and
    // judge/network_case.h asks for pinned arrays): the harness makes their pages while its CUDA
    // starts and registers them before its hello. A batch the network will refuse reserves nothing.
    const bool network_batch = batch >= 1 && batch <= 100000;
    // No CUPTI tracer in the harness: grading records every kernel so that a lab cannot tell its
    // timed calls from the others (server.h, window_open), but this program asks for no records
    // (its requests name no "executed_out") and judges no evidence, so the tracer's start-up and
    // its cost per kernel would be paid for nothing. The output is still sealed by the digest and
    // checked, and the Op Time bounded, as before.
    so.harness_args.push_back("--no-trace");
    if (network_batch) {
      const labkit::ConvShape s1 = labkit::reference::network::conv1_shape(batch);
      so.harness_args.push_back(fmt::format("--reserve-pinned={},{}", s1.input_size(), s1.output_size()));
    }
    labkit::Session session(so);
    // The lab's harness (its sandbox, its own CUDA start-up) starts beside this side's. It is
    // spawned from this thread: its sandbox dies with the thread that spawned it. Without a
    // device, that is the answer, whatever the harness did.
    const auto spawning = Clock::now();
    try {
      session.spawn();
      spawn_ms = ms_between(spawning, Clock::now());
    } catch (...) {
      if (!has_device.get()) throw labkit::network::NoDevice(no_device);
      explain_sandbox();
      throw;
    }
    // Beside them, with the tensor file for conv1 (1.3 GB at batch 10000) made by a child
    // process, the harness is greeted (its pinned arrays made by then) and maps the file
    // (harness.cpp's Tensors::map): all in its own process, instead of inside conv1's requests.
    std::future<void> greeted = std::async(std::launch::async, [&, batch] {
      const auto spawned = Clock::now();
      if (!network_batch) {
        session.greet();
        hello_ms = ms_between(spawned, Clock::now());
        ready_ms = ms_between(program_start, Clock::now());
        return;
      }
      const std::size_t bytes = labkit::judge::network_conv_bytes(labkit::reference::network::conv1_shape(batch));
      session.tensors().reserve(bytes);
      const pid_t populating = spawn_populate(session.tensors().fd(), bytes);
      session.greet();
      const auto hello = Clock::now();
      hello_ms = ms_between(spawned, hello);
      if (populating > 0) ::waitpid(populating, nullptr, 0);
      pages_wait_ms = ms_between(hello, Clock::now());
      session.call({{"op", "ping"}}, "the harness mapping the tensor file");
      tensor_file_ms = ms_between(hello, Clock::now());
      ready_ms = ms_between(program_start, Clock::now());
    });
    auto ready = [&] {  // this side's CUDA first: without a device, that is the answer
      if (started.valid()) started.get();
      if (greeted.valid()) {
        try {
          greeted.get();
        } catch (...) {
          explain_sandbox();
          throw;
        }
      }
    };
    const labkit::Precision p = labkit::precision_from_string(precision);
    labkit::network::RemoteConv conv;
    labkit::network::ConvBackend backend{
        lab, nullptr,
        [&](const labkit::ConvShape& s, std::span<const float> in, std::span<const float> mask, std::span<float> out,
            labkit::network::LayerTiming& t) {
          const auto waiting = std::chrono::steady_clock::now();
          ready();  // conv1 waits for the harness's start here; the table shows how long
          t.wait_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - waiting).count();
          if (!conv) conv = labkit::judge::remote_conv(session, *flush);
          conv(s, in, mask, out, t);
        },
        labkit::to_string(p),  // its roofline is that of its precision class
        [&]() -> std::vector<labkit::network::StartupPhase> {
          // The harness's own two parts as it said them (its process: shown, never trusted for
          // a verdict), each held to the judge's spawn-to-hello time around them.
          const nlohmann::json said = session.hello().value("startup_ms", nlohmann::json::object());
          const auto part = [&](const char* key) {
            const auto it = said.is_object() ? said.find(key) : said.end();
            const double v = it != said.end() && it->is_number() ? it->get<double>() : 0.0;
            return std::isfinite(v) ? std::clamp(v, 0.0, hello_ms) : 0.0;
          };
          return {{"judge's CUDA start-up", judge_cuda_ms},
                  {"sandbox command and spawn", spawn_ms},
                  {"spawn to hello", hello_ms},
                  {"of which the harness's CUDA", part("cuda")},
                  {"of which its pinned arrays", part("pinned")},
                  {"tensor file after hello", tensor_file_ms},
                  {"of which waiting for its pages", pages_wait_ms},
                  {"harness ready after the program's start", ready_ms}};
        }};
    std::function<void(const labkit::ConvShape&, float, float, int, labkit::network::LayerTiming&)> repeat_op;
    const auto repeats = [&](const labkit::ConvShape& s, float lo, float hi, int n, labkit::network::LayerTiming& t) {
      ready();
      if (!repeat_op) repeat_op = labkit::judge::remote_repeats(session, *flush, p);
      repeat_op(s, lo, hi, n, t);
    };
    std::vector<char*> args;
    for (std::string& a : rest) args.push_back(a.data());
    const int status = labkit::network::program_main(int(args.size()), args.data(), backend, program_start, repeats);
    if (status == labkit::exit_code::kNoDevice) return status;  // program_main said so
    ready();
    session.close();
    return status;
  } catch (const labkit::network::NoDevice& e) {
    fmt::print("{}\n", nlohmann::json{{"error", e.what()}, {"exit_code", labkit::exit_code::kNoDevice}}.dump());
    return labkit::exit_code::kNoDevice;
  } catch (const std::exception& e) {
    // Without a device that is the answer, whatever failed first (no bubblewrap on a CPU machine:
    // the baseline's row runs here too, and `labkit report` skips on 77).
    if (has_device.valid() && !has_device.get()) {
      fmt::print("{}\n", nlohmann::json{{"error", no_device}, {"exit_code", labkit::exit_code::kNoDevice}}.dump());
      return labkit::exit_code::kNoDevice;
    }
    fmt::print("{}\n", nlohmann::json{{"error", e.what()}, {"exit_code", labkit::exit_code::kFail}}.dump());
    return labkit::exit_code::kFail;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto program_start = std::chrono::steady_clock::now();
  if (argc >= 2 && std::strcmp(argv[1], "lab") == 0) return run_lab(argc - 1, argv + 1, program_start);
  if (argc == 3 && std::strcmp(argv[1], "populate-tensor-file") == 0) return populate_tensor_file(argv[2]);
  std::map<std::string, labkit::network::ConvBackend> backends{
      {"baseline", {"baseline", &labkit::baseline::conv_ops, {}}},
      {"cpu", {"cpu-reference", nullptr, {}}},
  };
#ifdef LABKIT_HAVE_CUDNN
  backends["cudnn"] = {"cudnn", &labkit::cudnn::conv_ops, {}};
#endif
  // The first argument names the conv; the rest is the network program's (network_run.h).
  std::string names;
  for (const auto& [name, _] : backends) names += (names.empty() ? "" : "|") + name;
  if (argc < 2 || !backends.contains(argv[1])) {
    fmt::print(stderr, "usage: labkit-network {}|lab --network --batch N --data DIR --model DIR [--op-repeats R]\n", names);
    if (argc >= 2 && std::strcmp(argv[1], "cudnn") == 0)
      fmt::print(stderr, "labkit-network: cuDNN was not found when the kit was configured\n");
    return labkit::exit_code::kUsage;
  }
  return labkit::network::program_main(argc - 1, argv + 1, backends.at(argv[1]), program_start);
}
