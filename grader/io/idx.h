// grader/io/idx.h — reading and writing IDX files, the format of MNIST and Fashion-MNIST
// (train-images-idx3-ubyte, t10k-labels-idx1-ubyte, ...), so an instructor with real data can
// point the kit at it, and the kit's own synthetic set is stored the same way.
//
// Contract
//   * Layout: a 4-byte magic {0, 0, type, ndims}, then ndims 32-bit dimension sizes, then the data
//     in C order. The standard byte order of the magic, the sizes and multi-byte data is
//     big-endian; files written little-endian (magic bytes {ndims, type, 0, 0}) are accepted too,
//     and the byte order found applies to the sizes and the data.
//   * Types: 0x08 unsigned byte, 0x09 signed byte, 0x0B int16, 0x0C int32, 0x0D float32,
//     0x0E float64. Values are converted to host order on read; Array::to_float() converts any
//     type to float.
//   * ndims 1..4, every size > 0; the file must hold exactly prod(sizes) * item bytes after the
//     header (a longer or shorter file is an error: a truncated download must not load).
//   * Every malformed input raises labkit::idx::Error whose what() is ONE line naming the file and
//     the problem and what was expected, e.g. "data/t10k-labels-idx1-ubyte: truncated data:
//     shape (10000) of ubyte needs 10000 bytes after the 12-byte header, found 9000".
//     Nothing is read past the end of a buffer; no input crashes the reader.
//   * Write: big-endian (the standard), unsigned byte only — what the kit's generator writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace labkit::idx {

enum class Type : std::uint8_t { u8 = 0x08, i8 = 0x09, i16 = 0x0B, i32 = 0x0C, f32 = 0x0D, f64 = 0x0E };

std::string_view type_name(Type t);  // "ubyte", "byte", "short", "int", "float", "double"
std::size_t item_size(Type t);        // 1, 1, 2, 4, 4, 8

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Array {
  Type type = Type::u8;
  std::vector<std::uint32_t> shape;
  bool big_endian = true;           // the byte order the file was written in
  std::vector<std::byte> data;      // prod(shape) * item_size(type) bytes, host byte order
  std::string source;               // the file it came from

  std::size_t size() const;         // number of elements
  std::vector<float> to_float() const;
  // Typed view of u8 data; throws Error naming source when type is not u8.
  std::span<const std::uint8_t> as_u8() const;
  // Throws Error "FILE: has shape (10000, 28, 28) but expected (-, 86, 86) (images of 86x86)";
  // 0 in expected matches any extent. `what` is appended in parentheses.
  void require_shape(std::span<const std::uint32_t> expected, std::string_view what) const;
};

std::string shape_string(std::span<const std::uint32_t> shape);  // "(10000, 86, 86)"

// Parse a whole file's bytes; `name` is used in error messages.
Array parse(std::span<const std::byte> bytes, const std::string& name);
// Throws Error "PATH: cannot open: No such file or directory" for a missing file.
Array read(const std::filesystem::path& path);

std::vector<std::byte> serialize_u8(std::span<const std::uint32_t> shape, std::span<const std::uint8_t> values);
void write_u8(const std::filesystem::path& path, std::span<const std::uint32_t> shape,
              std::span<const std::uint8_t> values);

}  // namespace labkit::idx
