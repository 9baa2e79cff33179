#include "grader/protocol/wire.h"

#include <fmt/core.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace labkit::wire {
namespace {

using Clock = std::chrono::steady_clock;

std::string hex_prefix(const unsigned char* p, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n && i < 16; ++i) s += fmt::format("{}{:02x}", i ? " " : "", p[i]);
  return s;
}

// Reads exactly n bytes before the deadline. 0: done; 1: eof before any byte; 2: eof midway;
// 3: timeout; 4: io error.
int read_exact(int fd, void* buffer, std::size_t n, Clock::time_point deadline, std::size_t& got) {
  auto* p = static_cast<unsigned char*>(buffer);
  got = 0;
  while (got < n) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return 3;
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return 4;
    }
    if (ready == 0) continue;
    const ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return 4;
    }
    if (r == 0) return got == 0 ? 1 : 2;
    got += static_cast<std::size_t>(r);
  }
  return 0;
}

}  // namespace

const char* to_string(Type t) {
  switch (t) {
    case Type::hello: return "hello";
    case Type::request: return "request";
    case Type::done: return "done";
    case Type::failed: return "failed";
    case Type::bye: return "bye";
  }
  return "?";
}

bool known(std::uint16_t type) { return type >= 1 && type <= 5; }

bool write_frame(int fd, Type type, std::uint32_t seq, const std::string& payload, std::string* why) {
  if (payload.size() > kMaxPayload) {
    if (why) *why = fmt::format("payload of {} bytes exceeds {}", payload.size(), kMaxPayload);
    return false;
  }
  Header h;
  h.type = static_cast<std::uint16_t>(type);
  h.seq = seq;
  h.length = static_cast<std::uint32_t>(payload.size());
  std::string bytes(sizeof h + payload.size(), '\0');
  std::memcpy(bytes.data(), &h, sizeof h);
  std::memcpy(bytes.data() + sizeof h, payload.data(), payload.size());
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + sent, bytes.size() - sent);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (why) *why = std::strerror(errno);
      return false;
    }
    sent += static_cast<std::size_t>(w);
  }
  return true;
}

ReadStatus read_frame(int fd, Frame& frame, Clock::time_point deadline, std::string& why) {
  Header h;
  std::size_t got = 0;
  switch (read_exact(fd, &h, sizeof h, deadline, got)) {
    case 0: break;
    case 1: why = "end of the channel"; return ReadStatus::eof;
    case 2:
      why = fmt::format("a truncated frame header ({} of {} bytes: {})", got, sizeof h,
                        hex_prefix(reinterpret_cast<unsigned char*>(&h), got));
      return ReadStatus::malformed;
    case 3: why = "no message before the deadline"; return ReadStatus::timeout;
    default: why = std::strerror(errno); return ReadStatus::io_error;
  }
  const auto* raw = reinterpret_cast<const unsigned char*>(&h);
  if (h.magic != kMagic) {
    why = fmt::format("bytes that are not a frame (header {})", hex_prefix(raw, sizeof h));
    return ReadStatus::malformed;
  }
  if (!known(h.type) || h.reserved != 0) {
    why = fmt::format("a frame of unknown type {} (reserved {})", h.type, h.reserved);
    return ReadStatus::malformed;
  }
  if (h.length > kMaxPayload) {
    why = fmt::format("an oversized {} frame ({} bytes, at most {})", to_string(Type(h.type)), h.length, kMaxPayload);
    return ReadStatus::malformed;
  }
  frame.type = Type(h.type);
  frame.seq = h.seq;
  frame.payload.assign(h.length, '\0');
  switch (read_exact(fd, frame.payload.data(), h.length, deadline, got)) {
    case 0: return ReadStatus::ok;
    case 1:
    case 2:
      why = fmt::format("a truncated {} frame ({} of {} payload bytes)", to_string(frame.type), got, h.length);
      return ReadStatus::malformed;
    case 3: why = "a frame that stopped midway until the deadline"; return ReadStatus::timeout;
    default: why = std::strerror(errno); return ReadStatus::io_error;
  }
}

}  // namespace labkit::wire
