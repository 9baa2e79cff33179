#include "grader/judge/clocks.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

namespace labkit {
namespace {

// The few NVML entry points used, declared as nvml.h does (the header ships with the driver
// development files, which the kit does not require). NVML_CLOCK_SM is 1 in nvmlClockType_t.
using nvmlDevice_t = struct nvmlDevice_st*;
using InitFn = int (*)();
using HandleByBusIdFn = int (*)(const char*, nvmlDevice_t*);
using ClockFn = int (*)(nvmlDevice_t, int, unsigned*);
constexpr int kNvmlClockSm = 1;

struct Nvml {
  void* lib = nullptr;
  InitFn init = nullptr;
  HandleByBusIdFn handle_by_bus_id = nullptr;
  ClockFn clock = nullptr, max_clock = nullptr;
  bool ok = false;
  std::string why;

  Nvml() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      why = "NVML (libnvidia-ml.so.1) not found";
      return;
    }
    init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
    handle_by_bus_id = reinterpret_cast<HandleByBusIdFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<ClockFn>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    max_clock = reinterpret_cast<ClockFn>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
    if (!init || !handle_by_bus_id || !clock || !max_clock) {
      why = "NVML lacks the clock functions";
      return;
    }
    if (init() != 0) {
      why = "nvmlInit failed";
      return;
    }
    ok = true;
  }
};

}  // namespace

SmClock read_sm_clock() {
  static Nvml nvml;  // loaded once; left loaded until exit (unloading NVML mid-run gains nothing)
  SmClock c;
  if (!nvml.ok) {
    c.why = nvml.why;
    return c;
  }
  int device = 0;
  char bus_id[32] = {};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) {
    cudaGetLastError();
    c.why = "no PCI bus id for the CUDA device";
    return c;
  }
  nvmlDevice_t handle = nullptr;
  unsigned now = 0, max = 0;
  if (nvml.handle_by_bus_id(bus_id, &handle) != 0 || nvml.clock(handle, kNvmlClockSm, &now) != 0 ||
      nvml.max_clock(handle, kNvmlClockSm, &max) != 0) {
    c.why = "NVML could not read the SM clock";
    return c;
  }
  c.available = true;
  c.sm_mhz = static_cast<int>(now);
  c.max_sm_mhz = static_cast<int>(max);
  return c;
}

}  // namespace labkit
