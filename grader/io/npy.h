// grader/io/npy.h — reading and writing NumPy .npy files (design.md section 8).
//
// Contract
//   * Read: format versions 1.0, 2.0 and 3.0; exactly the dtypes '<f4' '<f8' '<f2' '<i4' '<i8'
//     '|u1' (numpy also writes uint8 as '<u1' on some paths: accepted as '|u1'); C order only; the
//     header dict must hold exactly 'descr', 'fortran_order' and 'shape'; the data size must equal
//     prod(shape) * itemsize.
//   * Write: version 1.0, or 2.0 when the header does not fit 1.0's 16-bit length; the header is
//     padded with spaces and ends in '\n' so that the data starts at a multiple of 64 bytes.
//   * Every malformed input raises labkit::npy::Error whose what() is ONE line naming the file and
//     the problem, e.g. "data/input.npy: truncated data: expected 4096 bytes for shape (2, 512)
//     of <f4, found 1000". Nothing is read past the end of a buffer; no input crashes the reader.
//   * Values are stored raw (little-endian bytes, as on disk); Array::as<T>() views them typed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace labkit::npy {

enum class DType { f4, f8, f2, i4, i8, u1 };

std::string_view descr(DType t);    // "<f4", "<f8", "<f2", "<i4", "<i8", "|u1"
std::size_t item_size(DType t);     // 4, 8, 2, 4, 8, 1

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Maps a C++ element type to its dtype; std::uint16_t stands for float16 bits ('<f2').
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f4; }
template <> constexpr DType dtype_of<double>() { return DType::f8; }
template <> constexpr DType dtype_of<std::uint16_t>() { return DType::f2; }
template <> constexpr DType dtype_of<std::int32_t>() { return DType::i4; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::i8; }
template <> constexpr DType dtype_of<std::uint8_t>() { return DType::u1; }

struct Array {
  DType dtype = DType::f4;
  std::vector<std::int64_t> shape;  // empty for a 0-d array (one element)
  std::vector<std::byte> data;      // prod(shape) * item_size(dtype) bytes, C order
  std::string source;               // the file it came from ("" when built in memory)

  std::size_t size() const;         // number of elements
  // Typed view; throws Error naming source if T does not match dtype.
  template <class T> std::span<const T> as() const;
  template <class T> std::span<T> as();
  // Every element converted to double (float16 included).
  std::vector<double> to_double() const;
  // Throws Error "FILE: NAME has shape (2, 3) but expected (2, 4)"; -1 in expected matches any extent.
  void require_shape(std::span<const std::int64_t> expected, std::string_view name) const;
  void require_dtype(DType expected, std::string_view name) const;
};

std::string shape_string(std::span<const std::int64_t> shape);  // "(2, 3)", "(5,)", "()"

// Parse a whole file's bytes; `name` is used in error messages.
Array parse(std::span<const std::byte> bytes, const std::string& name);
Array read(const std::filesystem::path& path);

std::vector<std::byte> serialize(const Array& a);
void write(const std::filesystem::path& path, const Array& a);

template <class T>
Array make(std::vector<std::int64_t> shape, std::span<const T> values);
template <class T>
void write(const std::filesystem::path& path, std::vector<std::int64_t> shape, std::span<const T> values) {
  write(path, make<T>(std::move(shape), values));
}
// Read and insist on a dtype: the common case for fixtures.
template <class T>
std::vector<T> read_as(const std::filesystem::path& path, std::vector<std::int64_t>* shape_out = nullptr);

// IEEE binary16 conversions (round to nearest even), for '<f2' data.
float half_to_float(std::uint16_t bits);
std::uint16_t float_to_half(float value);

}  // namespace labkit::npy
