// dataset.cpp — the labelled image set (contract in grader/network/dataset.h), stored as a pair of IDX
// files with Fashion-MNIST's names so that an instructor's own resized Fashion-MNIST drops in.
#include "grader/network/dataset.h"

#include <fmt/format.h>

#include <array>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>

#include "grader/io/idx.h"

namespace labkit {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kPixels = std::size_t{kImageSetSide} * kImageSetSide;

std::string_view split_prefix(Split split) { return split == Split::train ? "train" : "t10k"; }

// Why a file of the wrong shape is most likely wrong, beyond the shape itself.
std::string images_hint(const idx::Array& a) {
  if (a.shape.size() == 3 && a.shape[1] == 28 && a.shape[2] == 28)
    return "; Fashion-MNIST's own files are 28x28: resize them to 86x86 first";
  if (a.shape.size() == 1) return "; this looks like a labels file: are the two files swapped?";
  return "";
}

idx::Array read_images(const fs::path& path) {
  idx::Array a = idx::read(path);
  try {
    const std::array<std::uint32_t, 3> want = {0, kImageSetSide, kImageSetSide};
    a.require_shape(want, "images of 86x86");
  } catch (const idx::Error& e) {
    throw idx::Error(e.what() + images_hint(a));
  }
  if (a.type != idx::Type::u8)
    throw idx::Error(fmt::format("{}: images are {} values but expected ubyte (pixels 0..255)", a.source,
                                 idx::type_name(a.type)));
  return a;
}

idx::Array read_labels(const fs::path& path) {
  idx::Array a = idx::read(path);
  try {
    const std::array<std::uint32_t, 1> want = {0};
    a.require_shape(want, "one class index per image");
  } catch (const idx::Error& e) {
    const std::string hint =
        a.shape.size() == 3 ? "; this looks like an images file: are the two files swapped?" : "";
    throw idx::Error(e.what() + hint);
  }
  if (a.type != idx::Type::u8)
    throw idx::Error(fmt::format("{}: labels are {} values but expected ubyte (class indices 0..{})", a.source,
                                 idx::type_name(a.type), kImageSetClasses - 1));
  return a;
}

// Index of the first label that is not a class, or -1.
std::ptrdiff_t first_bad_label(std::span<const std::uint8_t> labels) {
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] >= kImageSetClasses) return static_cast<std::ptrdiff_t>(i);
  return -1;
}

}  // namespace

fs::path images_file(const fs::path& dir, Split split) {
  return dir / fmt::format("{}-images-idx3-ubyte", split_prefix(split));
}

fs::path labels_file(const fs::path& dir, Split split) {
  return dir / fmt::format("{}-labels-idx1-ubyte", split_prefix(split));
}

ImageSet ImageSet::first(int count) const {
  if (count < 1 || count > n)
    throw std::out_of_range(fmt::format("ImageSet::first({}): count must be between 1 and n = {} ({})", count, n,
                                        source.empty() ? "an image set built in memory" : source));
  const auto c = static_cast<std::size_t>(count);
  if (images.size() < c * kPixels || labels.size() < c)  // a set built by hand, not loaded
    throw std::logic_error(fmt::format("ImageSet::first({}): {} claims n = {} but holds {} pixels and {} labels",
                                       count, source.empty() ? "the set" : source, n, images.size(), labels.size()));
  ImageSet out;
  out.n = count;
  out.images.assign(images.begin(), images.begin() + static_cast<std::ptrdiff_t>(c * kPixels));
  out.labels.assign(labels.begin(), labels.begin() + static_cast<std::ptrdiff_t>(c));
  out.source = fmt::format("the first {} of {}", count, source.empty() ? "an image set built in memory" : source);
  return out;
}

ImageSet load_image_set(const fs::path& images, const fs::path& labels) {
  const idx::Array im = read_images(images);
  const idx::Array lb = read_labels(labels);
  if (im.shape[0] != lb.shape[0])
    throw idx::Error(fmt::format("{}: holds {} labels but {} holds {} images: expected one label per image",
                                 lb.source, lb.shape[0], im.source, im.shape[0]));
  // 2^40 bytes (idx's limit) / 86^2 is far below INT_MAX, so n fits.
  ImageSet set;
  set.n = static_cast<int>(im.shape[0]);
  const auto pixels = im.as_u8();
  const auto classes = lb.as_u8();
  if (const std::ptrdiff_t i = first_bad_label(classes); i >= 0)
    throw idx::Error(fmt::format("{}: label {} at index {} is not a class: expected 0..{}", lb.source,
                                 classes[static_cast<std::size_t>(i)], i, kImageSetClasses - 1));
  set.images.assign(pixels.begin(), pixels.end());
  set.labels.assign(classes.begin(), classes.end());
  set.source = fmt::format("{} + {}", images.string(), labels.string());
  return set;
}

void save_image_set(const ImageSet& set, const fs::path& dir, Split split) {
  const std::string what = fmt::format("{}: cannot save the {} set{}", dir.string(), split_prefix(split),
                                       set.source.empty() ? "" : " (" + set.source + ")");
  // Refuse to write what load_image_set would refuse to read back.
  if (set.n < 1) throw std::runtime_error(fmt::format("{}: it holds {} images, expected at least 1", what, set.n));
  const auto n = static_cast<std::size_t>(set.n);
  if (set.images.size() != n * kPixels || set.labels.size() != n)
    throw std::runtime_error(fmt::format(
        "{}: n = {} needs {} pixels and {} labels, found {} and {}", what, set.n, n * kPixels, n,
        set.images.size(), set.labels.size()));
  if (const std::ptrdiff_t i = first_bad_label(set.labels); i >= 0)
    throw std::runtime_error(fmt::format("{}: label {} at index {} is not a class: expected 0..{}",
                                         what, set.labels[static_cast<std::size_t>(i)], i, kImageSetClasses - 1));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot create the directory: {}", dir.string(), ec.message()));
  const auto n32 = static_cast<std::uint32_t>(set.n);
  const std::array<std::uint32_t, 3> image_shape = {n32, kImageSetSide, kImageSetSide};
  const std::array<std::uint32_t, 1> label_shape = {n32};
  idx::write_u8(images_file(dir, split), image_shape, set.images);
  idx::write_u8(labels_file(dir, split), label_shape, set.labels);
}

std::uint64_t checksum(const ImageSet& set) {
  // FNV-1a, 64 bits.
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](std::uint8_t byte) {
    h ^= byte;
    h *= 0x100000001b3ull;
  };
  const auto n = static_cast<std::uint64_t>(static_cast<std::int64_t>(set.n));
  for (int i = 0; i < 8; ++i) mix(static_cast<std::uint8_t>(n >> (8 * i)));  // little-endian, whatever the host
  for (std::uint8_t p : set.images) mix(p);
  for (std::uint8_t l : set.labels) mix(l);
  return h;
}

std::string checksum_hex(const ImageSet& set) { return fmt::format("{:016x}", checksum(set)); }

}  // namespace labkit
