// grader/judge/session.h — the judge's side of the channel to one harness (grader/protocol/wire.h).
//
// Contract
//   * start(): creates the tensor file (a memfd), starts the harness (inside the sandbox when one
//     is chosen, behind `wrapper` such as compute-sanitizer) with the channel on fds 3-5, and
//     waits for hello: protocol version, lab id and kind must be the expected ones.
//   * call(request, what): sends one request and waits for its reply before the lab's deadline.
//     Returns the `done` payload (a JSON object). Everything else ends the session with a
//     LabFailure whose verdict is the lab's, never the kit's: the harness ended (crashed for a
//     signal, protocol-error for an exit), no reply in time (timeout), a malformed, unexpected,
//     repeated or oversized frame or a reply to another request (protocol-error, naming what
//     came), or `failed` from the lab's code (cuda-error, lab-error). `what` names the phase and
//     the case in the message. wall_ms, when given, is the judge's own clock from the request's
//     first byte to the reply's last.
//   * round_trip_ms(): the judge's clock around an empty request (ping).
//   * pause() / resume() (or a Still guard): between two requests only, every process of the
//     harness stops (HarnessProcess::stop_all: its group, its descendants, the sandbox's pid
//     namespace), so nothing of the lab runs on the CPU while the judge times the baseline; its
//     GPU work already queued is the caller's to drain (grader/judge/gpu_drain.h). A harness
//     that does not stop within kPauseLimit is killed: LabFailure timing-implausible. call()
//     while paused is a std::logic_error: the judge never waits for a reply from a stopped
//     harness. The time spent paused moves the deadline on by as much (it is not the lab's time);
//     a stopped process uses no CPU time, so its RLIMIT_CPU does not count it either. close()
//     resumes first; the destructor and a kill end a stopped harness too (SIGKILL).
//   * end(): how the harness's process (bwrap, or the wrapper in front of the harness) ended, once
//     it has: by itself or killed by the judge, before or after the judge's bye, with what status
//     (bubblewrap's 128 + N as signal N). The memory check (grader/cli/memory_check.h) decides
//     on compute-sanitizer's status from it.
//   * The judge never reads a value from the harness it has not checked: callers validate
//     payload fields with the helpers below (number(), ...), which throw LabFailure
//     (protocol-error) for a missing, non-numeric, non-finite or out-of-range value.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "grader/judge/harness_process.h"
#include "grader/judge/sandbox.h"

namespace labkit {

struct LabFailure : std::runtime_error {
  LabFailure(std::string v, std::string m, std::string h = {})
      : std::runtime_error(m), verdict(std::move(v)), message(std::move(m)), hint(std::move(h)) {}
  std::string verdict, message, hint;
};

// What a trusted session (the kit's own harness: the baseline) throws instead of LabFailure: its
// failure is the kit's, or what the lab's process did to the shared GPU (judge.cpp decides which).
struct KitHarnessFailure : std::runtime_error {
  KitHarnessFailure(const LabFailure& f, std::string cuda_name)
      : std::runtime_error("the kit's own harness: " + f.message), cuda_name(std::move(cuda_name)) {}
  std::string cuda_name;  // "cudaErrorMemoryAllocation" for a CUDA failure, else empty
};

// The shared-memory file tensors travel in; offsets are bytes from its start.
class TensorFile {
 public:
  TensorFile();
  ~TensorFile();
  TensorFile(const TensorFile&) = delete;
  TensorFile& operator=(const TensorFile&) = delete;
  int fd() const { return fd_; }
  std::size_t bytes() const { return bytes_; }
  void reserve(std::size_t bytes);  // grows (never shrinks) the file and the judge's mapping
  std::span<float> floats(std::uint64_t offset, std::size_t count);

 private:
  int fd_ = -1;
  unsigned char* base_ = nullptr;
  std::size_t bytes_ = 0;
};

// Offsets for one request's tensors, 64-byte aligned, from 0.
class Regions {
 public:
  std::uint64_t add(std::size_t floats) {
    const std::uint64_t at = next_;
    next_ += (floats * sizeof(float) + 63) / 64 * 64;
    return at;
  }
  std::uint64_t total() const { return next_; }

 private:
  std::uint64_t next_ = 0;
};

// How long a harness may take to stop (SIGSTOP to all of its processes, every thread seen
// stopped). An honest harness stops in well under a millisecond: it is idle between requests.
inline constexpr std::chrono::milliseconds kPauseLimit{1000};

// The kit's own harness (the baseline, trusted) outlives the lab's: it is timed before the lab
// starts, while the lab is paused, and after it. Its deadline covers the lab's whole time limit,
// as long again for its own timings, and two minutes for the rest; it only ends a kit that hangs.
inline std::chrono::milliseconds kit_time_limit(double lab_timeout_s) {
  return std::chrono::milliseconds(static_cast<long long>((2 * lab_timeout_s + 120) * 1000));
}

// What the pauses of a session cost (reported with the grade).
struct PauseStats {
  int pauses = 0;
  std::size_t max_processes = 0;  // the most processes one pause stopped
  double longest_stop_ms = 0;     // SIGSTOP to all stopped
  double paused_ms = 0;           // in all, from pause() to resume()
};

// How the harness's process ended (Session::end()).
struct SessionEnd {
  bool started = false;    // a process was started
  bool by_itself = false;  // it ended on its own; false: still running, or killed by the judge
  bool after_bye = false;  // it ended after the judge said bye (the normal end)
  HarnessProcess::Ending how;
};

struct SessionOptions {
  std::string harness;             // the lab's harness executable
  std::string lab_id, kind;        // what hello must say
  sandbox::Mode sandbox = sandbox::Mode::bubblewrap;
  sandbox::Probe probe;            // of bubblewrap, when sandbox is bubblewrap
  sandbox::Policy policy;          // its executable is set from `harness`
  std::vector<std::string> wrapper;  // run before the harness, inside the sandbox (compute-sanitizer)
  std::vector<std::string> harness_args;  // before --channel (the kit's protocol tests)
  // More fds for the process at their numbers (the memory check's log pipe); the kit's own
  // harness never gets them (Context::kit_session).
  std::vector<HarnessProcess::ChildFd> extra_fds;
  double close_wait_s = 5;         // close(): how long the process may take to end after bye
  double startup_s = 60;           // for hello
  std::chrono::steady_clock::time_point deadline;  // the lab's: set when its process first starts (Context::start)
  bool trusted = false;            // the kit's own harness: failures throw KitHarnessFailure
};

class Session {
 public:
  explicit Session(SessionOptions options);
  ~Session();
  void start();  // spawn(), then greet()
  // The two halves of start(), for a caller with work to do while the harness starts up. Call
  // spawn() from a thread that outlives the harness: the sandbox dies with the thread that
  // spawned it (grader/judge/sandbox.h).
  void spawn();  // the harness's process, in its sandbox
  void greet();  // waits for its hello (its static initializers and CUDA start-up) and checks it
  const nlohmann::json& hello() const { return hello_; }  // as the harness sent it (null before greet)
  nlohmann::json call(nlohmann::json request, const std::string& what, double* wall_ms = nullptr);
  double round_trip_ms();
  TensorFile& tensors() { return tensors_; }
  void close();           // bye, then the process is waited for (killed after close_wait_s)
  std::string log() const { return process_.log(); }
  const SessionEnd& end() const { return end_; }
  double seconds_left() const;
  std::chrono::steady_clock::time_point deadline() const { return o_.deadline; }  // pauses' credit included
  void pause();
  void resume();
  bool paused() const { return paused_; }
  const PauseStats& pause_stats() const { return pause_stats_; }

 private:
  [[noreturn]] void ended(const std::string& what);
  HarnessProcess::Ending as_ended(HarnessProcess::Ending how) const;
  void launch();
  void await_hello();
  nlohmann::json exchange(nlohmann::json request, const std::string& what, double* wall_ms);
  SessionOptions o_;
  TensorFile tensors_;
  HarnessProcess process_;
  int request_fd_ = -1, reply_fd_ = -1;
  std::uint32_t seq_ = 0;
  bool open_ = false;
  SessionEnd end_;
  std::string failed_cuda_name_;  // of the last `failed` reply
  bool paused_ = false;
  nlohmann::json hello_;
  std::chrono::steady_clock::time_point paused_at_;
  PauseStats pause_stats_;
};

// The harness stopped for the guard's lifetime (Session::pause, resume): exceptions included.
class Still {
 public:
  explicit Still(Session& s) : s_(s) { s_.pause(); }
  ~Still() {
    if (s_.paused()) s_.resume();
  }
  Still(const Still&) = delete;
  Still& operator=(const Still&) = delete;

 private:
  Session& s_;
};

// Validated reads of a reply's fields (protocol-error otherwise).
double number(const nlohmann::json& reply, const char* key, double lo, double hi);
std::uint64_t unsigned_number(const nlohmann::json& reply, const char* key);

}  // namespace labkit
