#include "profile.h"

#include <CLI/CLI.hpp>
#include <cuda_profiler_api.h>
#include <fmt/core.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "device_ops.h"
#include "grader/protocol/fresh.h"
#include "labkit/cuda_check.h"
#include "grader/core/device_buffer.h"
#include "labkit/map.h"
#include "reference/baseline.h"

namespace labkit::harness {
namespace {

struct Shape {
  std::string name;
  ConvShape shape;
  float lo, hi;
};

void fill(std::vector<float>& v, std::uint64_t seed, float lo, float hi) {
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = fresh::fresh_value(seed, i, lo, hi);
}

}  // namespace

int profile_main(int argc, char** argv, const LabProgram& lab) {
  std::string side;
  int which = 0, batch = 1000;
  std::vector<int> dims{8192, 8192, 16};
  CLI::App app{"One op of a lab or the baseline under Nsight Compute (labkit profile)"};
  app.add_option("--profile", side, "lab or baseline")->required()->check(CLI::IsMember({"lab", "baseline"}));
  app.add_option("--profile-case", which, "grading shape (0 = conv1)")->check(CLI::Range(0, 15));
  app.add_option("--batch", batch, "batch of the grading shapes")->check(CLI::Range(1, 10000));
  app.add_option("--dims", dims, "map labs: dimx,dimy,niterations")->delimiter(',')->expected(3);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (lab.map) {
      if (which != 0) {
        fmt::print(stderr, "labkit: no grading shape {} (a map lab has one)\n", which);
        return 2;
      }
      DeviceBuffer<float> data(std::size_t(dims[0]) * dims[1]);
      device_fill(data.get(), data.size(), 1, kMapInputMin, kMapInputMax);
      LABKIT_CUDA_CHECK(cudaProfilerStart());
      (side == "baseline" ? baseline::map_ops : *lab.map).forward(data.get(), dims[0], dims[1], dims[2]);
      LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
      LABKIT_CUDA_CHECK(cudaProfilerStop());
      fmt::print("{}\n", nlohmann::json{{"side", side}, {"case", "workload"},
                                        {"shape", fmt::format("dimx={} dimy={} niterations={}", dims[0], dims[1], dims[2])},
                                        {"shapes", 1}}.dump());
      return 0;
    }
    const std::vector<Shape> shapes{{fmt::format("conv1 B={}", batch), {batch, 4, 1, 86, 86, 7}, 0.0f, 255.0f},
                                    {fmt::format("conv2 B={}", batch), {batch, 16, 4, 40, 40, 7}, 0.0f, 4.0f}};
    if (which >= int(shapes.size())) {
      fmt::print(stderr, "labkit: no grading shape {} (the conv labs have {})\n", which, shapes.size());
      return 2;
    }
    const Shape& c = shapes[std::size_t(which)];
    std::vector<float> in(c.shape.input_size()), mask(c.shape.mask_size()), out(c.shape.output_size());
    fill(in, 11, c.lo, c.hi);
    fill(mask, 12, -0.5f, 0.5f);
    const ConvOps& ops = side == "baseline" ? baseline::conv_ops : *lab.conv;
    float *d_out = nullptr, *d_in = nullptr, *d_mask = nullptr;
    ops.prolog(out.data(), in.data(), mask.data(), &d_out, &d_in, &d_mask, c.shape);
    LABKIT_CUDA_CHECK(cudaDeviceSynchronize());  // the prolog's copies stay out of the profile
    LABKIT_CUDA_CHECK(cudaProfilerStart());
    ops.forward(d_out, d_in, d_mask, c.shape);
    LABKIT_CUDA_CHECK(cudaDeviceSynchronize());
    LABKIT_CUDA_CHECK(cudaProfilerStop());
    ops.epilog(out.data(), d_out, d_in, d_mask, c.shape);
    fmt::print("{}\n", nlohmann::json{{"side", side}, {"case", c.name}, {"shape", to_string(c.shape)},
                                      {"shapes", shapes.size()}}.dump());
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "labkit: the {} failed: {}\n", side, e.what());
    return 1;
  }
}

}  // namespace labkit::harness
