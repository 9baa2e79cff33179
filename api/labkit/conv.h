// labkit/conv.h — the convolution lab API (design.md section 4).
//
// Contract
//   * Shapes: input [B][C][H][W], mask [M][C][K][K], output [B][M][H-K+1][W-K+1]; float32, C order;
//     stride 1, no padding, no bias. K <= H and K <= W.
//   * A conv lab implements the three phases below in its kernel.cu:
//       prolog  — allocate device buffers, copy input and mask host -> device;
//       forward — the timed "Op Time": device-resident, writes every output element,
//                 must not modify the input or the mask;
//       epilog  — copy output device -> host, free the device buffers.
//     Layer Time = prolog + forward + epilog, host to host.
//   * Errors are reported by throwing (see labkit/cuda_check.h); a phase never exits the process.
//   * The baseline and the reference implement the same signatures under their own namespaces
//     (labkit::baseline), so one executable can time a lab against the baseline sample by sample.
#pragma once

#include <cstddef>
#include <string>

namespace labkit {

struct ConvShape {
  int B;  // batch size (images)
  int M;  // output feature maps
  int C;  // input channels
  int H;  // input height
  int W;  // input width
  int K;  // mask side (K x K)

  constexpr int H_out() const { return H - K + 1; }
  constexpr int W_out() const { return W - K + 1; }
  // Element counts as size_t: conv2 at batch 10000 has 185 M output elements, and the unrolled
  // (im2col) matrices of later labs exceed INT_MAX.
  constexpr std::size_t input_size() const { return std::size_t(B) * C * H * W; }
  constexpr std::size_t mask_size() const { return std::size_t(M) * C * K * K; }
  constexpr std::size_t output_size() const { return std::size_t(B) * M * H_out() * W_out(); }
  // Multiply-accumulates of one forward pass.
  constexpr std::size_t macs() const { return output_size() * C * K * K; }
  constexpr bool valid() const {
    return B > 0 && M > 0 && C > 0 && K > 0 && H >= K && W >= K;
  }
};

// "B=1000 M=16 C=4 H=40 W=40 K=7", for messages and tables. Inline: the reference library and
// student kernels use it without linking the grader core.
inline std::string to_string(const ConvShape& s) {
  return "B=" + std::to_string(s.B) + " M=" + std::to_string(s.M) + " C=" + std::to_string(s.C) +
         " H=" + std::to_string(s.H) + " W=" + std::to_string(s.W) + " K=" + std::to_string(s.K);
}

// The three phases every conv lab implements (in its kernel.cu).
void conv_forward_gpu_prolog(const float* host_output, const float* host_input, const float* host_mask,
                             float** device_output, float** device_input, float** device_mask,
                             const ConvShape& shape);
void conv_forward_gpu(float* device_output, const float* device_input, const float* device_mask,
                      const ConvShape& shape);
void conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                             float* device_mask, const ConvShape& shape);

// The three phases as values, so a runner can hold a lab and the baseline side by side.
struct ConvOps {
  const char* name;
  void (*prolog)(const float*, const float*, const float*, float**, float**, float**, const ConvShape&);
  void (*forward)(float*, const float*, const float*, const ConvShape&);
  void (*epilog)(float*, float*, float*, float*, const ConvShape&);
};

}  // namespace labkit
