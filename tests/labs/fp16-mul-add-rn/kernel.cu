// Honest: lab 09's solution with each paired multiply-add written as __hmul2_rn then __hadd2_rn,
// as the lab's hint allows ("or __hmul2 and __hadd2"). The _rn forms forbid contraction into an
// fma, so the GPU executes HMUL2 and HADD2 where the solution executes HFMA2: a counter check that
// read half FMAs alone would see almost none. Expected verdict: passed, with executed counters
// covering the multiply-adds (lab.json counts HFMA and HMUL instructions).
#include <cuda_fp16.h>

// After cuda_fp16.h (its include guard keeps the solution's own include from seeing the macro):
// every __hfma2(a, b, c) of the solution becomes a rounded product, then a rounded sum.
#define __hfma2(a, b, c) __hadd2_rn((c), __hmul2_rn((a), (b)))
#include "../../../solutions/09-fp16/kernel.cu"
#undef __hfma2
