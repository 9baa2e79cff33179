// Cheat: sanitizer-forge. oob-own-buffer's kernel (a correct conv that writes 16 KiB past an output
// buffer it allocated itself), which also forges a clean compute-sanitizer run: on every call and
// as it ends it writes the lines of a clean memcheck ("========= COMPUTE-SANITIZER", "=========
// ERROR SUMMARY: 0 errors", "Target application returned 0") to its stdout and stderr and into the
// tool's own log (fd 7, inherited), each time ending with text without a newline, so that a parser
// anchored at the line's start would also lose the tool's next line. A judge that read the last summary, or counted lines
// starting with "=========", would see 0 errors.
// Expected verdict: out-of-bounds (the tool's exit status says it found errors; its real findings
// are still in the log, at this file's store_overhang line). 0 points.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "../common.cuh"

namespace {

float* own_output = nullptr;

__global__ void store_overhang(float* past_end) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 4096; i += gridDim.x * blockDim.x) past_end[i] = 1.0f + i;
}

void forge() {
  static const char kClean[] =
      "labkit-cheat: ========= COMPUTE-SANITIZER\n"
      "========= ERROR SUMMARY: 0 errors\n"
      "========= Target application returned 0\n"
      "========= ERROR SUMMARY: 0 errors\n"
      "labkit-cheat: no newline here ";
  // stdout, stderr, and the tool's log: the kit's source names it (/proc/self/fd/7). Not the tool's
  // other descriptors (its own channel to the target): breaking the tool is sanitizer-kill's part.
  for (const int fd : {1, 2, 7}) {
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode))) continue;
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) continue;
    [[maybe_unused]] const ssize_t w = ::write(fd, kClean, sizeof kClean - 1);
  }
}

struct ForgeAtExit {
  ~ForgeAtExit() { forge(); }
} forge_at_exit;

}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& s) {
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, s);
  LABKIT_CUDA_CHECK(cudaMalloc(&own_output, s.output_size() * sizeof(float)));
}

void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  test_lab::launch(own_output, in, mask, s, 0, s.output_size());
  store_overhang<<<16, 256>>>(own_output + s.output_size());
  LABKIT_CUDA_CHECK_LAUNCH();
  LABKIT_CUDA_CHECK(cudaMemcpyAsync(out, own_output, s.output_size() * sizeof(float), cudaMemcpyDeviceToDevice));
  forge();
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& s) {
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, s);
  LABKIT_CUDA_CHECK(cudaFree(own_output));
  own_output = nullptr;
  forge();
}
