// kit_baseline.h — the kit's baselines, for the test labs that are the baseline (baseline-self,
// map-baseline, copy-hog-layer, host-bandwidth-hog).
//
// Every harness links the baselines (reference/baseline_conv.cu, baseline_map.cu: the kit's own
// harness times them), but their header, reference/baseline.h, is the kit's, not the lab API: a
// lab's compile cannot include it (api/README.md). These declarations are what a kernel.cu that
// wants the baseline writes itself; the link checks them against the definitions, so a signature
// that drifts from reference/baseline.h fails the build of these test labs.
#pragma once

#include "labkit/conv.h"

namespace labkit::baseline {

void conv_forward_gpu_prolog(const float* host_output, const float* host_input, const float* host_mask,
                             float** device_output, float** device_input, float** device_mask,
                             const ConvShape& shape);
void conv_forward_gpu(float* device_output, const float* device_input, const float* device_mask,
                      const ConvShape& shape);
void conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                             float* device_mask, const ConvShape& shape);

void map_forward_gpu(float* device_data, int dimx, int dimy, int niterations);

}  // namespace labkit::baseline
