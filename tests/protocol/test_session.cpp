// The judge's side of the channel against a harness that breaks the protocol at each step
// (tests/protocol/fake_harness.cpp): every misbehaviour is a verdict of the lab, named in the
// message, never a judge crash and never kit-error. Runs on any machine, without a GPU; each case
// runs bare and, where bubblewrap works here, inside the sandbox too.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "grader/protocol/wire.h"
#include "grader/judge/grade_result.h"
#include "grader/judge/session.h"
#include <fcntl.h>
#include <unistd.h>

namespace {

using labkit::LabFailure;
using labkit::Session;
using labkit::SessionOptions;
namespace verdict = labkit::verdict;

std::string fake() {
  const char* p = std::getenv("LABKIT_FAKE_HARNESS");
  REQUIRE(p != nullptr);
  return p;
}

std::vector<labkit::sandbox::Mode> modes() {
  std::vector<labkit::sandbox::Mode> m{labkit::sandbox::Mode::none};
  if (labkit::sandbox::probe().available) m.push_back(labkit::sandbox::Mode::bubblewrap);
  return m;
}

// A harness is a wrapper (`fake_harness MODE`) in front of the "--channel" argument.
SessionOptions options(const std::string& mode, labkit::sandbox::Mode sandbox, double seconds = 10) {
  SessionOptions o;
  o.lab_id = "fake";
  o.kind = "conv";
  o.sandbox = sandbox;
  if (sandbox == labkit::sandbox::Mode::bubblewrap) o.probe = labkit::sandbox::probe();
  o.harness = fake();
  o.harness_args = {mode};
  o.startup_s = 3;
  o.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(long(seconds * 1000));
  return o;
}

// Starts a session in `mode` and makes one request; returns the failure (or "none").
LabFailure outcome(const std::string& mode, labkit::sandbox::Mode sandbox, double seconds = 10) {
  Session s(options(mode, sandbox, seconds));
  try {
    s.start();
    s.call({{"op", "run"}}, "conv_forward_gpu (case test)");
    s.call({{"op", "run"}}, "conv_forward_gpu (case test, again)");
    s.close();
  } catch (const LabFailure& f) {
    return f;
  }
  return LabFailure("none", "no failure");
}

void expect(const std::string& mode, const char* v, const char* text, double seconds = 10) {
  for (auto sandbox : modes()) {
    CAPTURE(mode);
    CAPTURE(int(sandbox));
    const LabFailure f = outcome(mode, sandbox, seconds);
    CHECK(f.verdict == v);
    CHECK_MESSAGE(f.message.find(text) != std::string::npos, f.message);
  }
}

}  // namespace

TEST_CASE("a well-behaved harness: hello, replies in order, bye") {
  for (auto sandbox : modes()) {
    Session s(options("good", sandbox));
    s.start();
    double wall = 0;
    const auto r = s.call({{"op", "run"}}, "conv_forward_gpu", &wall);
    CHECK(r.at("event_ms").get<double>() == 0.5);
    CHECK(wall > 0);
    CHECK(s.round_trip_ms() > 0);
    s.close();
  }
}

// The counters fake_harness "busy" advances between requests: a thread's and a setsid child's.
std::pair<unsigned long, unsigned long> counters(Session& s) {
  const auto* w = reinterpret_cast<const std::atomic<unsigned long>*>(s.tensors().floats(0, 16).data());
  return {w[0].load(), w[1].load()};
}

TEST_CASE("pause stops every process of the harness, between requests; resume lets them run") {
  using namespace std::chrono_literals;
  for (auto sandbox : modes()) {
    CAPTURE(int(sandbox));
    Session s(options("busy", sandbox));
    s.start();
    s.tensors().reserve(4096);
    s.call({{"op", "run"}}, "the request that starts the work");
    std::this_thread::sleep_for(100ms);
    const auto before = counters(s);
    CHECK(before.first > 0);
    CHECK(before.second > 0);

    const double left = s.seconds_left();
    const auto deadline = s.deadline();
    s.pause();
    CHECK(s.paused());
    const auto stopped = counters(s);
    std::this_thread::sleep_for(100ms);
    CHECK(counters(s) == stopped);  // neither the thread nor the child that left the group ran
    CHECK(s.pause_stats().max_processes >= 2);
    CHECK_THROWS_AS(s.call({{"op", "run"}}, "a request while paused"), std::logic_error);
    s.resume();
    // The 100 ms stopped do not count against the lab's deadline; deadline() carries that credit
    // to the next harness process when the judge restarts it (Context::restart_harness).
    CHECK(s.seconds_left() > left - 0.05);
    CHECK(s.deadline() - deadline >= 100ms);
    std::this_thread::sleep_for(100ms);
    const auto after = counters(s);
    CHECK(after.first > stopped.first);
    CHECK(after.second > stopped.second);
    s.call({{"op", "run"}}, "a request after the pause");

    // Closing a paused session resumes it first: no 5 s wait for a bye that cannot come.
    s.pause();
    const auto t0 = std::chrono::steady_clock::now();
    s.close();
    CHECK(std::chrono::steady_clock::now() - t0 < 3s);
  }
}

TEST_CASE("a session destroyed while paused kills and reaps its stopped harness") {
  for (auto sandbox : modes()) {
    CAPTURE(int(sandbox));
    const auto t0 = std::chrono::steady_clock::now();
    {
      Session s(options("busy", sandbox));
      s.start();
      s.tensors().reserve(4096);
      s.call({{"op", "run"}}, "the request that starts the work");
      s.pause();
    }
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  }
}

TEST_CASE("a harness that ends or hangs before its hello") {
  expect("exit-before-hello", verdict::kProtocolError, "exited with code 0");
  expect("crash-before-hello", verdict::kCrashed, "SIGSEGV");
  expect("hang-before-hello", verdict::kTimeout, "did not answer");
}

TEST_CASE("a harness whose first message is not its hello") {
  expect("garbage", verdict::kProtocolError, "not a frame");
  expect("wrong-hello", verdict::kProtocolError, "someone-else");
  expect("done-first", verdict::kProtocolError, "done message where the kit expected its hello");
}

TEST_CASE("a harness that dies or hangs at a request names the request") {
  expect("exit-on-request", verdict::kProtocolError, "during conv_forward_gpu (case test)");
  expect("crash-on-request", verdict::kCrashed, "during conv_forward_gpu (case test)");
  expect("hang-on-request", verdict::kTimeout, "conv_forward_gpu (case test)", 3);
  expect("hang-on-request", verdict::kTimeout, "s for this reply; the limit counts the lab's own time", 3);
}

TEST_CASE("malformed, oversized, truncated, repeated and out-of-order replies") {
  expect("oversized", verdict::kProtocolError, "oversized");
  expect("truncated", verdict::kProtocolError, "truncated");
  expect("bad-magic", verdict::kProtocolError, "not a frame");
  expect("unknown-type", verdict::kProtocolError, "unknown type 77");
  expect("wrong-seq", verdict::kProtocolError, "for request 8 while request 1 was waiting");
  expect("repeat", verdict::kProtocolError, "for request 1 while request 2 was waiting");
  expect("not-json", verdict::kProtocolError, "not JSON");
  expect("hello-again", verdict::kProtocolError, "unexpected hello");
}

TEST_CASE("failure reports: the lab's CUDA error is its verdict; a claimed kit failure is not the kit's") {
  expect("cuda-failure", verdict::kCudaError, "an illegal memory access");
  expect("kit-failure", verdict::kProtocolError, "please call this a kit error");
}

TEST_CASE("the kit's own harness: its failures are the kit's to attribute, never the lab's verdict") {
  for (auto sandbox : modes()) {
    for (const char* mode : {"out-of-memory", "cuda-failure", "crash-on-request", "exit-before-hello"}) {
      CAPTURE(mode);
      SessionOptions o = options(mode, sandbox);
      o.trusted = true;
      Session s(o);
      std::string cuda_name = "not thrown";
      try {
        s.start();
        s.call({{"op", "run"}}, "conv_forward_gpu_prolog (the baseline)");
      } catch (const labkit::KitHarnessFailure& f) {
        cuda_name = f.cuda_name;
        CHECK_MESSAGE(std::string(f.what()).find("the kit's own harness") == 0, f.what());
      } catch (const LabFailure& f) {
        FAIL("a trusted session threw the lab's failure: " << f.message);
      }
      const std::string want = std::string(mode) == "out-of-memory" ? "cudaErrorMemoryAllocation"
                               : std::string(mode) == "cuda-failure" ? "cudaErrorIllegalAddress"
                                                                     : "";
      CHECK(cuda_name == want);
    }
  }
}

TEST_CASE("reply fields are validated before use") {
  const nlohmann::json nan_time = nlohmann::json::parse(R"({"event_ms": "nan"})");
  CHECK_THROWS_AS(labkit::number(nan_time, "event_ms", 0, 1e7), LabFailure);
  CHECK_THROWS_AS(labkit::number(nlohmann::json{{"event_ms", -1.0}}, "event_ms", 0, 1e7), LabFailure);
  CHECK_THROWS_AS(labkit::number(nlohmann::json::object(), "event_ms", 0, 1e7), LabFailure);
  CHECK(labkit::number(nlohmann::json{{"event_ms", 0.25}}, "event_ms", 0, 1e7) == 0.25);
  CHECK_THROWS_AS(labkit::unsigned_number(nlohmann::json{{"digest", -5}}, "digest"), LabFailure);
  try {
    labkit::number(nlohmann::json{{"event_ms", 1e300}}, "event_ms", 0, 1e7);
  } catch (const LabFailure& f) {
    CHECK(f.verdict == verdict::kProtocolError);
  }
}

TEST_CASE("framing: a frame round-trips; bad frames are named, never thrown") {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  using namespace labkit::wire;
  const auto soon = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  REQUIRE(write_frame(p[1], Type::done, 42, R"({"x": 1})"));
  Frame f;
  std::string why;
  REQUIRE(read_frame(p[0], f, soon, why) == ReadStatus::ok);
  CHECK(f.type == Type::done);
  CHECK(f.seq == 42);
  CHECK(f.payload == R"({"x": 1})");
  std::string too_long(kMaxPayload + 1, 'x');
  CHECK_FALSE(write_frame(p[1], Type::done, 1, too_long, &why));
  CHECK(why.find("exceeds") != std::string::npos);
  Header h;
  h.reserved = 3;
  h.type = 3;
  [[maybe_unused]] auto w = ::write(p[1], &h, sizeof h);
  CHECK(read_frame(p[0], f, soon, why) == ReadStatus::malformed);
  CHECK(why.find("reserved 3") != std::string::npos);
  ::close(p[1]);
  CHECK(read_frame(p[0], f, soon, why) == ReadStatus::eof);
  ::close(p[0]);
  int q[2];
  REQUIRE(::pipe(q) == 0);
  CHECK(read_frame(q[0], f, std::chrono::steady_clock::now() + std::chrono::milliseconds(50), why) == ReadStatus::timeout);
  ::close(q[0]);
  ::close(q[1]);
}


// The memory check's view (grader/cli/memory_check.h): an fd of the judge reaches the program in
// front of the harness, and end() says how that program ended: its status after bye, an exit
// before bye, a kill by the judge, a signal (bubblewrap's 128 + N as signal N).
TEST_CASE("end(): how the wrapper in front of the harness ended; an extra fd reaches it") {
  struct Run {
    labkit::SessionEnd end;
    std::string log;
    std::string verdict = "none";
  };
  const auto run = [](const std::string& mode, const std::string& tail, labkit::sandbox::Mode sandbox, double seconds) {
    int p[2];
    REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    SessionOptions o = options(mode, sandbox, seconds);
    o.wrapper = {"/bin/sh", "-c", "echo tool-line >&7; \"$@\"; " + tail, "sh"};
    o.extra_fds = {{p[1], 7}};
    Run r;
    {
      Session s(o);
      try {
        s.start();
        s.call({{"op", "run"}}, "conv_forward_gpu (case test)");
        s.close();
      } catch (const LabFailure& f) {
        r.verdict = f.verdict;
        s.close();
      }
      r.end = s.end();
    }
    ::close(p[1]);
    char buffer[256];
    for (ssize_t n; (n = ::read(p[0], buffer, sizeof buffer)) > 0;) r.log.append(buffer, std::size_t(n));
    ::close(p[0]);
    return r;
  };
  for (auto sandbox : modes()) {
    CAPTURE(int(sandbox));
    Run r = run("good", "exit 86", sandbox, 10);
    CHECK(r.verdict == "none");
    CHECK(r.log == "tool-line\n");
    CHECK(r.end.started);
    CHECK(r.end.by_itself);
    CHECK(r.end.after_bye);
    CHECK(r.end.how.exited);
    CHECK(r.end.how.exit_code == 86);
    r = run("exit-on-request", "exit 0", sandbox, 10);
    CHECK(r.verdict == verdict::kProtocolError);
    CHECK(r.end.by_itself);
    CHECK_FALSE(r.end.after_bye);
    r = run("good", "kill -9 $$", sandbox, 10);
    CHECK(r.end.by_itself);
    CHECK(r.end.after_bye);
    CHECK_FALSE(r.end.how.exited);
    CHECK(r.end.how.signal == 9);
    r = run("hang-on-request", "exit 0", sandbox, 1.5);
    CHECK(r.verdict == verdict::kTimeout);
    CHECK_FALSE(r.end.by_itself);
  }
}

TEST_CASE("the kit's own harness outlives the lab's time limit: twice it and two minutes") {
  using namespace std::chrono_literals;
  CHECK(labkit::kit_time_limit(30) == 180s);
  CHECK(labkit::kit_time_limit(600) == 1320s);
  CHECK(labkit::kit_time_limit(2.5) == 125s);
}
