// The two conv interfaces a lab may define (lab_api.h), found through weak references: the
// linker leaves an undefined one null instead of failing, so one harness source serves both.
#include "lab_api.h"

#include <mutex>
#include <stdexcept>

#include "gpu-new-forward.h"

// labkit's free functions (labkit/conv.h), referenced weakly here.
namespace labkit {
[[gnu::weak]] void conv_forward_gpu_prolog(const float*, const float*, const float*, float**, float**, float**,
                                           const ConvShape&);
[[gnu::weak]] void conv_forward_gpu(float*, const float*, const float*, const ConvShape&);
[[gnu::weak]] void conv_forward_gpu_epilog(float*, float*, float*, float*, const ConvShape&);
}  // namespace labkit

// The course's GPUInterface methods under their mangled names, `this` first (lab_api.h). The
// unit test test-lab-api checks these names against the methods gpu-new-forward.h declares.
extern "C" {
[[gnu::weak]] void labkit_course_properties(GPUInterface*) __asm__("_ZN12GPUInterface21get_device_propertiesEv");
[[gnu::weak]] void labkit_course_prolog(GPUInterface*, const float*, const float*, const float*, float**, float**,
                                        float**, int, int, int, int, int, int)
    __asm__("_ZN12GPUInterface23conv_forward_gpu_prologEPKfS1_S1_PPfS3_S3_iiiiii");
[[gnu::weak]] void labkit_course_forward(GPUInterface*, float*, const float*, const float*, int, int, int, int, int,
                                         int) __asm__("_ZN12GPUInterface16conv_forward_gpuEPfPKfS2_iiiiii");
[[gnu::weak]] void labkit_course_epilog(GPUInterface*, float*, float*, float*, float*, int, int, int, int, int, int)
    __asm__("_ZN12GPUInterface23conv_forward_gpu_epilogEPfS0_S0_S0_iiiiii");
}

namespace labkit::harness {
namespace {

GPUInterface g_interface;  // holds no data: the methods only need an object to be called on

void course_prolog(const float* host_output, const float* host_input, const float* host_mask, float** device_output,
                   float** device_input, float** device_mask, const ConvShape& s) {
  static std::once_flag properties;
  if (labkit_course_properties) std::call_once(properties, [] { labkit_course_properties(&g_interface); });
  labkit_course_prolog(&g_interface, host_output, host_input, host_mask, device_output, device_input, device_mask,
                       s.B, s.M, s.C, s.H, s.W, s.K);
}
void course_forward(float* device_output, const float* device_input, const float* device_mask, const ConvShape& s) {
  labkit_course_forward(&g_interface, device_output, device_input, device_mask, s.B, s.M, s.C, s.H, s.W, s.K);
}
void course_epilog(float* host_output, float* device_output, float* device_input, float* device_mask,
                   const ConvShape& s) {
  labkit_course_epilog(&g_interface, host_output, device_output, device_input, device_mask, s.B, s.M, s.C, s.H, s.W,
                       s.K);
}

std::string g_missing;  // set once, before any phase runs (lab_conv)
[[noreturn]] void missing() { throw std::invalid_argument(g_missing); }
void missing_prolog(const float*, const float*, const float*, float**, float**, float**, const ConvShape&) { missing(); }
void missing_forward(float*, const float*, const float*, const ConvShape&) { missing(); }
void missing_epilog(float*, float*, float*, float*, const ConvShape&) { missing(); }

std::string absent(std::initializer_list<std::pair<bool, const char*>> parts) {
  std::string out;
  for (const auto& [defined, name] : parts)
    if (!defined) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

}  // namespace

LabConv lab_conv(const char* id) {
  const bool labkit_prolog = &labkit::conv_forward_gpu_prolog != nullptr;
  const bool labkit_forward = &labkit::conv_forward_gpu != nullptr;
  const bool labkit_epilog = &labkit::conv_forward_gpu_epilog != nullptr;
  if (labkit_prolog && labkit_forward && labkit_epilog)
    return {{id, &labkit::conv_forward_gpu_prolog, &labkit::conv_forward_gpu, &labkit::conv_forward_gpu_epilog},
            ConvApi::labkit, ""};
  const bool course_p = labkit_course_prolog != nullptr, course_f = labkit_course_forward != nullptr,
             course_e = labkit_course_epilog != nullptr;
  if (course_p && course_f && course_e) return {{id, &course_prolog, &course_forward, &course_epilog}, ConvApi::course, ""};
  // Name the set the lab started on (or labkit's, when it defines nothing of either).
  const bool course_started = (course_p || course_f || course_e) && !(labkit_prolog || labkit_forward || labkit_epilog);
  const std::string what =
      course_started
          ? "the course's GPUInterface is incomplete: not defined: " +
                absent({{course_p, "GPUInterface::conv_forward_gpu_prolog"}, {course_f, "GPUInterface::conv_forward_gpu"},
                        {course_e, "GPUInterface::conv_forward_gpu_epilog"}}) +
                " (each with the shape as const int Batch, Map_out, Channel, Height, Width, K, as gpu-new-forward.h "
                "declares them)"
          : "not defined: " + absent({{labkit_prolog, "labkit::conv_forward_gpu_prolog"},
                                      {labkit_forward, "labkit::conv_forward_gpu"},
                                      {labkit_epilog, "labkit::conv_forward_gpu_epilog"}}) +
                " (labkit/conv.h), and the course's GPUInterface methods (gpu-new-forward.h) are not all defined "
                "either";
  g_missing = "the lab does not define its three conv phases: " + what;
  return {{id, &missing_prolog, &missing_forward, &missing_epilog}, ConvApi::none, what};
}

}  // namespace labkit::harness
