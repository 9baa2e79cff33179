// .npy reading and writing (grader/io/npy.h): round trips, hand-made headers of every version,
// every kind of malformed file (each must give a one-line error naming the file and the
// problem), float16 conversions, and crash-freedom on truncated and corrupted files.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unistd.h>
#include <vector>

#include "grader/io/npy.h"

namespace npy = labkit::npy;
using namespace std::string_literals;
namespace fs = std::filesystem;

namespace {

std::vector<std::byte> to_bytes(std::string_view s) {
  std::vector<std::byte> out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());
  return out;
}

// A file with `header` verbatim (plus '\n'), the length field of format `major`, and `data_bytes`
// bytes of data; no padding, since readers must not rely on it.
std::vector<std::byte> npy_file(std::string header, std::size_t data_bytes, int major = 1) {
  header += '\n';
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) s += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return to_bytes(s + header + std::string(data_bytes, '\x01'));
}

std::string header_for(std::string_view descr, std::string_view shape, std::string_view fortran = "False") {
  return "{'descr': '" + std::string(descr) + "', 'fortran_order': " + std::string(fortran) +
         ", 'shape': " + std::string(shape) + ", }";
}

// Offset of the data in serialized bytes, read from the format's own length field.
std::size_t data_offset(const std::vector<std::byte>& b) {
  const auto u = [&](std::size_t i) { return std::to_integer<std::size_t>(b.at(i)); };
  return u(6) == 1 ? 10 + (u(8) | u(9) << 8) : 12 + (u(8) | u(9) << 8 | u(10) << 16 | u(11) << 24);
}

// Parsing must fail with one line that names the file and contains every word.
void check_rejected(const std::vector<std::byte>& bytes, std::initializer_list<std::string_view> words) {
  std::string message;
  try {
    npy::parse(bytes, "bad.npy");
  } catch (const npy::Error& e) {
    message = e.what();
  }
  INFO("message: ", message);
  REQUIRE_MESSAGE(!message.empty(), "a malformed file was accepted");
  CHECK(message.starts_with("bad.npy: "));
  CHECK(message.find('\n') == std::string::npos);
  for (std::string_view w : words) CHECK_MESSAGE(message.find(w) != std::string::npos, "missing: ", w);
}

// Values that exercise sign, fraction and range for each element type.
template <class T> std::vector<T> sample(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::int64_t>(i);
    if constexpr (std::is_same_v<T, std::uint16_t>)
      v[i] = npy::float_to_half(static_cast<float>(k - 3) * 0.37f);
    else if constexpr (std::is_floating_point_v<T>)
      v[i] = static_cast<T>((k - 3) * 0.1);
    else if constexpr (std::is_same_v<T, std::int64_t>)
      v[i] = (k - 3) * 1234567890123LL;
    else
      v[i] = static_cast<T>(k * 37 - 100);
  }
  return v;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("labkit-test-npy-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

std::string message_of(auto&& f) {
  try {
    f();
  } catch (const npy::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE_TEMPLATE("round trip in memory and on disk", T, float, double, std::uint16_t, std::int32_t,
                   std::int64_t, std::uint8_t) {
  const TempDir dir;
  const std::vector<std::vector<std::int64_t>> shapes = {{}, {7}, {0}, {2, 3, 4, 5}, {3, 0, 2}, {1, 1, 1, 1}};
  for (const auto& shape : shapes) {
    CAPTURE(npy::shape_string(shape));
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    const std::vector<T> values = sample<T>(n);
    const npy::Array a = npy::make<T>(shape, values);
    CHECK(a.size() == n);
    const auto bytes = npy::serialize(a);
    CHECK(std::to_integer<int>(bytes[6]) == 1);
    CHECK(data_offset(bytes) % 64 == 0);
    CHECK(bytes.size() == data_offset(bytes) + n * sizeof(T));
    CHECK(std::to_integer<char>(bytes[data_offset(bytes) - 1]) == '\n');

    const npy::Array b = npy::parse(bytes, "mem.npy");
    CHECK(b.dtype == npy::dtype_of<T>());
    CHECK(b.shape == shape);
    CHECK(b.source == "mem.npy");
    const auto view = b.template as<T>();
    CHECK(std::vector<T>(view.begin(), view.end()) == values);
    const auto doubles = b.to_double();
    REQUIRE(doubles.size() == n);
    for (std::size_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, std::uint16_t>) {
        CHECK(doubles[i] == npy::half_to_float(values[i]));
      } else {
        CHECK(doubles[i] == static_cast<double>(values[i]));
      }
    }

    const fs::path file = dir.path / "a.npy";
    npy::write<T>(file, shape, values);
    std::vector<std::int64_t> shape_read;
    CHECK(npy::read_as<T>(file, &shape_read) == values);
    CHECK(shape_read == shape);
    CHECK(npy::read(file).source == file.string());
  }
}

TEST_CASE("a header too long for format 1.0 is written as 2.0 and reads back") {
  // 25000 dims of extent 1: "1, " each, past 1.0's 65535-byte header limit.
  const std::vector<std::int64_t> shape(25000, 1);
  const std::vector<float> values = {42.5f};
  const auto bytes = npy::serialize(npy::make<float>(shape, values));
  CHECK(std::to_integer<int>(bytes[6]) == 2);
  CHECK(data_offset(bytes) % 64 == 0);
  CHECK(data_offset(bytes) > 65535);
  const npy::Array a = npy::parse(bytes, "long.npy");
  CHECK(a.shape == shape);
  CHECK(a.as<float>()[0] == 42.5f);
}

TEST_CASE("headers as numpy and people write them") {
  SUBCASE("version 3.0 (UTF-8 header)") {
    const auto a = npy::parse(npy_file(header_for("<i4", "(2,)"), 8, 3), "v3.npy");
    CHECK(a.dtype == npy::DType::i4);
    CHECK(a.shape == std::vector<std::int64_t>{2});
    CHECK(a.as<std::int32_t>()[0] == 0x01010101);
  }
  SUBCASE("version 2.0") {
    CHECK(npy::parse(npy_file(header_for("<f8", "(1, 2)"), 16, 2), "v2.npy").shape ==
          std::vector<std::int64_t>{1, 2});
  }
  SUBCASE("spelling variants") {
    const auto ok = [](std::string header, std::size_t bytes) {
      return npy::parse(npy_file(header, bytes), "x.npy");
    };
    CHECK(ok("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3,)}", 12).shape.size() == 1);
    CHECK(ok("  {'shape':(2,3,),'fortran_order':False,'descr':'<f2'}\t\r ", 12).dtype == npy::DType::f2);
    CHECK(ok("{'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4).size() == 1);
    CHECK(ok("{'descr': '<u1', 'fortran_order': False, 'shape': (5, ), }", 5).dtype == npy::DType::u1);
    CHECK(ok("{'descr': '|u1', 'fortran_order': False, 'shape': (+5,), }", 5).dtype == npy::DType::u1);
    CHECK(ok("{'descr': '<i8', 'fortran_order': False, 'shape': (0, 9223372036854775807)}", 0).size() == 0);
  }
}

TEST_CASE("malformed files are rejected with the file, the problem, expected and found") {
  const std::string good = header_for("<f4", "(2, 3)");
  SUBCASE("magic and version") {
    check_rejected({}, {"empty file", "\\x93NUMPY"});
    check_rejected(to_bytes("hello world"), {"not a .npy file", "\\x93NUMPY", "found 'hello '"});
    check_rejected(to_bytes("PK\x03\x04 zipped"), {"not a .npy file", "zip"});
    check_rejected(to_bytes("\x93NUM"), {"truncated magic", "expected 8", "found 4"});
    auto v4 = npy_file(good, 24);
    v4[6] = std::byte{4};
    check_rejected(v4, {"unsupported .npy format version 4.0", "1.0, 2.0 and 3.0"});
    v4[6] = std::byte{1};
    v4[7] = std::byte{1};
    check_rejected(v4, {"version 1.1"});
  }
  SUBCASE("truncated before the data") {
    check_rejected(to_bytes(std::string("\x93NUMPY\x01\x00\x05", 9)),
                   {"truncated header length", "expected 2", "found 1"});
    check_rejected(to_bytes(std::string("\x93NUMPY\x02\x00\x05\x00\x00", 11)),
                   {"header length", "expected 4", "found 3"});
    auto bytes = npy_file(good, 24);
    bytes.resize(40);
    check_rejected(bytes, {"truncated header", "expected 60 bytes", "found 30"});
  }
  SUBCASE("header structure") {
    const std::vector<std::pair<std::string, std::vector<std::string_view>>> cases = {
        {"[1, 2]", {"header is not a Python dict", "expected '{'", "found '['"}},
        {"", {"header is not a Python dict", "the end of the header"}},
        {"{'descr': '<f4', 'fortran_order': False}",
         {"no 'shape' key", "exactly 'descr', 'fortran_order' and 'shape'"}},
        {"{'fortran_order': False, 'shape': (1,)}", {"no 'descr' key"}},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", {"unexpected key 'x'"}},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}",
         {"duplicate key 'descr'"}},
        {"{'descr' '<f4'}", {"bad header", "expected ':' after key 'descr'", "column 10", "found \"'\""}},
        {"{'descr': '<f4', 'fortran_order': False 'shape': (6,)}", {"expected ',' or '}'", "found \"'\""}},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': (6,)}", {"expected ',' or '}'", "found 'f'"}},
        {"{'descr': '<f4", {"an unterminated string"}},
        {"{'descr': '<f4', 'fortran_order': Flase, 'shape': (6,)}", {"True, False or None", "found 'Flase'"}},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} x",
         {"nothing but spaces after the closing '}'"}},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6, 2.5)}", {"expected ',' or ')'", "found '.'"}},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,", {"the end of the header"}},
        {"{1: 2}", {"expected a string key", "the int 1"}},
        {"{'a': " + std::string(100, '(') + "}", {"levels of nesting"}},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
         {"does not fit in 64 bits"}},
    };
    for (const auto& [header, words] : cases) {
      CAPTURE(header);
      std::string message = message_of([&] { npy::parse(npy_file(header, 24), "bad.npy"); });
      CAPTURE(message);
      CHECK(message.starts_with("bad.npy: "));
      CHECK(message.find('\n') == std::string::npos);
      for (std::string_view w : words) CHECK_MESSAGE(message.find(w) != std::string::npos, "missing: ", w);
    }
  }
  SUBCASE("values") {
    check_rejected(npy_file(header_for("<i2", "(2, 3)"), 12),
                   {"unsupported dtype '<i2'", "supported: <f4 <f8 <f2 <i4 <i8 |u1"});
    check_rejected(npy_file(header_for("|b1", "(6,)"), 6), {"unsupported dtype '|b1'"});
    check_rejected(npy_file(header_for("<c8", "(6,)"), 48), {"unsupported dtype '<c8'"});
    check_rejected(npy_file(header_for(">f4", "(2, 3)"), 24), {"big-endian dtype '>f4'", "a.astype('<f4')"});
    check_rejected(npy_file(header_for("|O", "(2,)"), 16), {"object dtype '|O'", "Python objects"});
    check_rejected(npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", 8),
                   {"structured dtype"});
    check_rejected(npy_file("{'descr': 4, 'fortran_order': False, 'shape': (2,)}", 8),
                   {"'descr' must be a dtype string", "the int 4"});
    check_rejected(npy_file(header_for("<f4", "(2, 3)", "True"), 24),
                   {"Fortran order is not supported; save with np.ascontiguousarray"});
    check_rejected(npy_file(header_for("<f4", "(6,)", "0"), 24),
                   {"'fortran_order' must be True or False", "the int 0"});
    check_rejected(npy_file(header_for("<f4", "(6)"), 24), {"'shape' must be a tuple", "the int 6", "(6,)"});
    check_rejected(npy_file(header_for("<f4", "[2, 3]"), 24), {"'shape' must be a tuple", "a list"});
    check_rejected(npy_file(header_for("<f4", "(2, '3')"), 24),
                   {"'shape' must hold ints", "the string '3'", "position 1"});
    check_rejected(npy_file(header_for("<f4", "(2, -3)"), 24), {"negative extent -3", "(2, -3)"});
    check_rejected(npy_file(header_for("<f4", "(4611686018427387904, 4)"), 24),
                   {"too large", "overflows 64 bits"});
    check_rejected(npy_file(header_for("<f8", "(-9223372036854775808,)"), 8),
                   {"negative extent -9223372036854775808"});
  }
  SUBCASE("data size") {
    check_rejected(npy_file(good, 20),
                   {"truncated data: expected 24 bytes for shape (2, 3) of <f4, found 20"});
    check_rejected(npy_file(good, 0), {"truncated data", "found 0"});
    check_rejected(npy_file(good, 28),
                   {"4 trailing bytes", "expected 24 bytes for shape (2, 3) of <f4, found 28"});
    check_rejected(npy_file(header_for("<f8", "()"), 0), {"expected 8 bytes for shape () of <f8"});
  }
}

TEST_CASE("file system errors name the file") {
  const TempDir dir;
  const fs::path missing = dir.path / "nope" / "x.npy";
  std::string m = message_of([&] { npy::read(missing); });
  CHECK(m == missing.string() + ": cannot open: No such file or directory");
  m = message_of([&] { npy::read(dir.path); });
  CHECK(m == dir.path.string() + ": cannot open: it is a directory");
  const std::vector<float> v = {1.0f};
  m = message_of([&] { npy::write<float>(missing, {1}, v); });
  CHECK(m.starts_with(missing.string() + ": cannot write: "));
}

TEST_CASE("typed access and requirements say what was expected") {
  const std::vector<double> v(6, 1.5);
  npy::Array a = npy::make<double>({2, 3}, v);
  a.source = "input.npy";
  const std::vector<std::int64_t> same = {2, 3}, wild = {-1, 3}, other = {2, 4}, other_wild = {-1, 1, 86, 86};
  CHECK_NOTHROW(a.require_shape(same, "input"));
  CHECK_NOTHROW(a.require_shape(wild, "input"));
  CHECK(message_of([&] { a.require_shape(other, "input"); }) ==
        "input.npy: input has shape (2, 3) but expected (2, 4)");
  CHECK(message_of([&] { a.require_shape(other_wild, "x"); }) ==
        "input.npy: x has shape (2, 3) but expected (any, 1, 86, 86)");
  CHECK_NOTHROW(a.require_dtype(npy::DType::f8, "input"));
  CHECK(message_of([&] { a.require_dtype(npy::DType::f4, "input"); }) ==
        "input.npy: input has dtype <f8 but expected <f4");
  CHECK(message_of([&] { (void)a.as<float>(); }) ==
        "input.npy: array has dtype <f8 and cannot be viewed as <f4");
  a.as<double>()[0] = 7.0;
  CHECK(a.to_double()[0] == 7.0);
  a.data.pop_back();
  CHECK(message_of([&] {
          (void)a.as<double>();
        }).find("holds 47 bytes of data but shape (2, 3) of <f8 needs 48") != std::string::npos);
  CHECK(message_of([&] { npy::serialize(a); }).find("cannot serialize") != std::string::npos);
  CHECK(message_of([&] {
          npy::make<double>({2, 2}, v);
        }) == "npy::make: 6 values given for shape (2, 2) of <f8, which needs 4");
  CHECK(message_of([&] { npy::make<double>({-1, 2}, v); }).find("negative extent -1") != std::string::npos);

  const TempDir dir;
  npy::write<std::int32_t>(dir.path / "i.npy", {2}, std::vector<std::int32_t>{1, 2});
  CHECK(message_of([&] {
          npy::read_as<float>(dir.path / "i.npy");
        }).ends_with("has dtype <i4 but expected <f4"));
  CHECK(npy::shape_string(std::vector<std::int64_t>{}) == "()");
  CHECK(npy::shape_string(std::vector<std::int64_t>{5}) == "(5,)");
  CHECK(npy::shape_string(std::vector<std::int64_t>{2, 1, 86, 86}) == "(2, 1, 86, 86)");
  CHECK(npy::descr(npy::DType::u1) == "|u1");
  CHECK(npy::item_size(npy::DType::f2) == 2);
}

TEST_CASE("float16 conversions round to nearest even") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<float, std::uint16_t>> exact = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3C00},
      {-2.0f, 0xC000},
      {65504.0f, 0x7BFF},
      {std::ldexp(1.0f, -14), 0x0400},     // smallest normal, 6.1e-5
      {std::ldexp(1.0f, -24), 0x0001},     // smallest subnormal, 5.96e-8
      {std::ldexp(1023.0f, -24), 0x03FF},  // largest subnormal
      {inf, 0x7C00},
      {-inf, 0xFC00},
      {0.333251953125f, 0x3555}};
  for (const auto& [f, h] : exact) {
    CAPTURE(f);
    CHECK(npy::float_to_half(f) == h);
    CHECK(std::bit_cast<std::uint32_t>(npy::half_to_float(h)) == std::bit_cast<std::uint32_t>(f));
  }
  const std::vector<std::pair<float, std::uint16_t>> rounded = {
      {1.0f + std::ldexp(1.0f, -11), 0x3C00},                          // tie between 0x3C00 and 0x3C01: even
      {1.0f + 3 * std::ldexp(1.0f, -11), 0x3C02},                      // tie between 0x3C01 and 0x3C02: even
      {1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20), 0x3C01},  // just above the tie
      {65519.0f, 0x7BFF},
      {65520.0f, 0x7C00},
      {1e10f, 0x7C00},
      {-1e10f, 0xFC00},
      {std::ldexp(1.0f, -25), 0x0000},                          // tie: to 0
      {std::ldexp(3.0f, -25), 0x0002},                          // tie between 1 and 2 units
      {std::ldexp(1.0f, -25) + std::ldexp(1.0f, -35), 0x0001},  // above the tie
      {std::ldexp(1.0f, -26), 0x0000},
      {1e-30f, 0x0000},
      {-1e-30f, 0x8000},
      {std::ldexp(2047.0f, -25), 0x0400},  // largest subnormal + half a unit: up into the normals
      {std::numeric_limits<float>::denorm_min(), 0x0000}};
  for (const auto& [f, h] : rounded) {
    CAPTURE(f);
    CHECK(npy::float_to_half(f) == h);
  }
  const std::uint16_t nan = npy::float_to_half(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7C00) == 0x7C00);
  CHECK((nan & 0x03FF) != 0);
  CHECK(std::isnan(npy::half_to_float(0x7E00)));
  CHECK(std::isnan(npy::half_to_float(0xFC01)));
  // Every half survives float and back, NaNs as NaNs.
  std::vector<std::uint32_t> broken;
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = npy::half_to_float(static_cast<std::uint16_t>(h));
    if (!std::isnan(f) && npy::float_to_half(f) != h) broken.push_back(h);
  }
  CHECK(broken.empty());
}

TEST_CASE("truncated and corrupted files throw npy::Error, never crash") {
  const std::vector<std::int32_t> values = {1, -2, 3, -4, 5, -6};
  for (const auto& bytes :
       {npy::serialize(npy::make<std::int32_t>({2, 3}, values)), npy_file(header_for("<f2", "(3,)"), 6, 3)}) {
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      const std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      CHECK_THROWS_AS(npy::parse(cut, "cut.npy"), npy::Error);
    }
    const std::string specials = "(),'\"{}:-+09 \n\t\\\x93\xff\0"s;
    std::size_t accepted = 0, rejected = 0;
    for (std::size_t i = 0; i < data_offset(bytes); ++i) {
      for (char c : specials) {
        std::vector<std::byte> bad = bytes;
        bad[i] = static_cast<std::byte>(c);
        try {
          const npy::Array a = npy::parse(bad, "flip.npy");
          CHECK(a.data.size() == a.size() * npy::item_size(a.dtype));
          ++accepted;
        } catch (const npy::Error&) {
          ++rejected;
        }
      }
    }
    CHECK(accepted > 0);  // e.g. a space swapped for a tab
    CHECK(rejected > 0);
  }
}
