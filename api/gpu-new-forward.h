// gpu-new-forward.h — the course's conv interface (ECE408's GPUInterface), for a lab written
// against it: a milestone's new-forward.cu compiles and grades as it is (design.md section 5,
// "Contract"; docs/instructor-guide.md, "Bring your course's submissions").
//
// Contract
//   * Same phases and meaning as labkit/conv.h, with the shape as six ints:
//       input [Batch][Channel][Height][Width], mask [Map_out][Channel][K][K],
//       output [Batch][Map_out][Height-K+1][Width-K+1]; float32, C order, stride 1, no padding.
//   * A lab defines all three conv_forward_gpu* methods (in kernel.cu or a .cu beside it) instead
//     of labkit's free functions; the harness finds them when it is linked (weak references to the
//     methods' names, grader/harness/lab_api.cpp), so this file may also be the course's own copy:
//     only the names and signatures matter. get_device_properties is called once, before the first
//     prolog, when the lab defines it; what it prints is the lab's log.
//   * The harness calls the methods on a GPUInterface object of its own (the class holds no data).
#pragma once

class GPUInterface {
 public:
  void get_device_properties();
  void conv_forward_gpu_prolog(const float* host_output, const float* host_input, const float* host_mask,
                               float** device_output_ptr, float** device_input_ptr, float** device_mask_ptr,
                               const int Batch, const int Map_out, const int Channel, const int Height,
                               const int Width, const int K);
  void conv_forward_gpu(float* device_output, const float* device_input, const float* device_mask,
                        const int Batch, const int Map_out, const int Channel, const int Height, const int Width,
                        const int K);
  void conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input, float* device_mask,
                               const int Batch, const int Map_out, const int Channel, const int Height,
                               const int Width, const int K);
};
