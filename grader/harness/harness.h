// grader/harness/harness.h — the untrusted side: the only kit code linked with a student's kernel.cu.
//
// The judge starts the harness executable (one per lab folder: entry_conv.cpp or entry_map.cpp,
// the harness library and that kernel.cu) as a sandboxed child with the channel on fds 3 and 4
// and the tensor file on fd 5 (grader/protocol/wire.h). serve() says hello and then executes
// requests: fill inputs, run the lab's phases, record CUDA-event times, copy outputs and guard
// bytes into the tensor file, reply. It decides nothing: no tolerance, no reference, no verdict,
// no score lives on this side, and everything it replies is checked by the judge.
//
// The requests, by "op" (JSON payloads; offsets are byte offsets into the tensor file):
//   ping                          -> done {}
//   conv check  {shape, memory, in, mask, out, dev_in1, dev_mask1, dev_in2, dev_mask2,
//                host_in, host_mask, layer?, record?}   one whole checked call (grader/harness/conv_run.h's
//                steps; with layer, a Layer Time lab's, the device output is not poisoned after the
//                prolog), every intermediate copied out for the judge to compare, the lab's device
//                buffers as far as they reach (0xFF bytes past that, or for a null pointer)
//                -> done {guards, activity?}
//   conv prepare {shape, memory, input: {seed, lo, hi} | {offset}, mask: {...}, spacer}
//                fresh host data, then the lab's prolog and the output poisoned -> done {}
//   conv run    {refill?: {seed, lo, hi}}  the device input refilled from that seed and the output
//                poisoned again (then the legacy stream synchronized), forward between CUDA events,
//                device synchronize, digest -> done {event_ms, host_ms, digest}
//   conv finish {out}  epilog, output copied out -> done {guards}
//   conv layer  {out, record?}  prolog + forward + epilog under the host clock (layer-timed
//                labs; `prepare` made the pinned host arrays), output copied out before the
//                reply -> done {host_ms, activity?}
// `--reserve-pinned=N1,N2` before `--channel`: pinned host arrays of those float counts, made
// before hello (their pages during CUDA's start-up); each serves any later prepare whose array it
// can hold (the network program's conv1 input and output).
//   map  check  {dims, in, out}; map prepare {dims, seed}; map run; map finish {out}
// A lab that throws gets `failed` {kind: "cuda"|"lab", code, name, phase, message}.
#pragma once

#include "labkit/conv.h"
#include "labkit/map.h"

namespace labkit::harness {

struct LabProgram {
  const char* id;       // the lab folder's name, sent in hello
  const ConvOps* conv;  // exactly one of conv and map is set
  const MapOps* map;
};

// The harness executable's main: `--channel` serves the judge; `--profile lab|baseline
// --profile-case N --batch B --seed S` runs one op for Nsight Compute (labkit profile).
int main(int argc, char** argv, const LabProgram& lab);

}  // namespace labkit::harness
