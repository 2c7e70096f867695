// Shared helpers of the hand-written warpviz kernels (kernels/*.cu).
// Each kernel is a readable, faithful copy of a built-in scenario: the same launch, the
// same arrays (a pointer to element 0, which the runner places at the scenario's
// 256-byte aligned start + offset) and the same memory instructions, in the same number.
#pragma once

// The linear thread index of a 1-D launch.
__device__ __forceinline__ int global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }
