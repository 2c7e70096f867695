"""Run kernels on the GPU through PyCUDA: allocate, fill, launch, check, time.

PyCUDA is an optional extra (``pip install warpviz[gpu]``) and is imported only inside
``probe()`` and ``Session``, so importing this module never needs a GPU. A Session owns
one CUDA context and must be used from the thread that created it. CUDA cannot recover
from a kernel fault inside a process, so the CLI and the app use ``ProcessSession``
(``viz.gpu.worker``): the same methods, served by a child process that is replaced after
a fault, a hang or a Cancel.

Launches are described by ``LaunchSpec`` (pure data), so the same description drives a
timed run here and a counted run under Nsight Compute (``viz.gpu.ncu_driver``).
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from . import GpuUnavailable
from .codegen import GeneratedKernel
from .driver import Driver, Kernel, KernelFault
from .plan import NOISY_SPREAD, DeviceLimits, Timing

WARMUP = 3
WARMUP_MS = 100.0           # at least this much GPU time of warm-up launches
MIN_RUNS = 30               # samples of a timed run (each the mean of back-to-back launches)
MAX_RUNS = 200
TIME_BUDGET_S = 1.5         # per timed measurement, beyond the minimum number of samples
SAMPLE_MS = 1.0             # one sample is at least this much GPU time of back-to-back launches
MAX_PER_SAMPLE = 400
MAX_ATTEMPTS = 3            # a noisy timing is retried with 4x longer samples, at most this often
QUEUE_LAUNCHES = 384        # launches queued behind one spin kernel (the driver's queue holds ~1000)
SPIN_SOURCE = r"""
extern "C" __global__ void wv_spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"""
MEMCPY_BYTES = 256 << 20    # the D2D ceiling's size (as in the first H100 probes)
FILL_SOURCE = r"""
extern "C" __global__ void wv_fill(unsigned* p, unsigned long long nwords, unsigned seed) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < nwords;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 0x9E3779B9u ^ (unsigned)(i >> 32) * 0x85EBCA6Bu ^ seed;
        x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
        p[i] = x;
    }
}
"""


# A launch argument's kind -> its struct code for PyCUDA's prepared call.
ARG_FORMATS = {"ptr": "P", "sink": "P", "u64": "Q", "i32": "i", "i64": "q", "tmap": "128s", "u32": "I", "f32": "f",
               "f64": "d", "i8": "b", "i16": "h"}


@dataclass
class LaunchSpec:
    """One kernel launch as data: what the runner and the counters driver both launch."""

    name: str
    cubin: bytes
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    shared: int
    buffer_bytes: int                       # one buffer set's size
    args: list[tuple[str, int]] = field(default_factory=list)  # ("ptr", byte offset) | ("u64", v) | ("i32", v) | ("sink", 0)
    #                                                      | ("tmap", TensorMapSpec json): a tma.load's 128-byte tensor map
    #                                                      | ("f32" | "f64" | "u32" | "i8" | "i16" | "i64", v): a launch file's scalars
    label: str = ""

    def to_json(self) -> dict:
        import base64

        return {"name": self.name, "cubin": base64.b64encode(self.cubin).decode(), "block": list(self.block),
                "grid": list(self.grid), "shared": self.shared, "buffer_bytes": self.buffer_bytes,
                "args": [list(a) for a in self.args], "label": self.label}

    @classmethod
    def from_json(cls, d: dict) -> "LaunchSpec":
        import base64

        return cls(d["name"], base64.b64decode(d["cubin"]), tuple(d["block"]), tuple(d["grid"]), d["shared"],
                   d["buffer_bytes"], [tuple(a) for a in d["args"]], d.get("label", ""))

    @property
    def arg_format(self) -> str:
        return "".join(ARG_FORMATS[k] for k, _ in self.args)


def generated_launch(kernel: GeneratedKernel, cubin: bytes, replicas: int = 1, label: str = "") -> LaunchSpec:
    """The launch of a generated kernel over ``replicas`` copies of its global arrays."""
    args: list[tuple[str, int]] = [("tmap", {**t.to_json(), "replicas": replicas, "replica_bytes": kernel.replica_bytes})
                                   for t in kernel.tensor_maps]
    args += [("ptr", s) for s in kernel.global_starts]
    args += [("u64", kernel.replica_bytes), ("sink", 0), ("i32", 0), ("i32", 1), ("i32", 1)]
    return LaunchSpec(kernel.name, cubin, kernel.block, kernel.launch_grid(replicas), kernel.shared_bytes,
                      kernel.replica_bytes * replicas, args, label)


# ---------------------------------------------------------------------------- probing


def _import_driver():
    try:
        import pycuda.driver as cuda  # noqa: PLC0415
    except ImportError as err:
        text = str(err)
        if "libcuda" in text:
            raise GpuUnavailable("no NVIDIA driver: PyCUDA cannot load libcuda ({detail})", "driver", detail=text) from None
        raise GpuUnavailable("PyCUDA is not installed: install the optional extra with "
                             "`pip install 'warpviz[gpu]'` (needs the CUDA toolkit)", "pycuda") from None
    except OSError as err:
        raise GpuUnavailable("no NVIDIA driver: {detail}", "driver", detail=err) from None
    return cuda


def driver_version_string() -> str | None:
    """The NVIDIA kernel driver's version (e.g. 580.159.04), or None."""
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
        m = re.search(r"Kernel Module(?: for x86_64)?\s+([\d.]+)", text)
        if m:
            return m.group(1)
    except OSError:
        pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def gpu_state() -> dict | None:
    """Clocks, power, temperature and throttle reasons now (nvidia-smi), or None."""
    fields = ["clocks.sm", "clocks.max.sm", "clocks.mem", "power.draw", "temperature.gpu",
              "clocks_event_reasons.active"]
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    vals = [v.strip() for v in out.stdout.strip().splitlines()[0].split(",")]
    return dict(zip(["sm_clock_mhz", "max_sm_clock_mhz", "mem_clock_mhz", "power_w", "temperature_c",
                     "clock_event_reasons"], vals))


def probe() -> dict:
    """The device's description, or GpuUnavailable with the exact reason there is none."""
    cuda = _import_driver()
    try:
        cuda.init()
    except Exception as err:  # pycuda raises its own error types; all mean the same here
        raise GpuUnavailable("the NVIDIA driver did not initialise: {detail}", "driver", detail=err) from None
    try:
        n = cuda.Device.count()
    except Exception as err:
        raise GpuUnavailable("the NVIDIA driver reports no devices: {detail}", "device", detail=err) from None
    if n == 0:
        raise GpuUnavailable("the NVIDIA driver is loaded but there is no CUDA device", "device")
    return device_info(cuda, cuda.Device(0))


def device_info(cuda, dev) -> dict:
    a = cuda.device_attribute
    attrs = dev.get_attributes()
    mem_khz = attrs.get(a.MEMORY_CLOCK_RATE, 0)
    bus = attrs.get(a.GLOBAL_MEMORY_BUS_WIDTH, 0)
    cc = dev.compute_capability()
    drv = cuda.get_driver_version()
    return {
        "name": dev.name(),
        "compute_capability": f"{cc[0]}.{cc[1]}",
        "sm_count": attrs.get(a.MULTIPROCESSOR_COUNT, 0),
        "clock_mhz": round(attrs.get(a.CLOCK_RATE, 0) / 1000),
        "memory_clock_mhz": round(mem_khz / 1000),
        "bus_width_bits": bus,
        "peak_bandwidth_gbs": round(2 * mem_khz * 1e3 * bus / 8 / 1e9, 1),
        "l2_bytes": attrs.get(a.L2_CACHE_SIZE, 0),
        "memory_bytes": dev.total_memory(),
        "max_shared_per_block_optin": attrs.get(a.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0),
        "driver": driver_version_string(),
        "cuda_driver_api": f"{drv // 1000}.{(drv % 1000) // 10}",
    }


# ---------------------------------------------------------------------------- session


class Session:
    """One CUDA context on device 0, used from the thread that created it. Its driver calls
    go through ``self.driver`` (``viz.gpu.driver.Driver``): named, typed methods."""

    def __init__(self, device: int = 0):
        cuda = _import_driver()
        probe()
        self.device_index = device
        self._open(cuda)
        self.info = device_info(cuda, self.dev)

    def _open(self, cuda):
        self.dev = cuda.Device(self.device_index)
        self.ctx = self.dev.make_context()
        self.driver = Driver(cuda)
        self._fill: Kernel | None = None
        self._spin: Kernel | None = None
        self.enqueue_s = 20e-6      # host time to queue one launch (learnt by batch_times)
        self._sink = self.driver.alloc(256)

    @property
    def broken(self) -> bool:
        """Whether a fault has left this context unusable (see ``Driver.guard``)."""
        return self.driver.broken

    def close(self):
        if getattr(self, "ctx", None) is None:
            return
        try:
            self.driver.forget_kernels()
            self._sink = None
            self.ctx.pop()
            self.ctx.detach()
        except Exception:
            pass
        self.ctx = None

    def limits(self) -> DeviceLimits:
        return DeviceLimits(self.info["sm_count"], self.info["l2_bytes"], self.driver.free_bytes())

    # -- kernels ----------------------------------------------------------

    def guard(self, what: str, call):
        """``call()`` with a CUDA failure turned into KernelFault (``Driver.guard``)."""
        return self.driver.guard(what, call)

    def prepare(self, spec: LaunchSpec) -> Kernel:
        """The kernel of ``spec``, its argument layout fixed and its shared memory allowed."""
        k = self.driver.kernel(spec.cubin, spec.name).prepare(spec.arg_format)
        k.allow_shared(spec.shared)
        return k

    def _args(self, spec: LaunchSpec, buffer_ptr: int) -> list:
        out = []
        for kind, v in spec.args:
            if kind == "ptr":
                out.append(buffer_ptr + v)
            elif kind == "sink":
                out.append(int(self._sink))
            elif kind == "tmap":       # tma.load: the tensor map of the tensor in this buffer
                from ..kinds.tensormap import TensorMapError, encode

                try:
                    out.append(encode(v, buffer_ptr + v["start"]))
                except TensorMapError as err:
                    raise KernelFault(str(err)) from None
            else:
                out.append(v)
        return out

    def launch(self, kernel: Kernel, spec: LaunchSpec, buffer_ptr: int) -> None:
        """Queue one launch of ``spec`` (its ``prepare``d ``kernel``) on the buffer set at ``buffer_ptr``."""
        if any(kind == "tmap" for kind, _ in spec.args):
            # A tma.load's 128-byte tensor map goes through cuLaunchKernel's kernelParams (as
            # the CUDA runtime passes it), not PyCUDA's packed parameter buffer: device run 2
            # of 2026-11-23 saw every generated TMA kernel launched that way fail on the H100
            # while the same copy launched by the runtime ran.
            from ..kinds.tensormap import launch_with_kernel_params

            try:
                launch_with_kernel_params(spec, self._args(spec, buffer_ptr))
            except RuntimeError as err:
                raise self.driver.error(str(err)) from None
            return
        kernel.launch(spec.grid, spec.block, *self._args(spec, buffer_ptr), shared=spec.shared)

    def launch_once(self, spec: LaunchSpec, buffer_ptr: int) -> None:
        """Load, launch once on the buffer at ``buffer_ptr`` and wait; KernelFault on a failure
        (what Nsight Compute profiles in ``viz.gpu.ncu_driver``)."""
        kernel = self.guard("loading", lambda: self.prepare(spec))

        def go():
            self.launch(kernel, spec, buffer_ptr)
            self.driver.synchronize()

        self.guard(f"launch of {spec.label or spec.name}", go)

    # -- memory -----------------------------------------------------------

    def alloc(self, nbytes: int):
        return self.driver.alloc(nbytes)

    def fill_random(self, buf, nbytes: int, seed: int = 1):
        if self._fill is None:
            from ..toolchain.compile import compile_cubin

            self._fill = self.driver.kernel(compile_cubin(FILL_SOURCE), "wv_fill")
        words = -(-max(256, nbytes) // 4)
        self._fill.call([buf, np.uint64(words), np.uint32(seed)], grid=(min(65535, -(-words // 256)), 1, 1),
                        block=(256, 1, 1))

    # -- runs -------------------------------------------------------------

    def run_once(self, spec: LaunchSpec, initial: np.ndarray, cancelled=None) -> np.ndarray:
        """Upload ``initial`` as the global buffer, launch once, return the buffer after."""
        drv = self.driver
        size = max(spec.buffer_bytes, 256)
        host = np.zeros(-(-size // 256) * 256, np.uint8)
        host[:initial.size] = initial

        def go():
            buf = drv.alloc_exact(host.size)
            drv.upload(buf, host)
            self.launch(self.prepare(spec), spec, int(buf))
            drv.synchronize()
            out = np.empty_like(host)
            drv.download(out, buf)
            buf.free()
            return out[:initial.size]

        return self.guard(f"launch of {spec.label or spec.name}", go)

    def trace_record(self, req: dict, progress=None) -> dict:
        """Count and record the instrumented kernel of a trace (``viz.trace.record``);
        ``progress("record")`` between the counting and the recording run."""
        from ..trace.record import run_recording

        return run_recording(self, req, progress)

    def trace_check(self, req: dict) -> dict | None:
        """The fault-finding run of a trace (``viz.trace.record.run_fault_check``)."""
        from ..trace.record import run_fault_check

        return run_fault_check(self, req)

    # -- timing -----------------------------------------------------------

    def spin(self, ns: int):
        """Queue a kernel that keeps the GPU busy for ``ns`` nanoseconds (see batch_times)."""
        if self._spin is None:
            from ..toolchain.compile import compile_cubin

            self._spin = self.driver.kernel(compile_cubin(SPIN_SOURCE), "wv_spin").prepare("Q")
        self._spin.launch((1, 1, 1), (1, 1, 1), int(ns))

    def batch_times(self, launch, per_sample: int, samples: int) -> tuple[list[float], bool]:
        """Milliseconds per launch of ``samples`` samples, each ``per_sample`` launches
        back to back (``launch(i)`` queues launch i), and whether the GPU may have waited
        for the host.

        Launches are queued behind a spin kernel that holds the GPU until the host has
        queued them all, so they run back to back: a sample's time is GPU time only, never
        the host's (Python's) time to queue a launch. Timing each launch between its own
        pair of events, as warpviz did first, also measured the host's gap between the start
        event and the launch whenever the GPU had caught up with Python (a 9 us copy
        showed a 109% spread, a 0.04 ms loop 49%)."""
        drv = self.driver
        out: list[float] = []
        starved = False
        group = max(1, min(samples, QUEUE_LAUNCHES // max(1, per_sample)))
        done = idx = 0
        retried = False
        while done < samples:
            g = min(group, samples - done)
            n = g * per_sample
            self.spin(int(min(0.25, 5e-4 + 2.0 * n * self.enqueue_s) * 1e9))
            evs = [drv.event() for _ in range(g + 1)]
            t0 = time.perf_counter()
            evs[0].record()
            for s in range(g):
                for _ in range(per_sample):
                    launch(idx)
                    idx += 1
                evs[s + 1].record()
            host_s = time.perf_counter() - t0
            late = evs[0].query()   # the spin ended before everything was queued
            evs[-1].synchronize()
            self.enqueue_s = max(1e-6, host_s / n)
            if late and not retried:
                retried = True      # once more with the spin sized by the measured queueing time
                continue
            starved = starved or late
            out += [evs[s].time_till(evs[s + 1]) / per_sample for s in range(g)]
            done += g
        return out, starved

    def time_launch(self, spec: LaunchSpec, sets: int = 1, min_runs: int = MIN_RUNS,
                    cancelled=lambda: False, initial: np.ndarray | None = None) -> Timing:
        """Timed launches rotating over ``sets`` buffer sets, scaled until repeatable.

        After a warm-up of ``WARMUP_MS`` of launches (clocks ramped, module loaded, TLBs
        warm), a sample is the mean time of enough back-to-back launches to take
        ``SAMPLE_MS`` (``batch_times``: GPU time only); ``min_runs`` or more samples are
        taken within ``TIME_BUDGET_S``. When their spread ((p90 - p10) / median) is
        ``NOISY_SPREAD`` or more, the run is repeated with samples 4 times longer, up to
        ``MAX_ATTEMPTS`` in all; a spread that stays high is recorded as noisy.

        ``initial`` (bytes): every buffer set starts as these bytes (a launch file's own
        fills: a traced launch, ``viz.gpu.tracebench``) instead of random words."""
        kernel = self.guard("loading", lambda: self.prepare(spec))
        bufs = [self.alloc(spec.buffer_bytes) for _ in range(max(1, sets))]
        what = f"launch of {spec.label or spec.name}"
        try:
            for k, b in enumerate(bufs):
                if initial is None:
                    self.fill_random(b, spec.buffer_bytes, seed=k + 1)
                else:
                    host = np.zeros(max(256, -(-spec.buffer_bytes // 256) * 256), np.uint8)
                    data = np.asarray(initial, np.uint8).ravel()[:host.size]
                    host[:data.size] = data
                    self.driver.upload(b, host)

            def launch(i: int):
                self.launch(kernel, spec, int(bufs[i % len(bufs)]))

            return self.guard(what, lambda: self._scaled_timing(launch, min_runs, cancelled))
        finally:
            for b in bufs:
                try:
                    b.free()
                except Exception:
                    pass

    def _scaled_timing(self, launch, min_runs: int, cancelled) -> Timing:
        warm, _ = self.batch_times(launch, WARMUP, 1)
        est = max(1e-4, warm[0])
        extra = int(min(4000, WARMUP_MS / est))
        if extra > 0:
            per = min(MAX_PER_SAMPLE, extra)
            self.batch_times(launch, per, max(1, extra // per))
        if cancelled():
            raise KeyboardInterrupt
        per_sample = max(1, min(MAX_PER_SAMPLE, round(SAMPLE_MS / est)))
        best = None
        for attempt in range(1, MAX_ATTEMPTS + 1):
            sample_ms = per_sample * est
            # what a sample costs in wall time: its GPU time, the host's queueing (while
            # the spin kernel waits) and the spin's floor
            cost_ms = sample_ms + 1e3 * per_sample * self.enqueue_s + 0.5
            samples = int(min(MAX_RUNS, max(min_runs, TIME_BUDGET_S * 1e3 / cost_ms)))
            times, starved = self.batch_times(launch, per_sample, samples)
            t = Timing(tuple(times), launches_per_sample=per_sample, attempts=attempt, starved=starved)
            if best is None or t.spread < best.spread:
                best = t
            if t.spread < NOISY_SPREAD or cancelled():
                return t
            if per_sample >= MAX_PER_SAMPLE or sample_ms * 4 * min_runs > 4e3 * TIME_BUDGET_S:
                break
            per_sample = min(MAX_PER_SAMPLE, per_sample * 4)
        return replace(best, attempts=attempt)

    def time_memcpy(self, nbytes: int = MEMCPY_BYTES, runs: int = MIN_RUNS, cancelled=None) -> Timing:
        """Device-to-device cudaMemcpy of ``nbytes``: the bandwidth ceiling (read + write)."""
        src, dst = self.alloc(nbytes), self.alloc(nbytes)
        try:
            self.fill_random(src, nbytes)

            def launch(_i: int):
                self.driver.copy_async(dst, src, nbytes)

            return self.guard("cudaMemcpy", lambda: self._scaled_timing(launch, runs, cancelled or (lambda: False)))
        finally:
            src.free()
            dst.free()


def random_bytes(nbytes: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8)


__all__ = ["Session", "LaunchSpec", "generated_launch", "probe", "KernelFault", "random_bytes",
           "driver_version_string"]
