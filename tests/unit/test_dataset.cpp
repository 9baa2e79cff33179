// The labelled image set (grader/network/dataset.h): save/load round trips, the checks that keep a wrong
// pair of IDX files from loading (each naming the file and what was expected), first(), and the
// checksum that model.json records.
#include <doctest/doctest.h>

#include <atomic>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include "grader/network/dataset.h"
#include "grader/io/idx.h"

namespace idx = labkit::idx;
namespace fs = std::filesystem;
using labkit::ImageSet, labkit::Split;

namespace {

constexpr std::size_t kPixels = 86 * 86;

struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter = 0;
    path = fs::temp_directory_path() /
           ("labkit-test-dataset-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

ImageSet make_set(int n, int seed = 0) {
  ImageSet s;
  s.n = n;
  s.images.resize(static_cast<std::size_t>(n) * kPixels);
  for (std::size_t i = 0; i < s.images.size(); ++i) s.images[i] = static_cast<std::uint8_t>(i * 31 + seed);
  for (int i = 0; i < n; ++i) s.labels.push_back(static_cast<std::uint8_t>((i + seed) % 10));
  s.source = "made in the test";
  return s;
}

void write_u8(const fs::path& path, std::vector<std::uint32_t> shape, std::uint8_t fill = 0) {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  idx::write_u8(path, shape, std::vector<std::uint8_t>(n, fill));
}

std::string message_of(auto&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// FNV-1a 64 straight from its definition, to pin the checksum's byte order: n as 8 little-endian
// bytes, then the images, then the labels.
std::uint64_t fnv1a(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (std::uint8_t b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

}  // namespace

TEST_CASE("file names follow Fashion-MNIST") {
  CHECK(labkit::images_file("d", Split::test) == fs::path("d") / "t10k-images-idx3-ubyte");
  CHECK(labkit::labels_file("d", Split::test) == fs::path("d") / "t10k-labels-idx1-ubyte");
  CHECK(labkit::images_file("d", Split::train) == fs::path("d") / "train-images-idx3-ubyte");
  CHECK(labkit::labels_file("d", Split::train) == fs::path("d") / "train-labels-idx1-ubyte");
}

TEST_CASE("save and load round trip, creating the directory") {
  const TempDir tmp;
  const fs::path dir = tmp.path / "nested" / "synth";
  const ImageSet test = make_set(5, 1), train = make_set(7, 2);
  labkit::save_image_set(test, dir, Split::test);
  labkit::save_image_set(train, dir, Split::train);
  for (const auto& [set, split] : {std::pair{&test, Split::test}, std::pair{&train, Split::train}}) {
    const ImageSet back = labkit::load_image_set(dir, split);
    CHECK(back.n == set->n);
    CHECK(back.images == set->images);
    CHECK(back.labels == set->labels);
    CHECK(labkit::checksum(back) == labkit::checksum(*set));
    CHECK(back.source == labkit::images_file(dir, split).string() + " + " + labkit::labels_file(dir, split).string());
  }
  // The files are standard IDX: what an instructor's tools and Fashion-MNIST's readers expect.
  const idx::Array images = idx::read(labkit::images_file(dir, Split::test));
  CHECK(images.shape == std::vector<std::uint32_t>{5, 86, 86});
  CHECK(images.big_endian);
  CHECK(fs::file_size(labkit::labels_file(dir, Split::test)) == 8 + 5);

  // Saved again over the old files: replaced, not appended to.
  labkit::save_image_set(train.first(3), dir, Split::train);
  CHECK(labkit::load_image_set(dir, Split::train).n == 3);
}

TEST_CASE("a wrong pair of files names the file and what was expected") {
  const TempDir tmp;
  const fs::path images = labkit::images_file(tmp.path, Split::test);
  const fs::path labels = labkit::labels_file(tmp.path, Split::test);
  write_u8(labels, {4});

  SUBCASE("Fashion-MNIST's own 28x28 images") {
    write_u8(images, {4, 28, 28});
    CHECK(message_of([&] { labkit::load_image_set(tmp.path, Split::test); }) ==
          images.string() +
              ": has shape (4, 28, 28) but expected (-, 86, 86) (images of 86x86); Fashion-MNIST's own files are "
              "28x28: resize them to 86x86 first");
  }
  SUBCASE("other image shapes") {
    write_u8(images, {4, 86, 85});
    const std::string m = message_of([&] { labkit::load_image_set(images, labels); });
    CHECK(m == images.string() + ": has shape (4, 86, 85) but expected (-, 86, 86) (images of 86x86)");
    write_u8(images, {4, 1, 86, 86});
    CHECK(message_of([&] { labkit::load_image_set(images, labels); }).find("has shape (4, 1, 86, 86)") !=
          std::string::npos);
  }
  SUBCASE("the two files swapped") {
    write_u8(images, {4, 86, 86});
    const std::string m = message_of([&] { labkit::load_image_set(labels, images); });
    CHECK(m.starts_with(labels.string() + ": has shape (4) but expected (-, 86, 86)"));
    CHECK(m.find("looks like a labels file") != std::string::npos);
  }
  SUBCASE("labels of the wrong shape") {
    write_u8(images, {4, 86, 86});
    write_u8(labels, {4, 1});
    CHECK(message_of([&] { labkit::load_image_set(images, labels); }) ==
          labels.string() + ": has shape (4, 1) but expected (-) (one class index per image)");
  }
  SUBCASE("not unsigned bytes") {
    // A short (0x0B) file of shape (1, 86, 86): hand-made, write_u8 writes only ubyte.
    std::vector<std::byte> bytes = {std::byte{0}, std::byte{0}, std::byte{0x0B}, std::byte{3}};
    for (std::uint32_t d : {1u, 86u, 86u})
      for (int s = 24; s >= 0; s -= 8) bytes.push_back(static_cast<std::byte>((d >> s) & 0xFF));
    bytes.resize(bytes.size() + 2 * kPixels);
    std::ofstream(images, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    write_u8(labels, {1});
    CHECK(message_of([&] { labkit::load_image_set(images, labels); }) ==
          images.string() + ": images are short values but expected ubyte (pixels 0..255)");
  }
  SUBCASE("counts that differ") {
    write_u8(images, {5, 86, 86});
    CHECK(message_of([&] { labkit::load_image_set(images, labels); }) ==
          labels.string() + ": holds 4 labels but " + images.string() +
              " holds 5 images: expected one label per image");
  }
  SUBCASE("a label that is not a class") {
    write_u8(images, {5, 86, 86});
    idx::write_u8(labels, std::vector<std::uint32_t>{5}, std::vector<std::uint8_t>{0, 9, 3, 10, 200});
    CHECK(message_of([&] { labkit::load_image_set(images, labels); }) ==
          labels.string() + ": label 10 at index 3 is not a class: expected 0..9");
  }
  SUBCASE("a missing file") {
    CHECK(message_of([&] { labkit::load_image_set(tmp.path, Split::train); }) ==
          labkit::images_file(tmp.path, Split::train).string() + ": cannot open: No such file or directory");
  }
  SUBCASE("the errors are idx::Error, a std::runtime_error") {
    write_u8(images, {5, 86, 86});
    CHECK_THROWS_AS(labkit::load_image_set(images, labels), idx::Error);
    CHECK_THROWS_AS(labkit::load_image_set(images, labels), std::runtime_error);
  }
}

TEST_CASE("save refuses a set that would not load back") {
  const TempDir tmp;
  ImageSet s = make_set(3);
  s.labels[1] = 12;
  CHECK(message_of([&] { labkit::save_image_set(s, tmp.path, Split::test); }) ==
        tmp.path.string() +
            ": cannot save the t10k set (made in the test): label 12 at index 1 is not a class: expected 0..9");
  s = make_set(3);
  s.labels.pop_back();
  CHECK(message_of([&] { labkit::save_image_set(s, tmp.path, Split::test); }) ==
        tmp.path.string() +
            ": cannot save the t10k set (made in the test): n = 3 needs 22188 pixels and 3 labels, found 22188 and 2");
  CHECK(message_of([&] { labkit::save_image_set(ImageSet{}, tmp.path, Split::test); }) ==
        tmp.path.string() + ": cannot save the t10k set: it holds 0 images, expected at least 1");
  CHECK_FALSE(fs::exists(labkit::images_file(tmp.path, Split::test)));
  const fs::path file = tmp.path / "a-file";
  std::ofstream(file) << "x";
  CHECK(message_of([&] { labkit::save_image_set(make_set(1), file / "sub", Split::test); })
            .starts_with((file / "sub").string() + ": cannot create the directory: "));
}

TEST_CASE("checksum: FNV-1a 64 over n, the images and the labels") {
  const ImageSet a = make_set(4, 3), b = make_set(4, 3);
  CHECK(labkit::checksum(a) == labkit::checksum(b));
  CHECK(labkit::checksum_hex(a) == labkit::checksum_hex(b));

  std::vector<std::uint8_t> bytes = {4, 0, 0, 0, 0, 0, 0, 0};
  bytes.insert(bytes.end(), a.images.begin(), a.images.end());
  bytes.insert(bytes.end(), a.labels.begin(), a.labels.end());
  CHECK(labkit::checksum(a) == fnv1a(bytes));
  CHECK(labkit::checksum(ImageSet{}) == fnv1a(std::vector<std::uint8_t>(8, 0)));

  const std::string hex = labkit::checksum_hex(a);
  CHECK(hex.size() == 16);
  CHECK(hex.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(std::stoull(hex, nullptr, 16) == labkit::checksum(a));

  ImageSet pixel = a;
  pixel.images[kPixels * 2 + 86 * 40 + 17] ^= 1;  // one pixel of image 2, one bit
  CHECK(labkit::checksum(pixel) != labkit::checksum(a));
  ImageSet label = a;
  label.labels[3] = static_cast<std::uint8_t>((label.labels[3] + 1) % 10);
  CHECK(labkit::checksum(label) != labkit::checksum(a));
  ImageSet count = a;
  count.n = 5;
  CHECK(labkit::checksum(count) != labkit::checksum(a));
  CHECK(labkit::checksum(a.first(3)) != labkit::checksum(a));
  CHECK(labkit::checksum(a.first(4)) == labkit::checksum(a));
}

TEST_CASE("first(count) copies the first images or names count and n") {
  const ImageSet a = make_set(6, 5);
  const ImageSet two = a.first(2);
  CHECK(two.n == 2);
  CHECK(two.images == std::vector<std::uint8_t>(a.images.begin(), a.images.begin() + 2 * kPixels));
  CHECK(two.labels == std::vector<std::uint8_t>(a.labels.begin(), a.labels.begin() + 2));
  CHECK(two.source.find("made in the test") != std::string::npos);
  CHECK(a.first(6).images == a.images);
  for (int bad : {0, -1, 7}) {
    CAPTURE(bad);
    CHECK_THROWS_AS((void)a.first(bad), std::out_of_range);
    const std::string m = message_of([&] { (void)a.first(bad); });
    CHECK(m == "ImageSet::first(" + std::to_string(bad) + "): count must be between 1 and n = 6 (made in the test)");
  }
  ImageSet broken = a;
  broken.images.resize(kPixels);
  CHECK(message_of([&] { (void)broken.first(2); }).find("claims n = 6 but holds 7396 pixels") != std::string::npos);
}
