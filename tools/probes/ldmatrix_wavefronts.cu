// ldmatrix / stmatrix probe kernels for Nsight Compute (ldmatrix_wavefronts.sh).
//
// One kernel per instruction form: op (ldmatrix / stmatrix) x num (.x1/.x2/.x4) x .trans,
// m8n8 b16. Each thread reads its row byte offset (into a 1024-byte aligned 32 KiB shared
// buffer) from a global table, executes exactly ONE ldmatrix or stmatrix with it, and
// (ldmatrix) writes what it got to global memory, so the only shared-memory instruction of
// a kernel is the one under test. Every lane of every warp executes it (.sync.aligned).
//
// The host part reads a case file written by ldmatrix_wavefronts.py (one case a line:
//   name op num trans warps off0 off1 ... off(32*warps-1)
// ) and launches one block per case, in order, cases [first, last). Build:
//   nvcc -O3 -arch=sm_90a -o ldmatrix_wavefronts ldmatrix_wavefronts.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <fstream>
#include <sstream>
#include <cuda_runtime.h>

#define SMEM_BYTES 32768

template <int OP, int NUM, int TRANS>
__global__ void __launch_bounds__(1024) probe(const unsigned *__restrict__ offs, unsigned *__restrict__ out) {
    __shared__ __align__(1024) unsigned char smem[SMEM_BYTES];
    const unsigned t = threadIdx.x;
    const unsigned off = offs[t];
    const unsigned addr = (unsigned)__cvta_generic_to_shared(smem) + off;
    unsigned r0 = 0, r1 = 0, r2 = 0, r3 = 0;
    if (OP == 0) {
        if (NUM == 1 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr) : "memory");
        if (NUM == 2 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr) : "memory");
        if (NUM == 4 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory");
        if (NUM == 1 && TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr) : "memory");
        if (NUM == 2 && TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr) : "memory");
        if (NUM == 4 && TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory");
        out[t] = r0 + 3u * r1 + 5u * r2 + 7u * r3;
    } else {
        r0 = off * 3u + 1u; r1 = off ^ 0x5555u; r2 = off + t; r3 = t * 7u;
        if (NUM == 1 && !TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r0) : "memory");
        if (NUM == 2 && !TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1,%2};" :: "r"(addr), "r"(r0), "r"(r1) : "memory");
        if (NUM == 4 && !TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};" :: "r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
        if (NUM == 1 && TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r0) : "memory");
        if (NUM == 2 && TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1,%2};" :: "r"(addr), "r"(r0), "r"(r1) : "memory");
        if (NUM == 4 && TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};" :: "r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
    }
}

typedef void (*kern_t)(const unsigned *, unsigned *);

static kern_t pick(int op, int num, int trans) {
#define K(O, N, T) if (op == O && num == N && trans == T) return probe<O, N, T>;
    K(0, 1, 0) K(0, 2, 0) K(0, 4, 0) K(0, 1, 1) K(0, 2, 1) K(0, 4, 1)
    K(1, 1, 0) K(1, 2, 0) K(1, 4, 0) K(1, 1, 1) K(1, 2, 1) K(1, 4, 1)
#undef K
    return nullptr;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s CASES [first [last]]\n", argv[0]); return 2; }
    std::ifstream in(argv[1]);
    if (!in) { fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
    const int first = argc > 2 ? atoi(argv[2]) : 0;
    const int last = argc > 3 ? atoi(argv[3]) : 1 << 30;
    unsigned *d_offs = nullptr, *d_out = nullptr;
    cudaMalloc(&d_offs, 1024 * sizeof(unsigned));
    cudaMalloc(&d_out, 1024 * sizeof(unsigned));
    std::string line;
    int index = -1, failures = 0, launched = 0;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        ++index;
        if (index < first || index >= last) continue;
        std::istringstream ls(line);
        std::string name; int op, num, trans, warps;
        ls >> name >> op >> num >> trans >> warps;
        std::vector<unsigned> offs(32 * warps);
        for (auto &o : offs) ls >> o;
        kern_t k = pick(op, num, trans);
        if (!ls || !k || warps < 1 || warps > 32) { fprintf(stderr, "bad case line %d\n", index); ++failures; continue; }
        for (unsigned o : offs) if (o % 16 || o + 16 > SMEM_BYTES) { fprintf(stderr, "bad offset in case %d\n", index); return 2; }
        cudaMemcpy(d_offs, offs.data(), offs.size() * sizeof(unsigned), cudaMemcpyHostToDevice);
        k<<<1, 32 * warps>>>(d_offs, d_out);
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) { fprintf(stderr, "case %d %s: %s\n", index, name.c_str(), cudaGetErrorString(e)); return 1; }
        printf("ldmatrix-case %d %s\n", index, name.c_str());
        ++launched;
    }
    printf("ldmatrix-launched %d\n", launched);
    return failures ? 1 : 0;
}
