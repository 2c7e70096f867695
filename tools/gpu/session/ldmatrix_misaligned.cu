// Does the H100 fault on an ldmatrix / stmatrix row address that is not 16-byte aligned?
// (warpviz refuses such a scenario, saying the GPU faults.) One launch per
// process, since a fault ends the context:  ldmatrix_misaligned MODE
//   MODE 0: ldmatrix.x4, every lane's row 8 bytes off      1: stmatrix.x4, the same
//   MODE 2: ldmatrix.x1, lanes 0-7 aligned, lanes 8-31 8 bytes off (addresses .x1 ignores)
//   MODE 3: ldmatrix.x4, all aligned (control)
// Prints "MODE n: <CUDA error string>". Build: nvcc -O3 -arch=sm_90a -o ldmatrix_misaligned ldmatrix_misaligned.cu
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void k(int mode, unsigned *out) {
    __shared__ __align__(1024) unsigned char smem[8192];
    const unsigned lane = threadIdx.x & 31;
    unsigned off = lane * 16;
    if (mode == 0 || mode == 1) off += 8;
    if (mode == 2 && lane >= 8) off += 8;
    const unsigned addr = (unsigned)__cvta_generic_to_shared(smem) + off;
    unsigned r0 = lane, r1 = 1, r2 = 2, r3 = 3;
    if (mode == 1) {
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};" :: "r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
    } else if (mode == 2) {
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr) : "memory");
    } else {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory");
    }
    out[threadIdx.x] = r0 + r1 + r2 + r3;
}

int main(int argc, char **argv) {
    const int mode = argc > 1 ? atoi(argv[1]) : 3;
    unsigned *out = nullptr;
    cudaMalloc(&out, 32 * sizeof(unsigned));
    k<<<1, 32>>>(mode, out);
    cudaError_t e = cudaDeviceSynchronize();
    printf("MODE %d: %s\n", mode, cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
