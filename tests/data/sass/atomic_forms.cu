// The forms of atomicAdd that ptxas compiles differently (tests/test_trace_reconcile.py reads
// their PTX and nvdisasm -gp SASS in this folder): on a warp-uniform address it aggregates
// the warp's lanes into one lane's atomic; on a per-lane address every lane does its own.
#define K(name, body) extern "C" __global__ void name(int* g, int* out, int v) {                   \
    __shared__ int s[1024];                                                                      \
    const int t = threadIdx.x;                                                                   \
    s[t] = 0;                                                                                    \
    __syncthreads();                                                                             \
    body;                                                                                        \
    __syncthreads();                                                                             \
    out[t] = s[t];                                                                               \
}
K(s_uniform_one_unused, atomicAdd(&s[0], 1))
K(s_uniform_one_used, out[t + 1024] = atomicAdd(&s[0], 1))
K(s_uniform_v_unused, atomicAdd(&s[0], v + t))
K(s_uniform_v_used, out[t + 1024] = atomicAdd(&s[0], v + t))
K(s_lane_one_unused, atomicAdd(&s[t], 1))
K(s_lane_v_used, out[t + 1024] = atomicAdd(&s[t], v + t))
K(g_uniform_one_unused, atomicAdd(&g[0], 1))
K(g_uniform_v_used, out[t + 1024] = atomicAdd(&g[0], v + t))
K(g_lane_one_unused, atomicAdd(&g[t], 1))
K(g_lane_v_used, out[t + 1024] = atomicAdd(&g[t], v + t))
K(g_block_one_unused, atomicAdd(&g[blockIdx.x], 1))
