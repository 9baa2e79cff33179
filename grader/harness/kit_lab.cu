// The kit's own lab: the baseline's conv and map behind the lab API, built into trusted harness
// executables (harness-kit-conv, harness-kit-map). The judge times them through the same channel,
// sandbox and process boundary as a student's harness, with no student process alive: what a
// call costs beyond its CUDA events (the context switch between the two processes, the digest,
// the channel) is measured on code the kit trusts, and a lab is held to that.
#include "labkit/conv.h"
#include "labkit/map.h"
#include "reference/baseline.h"

void labkit::conv_forward_gpu_prolog(const float* host_output, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  baseline::conv_ops.prolog(host_output, host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float* device_output, const float* device_input, const float* device_mask,
                              const ConvShape& shape) {
  baseline::conv_ops.forward(device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  baseline::conv_ops.epilog(host_output, device_output, device_input, device_mask, shape);
}

void labkit::map_forward_gpu(float* device_data, int dimx, int dimy, int niterations) {
  baseline::map_ops.forward(device_data, dimx, dimy, niterations);
}
