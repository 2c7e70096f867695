// Shared helpers of the hand-written warpviz kernels (kernels/*.cu).
// Each kernel is a readable, faithful copy of a built-in scenario: the same launch, the
// same arrays (a pointer to element 0, which the runner places at the scenario's
// 256-byte aligned start + offset) and the same memory instructions, in the same number.
#pragma once

// The linear thread index of a 1-D launch.
__device__ __forceinline__ int global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

// `if (cond)` as the scenario means it: a warp with no active lane branches over the body
// instead of issuing it with every lane predicated off. nvcc turns short `if` bodies into
// predication, and Nsight Compute counts a predicated-off shared instruction as executed
// (measured on H100: 2,064 shared loads instead of 400 in reduce_tree), while the
// scenario, like the model, issues nothing for such a warp. ptxas never predicates a
// loop whose trip count it cannot know, so the body runs in a loop over gridDim.z (1 in
// every launch of these kernels) behind a warp vote. Blocks are whole warps here.
#define WARP_IF(cond)                                                          \
    if (__any_sync(0xffffffffu, (cond)))                                       \
        _Pragma("unroll 1") for (unsigned wv_once_ = 0; wv_once_ < gridDim.z; ++wv_once_) \
            if (cond)
