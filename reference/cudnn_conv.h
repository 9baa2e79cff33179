// cudnn_conv.h — the conv through cuDNN, as one more row of `labkit report --compare`: what the
// vendor library does with the same layers. Built only when the toolkit has cuDNN
// (LABKIT_HAVE_CUDNN).
//
// Contract
//   * Same three phases and layout as labkit/conv.h (NCHW, cross-correlation, no padding, stride 1).
//   * fp32 in, fp32 out, fp32 arithmetic: the math type is CUDNN_FMA_MATH, so cuDNN may not
//     switch to TF32 tensor cores (its default on this GPU generation), which would not be an
//     fp32 conv.
//   * The prolog also creates the handle and descriptors and picks the fastest algorithm
//     (cudnnFindConvolutionForwardAlgorithm) with its workspace; the forward phase is the
//     cudnnConvolutionForward call alone, as a lab's Op Time is its kernels alone. One layer is
//     set up at a time (the network's order); the epilog releases everything.
//   * cuDNN errors throw std::runtime_error naming the call and cuDNN's error string.
#pragma once

#include "labkit/conv.h"

namespace labkit::cudnn {

void conv_forward_gpu_prolog(const float* host_output, const float* host_input, const float* host_mask,
                             float** device_output, float** device_input, float** device_mask,
                             const ConvShape& shape);
void conv_forward_gpu(float* device_output, const float* device_input, const float* device_mask,
                      const ConvShape& shape);
void conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                             float* device_mask, const ConvShape& shape);

inline constexpr ConvOps conv_ops{"cudnn", &conv_forward_gpu_prolog, &conv_forward_gpu,
                                  &conv_forward_gpu_epilog};

}  // namespace labkit::cudnn
