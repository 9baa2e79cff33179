// npy.cpp — the .npy reader and writer (contract in grader/io/npy.h; format: numpy's NEP 1).
//
// The header dict is parsed (npy_header.h) rather than matched against the exact text numpy
// emits, because that text differs between numpy versions (spacing, trailing commas, padding)
// and hand-made files differ again.
#include "grader/io/npy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (moved here in fmt 11)

#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>

#include "npy_header.h"

namespace labkit::npy {
namespace {

namespace fs = std::filesystem;
using detail::describe, detail::escaped, detail::fail, detail::HeaderParser, detail::Value;

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kAlign = 64;  // numpy's ARRAY_ALIGN: lets readers map the data aligned
constexpr std::string_view kSupported = "<f4 <f8 <f2 <i4 <i8 |u1";
constexpr std::string_view kKeys = "'descr', 'fortran_order' and 'shape'";

struct DTypeInfo {
  DType type;
  std::string_view descr;
  std::size_t size;
};
constexpr std::array<DTypeInfo, 6> kDTypes = {{{DType::f4, "<f4", 4},
                                               {DType::f8, "<f8", 8},
                                               {DType::f2, "<f2", 2},
                                               {DType::i4, "<i4", 4},
                                               {DType::i8, "<i8", 8},
                                               {DType::u1, "|u1", 1}}};

std::string_view display_name(const std::string& source) {
  return source.empty() ? std::string_view("(in-memory array)") : std::string_view(source);
}

// Size in bytes of `shape` of `type`, refusing negative extents and anything past 2^63.
std::size_t checked_bytes(std::span<const std::int64_t> shape, DType type, std::string_view name) {
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      fail(name, "negative extent {} at position {} of shape {}", shape[i], i, shape_string(shape));
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t n = item_size(type);
  for (std::int64_t d : shape)
    if (d == 0) return 0;  // an empty array, however large its other extents
  for (std::int64_t d : shape) {
    if (n > kMax / static_cast<std::uint64_t>(d))
      fail(name, "shape {} of {} is too large: its size in bytes overflows 64 bits", shape_string(shape),
           descr(type));
    n *= static_cast<std::uint64_t>(d);
  }
  return static_cast<std::size_t>(n);
}

// ---- header values -----------------------------------------------------------------------------

DType dtype_from(const Value& v, std::string_view name) {
  if (v.kind == Value::Kind::List)
    fail(name, "structured dtype (a list of fields in 'descr') is not supported; supported dtypes: {}",
         kSupported);
  if (v.kind != Value::Kind::Str)
    fail(name, "'descr' must be a dtype string such as '<f4', found {}", describe(v));
  const std::string& d = v.str;
  if (d == "<u1") return DType::u1;  // uint8 written by some numpy paths; byte order is moot
  for (const auto& info : kDTypes)
    if (d == info.descr) return info.type;
  if (d.size() > 1 && d[0] == '>') {
    fail(name, "big-endian dtype '{}' is not supported; save a little-endian copy with a.astype('<{}')",
         escaped(d), escaped(std::string_view(d).substr(1)));
  }
  if (d.find('O') != std::string::npos)
    fail(name, "object dtype '{}' is not supported: it holds Python objects, not numbers (supported: {})",
         escaped(d), kSupported);
  fail(name, "unsupported dtype '{}' (supported: {})", escaped(d), kSupported);
}

}  // namespace

// ---- small API ---------------------------------------------------------------------------------

std::string_view descr(DType t) {
  for (const auto& info : kDTypes)
    if (info.type == t) return info.descr;
  return "<invalid dtype>";
}

std::size_t item_size(DType t) {
  for (const auto& info : kDTypes)
    if (info.type == t) return info.size;
  throw Error(fmt::format("invalid npy::DType value {}", static_cast<int>(t)));
}

std::string shape_string(std::span<const std::int64_t> shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

std::size_t Array::size() const {
  std::size_t n = 1;
  for (std::int64_t d : shape) n *= d > 0 ? static_cast<std::size_t>(d) : 0;
  return n;
}

template <class T> std::span<const T> Array::as() const {
  const std::string_view name = display_name(source);
  if (dtype != dtype_of<T>())
    fail(name, "array has dtype {} and cannot be viewed as {}", descr(dtype), descr(dtype_of<T>()));
  const std::size_t bytes = checked_bytes(shape, dtype, name);
  if (data.size() != bytes)
    fail(name, "array holds {} bytes of data but shape {} of {} needs {}", data.size(), shape_string(shape),
         descr(dtype), bytes);
  // vector<byte> storage comes from operator new: aligned for every dtype, objects implicitly created.
  return {reinterpret_cast<const T*>(data.data()), bytes / sizeof(T)};
}

template <class T> std::span<T> Array::as() {
  const auto view = std::as_const(*this).as<T>();
  return {const_cast<T*>(view.data()), view.size()};
}

std::vector<double> Array::to_double() const {
  std::vector<double> out;
  out.reserve(size());
  auto convert = [&]<class T>(T, auto f) {
    for (const T& x : as<T>()) out.push_back(f(x));
  };
  auto plain = [](auto x) { return static_cast<double>(x); };
  switch (dtype) {
    case DType::f4: convert(float{}, plain); break;
    case DType::f8: convert(double{}, plain); break;
    case DType::f2: convert(std::uint16_t{}, [](std::uint16_t h) { return double{half_to_float(h)}; }); break;
    case DType::i4: convert(std::int32_t{}, plain); break;
    case DType::i8: convert(std::int64_t{}, plain); break;
    case DType::u1: convert(std::uint8_t{}, plain); break;
  }
  return out;
}

void Array::require_shape(std::span<const std::int64_t> expected, std::string_view name) const {
  bool ok = expected.size() == shape.size();
  for (std::size_t i = 0; ok && i < expected.size(); ++i) ok = expected[i] == -1 || expected[i] == shape[i];
  if (ok) return;
  std::vector<std::string> parts;
  for (std::int64_t d : expected) parts.push_back(d == -1 ? "any" : std::to_string(d));
  const std::string want =
      parts.size() == 1 ? fmt::format("({},)", parts[0]) : fmt::format("({})", fmt::join(parts, ", "));
  fail(display_name(source), "{} has shape {} but expected {}", name, shape_string(shape), want);
}

void Array::require_dtype(DType expected, std::string_view name) const {
  if (dtype != expected)
    fail(display_name(source), "{} has dtype {} but expected {}", name, descr(dtype), descr(expected));
}

// ---- reading -----------------------------------------------------------------------------------

Array parse(std::span<const std::byte> bytes, const std::string& name) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (text.empty()) fail(name, "empty file (0 bytes); a .npy file starts with the magic \\x93NUMPY");
  const std::size_t have = std::min(text.size(), kMagic.size());
  if (text.substr(0, have) != kMagic.substr(0, have)) {
    const char* hint =
        text.starts_with("PK\x03\x04") ? " (a zip archive: an .npz? save each array with np.save)" : "";
    fail(name, "not a .npy file: expected the magic \\x93NUMPY, found '{}'{}", escaped(text.substr(0, 6)),
         hint);
  }
  if (text.size() < 8)
    fail(name, "truncated magic: expected 8 bytes (magic and version), found {}", text.size());
  const int major = static_cast<unsigned char>(text[6]), minor = static_cast<unsigned char>(text[7]);
  if (minor != 0 || major < 1 || major > 3)
    fail(name, "unsupported .npy format version {}.{} (labkit reads 1.0, 2.0 and 3.0)", major, minor);

  // 1.0 has a 16-bit little-endian header length; 2.0 and 3.0 a 32-bit one.
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (text.size() < 8 + len_bytes)
    fail(name, "truncated header length: expected {} bytes at offset 8, found {}", len_bytes,
         text.size() - 8);
  std::size_t header_len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i)
    header_len |= std::size_t{static_cast<unsigned char>(text[8 + i])} << (8 * i);
  const std::size_t offset = 8 + len_bytes + header_len;
  if (text.size() < offset)
    fail(name, "truncated header: expected {} bytes, found {}", header_len, text.size() - 8 - len_bytes);

  const auto entries = HeaderParser(text.substr(8 + len_bytes, header_len), name).dict();
  const Value* found[3] = {};
  constexpr std::string_view keys[3] = {"descr", "fortran_order", "shape"};
  for (const auto& [key, value] : entries) {
    std::size_t k = 0;
    while (k < 3 && key != keys[k]) ++k;
    if (k == 3)
      fail(name, "unexpected key '{}' in the header (a .npy header holds exactly {})", escaped(key), kKeys);
    if (found[k]) fail(name, "duplicate key '{}' in the header", key);
    found[k] = &value;
  }
  for (std::size_t k = 0; k < 3; ++k)
    if (!found[k]) fail(name, "the header has no '{}' key (a .npy header holds exactly {})", keys[k], kKeys);

  Array a;
  a.source = name;
  a.dtype = dtype_from(*found[0], name);
  const Value& fortran = *found[1];
  if (fortran.kind != Value::Kind::Bool)
    fail(name, "'fortran_order' must be True or False, found {}", describe(fortran));
  if (fortran.num) fail(name, "Fortran order is not supported; save with np.ascontiguousarray");
  const Value& shape = *found[2];
  if (shape.kind == Value::Kind::Int)
    fail(name, "'shape' must be a tuple, found {} (a 1-d shape is written ({},) with a comma)",
         describe(shape), shape.num);
  if (shape.kind != Value::Kind::Tuple)
    fail(name, "'shape' must be a tuple of ints, found {}", describe(shape));
  for (std::size_t i = 0; i < shape.items.size(); ++i) {
    if (shape.items[i].kind != Value::Kind::Int)
      fail(name, "'shape' must hold ints, found {} at position {}", describe(shape.items[i]), i);
    a.shape.push_back(shape.items[i].num);
  }

  const std::size_t expected = checked_bytes(a.shape, a.dtype, name);
  const std::size_t available = text.size() - offset;
  if (available < expected)
    fail(name, "truncated data: expected {} bytes for shape {} of {}, found {}", expected,
         shape_string(a.shape), descr(a.dtype), available);
  if (available > expected)
    fail(name, "{} trailing byte{} after the data: expected {} bytes for shape {} of {}, found {}",
         available - expected, available - expected == 1 ? "" : "s", expected, shape_string(a.shape),
         descr(a.dtype), available);
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(offset), bytes.end());
  return a;
}

Array read(const fs::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st))
    fail(name, "cannot open: {}", ec ? ec.message() : std::string("No such file or directory"));
  if (fs::is_directory(st)) fail(name, "cannot open: it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(name, "cannot open: {}", std::strerror(errno));
  // Read in chunks rather than trusting file_size: pipes and /proc files report no size.
  std::vector<std::byte> bytes;
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  while (in) {
    const std::size_t old = bytes.size();
    bytes.resize(old + kChunk);
    in.read(reinterpret_cast<char*>(bytes.data() + old), static_cast<std::streamsize>(kChunk));
    bytes.resize(old + static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) fail(name, "cannot read: {}", std::strerror(errno));
  return parse(bytes, name);
}

template <class T> std::vector<T> read_as(const fs::path& path, std::vector<std::int64_t>* shape_out) {
  Array a = read(path);
  a.require_dtype(dtype_of<T>(), "the array");
  const auto view = a.as<T>();
  if (shape_out) *shape_out = a.shape;
  return {view.begin(), view.end()};
}

// ---- writing -----------------------------------------------------------------------------------

namespace {

// `name` is the file being written, so that write()'s errors name it rather than a.source.
std::vector<std::byte> serialize_as(const Array& a, std::string_view name) {
  const std::size_t bytes = checked_bytes(a.shape, a.dtype, name);
  if (a.data.size() != bytes)
    fail(name, "cannot serialize: data holds {} bytes but shape {} of {} needs {}", a.data.size(),
         shape_string(a.shape), descr(a.dtype), bytes);
  const std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                       descr(a.dtype), shape_string(a.shape));
  // Header length after padding with spaces and the final '\n' so the data starts aligned.
  auto padded = [&](std::size_t prefix) {
    return (prefix + dict.size() + 1 + kAlign - 1) / kAlign * kAlign - prefix;
  };
  std::size_t prefix = 10, header_len = padded(10);
  if (header_len > 0xFFFF) prefix = 12, header_len = padded(12);
  if (header_len > 0xFFFFFFFF)
    fail(name, "cannot serialize: header of {} bytes exceeds format 2.0's limit", header_len);

  std::vector<std::byte> out;
  out.reserve(prefix + header_len + bytes);
  auto put = [&](std::string_view s) {
    for (char c : s) out.push_back(static_cast<std::byte>(c));
  };
  put(kMagic);
  put(prefix == 10 ? std::string_view("\x01\x00", 2) : std::string_view("\x02\x00", 2));
  for (std::size_t i = 0; i < prefix - 8; ++i)
    out.push_back(static_cast<std::byte>((header_len >> (8 * i)) & 0xFF));
  put(dict);
  put(std::string(header_len - dict.size() - 1, ' '));
  put("\n");
  out.insert(out.end(), a.data.begin(), a.data.end());
  return out;
}

}  // namespace

std::vector<std::byte> serialize(const Array& a) { return serialize_as(a, display_name(a.source)); }

void write(const fs::path& path, const Array& a) {
  const std::string name = path.string();
  const std::vector<std::byte> bytes = serialize_as(a, name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(name, "cannot write: {}", std::strerror(errno));
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) fail(name, "cannot write: {}", std::strerror(errno));
}

template <class T> Array make(std::vector<std::int64_t> shape, std::span<const T> values) {
  Array a;
  a.dtype = dtype_of<T>();
  a.shape = std::move(shape);
  const std::size_t bytes = checked_bytes(a.shape, a.dtype, "npy::make");
  if (values.size_bytes() != bytes)
    fail("npy::make", "{} values given for shape {} of {}, which needs {}", values.size(),
         shape_string(a.shape), descr(a.dtype), bytes / sizeof(T));
  a.data.resize(bytes);
  if (bytes) std::memcpy(a.data.data(), values.data(), bytes);
  return a;
}

// ---- float16 -----------------------------------------------------------------------------------

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t{h & 0x8000u} << 16;
  const std::uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));  // inf, NaN keeps payload
  return std::bit_cast<float>(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

std::uint16_t float_to_half(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return sign | 0x7E00u | ((abs >> 13) & 0x3FF);  // NaN stays NaN (quiet)
  if (abs >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520: rounds (ties to even) to infinity
  // Round `m >> s` to nearest, ties to even.
  auto round_shift = [](std::uint32_t m, std::uint32_t s) {
    const std::uint32_t q = m >> s, rem = m & ((1u << s) - 1), half = 1u << (s - 1);
    return q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
  };
  if (abs < 0x38800000u) {  // below 2^-14: a half subnormal (or zero), in units of 2^-24
    const std::uint32_t e = abs >> 23, s = 126 - e;
    if (s > 24) return sign;  // below 2^-25: rounds to zero
    return static_cast<std::uint16_t>(sign | round_shift((abs & 0x7FFFFFu) | 0x800000u, s));
  }
  // Rebias the exponent (127 -> 15) in place; a carry out of the mantissa bumps it, as it should.
  return static_cast<std::uint16_t>(sign | round_shift(abs - 0x38000000u, 13));
}

#define LABKIT_NPY_INSTANTIATE(T)                                        \
  template std::span<const T> Array::as<T>() const;                      \
  template std::span<T> Array::as<T>();                                  \
  template Array make<T>(std::vector<std::int64_t>, std::span<const T>); \
  template std::vector<T> read_as<T>(const fs::path&, std::vector<std::int64_t>*);
LABKIT_NPY_INSTANTIATE(float)
LABKIT_NPY_INSTANTIATE(double)
LABKIT_NPY_INSTANTIATE(std::uint16_t)
LABKIT_NPY_INSTANTIATE(std::int32_t)
LABKIT_NPY_INSTANTIATE(std::int64_t)
LABKIT_NPY_INSTANTIATE(std::uint8_t)
#undef LABKIT_NPY_INSTANTIATE

}  // namespace labkit::npy
