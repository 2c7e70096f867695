// Launches one of a few kernels the cost model is checked on, back to back, so that
// tools/gpu/ncu_breakdown.sh can time it and run Nsight Compute on one of its launches.
// Driver API only (no PyCUDA): the kernels come as PTX files, JIT-compiled by the driver.
//
//   ncu_breakdown CASE PTX [LAUNCHES]
//
// CASE (the launch, as the shipped measurements time it):
//   triton_matmul_2048   matmul_kernel of tests/data/ptx/triton_matmul.ptx (Triton 3.6, fp16,
//                        64x64x32 tiles, 3 stages), M = N = K = 2048: grid 1024 x 128, 24 KiB shared
//   sgemm_tile16_128     sgemm_tile16 of kernels/trace/sgemm_tile16.cu, N = 128: grid 8x8 x 16x16
//   sgemm_tile16_rolled_128   the same with the k loop rolled
//   sgemm_tile16_1024    sgemm_tile16, N = 1024: grid 64x64 x 16x16
//   wv_read_l2           kernels/calibrate/calibrate.cu's coalesced L2 read (l2_read_gbps)
//   wv_l2_scatter        its one-sector L2 requests (l2_scatter_gsectors)
//   wv_l2_cpasync_128, wv_l2_cpasync_64   cp.async.cg of an L2-resident buffer, 4 or 2 sectors
//                        per request (tools/gpu/ncu_breakdown_kernels.cu)
//   wv_l2_partial        calibrate.cu's naive-transpose column write (l2_partial_gstores)
//   wv_st_S_F            wv_st_fields of ncu_breakdown_kernels.cu: F scalar stores per thread,
//                        structs of S words, 8 MiB L2-resident, 16 passes
//   aos28_1m, aos32_1m   particles_aos28 / particles_aos32 of kernels/trace/particles_aos.cu over
//                        1,048,576 particles (grid 8192 x 128)
//
// Prints the median time of a launch over 20 samples of LAUNCHES (default 50) back-to-back
// launches on the same buffers (so data that fits stays in L2, as bench's resident entries).
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CK(x)                                                                        \
    do {                                                                             \
        CUresult r_ = (x);                                                           \
        if (r_ != CUDA_SUCCESS) {                                                    \
            const char* s_ = nullptr;                                                \
            cuGetErrorString(r_, &s_);                                               \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
            std::exit(1);                                                            \
        }                                                                            \
    } while (0)

static CUdeviceptr alloc_fill(size_t bytes, unsigned seed, bool half) {
    CUdeviceptr p;
    CK(cuMemAlloc(&p, bytes));
    std::vector<unsigned short> h16;
    std::vector<float> h32;
    unsigned x = seed * 2654435761u + 1u;
    if (half) {
        h16.resize(bytes / 2);
        for (auto& v : h16) {
            x = x * 1664525u + 1013904223u;
            v = (unsigned short)(0x3800 + ((x >> 16) & 0x3ff));   // 0.5 .. 1.0 in fp16
        }
        CK(cuMemcpyHtoD(p, h16.data(), bytes));
    } else {
        h32.resize(bytes / 4);
        for (auto& v : h32) {
            x = x * 1664525u + 1013904223u;
            v = (float)((x >> 8) & 0xffff) / 65536.0f;
        }
        CK(cuMemcpyHtoD(p, h32.data(), bytes));
    }
    return p;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s CASE PTX [LAUNCHES]\n", argv[0]);
        return 2;
    }
    const std::string which = argv[1];
    const int per_sample = argc > 3 ? std::atoi(argv[3]) : 50;
    std::ifstream f(argv[2]);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string ptx = ss.str();
    if (ptx.empty()) {
        std::fprintf(stderr, "cannot read %s\n", argv[2]);
        return 2;
    }
    CK(cuInit(0));
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CUmodule mod;
    CK(cuModuleLoadData(&mod, ptx.c_str()));
    int sms = 0;
    CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));

    std::string kname;
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, shared = 0;
    std::vector<void*> args;
    // storage for the arguments (their addresses go to cuLaunchKernel)
    CUdeviceptr p0 = 0, p1 = 0, p2 = 0, p3 = 0, null_ptr = 0;
    int i0 = 0, i1 = 0, i2 = 0, i3 = 0, i4 = 0, i5 = 0;
    unsigned long long u0 = 0;
    unsigned w0 = 0;
    double sector_bytes = 0;       // L2 sector bytes a launch moves (the calibration kernels), for the rate

    if (which == "triton_matmul_2048") {
        const int n = 2048;
        kname = "matmul_kernel";
        p0 = alloc_fill((size_t)n * n * 2, 1, true);
        p1 = alloc_fill((size_t)n * n * 2, 2, true);
        p2 = alloc_fill((size_t)n * n * 2, 3, true);
        i0 = i1 = i2 = n;          // M, N, K
        i3 = i4 = i5 = n;          // stride_am, stride_bk, stride_cm
        grid[0] = (n / 64) * (n / 64);
        block[0] = 128;
        shared = 24576;
        args = {&p0, &p1, &p2, &i0, &i1, &i2, &i3, &i4, &i5, &null_ptr, &null_ptr};
    } else if (which.rfind("sgemm_tile16", 0) == 0) {
        const bool rolled = which.find("rolled") != std::string::npos;
        const int n = which.find("1024") != std::string::npos ? 1024 : 128;
        kname = rolled ? "sgemm_tile16_rolled" : "sgemm_tile16";
        p0 = alloc_fill((size_t)n * n * 4, 1, false);
        p1 = alloc_fill((size_t)n * n * 4, 2, false);
        p2 = alloc_fill((size_t)n * n * 4, 3, false);
        i0 = n;
        grid[0] = grid[1] = n / 16;
        block[0] = block[1] = 16;
        args = {&p0, &p1, &p2, &i0};
    } else if (which == "wv_read_l2") {
        kname = "wv_read_l2";
        p0 = alloc_fill(12u << 20, 1, false);
        p3 = alloc_fill(256, 9, false);
        u0 = (12u << 20) / 16;
        i0 = 128;                  // passes
        grid[0] = sms * 4;
        block[0] = 512;
        args = {&p0, &u0, &i0, &p3};
        sector_bytes = (double)(12u << 20) * 128;
    } else if (which == "wv_l2_scatter") {
        kname = "wv_l2_scatter";
        p0 = alloc_fill(64u << 20, 1, false);
        p3 = alloc_fill(256, 9, false);
        w0 = (1u << 18) - 1;       // mask: 8 MiB of sectors, L2-resident
        i0 = 64;                   // iters
        grid[0] = sms * 4;
        block[0] = 512;
        args = {&p0, &w0, &i0, &p3};
        sector_bytes = (double)sms * 4 * 512 * 64 * 4 * 32;
    } else if (which.rfind("wv_l2_cpasync_", 0) == 0) {
        kname = "wv_l2_cpasync";
        p0 = alloc_fill(12u << 20, 1, false);
        p3 = alloc_fill(256, 9, false);
        u0 = 12u << 20;
        i0 = which == "wv_l2_cpasync_64" ? 64 : 128;   // row bytes
        i1 = 64;                   // passes
        grid[0] = sms * 4;
        block[0] = 512;
        args = {&p0, &u0, &i0, &i1, &p3};
        sector_bytes = (double)(12u << 20) * 64;
    } else if (which == "wv_l2_partial") {
        kname = "wv_l2_partial";
        p0 = alloc_fill(8u << 20, 1, false);
        w0 = 2048;                 // rows of 1024 floats: 8 MiB, L2-resident
        i0 = 64;                   // iters
        grid[0] = sms * 4;
        block[0] = 512;
        args = {&p0, &w0, &i0};
    } else if (which.rfind("wv_st_", 0) == 0) {
        kname = "wv_st_fields";
        int s = 0, f = 0;
        if (std::sscanf(which.c_str(), "wv_st_%d_%d", &s, &f) != 2 || s < 1 || f < 1 || f > 8 || f > s) {
            std::fprintf(stderr, "bad case %s (wv_st_STRIDE_FIELDS)\n", which.c_str());
            return 2;
        }
        p0 = alloc_fill(8u << 20, 1, false);
        w0 = (8u << 20) / 4 / (unsigned)s;     // threads' structs in 8 MiB
        i0 = s;
        i1 = f;
        i2 = 16;                   // passes
        grid[0] = sms * 4;
        block[0] = 512;
        args = {&p0, &w0, &i0, &i1, &i2};
    } else if (which == "aos28_1m" || which == "aos32_1m") {
        const int n = 1 << 20;
        const bool a28 = which == "aos28_1m";
        kname = a28 ? "particles_aos28" : "particles_aos32";
        p0 = alloc_fill((size_t)n * (a28 ? 28 : 32), 1, false);
        i0 = n;
        static float dt = 0.01f;
        grid[0] = n / 128;
        block[0] = 128;
        args = {&p0, &i0, &dt};
    } else {
        std::fprintf(stderr, "unknown case %s\n", which.c_str());
        return 2;
    }
    CUfunction fn;
    CK(cuModuleGetFunction(&fn, mod, kname.c_str()));
    int regs = 0;
    CK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn));
    auto launch = [&]() {
        CK(cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, 0, args.data(),
                          nullptr));
    };
    for (int i = 0; i < 5; ++i) launch();     // warm-up (and what ncu --launch-skip 5 skips)
    CK(cuCtxSynchronize());
    CUevent a, b;
    CK(cuEventCreate(&a, 0));
    CK(cuEventCreate(&b, 0));
    std::vector<float> us;
    for (int s = 0; s < 20; ++s) {
        CK(cuEventRecord(a, 0));
        for (int i = 0; i < per_sample; ++i) launch();
        CK(cuEventRecord(b, 0));
        CK(cuEventSynchronize(b));
        float ms = 0;
        CK(cuEventElapsedTime(&ms, a, b));
        us.push_back(1e3f * ms / per_sample);
    }
    std::sort(us.begin(), us.end());
    std::printf("%s: kernel %s, grid %ux%u, block %ux%u, %u B dynamic shared, %d registers: median %.3f us per "
                "launch (p10 %.3f, p90 %.3f) over 20 x %d back-to-back launches\n",
                which.c_str(), kname.c_str(), grid[0], grid[1], block[0], block[1], shared, regs, us[10], us[2],
                us[17], per_sample);
    if (sector_bytes > 0)
        std::printf("%s: %.1f G sectors/s, %.0f GB/s of sectors through L2\n", which.c_str(),
                    sector_bytes / 32 / (us[10] * 1e-6) / 1e9, sector_bytes / (us[10] * 1e-6) / 1e9);
    return 0;
}
