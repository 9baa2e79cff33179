// idx.cpp — the IDX reader and writer (contract in grader/io/idx.h; format: Yann LeCun's MNIST page).
//
// The byte order is told by where the two zero bytes of the magic are: {0, 0, type, ndims} is the
// standard big-endian layout, {ndims, type, 0, 0} is the same magic written by a little-endian
// writer (numpy's tofile on x86, some converters). Both can hold only when all four bytes are
// zero, and type 0 does not exist, so the choice never changes whether a file is accepted.
#include "grader/io/idx.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (moved here in fmt 11)

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>

namespace labkit::idx {
namespace {

namespace fs = std::filesystem;

template <class... Args>
[[noreturn]] void fail(std::string_view name, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format("{}: {}", name, fmt::format(f, std::forward<Args>(args)...)));
}

struct TypeInfo {
  Type type;
  std::string_view name;
  std::size_t size;
};
constexpr std::array<TypeInfo, 6> kTypes = {{{Type::u8, "ubyte", 1},
                                             {Type::i8, "byte", 1},
                                             {Type::i16, "short", 2},
                                             {Type::i32, "int", 4},
                                             {Type::f32, "float", 4},
                                             {Type::f64, "double", 8}}};
constexpr std::string_view kValidTypes =
    "0x08 ubyte, 0x09 byte, 0x0b short, 0x0c int, 0x0d float, 0x0e double";
constexpr int kMaxDims = 4;
// Far above any image set (Fashion-MNIST's train images are 47 MB), far below what would make a
// corrupted size field allocate the machine away; also keeps every product inside size_t.
constexpr std::uint64_t kMaxBytes = std::min<std::uint64_t>(std::uint64_t{1} << 40,
                                                            std::numeric_limits<std::size_t>::max());

std::string_view display_name(const std::string& source) {
  return source.empty() ? std::string_view("(in-memory IDX array)") : std::string_view(source);
}

// prod(shape) * item bytes; `name` is the file for the messages. Refuses what the format forbids.
std::size_t checked_bytes(std::span<const std::uint32_t> shape, Type type, std::string_view name) {
  if (shape.empty() || shape.size() > kMaxDims)
    fail(name, "{} dimensions: IDX files hold 1 to {}", shape.size(), kMaxDims);
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 0)
      fail(name, "size {} of shape {} is 0: every size must be at least 1", i, shape_string(shape));
  std::uint64_t n = item_size(type);
  for (std::uint32_t d : shape) {
    if (n > kMaxBytes / d)
      fail(name, "shape {} of {} is too large: more than 2^40 bytes (1 TiB); is the header corrupt?",
           shape_string(shape), type_name(type));
    n *= d;
  }
  return static_cast<std::size_t>(n);
}

std::string magic_hex(std::span<const std::byte> bytes) {
  std::string out;
  for (std::size_t i = 0; i < 4 && i < bytes.size(); ++i)
    out += fmt::format("{}{:02x}", i ? " " : "", std::to_integer<unsigned>(bytes[i]));
  return out;
}

// What a student most likely has instead of an IDX file.
std::string_view magic_hint(std::span<const std::byte> bytes) {
  const auto b = [&](std::size_t i) { return std::to_integer<unsigned>(bytes[i]); };
  if (b(0) == 0x1f && b(1) == 0x8b) return " (a gzip file: the MNIST downloads are .gz, gunzip it first)";
  if (b(0) == 0x93 && b(1) == 'N') return " (a .npy file: convert it to IDX, or use the .npy tools)";
  if (b(0) == 'P' && b(1) == 'K') return " (a zip archive: unpack it first)";
  return "";
}

template <class T> T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

// ---- small API ---------------------------------------------------------------------------------

std::string_view type_name(Type t) {
  for (const auto& info : kTypes)
    if (info.type == t) return info.name;
  return "<invalid IDX type>";
}

std::size_t item_size(Type t) {
  for (const auto& info : kTypes)
    if (info.type == t) return info.size;
  throw Error(fmt::format("invalid idx::Type value 0x{:02x}", static_cast<unsigned>(t)));
}

std::string shape_string(std::span<const std::uint32_t> shape) {
  return fmt::format("({})", fmt::join(shape, ", "));
}

std::size_t Array::size() const {
  if (shape.empty()) return 0;  // a default Array: no IDX file has 0 dimensions
  std::size_t n = 1;
  for (std::uint32_t d : shape) n *= d;
  return n;
}

std::vector<float> Array::to_float() const {
  const std::string_view name = display_name(source);
  const std::size_t k = item_size(type);
  if (data.size() != size() * k)
    fail(name, "array holds {} bytes of data but shape {} of {} needs {}", data.size(), shape_string(shape),
         type_name(type), size() * k);
  std::vector<float> out(size());
  const std::byte* p = data.data();
  auto convert = [&]<class T>(T) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(load<T>(p + i * sizeof(T)));
  };
  switch (type) {
    case Type::u8: convert(std::uint8_t{}); break;
    case Type::i8: convert(std::int8_t{}); break;
    case Type::i16: convert(std::int16_t{}); break;
    case Type::i32: convert(std::int32_t{}); break;
    case Type::f32: convert(float{}); break;
    case Type::f64: convert(double{}); break;
  }
  return out;
}

std::span<const std::uint8_t> Array::as_u8() const {
  const std::string_view name = display_name(source);
  if (type != Type::u8) fail(name, "holds {} values but expected ubyte (unsigned bytes 0..255)", type_name(type));
  if (data.size() != size())
    fail(name, "array holds {} bytes of data but shape {} of ubyte needs {}", data.size(), shape_string(shape),
         size());
  return {reinterpret_cast<const std::uint8_t*>(data.data()), data.size()};
}

void Array::require_shape(std::span<const std::uint32_t> expected, std::string_view what) const {
  bool ok = expected.size() == shape.size();
  for (std::size_t i = 0; ok && i < expected.size(); ++i) ok = expected[i] == 0 || expected[i] == shape[i];
  if (ok) return;
  std::vector<std::string> parts;
  for (std::uint32_t d : expected) parts.push_back(d == 0 ? "-" : std::to_string(d));
  fail(display_name(source), "has shape {} but expected ({}) ({})", shape_string(shape), fmt::join(parts, ", "),
       what);
}

// ---- reading -----------------------------------------------------------------------------------

namespace {

// The header of an IDX file, checked against the data that follows it: the Array without its data,
// and where that data starts.
std::pair<Array, std::size_t> parse_header(std::span<const std::byte> bytes, const std::string& name) {
  if (bytes.empty()) fail(name, "empty file (0 bytes); an IDX file starts with the magic 00 00 <type> <ndims>");
  if (bytes.size() < 4)
    fail(name, "truncated magic: an IDX file starts with 4 bytes 00 00 <type> <ndims>, found {} ({})",
         bytes.size(), magic_hex(bytes));
  const auto b = [&](std::size_t i) { return std::to_integer<unsigned>(bytes[i]); };
  Array a;
  a.source = name;
  unsigned type = 0, ndims = 0;
  if (b(0) == 0 && b(1) == 0) {
    a.big_endian = true, type = b(2), ndims = b(3);
  } else if (b(2) == 0 && b(3) == 0) {
    a.big_endian = false, type = b(1), ndims = b(0);
  } else {
    fail(name, "not an IDX file: magic bytes {}, expected 00 00 <type> <ndims>{}", magic_hex(bytes),
         magic_hint(bytes));
  }
  const auto* info = std::ranges::find(kTypes, static_cast<Type>(type), &TypeInfo::type);
  if (info == kTypes.end())
    fail(name, "unknown IDX type byte 0x{:02x} in the magic {} (valid: {})", type, magic_hex(bytes), kValidTypes);
  a.type = info->type;
  if (ndims < 1 || ndims > kMaxDims)
    fail(name, "{} dimensions in the magic {}: IDX files hold 1 to {}", ndims, magic_hex(bytes), kMaxDims);

  const std::size_t header = 4 + 4 * std::size_t{ndims};
  if (bytes.size() < header)
    fail(name, "truncated header: expected {} bytes (the magic and {} size{}), found {}", header, ndims,
         ndims == 1 ? "" : "s", bytes.size());
  for (std::size_t i = 0; i < ndims; ++i) {
    std::uint32_t d = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const std::size_t byte = a.big_endian ? j : 3 - j;  // most significant first
      d = d << 8 | b(4 + 4 * i + byte);
    }
    a.shape.push_back(d);
  }

  const std::size_t expected = checked_bytes(a.shape, a.type, name);
  const std::size_t found = bytes.size() - header;
  if (found < expected)
    fail(name, "truncated data: shape {} of {} needs {} bytes after the {}-byte header, found {}",
         shape_string(a.shape), type_name(a.type), expected, header, found);
  if (found > expected)
    fail(name, "{} trailing byte{} after the data: shape {} of {} needs {} bytes after the {}-byte header, found {}",
         found - expected, found - expected == 1 ? "" : "s", shape_string(a.shape), type_name(a.type), expected,
         header, found);
  return {std::move(a), header};
}

// Multi-byte values to the host's byte order.
void to_host_order(Array& a) {
  const std::size_t size = std::ranges::find(kTypes, a.type, &TypeInfo::type)->size;
  const bool host_big = std::endian::native == std::endian::big;
  if (size > 1 && a.big_endian != host_big)
    for (auto it = a.data.begin(); it != a.data.end(); it += static_cast<std::ptrdiff_t>(size))
      std::reverse(it, it + static_cast<std::ptrdiff_t>(size));
}

// As parse(), keeping the file's own buffer: the data moved to its front, not copied into a new one
// (the test set is 74 MB; every fresh buffer of that size is 18,000 page faults).
Array parse_owned(std::vector<std::byte>&& bytes, const std::string& name) {
  auto [a, header] = parse_header(bytes, name);
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(header));
  a.data = std::move(bytes);
  to_host_order(a);
  return a;
}

}  // namespace

Array parse(std::span<const std::byte> bytes, const std::string& name) {
  auto [a, header] = parse_header(bytes, name);
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  to_host_order(a);
  return a;
}

Array read(const fs::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    // MNIST is downloaded as .gz: a student who forgot to unpack has exactly this file next to it.
    fs::path gz = path;
    gz += ".gz";
    const std::string hint = fs::exists(gz, ec) ? fmt::format(" (found {}: gunzip it first)", gz.string()) : "";
    fail(name, "cannot open: {}{}", std::strerror(ENOENT), hint);
  }
  if (fs::is_directory(st)) fail(name, "cannot open: it is a directory, expected an IDX file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(name, "cannot open: {}", std::strerror(errno));
  // A regular file is read in one piece of its size; then in chunks, rather than trusting that
  // size alone: pipes and /proc files report none, and a file may grow while it is read.
  std::vector<std::byte> bytes;
  std::error_code size_ec;
  const std::uintmax_t size = fs::is_regular_file(st) ? fs::file_size(path, size_ec) : 0;
  if (!size_ec && size > 0) {
    bytes.resize(static_cast<std::size_t>(size));
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
    bytes.resize(static_cast<std::size_t>(in.gcount()));
  }
  // At the end already: no chunk (growing the buffer by one would copy it whole).
  bool done = in && in.peek() == std::ifstream::traits_type::eof();
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  while (!done && in) {
    const std::size_t old = bytes.size();
    bytes.resize(old + kChunk);
    in.read(reinterpret_cast<char*>(bytes.data() + old), static_cast<std::streamsize>(kChunk));
    bytes.resize(old + static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) fail(name, "cannot read: {}", std::strerror(errno));
  return parse_owned(std::move(bytes), name);
}

// ---- writing -----------------------------------------------------------------------------------

namespace {

std::vector<std::byte> serialize_as(std::span<const std::uint32_t> shape, std::span<const std::uint8_t> values,
                                    std::string_view name) {
  const std::size_t bytes = checked_bytes(shape, Type::u8, name);
  if (values.size() != bytes)
    fail(name, "cannot write: {} values given for shape {} of ubyte, which needs {}", values.size(),
         shape_string(shape), bytes);
  std::vector<std::byte> out = {std::byte{0}, std::byte{0}, static_cast<std::byte>(Type::u8),
                                static_cast<std::byte>(shape.size())};
  out.reserve(4 + 4 * shape.size() + bytes);
  for (std::uint32_t d : shape)
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::byte>((d >> shift) & 0xFF));
  const auto* p = reinterpret_cast<const std::byte*>(values.data());
  out.insert(out.end(), p, p + values.size());
  return out;
}

}  // namespace

std::vector<std::byte> serialize_u8(std::span<const std::uint32_t> shape, std::span<const std::uint8_t> values) {
  return serialize_as(shape, values, "idx::serialize_u8");
}

void write_u8(const fs::path& path, std::span<const std::uint32_t> shape, std::span<const std::uint8_t> values) {
  const std::string name = path.string();
  const std::vector<std::byte> bytes = serialize_as(shape, values, name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(name, "cannot write: {}", std::strerror(errno));
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) fail(name, "cannot write: {}", std::strerror(errno));
}

}  // namespace labkit::idx
