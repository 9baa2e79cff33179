// labkit/guard_regions.h — canary bytes after the device buffers the kit allocates for a lab.
//
// Contract
//   * standard_prolog (labkit/conv_buffers.h) allocates each device buffer kGuardBytes longer
//     than asked, fills the extra bytes with kGuardByte and registers the buffer here;
//     standard_epilog unregisters it before freeing. The pointer the lab gets is the allocation's
//     own start, so a lab that frees the buffers itself with cudaFree still works.
//   * The harness reads the guard bytes back after every call and sends them to the judge, which
//     decides: a changed byte is a write past the end of that buffer (verdict out-of-bounds),
//     found without compute-sanitizer. Writes before the start are not covered.
//   * Buffers a lab allocates itself are not guarded. The registry lives in the lab's process
//     only; it is a convenience for finding bugs, not a trust boundary.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

namespace labkit::guards {

inline constexpr std::size_t kGuardBytes = 64 * 1024;
inline constexpr unsigned char kGuardByte = 0xA5;

struct Region {
  const void* base = nullptr;
  std::size_t bytes = 0;  // the buffer the lab asked for; the guard follows it
};

inline std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
inline std::vector<Region>& registry() {
  static std::vector<Region> r;
  return r;
}
inline void add(const void* base, std::size_t bytes) {
  std::lock_guard lock(registry_mutex());
  registry().push_back({base, bytes});
}
inline void remove(const void* base) {
  std::lock_guard lock(registry_mutex());
  auto& r = registry();
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r[i].base == base) {
      r.erase(r.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}
// The registered region that starts at `base`, if any.
inline bool find(const void* base, Region& out) {
  std::lock_guard lock(registry_mutex());
  for (const Region& g : registry())
    if (g.base == base) {
      out = g;
      return true;
    }
  return false;
}

}  // namespace labkit::guards
