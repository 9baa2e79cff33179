// labkit/map.h — the elementwise ("map") lab API: the seed-004 transcendental workload.
//
// Contract
//   * data is a device array of dimy rows x dimx columns, float32, row-major; updated in place.
//   * Every element is updated niterations times by the rule of its column class (column % 4),
//     exactly as labkit::map_step() in reference/map_workload.h defines it. Classes depend on the
//     column only, so a float4 of four consecutive columns holds one element of each class when
//     the row starts at a multiple of 4 — but dimx need not be a multiple of 4.
//   * The generated inputs lie in [kMapInputMin, kMapInputMax); on that range no class yields
//     NaN or inf for any number of iterations (see reference/map_workload.h for why).
//   * Timed region: map_forward_gpu itself (device-resident), like a conv lab's Op Time.
#pragma once

namespace labkit {

inline constexpr float kMapInputMin = 1.0f;
inline constexpr float kMapInputMax = 8.0f;

void map_forward_gpu(float* device_data, int dimx, int dimy, int niterations);

struct MapOps {
  const char* name;
  void (*forward)(float* device_data, int dimx, int dimy, int niterations);
};

}  // namespace labkit
