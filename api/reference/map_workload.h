// map_workload.h — the seed-004 elementwise workload, defined once for host and device.
//
// Each element v of column `col` is updated niterations times by the rule of its class col % 4:
//   class 0:  v += sqrt(log(v) + 2)
//   class 1:  v += sqrt(cos(v) + 2)
//   class 2:  v += sqrt(sin(v) + 2)
//   class 3:  v += sqrt(tan(pi/4 * sin(v)) + 2)
// The seed's rule had "+ 1" under the root and a plain tan(v). Both changes are deliberate:
//
// NaN and inf. The seed's tan(v) blows up near pi/2 and then drops below -1 (sqrt of a negative:
// NaN); tan(pi/4 * sin v) stays in [-1, 1]. With "+ 2" every increment is at least 1: v only
// grows, so v >= kMapInputMin = 1 keeps log(v) + 2 >= 2, and no argument can round below zero.
//
// Float against double. With "+ 1" the zeros of cos v + 1 and sin v + 1 are fixed points that
// attract from below and repel from above; a start just above one stands still in float (where
// cos v + 1 rounds to 0) and runs off to the next fixed point in double, so no correct float
// kernel could match the reference there. With "+ 2" there are no fixed points, and each class-
// 1..3 step is a strictly increasing function of v (its derivative stays above 0.2) that commutes
// with v -> v + 2 pi: the lift of a circle diffeomorphism, which is never chaotic. Rounding errors
// therefore do not grow exponentially with the iteration count; tests/unit/test_map_cpu.cpp
// measures the float-vs-double gap over the whole input range.
#pragma once

#include <cmath>
#include <span>

#if defined(__CUDACC__)
#define LABKIT_HOST_DEVICE __host__ __device__
#else
#define LABKIT_HOST_DEVICE
#endif

namespace labkit {

inline constexpr float kQuarterPi = 0.785398163397448309616f;

// One update of a float32 element of class `cls` (0..3): what the GPU kernels compute.
LABKIT_HOST_DEVICE inline float map_step(float v, int cls) {
  float f;
  switch (cls) {
    case 0: f = logf(v); break;
    case 1: f = cosf(v); break;
    case 2: f = sinf(v); break;
    default: f = tanf(kQuarterPi * sinf(v)); break;
  }
  return v + sqrtf(f + 2.0f);
}

// The same update in double: what the reference computes. Class 3 uses the float constant
// widened, so both versions evaluate the same function.
inline double map_step_reference(double v, int cls) {
  double f;
  switch (cls) {
    case 0: f = std::log(v); break;
    case 1: f = std::cos(v); break;
    case 2: f = std::sin(v); break;
    default: f = std::tan(double(kQuarterPi) * std::sin(v)); break;
  }
  return v + std::sqrt(f + 2.0);
}

namespace reference {

// output[r * dimx + c] = input after niterations updates, in double. Multithreaded over rows.
// Throws std::invalid_argument if sizes do not match dimx * dimy.
void map_forward_cpu(std::span<double> output, std::span<const float> input, int dimx, int dimy,
                     int niterations, unsigned threads = 0);

}  // namespace reference
}  // namespace labkit
