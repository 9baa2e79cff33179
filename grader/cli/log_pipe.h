// log_pipe.h — the pipe a tool run in the lab's sandbox logs to (compute-sanitizer's memory
// check, Nsight Compute's counter check).
//
// Contract
//   * The judge owns it: the tool gets the write end as an extra fd of the sandbox (/proc/self/fd/N
//     for its --log-file), the lab inherits it too and can only add bytes, never take the judge's
//     copy away.
//   * A thread drains it from construction (a tool blocked on a full pipe would hang the run),
//     keeps the first `keep` bytes and counts them all (bytes()): a lab that floods the log is
//     seen by its size, and the judge's memory stays bounded.
//   * finish(grace) closes the judge's own write end and waits at most `grace` for every other
//     writer to go (at once when the sandbox ended), then returns what was kept.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>

namespace labkit::cli {

class LogPipe {
 public:
  explicit LogPipe(std::size_t keep);
  ~LogPipe();
  LogPipe(const LogPipe&) = delete;
  LogPipe& operator=(const LogPipe&) = delete;

  int write_fd() const { return write_; }
  std::string finish(std::chrono::milliseconds grace);
  std::size_t bytes() const { return total_; }

 private:
  void close_write();
  void drain();
  std::size_t keep_;
  int read_ = -1, write_ = -1;
  std::thread reader_;
  std::atomic<bool> stop_{false}, eof_{false};
  std::atomic<std::size_t> total_{0};
  std::string text_;  // the reader's until it is joined
};

}  // namespace labkit::cli
