// grader/core/exit_codes.h — what every labkit program's exit status means (design.md section 5).
// meson test reads them: 0 pass, 77 skip, 99 hard error (ERROR), anything else fail.
#pragma once

namespace labkit::exit_code {
inline constexpr int kPass = 0;        // graded and passed / command succeeded
inline constexpr int kFail = 1;        // graded and failed / bad input (file, shape) named in the message
inline constexpr int kUsage = 2;       // bad command line
inline constexpr int kNoDevice = 77;   // no usable CUDA device: skipped, not failed
inline constexpr int kKitError = 99;   // a bug or broken install of the kit itself
}  // namespace labkit::exit_code
