// Cheat: timeline-forged-names. The conv is streams-overlap's, honest. What it attacks is whoever
// reads its grade: the streams timeline (grader/tools/timeline.h) shows every kernel's name as CUPTI
// reported it inside the lab's own process, on the grade page an instructor opens from the class
// dashboard and in the SVG file beside the report. A name that reached those as markup would run a
// script in the instructor's browser, or break the picture. A C++ kernel's mangled name holds no
// markup, so this file makes CUPTI "report" one: the harness reads each record with
// cuptiActivityGetNextRecord from libcupti.so, and a definition in the executable comes first (the
// shared library's does not collide, unlike the static runtime's; see fake-event-timer). Ours
// calls the real one (dlsym RTLD_NEXT) and points each kernel record's name at markup.
// On a naive kit that pastes names into its pages, that is a script in every page of the class.
// Expected: passed (the conv is right, its streams overlap), the timeline's kernels named with the
// markup exactly, and the grade page and the SVG holding it only escaped (tests/meson.build).
// If the harness ever stops reading records through this function, the names stay the kernel's own
// and the --timeline-name check fails, saying so.
#include <cupti.h>
#include <dlfcn.h>

#include "../streams-overlap/kernel.cu"

namespace {
constexpr const char* kForged = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=1\">&\"";
}  // namespace

extern "C" CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  using Next = CUptiResult (*)(uint8_t*, size_t, CUpti_Activity**);
  static const Next next = reinterpret_cast<Next>(dlsym(RTLD_NEXT, "cuptiActivityGetNextRecord"));
  if (next == nullptr) return CUPTI_ERROR_UNKNOWN;
  const CUptiResult r = next(buffer, valid, record);
  // The kit reads kernel records as CUpti_ActivityKernel10 (grader/tools/activity_cupti.cpp); the
  // name sits where every version since 4 has it.
  if (r == CUPTI_SUCCESS && (*record)->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
    reinterpret_cast<CUpti_ActivityKernel10*>(*record)->name = kForged;
  return r;
}
