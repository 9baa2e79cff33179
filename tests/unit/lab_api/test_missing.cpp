// The adapter linked with a lab that defines only part of the course's methods: it still links,
// and every phase throws a message that names the missing methods (the lab's failure: lab-error).
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "gpu-new-forward.h"
#include "lab_api.h"

void GPUInterface::conv_forward_gpu_prolog(const float*, const float*, const float*, float**, float**, float**,
                                           const int, const int, const int, const int, const int, const int) {}

TEST_CASE("a lab with an incomplete interface links, and each phase says what is missing") {
  const labkit::harness::LabConv lab = labkit::harness::lab_conv("partial");
  REQUIRE(lab.api == labkit::harness::ConvApi::none);
  CHECK(lab.missing.find("GPUInterface::conv_forward_gpu,") != std::string::npos);
  CHECK(lab.missing.find("GPUInterface::conv_forward_gpu_epilog") != std::string::npos);
  CHECK(lab.missing.find("GPUInterface::conv_forward_gpu_prolog") == std::string::npos);
  const labkit::ConvShape s{1, 4, 1, 86, 86, 7};
  float *o = nullptr, *i = nullptr, *m = nullptr;
  std::string message;
  try {
    lab.ops.prolog(nullptr, nullptr, nullptr, &o, &i, &m, s);
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  CHECK(message.find("does not define its three conv phases") != std::string::npos);
  CHECK_THROWS_AS(lab.ops.forward(o, i, m, s), std::invalid_argument);
}
