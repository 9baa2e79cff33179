// network_run.cpp — the milestone program (see grader/network/network_run.h): data and model in, the two
// conv layers through a backend, the rest on the CPU, times and accuracy out.
#include "grader/network/network_run.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <memory>
#include <stdexcept>

#include "grader/judge/clocks.h"
#include "grader/harness/conv_run.h"
#include "labkit/cuda_check.h"
#include "grader/network/dataset.h"
#include "grader/judge/device.h"
#include "grader/core/event_timer.h"
#include "grader/core/exit_codes.h"
#include "grader/core/phase.h"
#include "grader/core/pinned_range.h"
#include "grader/judge/roofline.h"
#include "grader/judge/stats.h"
#include "grader/protocol/chunks.h"
#include "grader/protocol/host_pages.h"
#include "reference/conv_reference.h"
#include "reference/network.h"
#include "reference/parallel.h"

namespace labkit::network {
namespace {

namespace ref = labkit::reference;
namespace net = labkit::reference::network;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// On the chunk threads: conv1's output is 256 Mi floats at batch 10000 (0.18 s on one thread).
std::size_t count_nonfinite(std::span<const float> v) {
  std::vector<std::size_t> parts(fresh::chunk_count(v.size()));
  fresh::for_chunks(v.size(), [&](std::size_t first, std::size_t last, std::size_t k) {
    std::size_t n = 0;
    for (std::size_t i = first; i < last; ++i) n += !std::isfinite(v[i]);
    parts[k] = n;
  });
  std::size_t n = 0;
  for (std::size_t p : parts) n += p;
  return n;
}

// One conv layer through the CPU reference: double accumulation, rounded to float.
void conv_cpu(const ConvShape& shape, std::span<const float> input,
              std::span<const float> mask, std::span<float> output, LayerTiming& t) {
  std::vector<double> exact(shape.output_size());
  const auto start = Clock::now();
  ref::conv_forward_cpu(exact, input, mask, shape);
  t.first_ms = t.op_ms = seconds_since(start) * 1e3;
  ref::parallel_for(exact.size(), [&](std::size_t i) { output[i] = static_cast<float>(exact[i]); });
  t.layer_ms = seconds_since(start) * 1e3;
}

// One conv layer through a lab's three phases: the network's own call.
void conv_gpu(const ConvOps& ops, const ConvShape& shape, std::span<const float> input,
              std::span<const float> mask, std::span<float> output, L2Flush& flush, LayerTiming& t) {
  const auto start = Clock::now();
  float *d_out = nullptr, *d_in = nullptr, *d_mask = nullptr;
  set_phase("conv_forward_gpu_prolog");
  ops.prolog(output.data(), input.data(), mask.data(), &d_out, &d_in, &d_mask, shape);
  flush();
  EventPair ev;
  set_phase("conv_forward_gpu");
  LABKIT_CUDA_CHECK(cudaEventRecord(ev.start));
  ops.forward(d_out, d_in, d_mask, shape);
  LABKIT_CUDA_CHECK(cudaEventRecord(ev.stop));
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  t.first_ms = t.op_ms = ev.elapsed_ms();
  set_phase("conv_forward_gpu_epilog");
  ops.epilog(output.data(), d_out, d_in, d_mask, shape);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  t.layer_ms = seconds_since(start) * 1e3;
  set_phase("network");
}

// Op Time again, `repeats` calls on the same device data, for a median that one call cannot give.
void repeat_op(const ConvOps& ops, const ConvShape& shape, std::span<const float> input,
               std::span<const float> mask, std::span<float> output, L2Flush& flush, int repeats,
               LayerTiming& t) {
  float *d_out = nullptr, *d_in = nullptr, *d_mask = nullptr;
  set_phase("conv_forward_gpu_prolog");
  ops.prolog(output.data(), input.data(), mask.data(), &d_out, &d_in, &d_mask, shape);
  set_phase("conv_forward_gpu");
  t.samples_ms = time_samples(0, repeats, [&] { flush(); }, [&] { ops.forward(d_out, d_in, d_mask, shape); });
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  set_phase("conv_forward_gpu_epilog");
  ops.epilog(output.data(), d_out, d_in, d_mask, shape);
  LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
  t.op_ms = stats::median(t.samples_ms);
  set_phase("network");
}

}  // namespace

int count_differing(const std::string& a, const std::string& b) {
  int n = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) n += a[i] != b[i];
  return n;
}

RunResult run_network(const ConvBackend& backend, const RunOptions& opt) {
  RunResult r;
  r.backend = backend.name;
  r.precision = backend.precision;
  r.batch = opt.batch;
  r.model_dir = opt.model_dir.string();

  // CUDA's start-up (a second or so at batch 10000's sizes) overlaps the loading: both count in
  // Total Execution Time, and neither needs the other.
  std::future<std::unique_ptr<L2Flush>> cuda_started;
  if (backend.gpu || backend.remote)
    cuda_started = std::async(std::launch::async, [name = backend.name, own = backend.gpu != nullptr] {
      if (!cuda_device_available()) throw NoDevice("no usable CUDA device: the " + name + " conv needs one");
      // A remote conv's judge flushes with its own (labkit-network run_lab): no second buffer.
      return own ? std::make_unique<L2Flush>() : std::unique_ptr<L2Flush>();
    });
  set_phase("loading the data");
  const auto load_start = Clock::now();
  const ImageSet all = load_image_set(opt.data_dir, Split::test);
  if (opt.batch < 1 || opt.batch > all.n) {
    throw std::runtime_error(fmt::format("batch {} asked for, but the test set {} holds {} images",
                                         opt.batch, all.source, all.n));
  }
  r.data_source = all.source;
  // The checksum only labels the output (FNV-1a over 74 MB: 0.1 s), so it goes on beside the rest.
  std::future<std::string> checksum = std::async(std::launch::async, [&all] { return checksum_hex(all); });

  const int B = opt.batch;
  const ConvShape s1 = net::conv1_shape(B), s2 = net::conv2_shape(B);
  // Never initialized: every element is written by the layer that fills it (conv1's output is 1
  // GiB at batch 10000). The outputs' pages are made resident in the background once CUDA has
  // started (labkit/host_pages.h; not beside CUDA's start-up, which waits on the same memory map
  // lock), instead of one fault at a time inside the layers. For the kit's own GPU convs the
  // arrays are then pinned (grader/core/pinned_range.h), as a lab's harness pins its arrays for this
  // program (judge/network_case.h): conv1 waits for its two, conv2 for the rest.
  fresh::AnonymousArray<float> x(s1.input_size()), y1(s1.output_size()), p1(s2.input_size()), y2(s2.output_size());
  PinnedRange pins[4];  // destroyed before the arrays
  std::promise<void> conv1_arrays;
  std::future<void> conv1_ready = conv1_arrays.get_future(), conv2_ready;  // joined before the pins go
  const net::Model model = net::load_model(opt.model_dir);
  r.load_s = seconds_since(load_start);
  const std::span<float> pixels = x.span();
  ref::parallel_for(pixels.size(), [&](std::size_t i) { pixels[i] = all.images[i]; });

  std::unique_ptr<L2Flush> flush;
  if (backend.gpu || backend.remote) {
    set_phase("CUDA start-up");
    const auto waiting = Clock::now();
    flush = cuda_started.get();
    r.conv[0].wait_ms += seconds_since(waiting) * 1e3;
    r.device = device_info().summary();
    const bool pin = backend.gpu != nullptr;
    int device = 0;
    if (pin) LABKIT_CUDA_CHECK(cudaGetDevice(&device));
    // One array at a time, conv1's first: each populate already uses several threads.
    conv2_ready = std::async(std::launch::async, [&, pin, device] {
      fresh::AnonymousArray<float>* arrays[4] = {&x, &y1, &p1, &y2};
      bool told = false;
      try {
        if (pin) LABKIT_CUDA_CHECK(cudaSetDevice(device));
        for (int k = 0; k < 4; ++k) {
          if (k > 0) fresh::populate(arrays[k]->data(), arrays[k]->bytes());  // x is written already
          if (pin) pins[k] = PinnedRange(arrays[k]->data(), arrays[k]->bytes());
          if (k == 1) {
            conv1_arrays.set_value();
            told = true;
          }
        }
      } catch (...) {
        if (!told) conv1_arrays.set_exception(std::current_exception());
        throw;
      }
    });
  } else {
    r.device = "CPU";
    conv1_arrays.set_value();
  }
  auto conv = [&](const ConvShape& s, std::span<const float> in, std::span<const float> mask,
                  std::span<float> out, LayerTiming& t) {
    if (backend.remote) backend.remote(s, in, mask, out, t);
    else if (backend.gpu) conv_gpu(*backend.gpu, s, in, mask, out, *flush, t);
    else conv_cpu(s, in, mask, out, t);
    if (!backend.remote) {  // a remote conv counts them as it reads
      const auto scan = Clock::now();
      t.nonfinite = count_nonfinite(out);
      t.boundary_ms += seconds_since(scan) * 1e3;
    }
  };
  auto wait = [](std::future<void>& f, LayerTiming& t) {
    const auto waiting = Clock::now();
    f.get();
    t.wait_ms += seconds_since(waiting) * 1e3;
  };

  if (backend.gpu) wait(conv1_ready, r.conv[0]);  // a remote conv's arrays are only written at its end
  conv(s1, x.span(), model.conv1, y1.span(), r.conv[0]);
  auto cpu_start = Clock::now();
  net::relu_maxpool(y1.span(), B, s1.M, s1.H_out(), s1.W_out(), net::kPool1, p1.span());
  r.cpu_layers_s = seconds_since(cpu_start);
  if (backend.gpu) wait(conv2_ready, r.conv[1]);
  conv(s2, p1.span(), model.conv2, y2.span(), r.conv[1]);
  cpu_start = Clock::now();
  const std::vector<std::uint8_t> predicted = net::classify(y2.span(), B, model);
  for (int b = 0; b < B; ++b) {
    r.correct += predicted[b] == all.labels[b];
    r.predictions += static_cast<char>('0' + predicted[b]);
  }
  r.accuracy = static_cast<double>(r.correct) / B;
  r.cpu_layers_s += seconds_since(cpu_start);
  r.total_s = seconds_since(opt.program_start);
  r.data_checksum = checksum.get();
  if (backend.startup) r.startup_ms = backend.startup();

  if (backend.gpu && opt.op_repeats > 0) {
    repeat_op(*backend.gpu, s1, x.span(), model.conv1, y1.span(), *flush, opt.op_repeats, r.conv[0]);
    repeat_op(*backend.gpu, s2, p1.span(), model.conv2, y2.span(), *flush, opt.op_repeats, r.conv[1]);
  }
  if (backend.remote && opt.remote_repeats && opt.op_repeats > 0) {
    auto range = [](std::span<const float> v) {
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      return std::pair<float, float>{*lo, std::nextafter(*hi, INFINITY)};
    };
    const auto [lo1, hi1] = range(x.span());
    const auto [lo2, hi2] = range(p1.span());
    opt.remote_repeats(s1, lo1, hi1, opt.op_repeats, r.conv[0]);
    opt.remote_repeats(s2, lo2, hi2, opt.op_repeats, r.conv[1]);
  }
  if (backend.gpu || backend.remote) {
    r.sm_clock_mhz = read_sm_clock().sm_mhz;
    // Each layer's roofline floor on this GPU at the backend's precision class
    // (grader/judge/roofline.h), for "% of floor".
    const roofline::Peaks peaks = roofline::device_peaks();
    const ConvShape shapes[2] = {s1, s2};
    for (int k = 0; k < 2; ++k) {
      const ConvShape& s = shapes[k];
      const roofline::Roofline f = roofline::of(double(s.macs()), double(s.input_size() + s.mask_size()) * 4,
                                                double(s.output_size()) * 4, 0, peaks, backend.precision);
      r.conv[k].roofline_ms = f.floor_ms;
      r.conv[k].roofline_bound = roofline::to_string(f.bound);
    }
  }
  return r;
}

nlohmann::json to_json(const RunResult& r) {
  nlohmann::json startup = nlohmann::json::array();  // [name, ms] pairs: the phases' order kept
  for (const StartupPhase& p : r.startup_ms) startup.push_back({p.name, p.ms});
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerTiming& t : r.conv) {
    layers.push_back({{"op_ms", t.op_ms}, {"first_ms", t.first_ms}, {"samples_ms", t.samples_ms},
                      {"layer_ms", t.layer_ms}, {"wait_ms", t.wait_ms}, {"boundary_ms", t.boundary_ms},
                      {"nonfinite", t.nonfinite}});
    if (t.floor_ms > 0) layers.back()["floor_ms"] = t.floor_ms;
    if (t.roofline_ms > 0) {
      layers.back()["roofline_ms"] = t.roofline_ms;
      layers.back()["roofline_bound"] = t.roofline_bound;
    }
  }
  return {{"backend", r.backend},       {"precision", r.precision}, {"batch", r.batch},
          {"data", r.data_source},      {"data_checksum", r.data_checksum},
          {"model", r.model_dir},       {"conv", layers},
          {"total_s", r.total_s},       {"load_s", r.load_s},
          {"cpu_layers_s", r.cpu_layers_s}, {"correct", r.correct},
          {"accuracy", r.accuracy},     {"predictions", r.predictions},
          {"device", r.device},         {"sm_clock_mhz", r.sm_clock_mhz}, {"startup_ms", startup}};
}

RunResult from_json(const nlohmann::json& j) {
  RunResult r;
  r.backend = j.at("backend").get<std::string>();
  r.precision = j.value("precision", std::string("fp32"));  // older files: their floors were fp32's
  r.batch = j.at("batch").get<int>();
  r.data_source = j.at("data").get<std::string>();
  r.data_checksum = j.at("data_checksum").get<std::string>();
  r.model_dir = j.at("model").get<std::string>();
  for (int k = 0; k < 2; ++k) {
    const auto& l = j.at("conv").at(k);
    r.conv[k].op_ms = l.at("op_ms").get<double>();
    r.conv[k].first_ms = l.at("first_ms").get<double>();
    r.conv[k].samples_ms = l.at("samples_ms").get<std::vector<double>>();
    r.conv[k].layer_ms = l.at("layer_ms").get<double>();
    r.conv[k].wait_ms = l.value("wait_ms", 0.0);  // absent from older files: their "Other" holds it
    r.conv[k].boundary_ms = l.value("boundary_ms", 0.0);
    r.conv[k].nonfinite = l.at("nonfinite").get<std::size_t>();
    r.conv[k].floor_ms = l.value("floor_ms", 0.0);  // absent from runs of the kit's own convs
    r.conv[k].roofline_ms = l.value("roofline_ms", 0.0);  // absent from CPU runs and older files
    r.conv[k].roofline_bound = l.value("roofline_bound", std::string());
  }
  r.total_s = j.at("total_s").get<double>();
  r.load_s = j.at("load_s").get<double>();
  r.cpu_layers_s = j.at("cpu_layers_s").get<double>();
  r.correct = j.at("correct").get<int>();
  r.accuracy = j.at("accuracy").get<double>();
  if (const auto it = j.find("startup_ms"); it != j.end())  // absent from older files
    for (const auto& p : *it) r.startup_ms.push_back({p.at(0).get<std::string>(), p.at(1).get<double>()});
  r.predictions = j.at("predictions").get<std::string>();
  r.device = j.at("device").get<std::string>();
  r.sm_clock_mhz = j.at("sm_clock_mhz").get<int>();
  return r;
}

int program_main(int argc, char** argv, const ConvBackend& backend, Clock::time_point program_start,
                 std::function<void(const ConvShape&, float, float, int, LayerTiming&)> remote_repeats) {
  RunOptions opt;
  opt.program_start = program_start;
  opt.remote_repeats = std::move(remote_repeats);
  CLI::App app{fmt::format("Run the milestone network with the conv of {} and print its times and "
                           "accuracy as JSON (labkit report drives this).", backend.name)};
  bool network_mode = true;
  app.add_flag("--network", network_mode, "run the network (this mode)");
  app.add_option("--batch", opt.batch, "images: the first BATCH of the test set")->check(CLI::Range(1, 1000000));
  app.add_option("--data", opt.data_dir, "folder of t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte")->required();
  app.add_option("--model", opt.model_dir, "folder of the model's six .npy files")->required();
  app.add_option("--op-repeats", opt.op_repeats, "extra timed calls per conv layer for the Op Time median")
      ->check(CLI::Range(0, 1000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? exit_code::kPass : exit_code::kUsage;
  }
  auto fail = [](int code, const std::string& message) {
    fmt::print("{}\n", nlohmann::json{{"error", message}, {"exit_code", code}}.dump());
    return code;
  };
  try {
    const RunResult r = run_network(backend, opt);
    fmt::print("{}\n", to_json(r).dump());
    return exit_code::kPass;
  } catch (const NoDevice& e) {
    return fail(exit_code::kNoDevice, e.what());
  } catch (const CudaError& e) {
    return fail(exit_code::kFail, fmt::format("the conv of {} failed in {}: {}", backend.name, g_phase.load(), e.what()));
  } catch (const std::exception& e) {
    return fail(exit_code::kFail, e.what());
  }
}

}  // namespace labkit::network
