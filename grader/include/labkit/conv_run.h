// labkit/conv_run.h — running a conv implementation's three phases on host data, checked.
//
// Contract
//   * run_conv_checked: prolog, then the device output is poisoned (every byte 0xFF, a NaN
//     pattern) so an element forward does not write cannot pass by luck, then forward, a device
//     sync, a read-back of the device input and mask (they must be unchanged), then epilog.
//     CUDA failures and anything the phases throw propagate as exceptions.
//   * time_conv_forward: Op Time samples in milliseconds, CUDA events around forward alone, the
//     L2 flushed before every sample, after `warmup` untimed calls. The output buffer is the
//     implementation's own, from its prolog.
#pragma once

#include <span>
#include <vector>

#include "labkit/conv.h"
#include "labkit/device.h"

namespace labkit {

struct ConvRunResult {
  std::vector<float> output;   // [B][M][H_out][W_out], as epilog delivered it
  bool input_unchanged = false;
  bool mask_unchanged = false;
};

ConvRunResult run_conv_checked(const ConvOps& ops, const ConvShape& shape,
                               std::span<const float> input, std::span<const float> mask);

std::vector<double> time_conv_forward(const ConvOps& ops, const ConvShape& shape,
                                      std::span<const float> input, std::span<const float> mask,
                                      int warmup, int samples, L2Flush& flush);

double median(std::vector<double> values);

}  // namespace labkit
