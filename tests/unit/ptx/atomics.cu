// nvcc -ptx -arch=compute_90 -std=c++20 atomics.cu -o atomics.ptx
// Input-channel reduction with atomics (lab 07). When atomicAdd's return value is unused the
// compiler emits a reduction (red.), when it is used an atomic (atom.): both kernels are here.

__global__ void atomic_reduce_kernel(float* out, const float* partial, int C, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int c = blockIdx.y;
  if (i >= n || c >= C) return;
  atomicAdd(&out[i], partial[c * n + i]);  // result discarded
}

__global__ void atomic_ticket_kernel(float* out, int* order, float* sum, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float before = atomicAdd(sum, in[i]);  // result used
  out[i] = before;
  order[i] = atomicAdd(order + n, 1);
}
