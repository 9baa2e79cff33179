// server.h — the harness's view of one request: its JSON, the tensor file, the reply.
// Shared by harness.cpp (the loop), conv_ops.cpp and map_ops.cpp (what each op does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/conv.h"
#include "labkit/map.h"

namespace labkit::harness {

// The judge sent something this harness cannot execute: a kit bug, reported as kind "kit".
struct KitError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Tensors {
 public:
  void map(int fd, std::size_t bytes);  // (re)maps the judge's file; bytes = its size
  // `count` floats at byte `offset`, inside the file, or KitError.
  std::span<float> floats(std::uint64_t offset, std::size_t count) const;
  std::span<float> floats(const nlohmann::json& request, const char* key, std::size_t count) const {
    return floats(request.at(key).get<std::uint64_t>(), count);
  }
  std::span<unsigned char> bytes(std::uint64_t offset, std::size_t count) const;

 private:
  unsigned char* base_ = nullptr;
  std::size_t bytes_ = 0;
};

ConvShape shape_of(const nlohmann::json& request);  // "shape": [B, M, C, H, W, K], validated

// Guard bytes after a buffer standard_prolog allocated (labkit/guard_regions.h), as the judge
// reads them: {"what", "changed", "first"}; nothing when the buffer is not guarded.
void append_device_guard(nlohmann::json& guards, const char* what, const float* device);

// The network program's pinned host arrays, named on the command line (--reserve-pinned): their
// pages are made on another thread from now on, while CUDA starts; the function returned,
// called once CUDA is up, waits for them and registers them as reserved arrays.
std::function<void()> conv_reserve_early(const std::vector<std::size_t>& floats);

// The timed region of a run or layer request, as CUPTI's clock saw it (timed_window.cpp): the
// tracer records all the time (activity::start_tracing, before hello), so the lab cannot tell
// the judge's timed calls from the others; opened just before the lab's code, closed after the
// device synchronize.
void window_open();
void window_close();
// Before each request: when the previous request closed a window and this request asks for its
// records (`wanted`: it names "executed_out"), the tracer's records are taken now (a forced CUPTI
// flush, outside the judge's clock) and those that meet the window are kept for this request's
// reply (grader/judge/executed_evidence.h gives the format); unwanted, the window is forgotten without a
// flush. `discard` (prepare) drops what was delivered since the last take, without a flush.
void take_window(bool discard, bool wanted);
// The kept records, written into the tensor file where the request's "executed_out" {offset,
// bytes} says; the reply's "executed" entry ({"bytes": n}), or null when there is nothing to send.
nlohmann::json send_window(const nlohmann::json& request, const Tensors& t);

// Each op runs the lab's code and returns the `done` payload; exceptions become `failed`.
nlohmann::json conv_op(const ConvOps& ops, const std::string& op, const nlohmann::json& request, const Tensors& t);
nlohmann::json map_op(const MapOps& ops, const std::string& op, const nlohmann::json& request, const Tensors& t);

}  // namespace labkit::harness
