// grader/network/dataset.h — a labelled image set for the network (reference/network.h): the kit's
// synthetic set (datasets/synth.h) or an instructor's own IDX files.
//
// Contract
//   * images: [n][86][86] unsigned bytes, C order (pixel values 0..255 are the network's input);
//     labels: [n] class indices 0..9.
//   * load_image_set reads an IDX images file and an IDX labels file (grader/io/idx.h, either byte
//     order) and checks them, throwing std::runtime_error with one line naming the file and what
//     was expected: images not ubyte or not (n, 86, 86) ("Fashion-MNIST's own files are 28x28:
//     resize them to 86x86 first"), labels not ubyte (n), counts that differ, a label >= 10 (with
//     its index).
//   * The file names follow Fashion-MNIST: <dir>/t10k-images-idx3-ubyte and
//     <dir>/t10k-labels-idx1-ubyte for the test split, train-* for the training split.
//   * checksum: FNV-1a 64 over n, the images and the labels: two sets with the same checksum are
//     the same data (model.json records the one the weights were trained and measured on).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace labkit {

struct ImageSet {
  int n = 0;
  std::vector<std::uint8_t> images;  // [n][86][86]
  std::vector<std::uint8_t> labels;  // [n]
  std::string source;                // where it came from, for messages and reports

  // The first `count` images (count <= n), a copy.
  ImageSet first(int count) const;
};

inline constexpr int kImageSetSide = 86;
inline constexpr int kImageSetClasses = 10;

enum class Split { train, test };
std::filesystem::path images_file(const std::filesystem::path& dir, Split split);
std::filesystem::path labels_file(const std::filesystem::path& dir, Split split);

ImageSet load_image_set(const std::filesystem::path& images, const std::filesystem::path& labels);
inline ImageSet load_image_set(const std::filesystem::path& dir, Split split) {
  return load_image_set(images_file(dir, split), labels_file(dir, split));
}
// Writes both files (big-endian IDX, ubyte).
void save_image_set(const ImageSet& set, const std::filesystem::path& dir, Split split);

std::uint64_t checksum(const ImageSet& set);
std::string checksum_hex(const ImageSet& set);  // 16 lowercase hex digits

}  // namespace labkit
