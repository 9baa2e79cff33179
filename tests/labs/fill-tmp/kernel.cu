// Cheat: fill-tmp. The first prolog writes /tmp/labkit-cheat-fill-tmp.bin in 1 MiB blocks until a
// write fails (or 8 GiB, a cap so the test cannot take a real disk down), logs how much it wrote,
// and leaves the file there. conv_forward_gpu writes nothing.
// The target is the grader: a naive grader that shares /tmp with the lab cannot write its own
// scratch files, results.json or Gradescope file afterwards, fails with its own error
// (kit-error: "not the student's fault", regraded by hand or excused) and leaves the machine
// broken for the next student. Files left in /tmp also outlive the run: a place to keep data
// for a later run.
// Expected verdict: incorrect (the output is never written); the host's /tmp holds no
// labkit-cheat-fill-tmp.bin afterwards (the sandbox's /tmp is private and of limited size).
// 0 points.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../common.cuh"

namespace {

void fill_tmp() {
  const char* path = "/tmp/labkit-cheat-fill-tmp.bin";
  constexpr std::size_t kBlock = std::size_t(1) << 20, kCap = std::size_t(8) << 30;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "labkit-cheat: cannot create %s: %s\n", path, std::strerror(errno));
    return;
  }
  const std::vector<char> block(kBlock, 'x');
  std::size_t written = 0;
  int stopped = 0;
  while (written < kCap) {
    const ssize_t n = ::write(fd, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      stopped = n < 0 ? errno : ENOSPC;
      break;
    }
    written += std::size_t(n);
  }
  if (::fsync(fd) != 0 && !stopped) stopped = errno;
  ::close(fd);
  std::fprintf(stderr, "labkit-cheat: filled %zu MiB of %s (%s)\n", written >> 20, path,
               stopped ? std::strerror(stopped) : "reached the 8 GiB cap");
}

}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  static bool filled = false;
  if (!filled) {
    filled = true;
    fill_tmp();
  }
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float*, const float*, const float*, const ConvShape&) {}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
