// map_cpu.cpp — the double-precision reference of the seed-004 map workload (map_workload.h).
//
// Each element starts from its float input and takes niterations steps of map_step_reference in
// double. Rows are independent, so they are spread over threads; every element is computed by
// the same sequence of operations whatever the thread count, so the result is reproducible.
#include <stdexcept>
#include <string>

#include "reference/map_workload.h"
#include "reference/parallel.h"

namespace labkit::reference {

void map_forward_cpu(std::span<double> output, std::span<const float> input, int dimx, int dimy,
                     int niterations, unsigned threads) {
  if (dimx < 0 || dimy < 0 || niterations < 0) {
    throw std::invalid_argument("map_forward_cpu: negative argument (dimx=" + std::to_string(dimx) +
                                " dimy=" + std::to_string(dimy) +
                                " niterations=" + std::to_string(niterations) + ")");
  }
  const std::size_t width = std::size_t(dimx);
  const std::size_t n = width * std::size_t(dimy);
  if (input.size() != n || output.size() != n) {
    throw std::invalid_argument("map_forward_cpu: input has " + std::to_string(input.size()) +
                                " and output " + std::to_string(output.size()) + " elements, " +
                                std::to_string(dimy) + " rows x " + std::to_string(dimx) +
                                " columns need " + std::to_string(n));
  }
  parallel_for(
      std::size_t(dimy),
      [&](std::size_t row) {
        for (std::size_t col = 0; col < width; ++col) {
          const int cls = static_cast<int>(col % 4);  // the class is the column's, not the index's
          double v = input[row * width + col];
          for (int it = 0; it < niterations; ++it) v = map_step_reference(v, cls);
          output[row * width + col] = v;
        }
      },
      threads);
}

}  // namespace labkit::reference
