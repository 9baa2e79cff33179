// grader/protocol/wire.h — the framed channel between the judge (trusted) and the harness
// (untrusted: it holds the student's kernel.cu). Both sides include this file; only the judge
// decides anything from what comes over it.
//
// Contract
//   * A frame is a 16-byte header {magic "LKW1", type (u16), reserved (u16, 0), seq (u32),
//     length (u32)} in host byte order (both ends are one machine), then `length` bytes of UTF-8
//     JSON. length <= kMaxPayload. Tensors never travel in frames: they sit in a shared-memory
//     file the judge creates and sizes (fd kTensorFd in the harness), at offsets the judge names.
//   * Requests go judge -> harness on fd kRequestFd, replies harness -> judge on kReplyFd; the
//     harness's stdout and stderr are the student's own log and are never parsed.
//   * Order: the harness sends `hello` first, unprompted. Then every request gets exactly one
//     reply with the request's seq: `done` (with the op's data) or `failed` (the lab's code threw:
//     {"kind": "cuda"|"lab", "code": N, "message": "..."}). `bye` ends the session: the harness
//     exits 0 without replying.
//   * read_frame never trusts the peer: a wrong magic, an unknown type, a non-zero reserved field,
//     an oversized or truncated frame is ReadStatus::malformed with `why` naming what came (the
//     first bytes in hex); end of file at a frame boundary is ReadStatus::eof; the deadline passing
//     is ReadStatus::timeout. It never throws for anything the peer does.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace labkit::wire {

inline constexpr std::uint32_t kMagic = 0x31574B4C;  // "LKW1" read as little-endian bytes
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::uint32_t kMaxPayload = 64 * 1024;
inline constexpr int kRequestFd = 3, kReplyFd = 4, kTensorFd = 5;

enum class Type : std::uint16_t { hello = 1, request = 2, done = 3, failed = 4, bye = 5 };
const char* to_string(Type);
bool known(std::uint16_t type);

struct Header {
  std::uint32_t magic = kMagic;
  std::uint16_t type = 0;
  std::uint16_t reserved = 0;
  std::uint32_t seq = 0;
  std::uint32_t length = 0;
};
static_assert(sizeof(Header) == 16);

struct Frame {
  Type type = Type::hello;
  std::uint32_t seq = 0;
  std::string payload;
};

// Writes one whole frame (retrying short writes and EINTR). False when the peer is gone or the
// payload is too long; `why` says which.
bool write_frame(int fd, Type type, std::uint32_t seq, const std::string& payload, std::string* why = nullptr);

enum class ReadStatus { ok, eof, timeout, malformed, io_error };

// Reads one frame before `deadline` (poll + read, EINTR-safe). See the contract.
ReadStatus read_frame(int fd, Frame& frame, std::chrono::steady_clock::time_point deadline, std::string& why);

}  // namespace labkit::wire
