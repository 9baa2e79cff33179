#include "grader/judge/session.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <thread>

#include "grader/protocol/wire.h"
#include "grader/judge/grade_result.h"

namespace labkit {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

TensorFile::TensorFile() {
  fd_ = ::memfd_create("labkit-tensors", MFD_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error(std::string("cannot create the tensor file (memfd_create): ") + std::strerror(errno));
}

TensorFile::~TensorFile() {
  if (base_) ::munmap(base_, bytes_);
  if (fd_ >= 0) ::close(fd_);
}

void TensorFile::reserve(std::size_t bytes) {
  if (bytes <= bytes_) return;
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0)
    throw std::runtime_error(fmt::format("cannot size the tensor file to {} bytes: {}", bytes, std::strerror(errno)));
  if (base_) ::munmap(base_, bytes_);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) throw std::runtime_error(fmt::format("cannot map the tensor file: {}", std::strerror(errno)));
  base_ = static_cast<unsigned char*>(p);
  bytes_ = bytes;
}

std::span<float> TensorFile::floats(std::uint64_t offset, std::size_t count) {
  if (offset > bytes_ || count > (bytes_ - offset) / sizeof(float))
    throw std::logic_error(fmt::format("tensor range {}+{} outside the file of {} bytes", offset, count, bytes_));
  return {reinterpret_cast<float*>(base_ + offset), count};
}

Session::Session(SessionOptions options) : o_(std::move(options)) {}

Session::~Session() {
  if (open_) {
    process_.kill();
    process_.wait();
  }
  if (request_fd_ >= 0) ::close(request_fd_);
  if (reply_fd_ >= 0) ::close(reply_fd_);
}

double Session::seconds_left() const {
  return std::chrono::duration<double>(o_.deadline - Clock::now()).count();
}

void Session::start() {
  spawn();
  greet();
}

void Session::spawn() {
  if (!o_.trusted) return launch();
  try {
    launch();
  } catch (const LabFailure& f) {
    throw KitHarnessFailure(f, "");
  }
}

void Session::greet() {
  if (!o_.trusted) return await_hello();
  try {
    await_hello();
  } catch (const LabFailure& f) {
    throw KitHarnessFailure(f, "");
  }
}

void Session::launch() {
  // A harness that dies while we write must be a verdict, not a SIGPIPE that ends the judge.
  ::signal(SIGPIPE, SIG_IGN);
  int req[2], rep[2];
  if (::pipe2(req, O_CLOEXEC) != 0 || ::pipe2(rep, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create the channel: ") + std::strerror(errno));
  std::vector<std::string> inside = o_.wrapper;
  std::vector<std::string> argv;
  if (o_.sandbox == sandbox::Mode::bubblewrap) {
    o_.policy.executable = o_.harness;
    inside.push_back(sandbox::kInsidePath);
    inside.insert(inside.end(), o_.harness_args.begin(), o_.harness_args.end());
    inside.push_back("--channel");
    argv = sandbox::command(o_.probe, o_.policy, inside);
  } else {
    inside.push_back(o_.harness);
    inside.insert(inside.end(), o_.harness_args.begin(), o_.harness_args.end());
    inside.push_back("--channel");
    argv = inside;
  }
  std::vector<HarnessProcess::ChildFd> fds = {
      {req[0], wire::kRequestFd}, {rep[1], wire::kReplyFd}, {tensors_.fd(), wire::kTensorFd}};
  fds.insert(fds.end(), o_.extra_fds.begin(), o_.extra_fds.end());
  int program = -1;  // the CPU lock's seccomp program, read by bwrap (grader/judge/sandbox.h)
  if (o_.sandbox == sandbox::Mode::bubblewrap && o_.policy.lock_cpus && o_.probe.seccomp) {
    program = sandbox::seccomp_program();
    if (program < 0)
      throw std::runtime_error(std::string("cannot write the sandbox's seccomp program: ") + std::strerror(errno));
    fds.push_back({program, sandbox::kSeccompFd});
  }
  process_.start(argv, fds, o_.policy.limits);
  end_ = {true, false, false, {}};
  if (program >= 0) ::close(program);
  ::close(req[0]);
  ::close(rep[1]);
  request_fd_ = req[1];
  reply_fd_ = rep[0];
  open_ = true;
}

void Session::await_hello() {
  wire::Frame f;
  std::string why;
  const auto deadline = std::min(o_.deadline, Clock::now() + std::chrono::milliseconds(long(o_.startup_s * 1000)));
  const wire::ReadStatus st = wire::read_frame(reply_fd_, f, deadline, why);
  const std::string what = "the start of the lab's program (before main: static initializers, CUDA start-up)";
  if (st == wire::ReadStatus::timeout) {
    process_.kill();
    throw LabFailure(verdict::kTimeout,
                     fmt::format("The lab's program did not answer within {:.0f} s of starting: something in {} "
                                 "never returned.", o_.startup_s, what),
                     "A static initializer or a global object's constructor in kernel.cu that never returns.");
  }
  if (st == wire::ReadStatus::malformed) {
    process_.kill();
    throw LabFailure(verdict::kProtocolError,
                     fmt::format("The kit's channel received {} during {}, where the lab's program must say hello: "
                                 "kernel.cu must not write into the kit's file descriptors.", why, what));
  }
  if (st != wire::ReadStatus::ok) ended(what);
  if (f.type != wire::Type::hello) {
    process_.kill();
    throw LabFailure(verdict::kProtocolError, fmt::format("The lab's program sent a {} message where the kit "
                                                          "expected its hello: kernel.cu wrote into the kit's channel.",
                                                          wire::to_string(f.type)));
  }
  json hello;
  try {
    hello = json::parse(f.payload);
  } catch (const json::exception&) {
  }
  if (!hello.is_object() || hello.value("protocol", 0u) != wire::kVersion || hello.value("lab", "") != o_.lab_id ||
      hello.value("kind", "") != o_.kind) {
    process_.kill();
    throw LabFailure(verdict::kProtocolError,
                     fmt::format("The lab's program introduced itself wrongly ({:.200}); expected lab {} ({}), protocol {}.",
                                 f.payload, o_.lab_id, o_.kind, wire::kVersion));
  }
  hello_ = std::move(hello);
}

void Session::ended(const std::string& what) {
  HarnessProcess::Ending how;
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (!process_.exited_now(how)) {
    if (Clock::now() > until) {
      process_.kill();
      how = process_.wait();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  how = as_ended(how);
  end_ = {true, !process_.killed(), false, how};
  open_ = false;
  if (!how.exited) {
    const bool segv = how.signal == SIGSEGV || how.signal == SIGBUS;
    const char* hint = segv ? verdict::kHostSegfaultHint
                       : how.signal == SIGXFSZ ? "It wrote a file larger than the sandbox allows: a lab writes no files."
                       : how.signal == SIGXCPU ? "It used more CPU time than the sandbox allows: host code that never ends."
                                               : "Read the lab's own output below for the last thing it did.";
    throw LabFailure(verdict::kCrashed, fmt::format("The lab crashed: its program {} during {}.", how.describe(), what), hint);
  }
  throw LabFailure(verdict::kProtocolError,
                   fmt::format("The lab's program {} during {}, before it answered the kit. kernel.cu must not end "
                               "the program (exit, _exit, abort in a static initializer, atexit tricks): the kit "
                               "decides when a lab is done.", how.describe(), what),
                   "Remove every exit()/_exit() from kernel.cu; report errors by throwing (labkit/cuda_check.h).");
}

json Session::call(json request, const std::string& what, double* wall_ms) {
  if (!o_.trusted) return exchange(std::move(request), what, wall_ms);
  failed_cuda_name_.clear();
  try {
    return exchange(std::move(request), what, wall_ms);
  } catch (const LabFailure& f) {
    throw KitHarnessFailure(f, failed_cuda_name_);
  }
}

json Session::exchange(json request, const std::string& what, double* wall_ms) {
  if (!open_) throw std::logic_error("call on a closed session");
  if (paused_) throw std::logic_error("call on a paused session: " + what);
  request["tensor_bytes"] = tensors_.bytes();
  const std::uint32_t seq = ++seq_;
  const auto t0 = Clock::now();
  std::string why;
  if (!wire::write_frame(request_fd_, wire::Type::request, seq, request.dump(), &why)) ended(what);
  wire::Frame f;
  const wire::ReadStatus st = wire::read_frame(reply_fd_, f, o_.deadline, why);
  const auto t1 = Clock::now();
  if (wall_ms) *wall_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  if (st == wire::ReadStatus::timeout) {
    process_.kill();
    process_.wait();
    open_ = false;
    throw LabFailure(verdict::kTimeout,
                     fmt::format("The lab did not return from {} before the time limit (it had waited {:.1f} s for "
                                 "this reply; the limit counts the lab's own time, --timeout).",
                                 what, std::chrono::duration<double>(t1 - t0).count()),
                     verdict::kNeverReturnsHint);
  }
  if (st == wire::ReadStatus::eof || st == wire::ReadStatus::io_error) ended(what);
  auto protocol = [&](const std::string& came) -> LabFailure {
    process_.kill();
    process_.wait();
    open_ = false;
    return LabFailure(verdict::kProtocolError,
                      fmt::format("The kit's channel received {} during {}: kernel.cu must not write into the "
                                  "kit's file descriptors or memory.", came, what));
  };
  if (st == wire::ReadStatus::malformed) throw protocol(why);
  if (f.seq != seq) throw protocol(fmt::format("a {} message for request {} while request {} was waiting", wire::to_string(f.type), f.seq, seq));
  if (f.type != wire::Type::done && f.type != wire::Type::failed)
    throw protocol(fmt::format("an unexpected {} message", wire::to_string(f.type)));
  json reply;
  try {
    reply = json::parse(f.payload);
  } catch (const json::exception&) {
    throw protocol(fmt::format("a reply that is not JSON ({:.80})", f.payload));
  }
  if (!reply.is_object()) throw protocol("a reply that is not a JSON object");
  if (f.type == wire::Type::done) return reply;

  // `failed`: the lab's code threw. Its text is the lab's own, shown as such.
  const std::string kind = reply.value("kind", "");
  const std::string message = reply.value("message", "");
  const std::string phase = reply.value("phase", "");
  // Let it end on its own (a tool around it, compute-sanitizer, writes its summary at exit).
  close();
  if (kind == "cuda") {
    const std::string name = reply.value("name", "");
    failed_cuda_name_ = name;
    const bool address = name == "cudaErrorIllegalAddress" || name == "cudaErrorLaunchFailure";
    const bool registered = name == "cudaErrorHostMemoryAlreadyRegistered";
    throw LabFailure(verdict::kCudaError, fmt::format("A CUDA error during {} ({:.120}):\n{:.2000}", what, phase, message),
                     address ? "An illegal address usually means an index past the end of an array: check the bounds "
                               "test of every load and store. `labkit grade <lab> --sanitize` names the line "
                               "(compute-sanitizer's memcheck)."
                     : registered
                         ? "The host arrays the kit hands your prolog and epilog are pinned already (layer-timed "
                           "labs, and the network in `labkit report` and the network accuracy case): do not "
                           "cudaHostRegister them."
                         : "Check the launch configuration (grid and block sizes, shared memory per block) and "
                           "every CUDA call's return value.");
  }
  if (kind == "lab")
    throw LabFailure(verdict::kLabError, fmt::format("The lab stopped with an error during {} ({:.120}):\n{:.2000}", what, phase, message),
                     "Read the message above: it comes from the lab's own code or a check it failed.");
  throw protocol(fmt::format("a failure report of kind \"{:.40}\" ({:.200})", kind, message));
}

double Session::round_trip_ms() {
  double ms = 0;
  call({{"op", "ping"}}, "an empty request of the kit (ping)", &ms);
  return ms;
}

void Session::pause() {
  if (!open_) throw std::logic_error("pause of a closed session");
  if (paused_) return;
  const process_set::Stop st = process_.stop_all(kPauseLimit);
  paused_at_ = Clock::now();
  paused_ = true;
  ++pause_stats_.pauses;
  pause_stats_.max_processes = std::max(pause_stats_.max_processes, st.members.size());
  pause_stats_.longest_stop_ms = std::max(pause_stats_.longest_stop_ms, st.ms);
  if (st.stopped) return;
  paused_ = false;
  process_.kill();
  process_.wait();
  open_ = false;
  throw LabFailure(verdict::kTimingImplausible,
                   fmt::format("The kit stops the lab's processes while it times the baseline, and they did not all "
                               "stop within {} ms ({} of them; still running: {}). The baseline could not be timed "
                               "with the lab at rest, so the speedup cannot be trusted.",
                               kPauseLimit.count(), st.members.size(), st.why),
                   "Leave nothing running between the lab's calls: no threads or processes that outlive them.");
}

void Session::resume() {
  if (!paused_) return;
  process_.resume_all();
  paused_ = false;
  const auto stopped = Clock::now() - paused_at_;
  // The lab could not run meanwhile: its deadline does not count that time.
  o_.deadline += std::chrono::duration_cast<Clock::duration>(stopped);
  pause_stats_.paused_ms += std::chrono::duration<double, std::milli>(stopped).count();
}

void Session::close() {
  if (!open_) return;
  resume();
  wire::write_frame(request_fd_, wire::Type::bye, ++seq_, "");
  HarnessProcess::Ending how;
  const auto until = Clock::now() + std::chrono::milliseconds(long(o_.close_wait_s * 1000));
  bool done = false;
  while (!(done = process_.exited_now(how)) && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  process_.kill();
  const HarnessProcess::Ending killed = process_.wait();
  // A process the judge killed earlier (a timeout, a broken frame) did not end by itself.
  end_ = {true, done && !process_.killed(), true, as_ended(done ? how : killed)};
  open_ = false;
}

HarnessProcess::Ending Session::as_ended(HarnessProcess::Ending how) const {
  // bubblewrap reports a harness killed by signal N as its own exit code 128 + N.
  if (how.exited && o_.sandbox == sandbox::Mode::bubblewrap && how.exit_code > 128 && how.exit_code < 128 + 65) {
    how.exited = false;
    how.signal = how.exit_code - 128;
  }
  return how;
}

double number(const json& reply, const char* key, double lo, double hi) {
  const auto it = reply.find(key);
  if (it == reply.end() || !it->is_number())
    throw LabFailure(verdict::kProtocolError, fmt::format("The lab's program replied without a number \"{}\".", key));
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi)
    throw LabFailure(verdict::kProtocolError,
                     fmt::format("The lab's program replied \"{}\": {} (outside [{}, {}]).", key, v, lo, hi));
  return v;
}

std::uint64_t unsigned_number(const json& reply, const char* key) {
  const auto it = reply.find(key);
  if (it == reply.end() || !it->is_number_unsigned())
    throw LabFailure(verdict::kProtocolError, fmt::format("The lab's program replied without an unsigned \"{}\".", key));
  return it->get<std::uint64_t>();
}

}  // namespace labkit
