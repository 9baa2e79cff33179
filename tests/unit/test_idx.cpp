// IDX reading and writing (grader/io/idx.h): round trips, hand-made files of every type in both byte
// orders, every kind of malformed file (each must give a one-line error naming the file and the
// problem), and crash-freedom on truncated and corrupted files.
#include <doctest/doctest.h>

#include <atomic>
#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "grader/io/idx.h"

namespace idx = labkit::idx;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<std::byte>;
using Shape = std::vector<std::uint32_t>;

// A fresh directory per use: tests in one run, and runs side by side, never share files.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter = 0;
    path = fs::temp_directory_path() /
           ("labkit-test-idx-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// `value`'s bytes, most significant first when `big`; independent of the host's byte order.
template <class T> void put(Bytes& out, T value, bool big) {
  using U = std::conditional_t<sizeof(T) == 1, std::uint8_t,
                               std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                                  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
  const U bits = std::bit_cast<U>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    const std::size_t shift = 8 * (big ? sizeof(T) - 1 - i : i);
    out.push_back(static_cast<std::byte>((bits >> shift) & 0xFF));
  }
}

// A whole IDX file written by hand, in the given byte order (magic, sizes and data alike).
template <class T> Bytes idx_file(bool big, idx::Type type, const Shape& shape, const std::vector<T>& values) {
  const auto t = static_cast<std::uint8_t>(type), nd = static_cast<std::uint8_t>(shape.size());
  Bytes out;
  for (std::uint8_t b : big ? std::vector<std::uint8_t>{0, 0, t, nd} : std::vector<std::uint8_t>{nd, t, 0, 0})
    out.push_back(std::byte{b});
  for (std::uint32_t d : shape) put(out, d, big);
  for (T v : values) put(out, v, big);
  return out;
}

Bytes raw(std::initializer_list<int> values) {
  Bytes out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

template <class T> std::vector<T> values_of(const idx::Array& a) {
  REQUIRE(a.data.size() == a.size() * sizeof(T));
  std::vector<T> out(a.size());
  if (!out.empty()) std::memcpy(out.data(), a.data.data(), a.data.size());
  return out;
}

std::string message_of(auto&& f) {
  try {
    f();
  } catch (const idx::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Parsing must fail with one line that names the file and contains every word.
void check_rejected(const Bytes& bytes, std::initializer_list<std::string_view> words) {
  const std::string message = message_of([&] { idx::parse(bytes, "bad-idx3-ubyte"); });
  INFO("message: ", message);
  CHECK(message.starts_with("bad-idx3-ubyte: "));
  CHECK(message.find('\n') == std::string::npos);
  for (std::string_view w : words) CHECK_MESSAGE(message.find(w) != std::string::npos, "missing: ", w);
}

std::vector<std::uint8_t> pattern(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 37 + 11);
  return v;
}

}  // namespace

TEST_CASE("u8 round trip: serialize and parse, write and read") {
  const TempDir dir;
  for (const Shape& shape : {Shape{7}, Shape{2, 3}, Shape{3, 4, 5}, Shape{2, 1, 3, 2}, Shape{258, 1}}) {
    CAPTURE(idx::shape_string(shape));
    std::size_t n = 1;
    for (auto d : shape) n *= d;
    const auto values = pattern(n);

    const Bytes bytes = idx::serialize_u8(shape, values);
    REQUIRE(bytes.size() == 4 + 4 * shape.size() + n);
    // The standard header: 00 00 08 ndims, then big-endian sizes.
    CHECK(bytes[0] == std::byte{0});
    CHECK(bytes[1] == std::byte{0});
    CHECK(bytes[2] == std::byte{0x08});
    CHECK(std::to_integer<std::size_t>(bytes[3]) == shape.size());
    CHECK((std::to_integer<std::uint32_t>(bytes[6]) << 8) == (shape[0] & 0xFF00));
    CHECK(std::to_integer<std::uint32_t>(bytes[7]) == (shape[0] & 0xFF));

    const idx::Array a = idx::parse(bytes, "mem");
    CHECK(a.type == idx::Type::u8);
    CHECK(a.shape == shape);
    CHECK(a.big_endian);
    CHECK(a.source == "mem");
    CHECK(a.size() == n);
    const auto view = a.as_u8();
    CHECK(std::vector<std::uint8_t>(view.begin(), view.end()) == values);

    const fs::path file = dir.path / "round-idx-ubyte";
    idx::write_u8(file, shape, values);
    const idx::Array b = idx::read(file);
    CHECK(b.shape == shape);
    CHECK(b.source == file.string());
    CHECK(b.data == a.data);
    const auto floats = b.to_float();
    REQUIRE(floats.size() == n);
    for (std::size_t i = 0; i < n; ++i) CHECK(floats[i] == static_cast<float>(values[i]));
  }
}

TEST_CASE_TEMPLATE("every type reads the same from big- and little-endian files", T, std::uint8_t, std::int8_t,
                   std::int16_t, std::int32_t, float, double) {
  using L = std::numeric_limits<T>;
  const std::vector<T> values = {L::lowest(), static_cast<T>(-1), T{0}, T{1}, L::max(), static_cast<T>(100)};
  std::vector<T> more = values;
  if constexpr (std::is_floating_point_v<T>) {
    more = {T(-1.5), T(0.1), T(-0.0), L::denorm_min(), T(3.25e10), L::max()};
  }
  const idx::Type type = std::is_same_v<T, std::uint8_t>  ? idx::Type::u8
                         : std::is_same_v<T, std::int8_t> ? idx::Type::i8
                         : std::is_same_v<T, std::int16_t> ? idx::Type::i16
                         : std::is_same_v<T, std::int32_t> ? idx::Type::i32
                         : std::is_same_v<T, float>        ? idx::Type::f32
                                                           : idx::Type::f64;
  CHECK(idx::item_size(type) == sizeof(T));
  for (const auto& v : {values, more}) {
    const Shape shape = {2, 3};
    const idx::Array be = idx::parse(idx_file(true, type, shape, v), "be");
    const idx::Array le = idx::parse(idx_file(false, type, shape, v), "le");
    CHECK(be.big_endian);
    CHECK_FALSE(le.big_endian);
    for (const idx::Array* a : {&be, &le}) {
      CHECK(a->type == type);
      CHECK(a->shape == shape);
      const auto read = values_of<T>(*a);
      // Compared as bits: -0.0 must stay -0.0.
      CHECK(std::memcmp(read.data(), v.data(), v.size() * sizeof(T)) == 0);
      const auto floats = a->to_float();
      REQUIRE(floats.size() == v.size());
      for (std::size_t i = 0; i < v.size(); ++i) CHECK(floats[i] == static_cast<float>(v[i]));
    }
    if (type == idx::Type::u8) {
      CHECK(be.as_u8().size() == 6);
    } else {
      CHECK(message_of([&] { (void)le.as_u8(); }) ==
            "le: holds " + std::string(idx::type_name(type)) + " values but expected ubyte (unsigned bytes 0..255)");
    }
  }
}

TEST_CASE("sizes above 255 decode in both byte orders") {
  const std::vector<std::uint8_t> v = pattern(300 * 2);
  for (bool big : {true, false}) {
    const idx::Array a = idx::parse(idx_file(big, idx::Type::u8, {300, 2}, v), "x");
    CHECK(a.shape == Shape{300, 2});
    CHECK(values_of<std::uint8_t>(a) == v);
  }
}

TEST_CASE("malformed files are rejected with the file, the problem, expected and found") {
  SUBCASE("magic") {
    check_rejected({}, {"empty file (0 bytes)", "00 00 <type> <ndims>"});
    check_rejected(raw({0, 0, 8}), {"truncated magic", "4 bytes", "found 3 (00 00 08)"});
    check_rejected(raw({0x12, 0x34, 0x56, 0x78, 0, 0, 0, 1, 5}),
                   {"not an IDX file: magic bytes 12 34 56 78, expected 00 00 <type> <ndims>"});
    check_rejected(raw({0x1f, 0x8b, 0x08, 0x00, 1, 2, 3}), {"not an IDX file", "1f 8b 08 00", "gunzip"});
    check_rejected(raw({0, 0, 0x0a, 1, 0, 0, 0, 1, 5}),
                   {"unknown IDX type byte 0x0a", "00 00 0a 01",
                    "valid: 0x08 ubyte, 0x09 byte, 0x0b short, 0x0c int, 0x0d float, 0x0e double"});
    check_rejected(raw({0, 0, 0, 0}), {"unknown IDX type byte 0x00"});  // both byte orders match: still invalid
    check_rejected(raw({1, 0x07, 0, 0, 1, 0, 0, 0, 5}), {"unknown IDX type byte 0x07", "01 07 00 00"});
  }
  SUBCASE("dimensions and header") {
    check_rejected(raw({0, 0, 8, 0}), {"0 dimensions", "1 to 4"});
    check_rejected(raw({0, 0, 8, 5, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 7}),
                   {"5 dimensions", "1 to 4"});
    check_rejected(raw({0, 0, 0, 0xff}), {"unknown IDX type byte 0x00"});
    check_rejected(raw({0, 0, 8, 255}), {"255 dimensions"});
    check_rejected(raw({0, 0, 8, 3, 0, 0, 0, 2, 0, 0}),
                   {"truncated header: expected 16 bytes (the magic and 3 sizes), found 10"});
    check_rejected(raw({0, 0, 8, 1, 0, 0}), {"truncated header: expected 8 bytes (the magic and 1 size), found 6"});
    check_rejected(idx_file<std::uint8_t>(true, idx::Type::u8, {2, 0, 3}, {}),
                   {"size 1 of shape (2, 0, 3) is 0", "at least 1"});
    check_rejected(idx_file<std::uint8_t>(false, idx::Type::u8, {0}, {}), {"size 0 of shape (0) is 0"});
  }
  SUBCASE("sizes too large to hold") {
    const std::uint32_t max = std::numeric_limits<std::uint32_t>::max();
    check_rejected(idx_file<double>(true, idx::Type::f64, {max, max, max, max}, {}),
                   {"shape (4294967295, 4294967295, 4294967295, 4294967295) of double is too large", "2^40"});
    check_rejected(idx_file<std::uint8_t>(true, idx::Type::u8, {65536, 65536, 257}, {}), {"too large"});
    // Exactly 2^40 bytes is within the limit: the size check passes and the data is missing.
    check_rejected(idx_file<std::uint8_t>(true, idx::Type::u8, {65536, 65536, 256}, {}),
                   {"truncated data", "needs 1099511627776 bytes", "found 0"});
    check_rejected(idx_file<std::int32_t>(false, idx::Type::i32, {1u << 20, 1u << 20}, {}), {"of int is too large"});
  }
  SUBCASE("data size") {
    const auto v = pattern(10);
    auto bytes = idx_file(true, idx::Type::u8, {10}, v);
    bytes.pop_back();
    check_rejected(bytes, {"truncated data: shape (10) of ubyte needs 10 bytes after the 8-byte header, found 9"});
    bytes.push_back(std::byte{1});
    bytes.push_back(std::byte{2});
    check_rejected(bytes, {"1 trailing byte after the data", "needs 10 bytes after the 8-byte header, found 11"});
    check_rejected(idx_file<std::int16_t>(false, idx::Type::i16, {2, 3}, {1, 2, 3, 4, 5}),
                   {"truncated data: shape (2, 3) of short needs 12 bytes after the 12-byte header, found 10"});
    check_rejected(idx_file<float>(true, idx::Type::f32, {2}, {1, 2, 3}),
                   {"4 trailing bytes", "shape (2) of float needs 8 bytes", "found 12"});
  }
}

TEST_CASE("file system errors name the file") {
  const TempDir dir;
  const fs::path missing = dir.path / "t10k-labels-idx1-ubyte";
  CHECK(message_of([&] { idx::read(missing); }) == missing.string() + ": cannot open: No such file or directory");
  std::ofstream(missing.string() + ".gz") << "zipped";
  CHECK(message_of([&] { idx::read(missing); }) == missing.string() +
                                                      ": cannot open: No such file or directory (found " +
                                                      missing.string() + ".gz: gunzip it first)");
  CHECK(message_of([&] { idx::read(dir.path); }) ==
        dir.path.string() + ": cannot open: it is a directory, expected an IDX file");
  const fs::path gz = missing.string() + ".gz";
  CHECK(message_of([&] { idx::read(gz); }).starts_with(gz.string() + ": not an IDX file"));

  const fs::path cut = dir.path / "cut";
  auto bytes = idx::serialize_u8(Shape{4}, pattern(4));
  bytes.pop_back();
  std::ofstream(cut, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               static_cast<std::streamsize>(bytes.size()));
  CHECK(message_of([&] { idx::read(cut); }) ==
        cut.string() + ": truncated data: shape (4) of ubyte needs 4 bytes after the 8-byte header, found 3");

  const fs::path nowhere = dir.path / "no" / "such" / "dir" / "x";
  CHECK(message_of([&] { idx::write_u8(nowhere, Shape{1}, pattern(1)); })
            .starts_with(nowhere.string() + ": cannot write: "));
}

TEST_CASE("writing refuses what the format cannot hold") {
  const auto v = pattern(6);
  CHECK(message_of([&] { idx::serialize_u8(Shape{2, 2}, v); }) ==
        "idx::serialize_u8: cannot write: 6 values given for shape (2, 2) of ubyte, which needs 4");
  CHECK(message_of([&] { idx::serialize_u8(Shape{}, v); }).find("0 dimensions: IDX files hold 1 to 4") !=
        std::string::npos);
  CHECK(message_of([&] { idx::serialize_u8(Shape{1, 1, 1, 1, 6}, v); }).find("5 dimensions") != std::string::npos);
  CHECK(message_of([&] { idx::serialize_u8(Shape{6, 0}, v); }).find("size 1 of shape (6, 0) is 0") !=
        std::string::npos);
  const TempDir dir;
  const fs::path file = dir.path / "x";
  CHECK(message_of([&] { idx::write_u8(file, Shape{7}, v); }).starts_with(file.string() + ": cannot write: 6 values"));
  CHECK_FALSE(fs::exists(file));  // nothing half-written
}

TEST_CASE("shape requirements and views say what was expected") {
  idx::Array a;
  a.source = "data/t10k-images-idx3-ubyte";
  a.shape = {10000, 28, 28};
  const std::vector<std::uint32_t> want = {0, 86, 86}, same = {10000, 0, 28}, flat = {0};
  CHECK(message_of([&] { a.require_shape(want, "images of 86x86"); }) ==
        "data/t10k-images-idx3-ubyte: has shape (10000, 28, 28) but expected (-, 86, 86) (images of 86x86)");
  CHECK(message_of([&] { a.require_shape(flat, "labels"); }) ==
        "data/t10k-images-idx3-ubyte: has shape (10000, 28, 28) but expected (-) (labels)");
  CHECK_NOTHROW(a.require_shape(same, "x"));
  // A hand-built array whose data does not match its shape is refused, not over-read.
  CHECK(message_of([&] { (void)a.as_u8(); }).find("holds 0 bytes of data but shape (10000, 28, 28)") !=
        std::string::npos);
  CHECK(message_of([&] { (void)a.to_float(); }).find("needs 7840000") != std::string::npos);
  CHECK(idx::Array{}.size() == 0);
  CHECK(idx::Array{}.to_float().empty());
  CHECK(idx::shape_string(Shape{10000}) == "(10000)");
  CHECK(idx::type_name(idx::Type::i16) == "short");
  CHECK(idx::item_size(idx::Type::f64) == 8);
  CHECK_THROWS_AS(idx::item_size(static_cast<idx::Type>(0x42)), idx::Error);
}

TEST_CASE("truncated and corrupted files throw idx::Error, never crash") {
  const std::vector<Bytes> files = {
      idx::serialize_u8(Shape{2, 3}, pattern(6)),
      idx_file<float>(false, idx::Type::f32, {3, 1}, {1.5f, -2.0f, 0.25f}),
      idx_file<double>(true, idx::Type::f64, {1, 1, 2}, {1e300, -0.5}),
      idx_file<std::int16_t>(false, idx::Type::i16, {1, 1, 1, 3}, {-5, 7, 300}),
  };
  // Either it parses to a consistent array, or it throws idx::Error (anything else fails the test).
  std::size_t accepted = 0, rejected = 0;
  auto attempt = [&](const Bytes& bytes) {
    try {
      const idx::Array a = idx::parse(bytes, "fuzz");
      REQUIRE(a.data.size() == a.size() * idx::item_size(a.type));
      CHECK(a.to_float().size() == a.size());
      ++accepted;
    } catch (const idx::Error& e) {
      CHECK(std::string(e.what()).starts_with("fuzz: "));
      ++rejected;
    }
  };
  for (const Bytes& bytes : files) {
    CAPTURE(bytes.size());
    for (std::size_t n = 0; n < bytes.size(); ++n)
      CHECK_THROWS_AS(idx::parse(std::span(bytes).first(n), "cut"), idx::Error);
    const std::size_t header = 4 + 4 * std::to_integer<std::size_t>(bytes[0] == std::byte{0} ? bytes[3] : bytes[0]);
    for (std::size_t i = 0; i < header; ++i)  // every value of every header byte
      for (int value = 0; value < 256; ++value) {
        Bytes bad = bytes;
        bad[i] = static_cast<std::byte>(value);
        attempt(bad);
      }
  }
  std::mt19937 rng(20240611);
  for (int iter = 0; iter < 20000; ++iter) {
    Bytes bad = files[static_cast<std::size_t>(iter) % files.size()];
    const int flips = 1 + iter % 3;
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] = static_cast<std::byte>(rng() & 0xFF);
    if (iter % 5 == 0) bad.resize(rng() % (bad.size() + 4));  // and some of them cut or padded
    attempt(bad);
  }
  CHECK(accepted > 0);  // e.g. a changed data byte, or the same type byte written again
  CHECK(rejected > 0);
  MESSAGE("fuzz: ", accepted, " accepted, ", rejected, " rejected");
}
