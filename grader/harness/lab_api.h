// lab_api.h — which conv interface the linked lab defines, as one ConvOps for the harness.
//
// Contract
//   * A conv lab defines either labkit's three free functions (labkit/conv.h) or the course's
//     GPUInterface methods (gpu-new-forward.h), in kernel.cu or any .cu beside it. Both sets are
//     weak references here, so the harness links either way and this decides at run time: labkit's
//     when all three are defined, else the course's when all three methods are, else neither.
//   * The course's methods get the shape as (Batch, Map_out, Channel, Height, Width, K), on an
//     object of the harness's own; get_device_properties, where defined, runs once before the
//     first prolog (its output is the lab's log).
//   * With neither, every phase throws std::invalid_argument naming what is missing (the lab's
//     failure, verdict lab-error): a lab that forgot a phase still builds and is told why.
//   * The member functions are reached through their Itanium-ABI names with `this` as the first
//     argument (x86-64 and aarch64 Linux, the kit's platforms): a lab's own copy of the course's
//     header works the same, only the names and signatures matter.
#pragma once

#include <string>

#include "labkit/conv.h"

namespace labkit::harness {

enum class ConvApi { labkit, course, none };

struct LabConv {
  ConvOps ops;
  ConvApi api;
  std::string missing;  // what is not defined, for the message (empty unless api is none)
};

// The phases of the lab linked into this executable, named `id` in its ConvOps.
LabConv lab_conv(const char* id);

}  // namespace labkit::harness
