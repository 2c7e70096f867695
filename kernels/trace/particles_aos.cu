// AoS particle update: one thread per particle reads and writes its whole struct.
// Particle is 28 bytes (no padding: 4-byte loads and stores, neighbours 28 bytes apart);
// Particle32 adds a pad word and 16-byte alignment (two 16-byte loads/stores per thread).
struct Particle { float px, py, pz, vx, vy, vz, mass; };
struct __align__(16) Particle32 { float px, py, pz, vx, vy, vz, mass, pad; };

template <class P>
__device__ void step(P* p, int n, float dt, float gx, float gy, float gz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    P q = p[i];
    float a = 1.0f / q.mass;
    q.vx += gx * a * dt; q.vy += gy * a * dt; q.vz += gz * a * dt;
    q.px += q.vx * dt;   q.py += q.vy * dt;   q.pz += q.vz * dt;
    p[i] = q;
}

extern "C" __global__ void particles_aos28(Particle* p, int n, float dt) { step(p, n, dt, 0.0f, -9.8f, 0.5f); }
extern "C" __global__ void particles_aos32(Particle32* p, int n, float dt) { step(p, n, dt, 0.0f, -9.8f, 0.5f); }
