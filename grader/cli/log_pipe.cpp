#include "log_pipe.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace labkit::cli {

using Clock = std::chrono::steady_clock;

LogPipe::LogPipe(std::size_t keep) : keep_(keep) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot create a tool's log pipe: ") + std::strerror(errno));
  read_ = p[0];
  write_ = p[1];
  reader_ = std::thread([this] { drain(); });
}

LogPipe::~LogPipe() {
  close_write();
  stop_ = true;
  if (reader_.joinable()) reader_.join();
  ::close(read_);
}

// A process left outside a sandbox (--sandbox none) cannot keep the judge here: the wait is bounded.
std::string LogPipe::finish(std::chrono::milliseconds grace) {
  close_write();
  const auto until = Clock::now() + grace;
  while (!eof_ && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop_ = true;
  if (reader_.joinable()) reader_.join();
  return std::move(text_);
}

void LogPipe::close_write() {
  if (write_ >= 0) ::close(write_);
  write_ = -1;
}

void LogPipe::drain() {
  std::vector<char> buffer(1 << 16);
  while (!stop_) {
    pollfd p{read_, POLLIN, 0};
    const int n = ::poll(&p, 1, 20);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    const ssize_t r = ::read(read_, buffer.data(), buffer.size());
    if (r > 0) {
      total_ += std::size_t(r);
      if (text_.size() <= keep_) text_.append(buffer.data(), std::min(std::size_t(r), keep_ + 1 - text_.size()));
    } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
      break;
    }
  }
  eof_ = true;
}

}  // namespace labkit::cli
