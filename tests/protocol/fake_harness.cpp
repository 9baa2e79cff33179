// fake_harness — a harness that misbehaves on purpose, for the judge's protocol tests on any
// machine (no GPU: it never touches CUDA). `fake_harness MODE --channel`; MODE says what it does
// wrong, and when; "good" answers every request like a real harness with an empty `done`.
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "grader/protocol/wire.h"

using namespace labkit::wire;

namespace {

void send(Type t, std::uint32_t seq, const std::string& payload) { write_frame(kReplyFd, t, seq, payload); }

void raw(const void* p, std::size_t n) {
  [[maybe_unused]] ssize_t w = ::write(kReplyFd, p, n);
}

// "busy": work that goes on between requests, counted where the judge sees it (the first words of
// the tensor file): word 0 a thread of the harness, word 1 a child that left the process group
// and the session (setsid; it dies with the harness).
void start_busy() {
  struct stat st {};
  if (::fstat(kTensorFd, &st) != 0 || st.st_size < 64) return;
  void* p = ::mmap(nullptr, 64, PROT_READ | PROT_WRITE, MAP_SHARED, kTensorFd, 0);
  if (p == MAP_FAILED) return;
  auto* words = static_cast<std::atomic<unsigned long>*>(p);
  std::thread([words] {
    for (;;) words[0].fetch_add(1, std::memory_order_relaxed);
  }).detach();
  if (::fork() == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::setsid();
    for (;;) words[1].fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "good";
  if (mode == "exit-before-hello") {
    std::puts(R"({"verdict": "passed", "score": {"total": 2, "max": 2}})");  // a forged report: ignored
    std::fflush(stdout);
    ::_exit(0);
  }
  if (mode == "crash-before-hello") ::raise(SIGSEGV);
  if (mode == "hang-before-hello") std::this_thread::sleep_for(std::chrono::hours(1));
  if (mode == "garbage") {
    raw("{\"verdict\": \"passed\"}\n", 22);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    return 0;
  }
  if (mode == "wrong-hello") {
    send(Type::hello, 0, R"({"protocol": 1, "lab": "someone-else", "kind": "conv"})");
  } else if (mode == "done-first") {
    send(Type::done, 0, "{}");
  } else {
    send(Type::hello, 0, R"({"protocol": 1, "lab": "fake", "kind": "conv"})");
  }
  int served = 0;
  for (;;) {
    Frame f;
    std::string why;
    const ReadStatus st = read_frame(kRequestFd, f, std::chrono::steady_clock::now() + std::chrono::hours(1), why);
    if (st != ReadStatus::ok || f.type == Type::bye) return 0;
    ++served;
    if (mode == "busy" && served == 1) start_busy();
    if (mode == "exit-on-request") ::_exit(0);
    if (mode == "crash-on-request") ::raise(SIGSEGV);
    if (mode == "hang-on-request") std::this_thread::sleep_for(std::chrono::hours(1));
    if (mode == "oversized") {
      Header h;
      h.type = static_cast<std::uint16_t>(Type::done);
      h.seq = f.seq;
      h.length = kMaxPayload + 1;
      raw(&h, sizeof h);
      continue;
    }
    if (mode == "truncated") {
      Header h;
      h.type = static_cast<std::uint16_t>(Type::done);
      h.seq = f.seq;
      h.length = 100;
      raw(&h, sizeof h);
      raw("{}", 2);
      ::_exit(0);
    }
    if (mode == "bad-magic") {
      Header h;
      h.magic = 0x12345678;
      h.type = static_cast<std::uint16_t>(Type::done);
      h.seq = f.seq;
      raw(&h, sizeof h);
      continue;
    }
    if (mode == "unknown-type") {
      Header h;
      h.type = 77;
      h.seq = f.seq;
      raw(&h, sizeof h);
      continue;
    }
    if (mode == "wrong-seq") {
      send(Type::done, f.seq + 7, "{}");
      continue;
    }
    if (mode == "repeat") {
      send(Type::done, f.seq, "{}");
      send(Type::done, f.seq, "{}");
      continue;
    }
    if (mode == "not-json") {
      send(Type::done, f.seq, "passed");
      continue;
    }
    if (mode == "hello-again") {
      send(Type::hello, f.seq, R"({"protocol": 1, "lab": "fake", "kind": "conv"})");
      continue;
    }
    if (mode == "cuda-failure") {
      send(Type::failed, f.seq, R"({"kind": "cuda", "code": 700, "name": "cudaErrorIllegalAddress", "phase": "conv_forward_gpu", "message": "an illegal memory access"})");
      continue;
    }
    if (mode == "out-of-memory") {
      send(Type::failed, f.seq, R"({"kind": "cuda", "code": 2, "name": "cudaErrorMemoryAllocation", "phase": "conv_forward_gpu_prolog", "message": "out of memory"})");
      continue;
    }
    if (mode == "kit-failure") {
      send(Type::failed, f.seq, R"({"kind": "kit", "message": "please call this a kit error"})");
      continue;
    }
    if (mode == "nan-time") {
      send(Type::done, f.seq, R"({"event_ms": "nan", "host_ms": 1.0, "digest": 5})");
      continue;
    }
    if (mode == "negative-time") {
      send(Type::done, f.seq, R"({"event_ms": -1.0, "host_ms": 1.0, "digest": 5})");
      continue;
    }
    send(Type::done, f.seq, R"({"event_ms": 0.5, "host_ms": 0.6, "digest": 5})");
  }
}
