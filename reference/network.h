// network.h — the network of the milestone reports (design.md section 7), its weights, and its
// layers after each conv, on the CPU.
//
//   image [1][86][86], pixels 0..255 as float
//   -> conv1 (C1 M4 K7, no bias)  [4][80][80]  -> ReLU -> maxpool 2        [4][40][40]
//   -> conv2 (C4 M16 K7, no bias) [16][34][34] -> ReLU -> maxpool 4 (ceil) [16][9][9]
//   -> flatten (C order: c, h, w) 1296 -> FC 1296->32 + bias -> ReLU -> FC 32->10 + bias -> argmax
//
// Contract
//   * Pooling windows are pool x pool, stride pool; with "ceil" the last window is clipped to the
//     input (rows 32..33 of conv2's 34), never padded. ReLU then max == max then ReLU; the layers
//     below fuse them.
//   * argmax returns the lowest index among equal maxima.
//   * The weights are six .npy files (float32) in one folder, named by kModelFiles; load_model
//     checks every dtype and shape and throws std::runtime_error naming the file, its shape and
//     the shape expected.
//   * Every layer is multithreaded over images (reference/parallel.h) and deterministic: the same
//     input gives the same bits whatever the thread count.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "labkit/conv.h"

namespace labkit::reference::network {

inline constexpr int kImageSide = 86, kClasses = 10;
inline constexpr int kPool1 = 2, kPool2 = 4;
inline constexpr int kHidden = 32;
inline constexpr int kPooled2Side = 9;                                     // ceil(34 / 4)
inline constexpr int kFeatures = 16 * kPooled2Side * kPooled2Side;         // 1296

// The two conv layers' shapes at batch B (conv.h layout).
constexpr ConvShape conv1_shape(int B) { return {B, 4, 1, kImageSide, kImageSide, 7}; }
constexpr ConvShape conv2_shape(int B) { return {B, 16, 4, 40, 40, 7}; }

struct Model {
  std::vector<float> conv1;  // [4][1][7][7]
  std::vector<float> conv2;  // [16][4][7][7]
  std::vector<float> fc1_w;  // [32][1296]
  std::vector<float> fc1_b;  // [32]
  std::vector<float> fc2_w;  // [10][32]
  std::vector<float> fc2_b;  // [10]
};

// File name and shape of each tensor, in the order of Model's members.
struct ModelFile {
  std::string_view name;
  std::array<std::int64_t, 4> shape;  // trailing zeros unused
  int ndim;
};
inline constexpr std::array<ModelFile, 6> kModelFiles{{
    {"conv1.npy", {4, 1, 7, 7}, 4},
    {"conv2.npy", {16, 4, 7, 7}, 4},
    {"fc1_weight.npy", {32, kFeatures, 0, 0}, 2},
    {"fc1_bias.npy", {32, 0, 0, 0}, 1},
    {"fc2_weight.npy", {10, 32, 0, 0}, 2},
    {"fc2_bias.npy", {10, 0, 0, 0}, 1},
}};

Model load_model(const std::filesystem::path& dir);
void save_model(const Model& model, const std::filesystem::path& dir);

// out[b][c][i][j] = max(0, max of in[b][c][window(i, j)]); out is [B][C][ceil(H/pool)][ceil(W/pool)].
void relu_maxpool(std::span<const float> in, int B, int C, int H, int W, int pool, std::span<float> out);

// out[b][o] = bias[o] + sum_n in[b][n] * weight[o][n] (float, n ascending), then ReLU if relu.
void fully_connected(std::span<const float> in, int B, int N, std::span<const float> weight,
                     std::span<const float> bias, int O, bool relu, std::span<float> out);

// Index of the largest of each row of `logits` [B][classes].
std::vector<std::uint8_t> argmax(std::span<const float> logits, int B, int classes = kClasses);

// Everything after conv2: relu_maxpool 4 -> FC1 + ReLU -> FC2 -> argmax. conv2_out is [B][16][34][34].
std::vector<std::uint8_t> classify(std::span<const float> conv2_out, int B, const Model& model);

}  // namespace labkit::reference::network
