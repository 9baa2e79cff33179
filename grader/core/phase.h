// grader/core/phase.h — which part of a lab is running right now.
//
// The grader's watchdog (a lab that never returns) and its crash handler (a lab that segfaults)
// run outside the normal control flow; they read the current phase to say where it happened:
// "the lab did not return from conv_forward_gpu (case k3-c3-m17-b1) within 60 s". Set with a
// string literal or a string that outlives the phase.
#pragma once

#include <atomic>

namespace labkit {

inline std::atomic<const char*> g_phase{"start-up"};
inline std::atomic<const char*> g_phase_case{""};

inline void set_phase(const char* phase) { g_phase.store(phase, std::memory_order_relaxed); }
inline void set_phase_case(const char* name) { g_phase_case.store(name, std::memory_order_relaxed); }

}  // namespace labkit
