"""The cost model: a launch's time from the model's counts, as a list of explained terms.

Every GPU unit that a launch keeps busy gives a *term*: the time that unit alone would
need. The slowest term bounds the launch, and the prediction says which one and by how
much ("bound by shared wavefronts: 0.26 ms of 0.27 ms"). All terms come from what the
engine knows about the scenario (its addresses, counts and launch), the compiled kernel
(registers, shared memory) and per-device figures (``viz.gpu.calibration``, with the
documented defaults below while a device has no calibration file). No term reads a
measured time or a measured counter of the launch it predicts.

Throughput terms (each spread over the SMs that have blocks):

* **DRAM**: bytes DRAM must move / DRAM bandwidth. The bytes come from ``viz.gpu.reuse``:
  every 64-byte half line the launch touches, once per window in which L2 keeps it (a
  replica when its arrays fit in half of L2, else one wave of co-resident blocks). So a
  GEMM or a stencil that re-reads its inputs pays for them once, and a stride-16 read
  pays 64 bytes per 4-byte element.
* **L2**: sectors that reach L2 (L1 load misses and all stores), DRAM's fills and a second
  slot per partly written store sector, x 32 bytes / L2 bandwidth.
* **L1**: sectors / (SMs x L1 sectors per clock): the L1 tag stage.
* **shared**: shared wavefronts / (SMs x wavefronts per clock).
* **LSU issue**: memory warp instructions / (SMs x LSU instructions per clock).
* **block launches**: blocks per SM x the time an SM needs to start and retire a block.

Latency term (a wave of blocks cannot finish before its slowest warp's chain does):

* **latency**: waves x the chain of one block: block start, then each load the busiest
  warp waits for (shared, L1, L2 or DRAM latency, by where ``viz.gpu.reuse`` says its
  sectors are; the generated kernels use each loaded value at once) and each
  ``__syncthreads``; DRAM waits grow with the DRAM rate the launch drives
  (``LOADED_LATENCY_H100``, measured). A barrier segment lasts at least the block's shared
  wavefronts in it through the SM's pipe plus a shared latency (``shared_burst_s``): after a
  barrier all its warps' shared accesses queue there at once. Waves = blocks per SM /
  resident blocks per SM, where residency
  (occupancy) follows from threads, registers and shared memory per block.

``time = max(terms) + launch overhead``. Every figure a term uses is named in
``Prediction.terms`` so the panel and the docs can show the arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..kinds.registry import kind_of, kinds
from .. import gpus
from ..gpus import SECTOR_BYTES, WARP

_REF = gpus.reference()    # the H100's description: the defaults below are its figures

LAUNCH_OVERHEAD_S = 3e-6   # an empty kernel launch on H100, back to back

# Calibration key -> (default, unit, where the default comes from). The cost model reads
# each through viz.gpu.calibration (load_calibration().value(key, default)).
DEFAULTS: dict[str, tuple[float, str, str]] = {
    "dram_copy_gbps": (2980.0, "GB/s", "device-to-device cudaMemcpy on the H100 (assets/measurements/h100.json, "
                                        "device run 3)"),
    "l2_read_gbps": (5500.0, "GB/s", "H100 L2 hit bandwidth, about 5.5 TB/s (published microbenchmarks)"),
    "l2_scatter_gsectors": (0.0, "G sectors/s", "one-sector L2 requests (a random gather); 0: no figure, such a "
                                                "request costs what a sector of a coalesced one does"),
    "dram_scatter_gbps": (0.0, "GB/s", "DRAM bytes moved by loads scattered over DRAM pages (a random gather); 0: no "
                                       "figure, at the streaming rate"),
    "l2_partial_gstores": (0.0, "G stores/s", "partly written sectors stored into L2 (a naive transpose's column "
                                              "writes); 0: no figure, each costs a second sector slot"),
    "l1_sectors_per_clk_sm": (4.0, "sectors/clk/SM", "128 bytes per clock per SM"),
    "shared_wavefronts_per_clk_sm": (1.0, "wavefronts/clk/SM", "one pass through the 32 banks per clock"),
    "lsu_inst_per_clk_sm": (1.0, "warp instructions/clk/SM", "one memory instruction per clock per SM"),
    "launch_overhead_us": (3.0, "us", "an empty kernel launched back to back on the H100"),
    "block_ns_per_sm": (85.0, "ns", "per block per SM: 33792 blocks of the one-barrier shared lessons ran in "
                                    "24 us on 132 SMs (assets/measurements/h100.json)"),
    "syncthreads_ns": (20.0, "ns", "a __syncthreads of 256 threads, about 40 clocks"),
    "dram_latency_ns": (330.0, "ns", "a dependent DRAM load on an idle GPU (H100 pointer chase)"),
    "l2_latency_ns": (150.0, "ns", "a dependent L2 hit, about 300 clocks"),
    "l1_latency_ns": (20.0, "ns", "a dependent L1 hit, about 40 clocks"),
    "shared_latency_ns": (16.0, "ns", "a dependent shared load, about 30 clocks"),
    # A warp's own issue (``Workload.own_issue_s``): cycles from an instruction of variable
    # latency to the issue of one that uses its result, by ``viz.toolchain.sass.LATENCY_CLASSES``.
    "shfl_latency_clk": (24.0, "clk", "a dependent SHFL, about 24 clocks"),
    "mufu_latency_clk": (18.0, "clk", "a dependent MUFU (ex2, rcp), about 18 clocks"),
    "s2r_latency_clk": (24.0, "clk", "S2R of a special register, about 24 clocks"),
    "const_latency_clk": (16.0, "clk", "LDC from the constant cache, about 16 clocks"),
    "other_latency_clk": (16.0, "clk", "other variable-latency ALU work (BREV, conversions), about 16 clocks"),
}
# The classes of viz.toolchain.sass.LATENCY_CLASSES and their calibration keys.
LATENCY_KEYS = {"shfl": "shfl_latency_clk", "mufu": "mufu_latency_clk", "s2r": "s2r_latency_clk",
                "const": "const_latency_clk", "other": "other_latency_clk"}


# How much longer a dependent load waits while DRAM streams at a given rate: a pointer chase
# through L2-resident data while a copy streams on the other SMs (H100, device run 2,
# tools/probes/loaded_latency.py): (copy GB/s, chase ns). At the copy's saturation
# (2.81 TB/s with 8 streaming blocks per SM) the chase took 1572 ns.
LOADED_LATENCY_H100 = ((0.0, 146.6), (1719.5, 501.9), (2431.0, 696.6), (2843.3, 1223.0))


# How long an SM's TMA takes over one box: the tma.load kind's own term (viz.kinds.tma_load:
# min(rows, TMA_ROW_CAP) x TMA_ROW_NS_BYTES / row bytes, measured on the H100).
from ..kinds.tma_load import TMA_ROW_CAP, TMA_ROW_NS_BYTES  # noqa: E402,F401 - named here before


# What one SM can do per clock at most (Nsight Compute's peaks on the H100: a 32-way
# conflicted LDS runs at 1 wavefront per clock, 180 M LSU instructions of gemm-naive at 55%
# of peak took 1.27 ms, i.e. a peak of 1 per clock): a calibrated figure above is refused.
PER_CLOCK_MAX = {"l1_sectors_per_clk_sm": _REF.l1_bytes_per_clk_sm / _REF.sector_bytes,
                 "shared_wavefronts_per_clk_sm": 1.0, "lsu_inst_per_clk_sm": 1.0}


@dataclass(frozen=True)
class DeviceModel:
    name: str
    sm_count: int
    clock_hz: float
    dram_bytes_per_s: float                # read + write
    l1_sectors_per_clock: float = _REF.l1_bytes_per_clk_sm / _REF.sector_bytes
    wavefronts_per_clock: float = 1.0
    lsu_instructions_per_clock: float = 1.0
    launch_overhead_s: float = LAUNCH_OVERHEAD_S
    l2_bytes: int = _REF.l2_bytes
    l2_bytes_per_s: float = 5.5e12
    block_launch_s: float = 85e-9
    syncthreads_s: float = 20e-9
    dram_latency_s: float = 330e-9
    l2_latency_s: float = 150e-9
    l1_latency_s: float = 20e-9
    shared_latency_s: float = 16e-9
    max_threads_per_sm: int = _REF.max_threads_per_sm     # the GPU description's (viz.gpus): 2048 on the H100
    max_blocks_per_sm: int = _REF.max_blocks_per_sm
    registers_per_sm: int = _REF.registers_per_sm
    shared_per_sm: int = _REF.shared_per_sm_bytes          # 228 KiB usable of the 256 KiB L1/shared
    issue_per_clock: float = float(_REF.schedulers_per_sm)  # 4 schedulers per SM, one warp instruction each per clock
    l2_scatter_per_s: float = 0.0          # one-sector L2 requests per second (0: unknown)
    l2_partial_per_s: float = 0.0          # partly written sectors stored per second (0: unknown)
    dram_scatter_bytes_per_s: float = 0.0  # DRAM bytes of scattered loads per second (0: unknown, as streaming)
    loaded_latency: tuple = LOADED_LATENCY_H100    # ((DRAM GB/s, latency ns), ...), increasing
    launch_touch_s: float = 0.0            # a launch of a kernel that reads and writes memory (0: launch_overhead_s)
    issue_latency: tuple = tuple((c, DEFAULTS[k][0]) for c, k in LATENCY_KEYS.items())   # (class, clk) pairs
    sources: tuple = ()                    # (key, "calibration" | "default" | "measured") per figure

    @classmethod
    def from_device(cls, info: dict, memcpy_gbps: float | None = None, calibration=None,
                    gpu=None) -> "DeviceModel":
        """From a results file's ``device`` table, the measured cudaMemcpy ceiling, the GPU's
        description (``viz.gpus.for_device`` by name when not given: its residency limits
        and, where ``info`` has none, its SMs, clock and L2) and the device's calibration
        (``viz.gpu.calibration.load_calibration``; looked up by name when not given,
        defaults where it has no figure)."""
        if gpu is None:
            gpu = gpus.for_device(info.get("name"), info.get("compute_capability")).description
        if calibration is None:
            try:
                from .calibration import load_calibration

                calibration = load_calibration(info.get("name", gpu.name))
            except (OSError, ValueError):
                calibration = None
        src = []

        def fig(key: str, measured: float | None = None) -> float:
            # A figure measured in the same session (the bench's own cudaMemcpy) first,
            # then the device's calibration file, then the documented default.
            if measured:
                src.append((key, "measured"))
                return measured
            v = calibration.value(key) if calibration is not None else None
            if v is not None and key in PER_CLOCK_MAX and v > PER_CLOCK_MAX[key] * 1.02:
                # Above what one SM can do per clock: the microbenchmark counted wrongly.
                src.append((key, f"default (calibration's {v:.3g} is above the {PER_CLOCK_MAX[key]:g} per clock "
                                 f"an SM can do)"))
                return DEFAULTS[key][0]
            bad = calibration.failed_check(key) if v is not None else None
            if bad:
                # Marked implausible when it was measured: the microbenchmark went wrong.
                src.append((key, f"default (calibration's {v:.4g} failed its check: expected {bad})"))
                return DEFAULTS[key][0]
            if v is not None:
                src.append((key, "calibration"))
                return v
            src.append((key, "default"))
            return DEFAULTS[key][0]

        bw = fig("dram_copy_gbps", memcpy_gbps)
        curve, curve_src = loaded_latency_curve(calibration, gpu, bw)
        # A launch that touches memory (launch_touch_us): only where the calibration measured it,
        # else every launch costs an empty one's launch_overhead_us (the H100's file has none).
        touch = calibration.value("launch_touch_us") if calibration is not None else None
        if touch is not None and not calibration.failed_check("launch_touch_us") and 0 < touch <= 1000:
            src.append(("launch_touch_us", "calibration"))
        else:
            touch = 0.0
        return cls(
            info.get("name", "GPU"), int(info.get("sm_count", gpu.sm_count)),
            float(info.get("clock_mhz", gpu.boost_clock_mhz)) * 1e6,
            bw * 1e9, fig("l1_sectors_per_clk_sm"), fig("shared_wavefronts_per_clk_sm"), fig("lsu_inst_per_clk_sm"),
            fig("launch_overhead_us") * 1e-6, int(info.get("l2_bytes", gpu.l2_bytes)), fig("l2_read_gbps") * 1e9,
            fig("block_ns_per_sm") * 1e-9, fig("syncthreads_ns") * 1e-9, fig("dram_latency_ns") * 1e-9,
            fig("l2_latency_ns") * 1e-9, fig("l1_latency_ns") * 1e-9, fig("shared_latency_ns") * 1e-9,
            l2_scatter_per_s=fig("l2_scatter_gsectors") * 1e9, l2_partial_per_s=fig("l2_partial_gstores") * 1e9,
            dram_scatter_bytes_per_s=fig("dram_scatter_gbps") * 1e9,
            max_threads_per_sm=gpu.max_threads_per_sm, max_blocks_per_sm=gpu.max_blocks_per_sm,
            registers_per_sm=gpu.registers_per_sm, shared_per_sm=gpu.shared_per_sm_bytes,
            issue_per_clock=float(gpu.schedulers_per_sm), loaded_latency=curve, launch_touch_s=touch * 1e-6,
            issue_latency=tuple((c, fig(k)) for c, k in LATENCY_KEYS.items()),
            sources=tuple(src) + (("loaded_latency", curve_src),))

    @classmethod
    def from_figures(cls, name: str, fig: dict) -> "DeviceModel":
        """Back from ``figures()`` (a results file's ``cost_model``): the device a file's
        predictions were made with, whatever calibration is installed now."""
        g = lambda k, d: float(fig[k]) if fig.get(k) is not None else d  # noqa: E731
        return cls(name, int(fig["sm_count"]), g("clock_mhz", 1980) * 1e6, g("dram_gbps", DEFAULTS["dram_copy_gbps"][0]) * 1e9,
                   g("l1_sectors_per_clock", 4.0), g("wavefronts_per_clock", 1.0), g("lsu_instructions_per_clock", 1.0),
                   g("launch_overhead_us", 3.0) * 1e-6, int(g("l2_bytes", 50 << 20)), g("l2_gbps", 5500) * 1e9,
                   g("block_ns_per_sm", 85) * 1e-9, g("syncthreads_ns", 20) * 1e-9, g("dram_latency_ns", 330) * 1e-9,
                   g("l2_latency_ns", 150) * 1e-9, g("l1_latency_ns", 20) * 1e-9, g("shared_latency_ns", 16) * 1e-9,
                   loaded_latency=tuple(tuple(x) for x in fig.get("loaded_latency") or LOADED_LATENCY_H100),
                   l2_scatter_per_s=g("l2_scatter_gsectors", 0.0) * 1e9, l2_partial_per_s=g("l2_partial_gstores", 0.0) * 1e9,
                   dram_scatter_bytes_per_s=g("dram_scatter_gbps", 0.0) * 1e9,
                   launch_touch_s=g("launch_touch_us", 0.0) * 1e-6,
                   issue_latency=tuple((c, float((fig.get("issue_latency_clk") or {}).get(c, DEFAULTS[k][0])))
                                       for c, k in LATENCY_KEYS.items()),
                   sources=tuple((fig.get("sources") or {}).items()))

    def l2_costs(self) -> tuple[float, float, float, float]:
        """Seconds of L2 time per request, per loaded sector, per stored sector and the extra
        for a partly written sector.

        A request costs a tag lookup plus a data slot per sector: ``t_req + n x t_sec``. Two
        calibrated rates fix both: coalesced 16-byte loads (``l2_read_gbps``: requests of 4
        sectors, one per 128-byte line) give ``t_req / 4 + t_sec``, and one-sector requests
        (``l2_scatter_gsectors``) give ``t_req + t_sec``. A stored sector costs ``t_sec``
        too. A partly written sector costs a one-sector store request plus the merge:
        ``1 / l2_partial_gstores - (t_req + t_sec)``. Without those figures a request costs
        nothing beyond its sectors and a partial store a second sector slot."""
        per_sector = float(SECTOR_BYTES) / self.l2_bytes_per_s           # t_req / 4 + t_sec
        t_req = 0.0
        if self.l2_scatter_per_s > 0:
            t_req = max(0.0, 4.0 / 3.0 * (1.0 / self.l2_scatter_per_s - per_sector))
        t_sec = per_sector - t_req / 4
        # A stored sector costs what a loaded one does: coalesced stores into L2 reached only
        # 3.7 TB/s in calibration (l2_write_gbps), but copy_float3 stored 4.5 TB/s of sectors
        # into L2, so that figure is the store path of the microbenchmark, not an L2 limit.
        t_st = t_sec
        t_part = t_sec
        if self.l2_partial_per_s > 0:
            t_part = max(0.0, 1.0 / self.l2_partial_per_s - (t_req + t_st))
        return t_req, t_sec, t_st, t_part

    def latency_cycles(self) -> dict[str, float]:
        """Cycles by ``viz.toolchain.sass`` wait class: the calibrated ALU latencies, and for loads
        the least they wait (an L1 hit, a shared load)."""
        return dict(self.issue_latency, **{"global": self.l1_latency_s * self.clock_hz,
                                           "shared": self.shared_latency_s * self.clock_hz})

    def figures(self) -> dict:
        """The figures the model uses, for the results file."""
        return {"dram_gbps": round(self.dram_bytes_per_s / 1e9, 2), "sm_count": self.sm_count,
                "clock_mhz": round(self.clock_hz / 1e6), "l1_sectors_per_clock": self.l1_sectors_per_clock,
                "wavefronts_per_clock": self.wavefronts_per_clock,
                "lsu_instructions_per_clock": self.lsu_instructions_per_clock,
                "launch_overhead_us": round(self.launch_overhead_s * 1e6, 4),
                "l2_gbps": round(self.l2_bytes_per_s / 1e9, 3), "l2_bytes": self.l2_bytes,
                "l2_scatter_gsectors": round(self.l2_scatter_per_s / 1e9, 4),
                "l2_partial_gstores": round(self.l2_partial_per_s / 1e9, 4),
                "dram_scatter_gbps": round(self.dram_scatter_bytes_per_s / 1e9, 3),
                "block_ns_per_sm": round(self.block_launch_s * 1e9, 3),
                "syncthreads_ns": round(self.syncthreads_s * 1e9, 3),
                "dram_latency_ns": round(self.dram_latency_s * 1e9, 3),
                "loaded_latency": [list(x) for x in self.loaded_latency],
                "l2_latency_ns": round(self.l2_latency_s * 1e9, 3), "l1_latency_ns": round(self.l1_latency_s * 1e9, 3),
                "shared_latency_ns": round(self.shared_latency_s * 1e9, 3),
                "issue_latency_clk": {c: round(v, 3) for c, v in self.issue_latency},
                **({"launch_touch_us": round(self.launch_touch_s * 1e6, 4)} if self.launch_touch_s else {}),
                "sources": dict(self.sources)}


H100_CURVE_SOURCE = "measured (H100, tools/probes/loaded_latency.py)"


def loaded_latency_curve(calibration, gpu, dram_gbps: float) -> tuple[tuple, str]:
    """The loaded-latency curve ((DRAM GB/s, chase ns), ...) and where it comes from: the
    calibration's ``loaded_latency_ns_K`` figures (``warpviz calibrate``) when it has them
    all, plausible and rising in rate; else the H100's measured table, as it is on the H100
    and with its rates scaled by this GPU's DRAM rate over the H100's elsewhere (a GPU whose
    DRAM is faster queues later)."""
    pts = []
    if calibration is not None:
        from .calibration import LOADED_STREAMS

        for k in LOADED_STREAMS:
            f = calibration.figures.get(f"loaded_latency_ns_{k}")
            if not isinstance(f, dict) or calibration.failed_check(f"loaded_latency_ns_{k}"):
                pts = []
                break
            at, ns = f.get("at_gbps"), f.get("value")
            if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0
                       for x in (at, ns)):
                pts = []
                break
            pts.append((float(at), float(ns)))
    if pts and all(b[0] > a[0] for a, b in zip(pts, pts[1:])):
        from pathlib import PurePath

        where = PurePath(calibration.path).name if calibration.path else "the calibration"
        return tuple(pts), f"calibration ({where}: loaded_latency_ns_*)"
    if gpu is None or gpu.is_reference:
        return LOADED_LATENCY_H100, H100_CURVE_SOURCE
    scale = dram_gbps / DEFAULTS["dram_copy_gbps"][0]
    return (tuple((x * scale, y) for x, y in LOADED_LATENCY_H100),
            f"default (the H100's measured curve, its rates x {scale:.3g}: this GPU's DRAM rate over the H100's; "
            f"run `warpviz calibrate` to measure it)")


# The H100 SXM (80 GB HBM3) of the device machine. Its SMs, clock, L2 and the DRAM ceiling
# (what a device-to-device cudaMemcpy reached there) are the shipped results file's
# (assets/measurements/h100.json: ``device`` and ``ceiling.memcpy_d2d``), so a new
# `warpviz bench --all` moves them with it; the figures below are the fallback when that file
# cannot be read (132 SMs, 1980 MHz boost clock, 2980 GB/s in device run 3). Its other
# figures come from its calibration file (assets/calibration/), else DEFAULTS.
_H100_DEVICE = {"name": _REF.name, "sm_count": _REF.sm_count, "clock_mhz": _REF.boost_clock_mhz, "l2_bytes": _REF.l2_bytes}


def _shipped_h100() -> DeviceModel:
    import json

    from .. import assets

    info, memcpy = dict(_H100_DEVICE), DEFAULTS["dram_copy_gbps"][0]
    try:
        shipped = json.loads((assets.measurements_dir() / "h100.json").read_text(encoding="utf-8"))
        info.update({k: shipped["device"][k] for k in ("name", "sm_count", "clock_mhz", "l2_bytes")
                     if k in shipped["device"]})
        memcpy = float(shipped["ceiling"]["memcpy_d2d"]["gbps"])
    except (OSError, ValueError, KeyError, TypeError):
        pass    # a checkout without the file (or a broken one): the fallback figures above
    return DeviceModel.from_device(info, memcpy)


H100 = _shipped_h100()


def for_gpu(gpu=None) -> DeviceModel:
    """The model of a described GPU without running it (a dry run, the app without a GPU):
    ``gpu`` (a ``viz.gpus.GpuDescription``; default ``viz.gpus.active()``) with its
    specification's SMs, clock and L2 and its calibration file (``assets/calibration/``,
    else DEFAULTS, which ``sources`` then names). The reference GPU is ``H100`` itself."""
    gpu = gpu or gpus.active()
    if gpu.is_reference:
        return H100
    from .calibration import Calibration, CalibrationError, read_json

    cal = None
    path = gpu.calibration_path()
    if path is not None and path.is_file():
        try:
            cal = Calibration.from_json(read_json(path), str(path))
        except (CalibrationError, OSError):
            cal = None
    info = {"name": gpu.name, "sm_count": gpu.sm_count, "clock_mhz": gpu.boost_clock_mhz, "l2_bytes": gpu.l2_bytes,
            "compute_capability": gpu.compute_capability}
    return DeviceModel.from_device(info, None, cal if cal is not None else _NO_CALIBRATION, gpu)


class _NoCalibration:
    """A calibration with no figures (for_gpu of a GPU that has none): every figure its default."""

    figures: dict = {}
    path = ""

    def value(self, key, default=None):
        return default

    def failed_check(self, key):
        return None


_NO_CALIBRATION = _NoCalibration()




def calibration_caveat(device_name: str, sources: dict | None, compute_capability: str | None = None) -> str | None:
    """One line when a model's figures are not this GPU's own: no description for it, or
    figures that are defaults (the H100's) because it was never calibrated; None when
    everything it predicts with was measured on it. ``sources``: ``DeviceModel.figures()
    ["sources"]`` (a results file's ``cost_model.sources``)."""
    m = gpus.for_device(device_name, compute_capability)
    parts = []
    if not m.exact:
        parts.append(f"no description for {device_name}: its rules are the {m.description.name}'s")
    src = {k: str(v) for k, v in (sources or {}).items()}
    defaults = [k for k, v in src.items() if v.startswith("default")]
    if src and len(defaults) >= len(src) - 1:
        parts.append(f"{device_name} is not calibrated: {len(defaults)} of {len(src)} figures of the cost model are "
                     f"defaults (the H100's)")
    else:
        refused = [k for k in defaults if "calibration's" in src[k]]   # measured, but failed its check
        if refused:
            parts.append(f"{len(refused)} of {len(src)} figures of the cost model are defaults because the "
                         f"calibration's failed its checks ({', '.join(refused[:4])}{', ...' if len(refused) > 4 else ''})")
    if not parts:
        return None
    return "; ".join(parts) + "; run `warpviz calibrate` on this GPU to measure them"


# ---------------------------------------------------------------------------- the launch


@dataclass(frozen=True)
class Workload:
    """What one launch asks of the GPU (all totals over the whole launch)."""

    blocks: int
    threads_per_block: int
    sectors: int = 0                 # global sectors through the L1 tag stage
    wavefronts: int = 0              # shared wavefronts
    global_lines: int = 0            # global data wavefronts: one per 128-byte line a request touches
    instructions: int = 0            # memory warp instructions
    global_instructions: int = 0     # of which global loads and stores
    dram_bytes: float = 0.0          # after reuse (viz.gpu.reuse), read + write
    dram_read_bytes: float = 0.0     # of which reads (L2 fills)
    l2_sectors: float = 0.0          # sectors that reach L2 from L1
    l2_requests: float = 0.0         # their requests (one per warp instruction and 128-byte line)
    l2_store_sectors: float = 0.0    # of the sectors that reach L2, the stored ones
    dram_scatter_bytes: float = 0.0  # of the DRAM reads, those a gather scatters over DRAM pages
    partial_store_sectors: float = 0.0   # store sectors written in part: L2 merges them (a second slot)
    merged_store_sectors: float = 0.0    # store instructions' sectors sent in a warp's earlier write (not in l2_*)
    chain_s: float = 0.0             # one block's dependent chain beyond its start, seconds (idle DRAM)
    chain_loaded_s: float = 0.0      # the same with every DRAM load waiting 1 us longer
    tma_box_s: float = 0.0           # per block: the SM's TMA over the block's boxes (TMA_ROW_NS_BYTES)
    chain: tuple = ()                # (what, count, seconds each) of that chain
    own_issue_s: float = 0.0         # an average warp's own issue alone on its scheduler (viz.toolchain.sass control bits)
    warp_instructions: float = 0.0   # every SASS instruction the warps issue (viz.toolchain.sass, else estimate_instructions)
    instructions_from: str = "estimated from the kernel's shape"   # or "from the compiled kernel's SASS"
    registers: int | None = None     # per thread, from the compiled kernel
    shared_bytes: int = 0            # per block (static + dynamic)
    notes: tuple = ()


@dataclass(frozen=True)
class Term:
    name: str          # "DRAM", "L2", "L1", "shared", "LSU issue", "block launches", "latency"
    seconds: float
    what: str          # the arithmetic, in words

    def as_dict(self) -> dict:
        return {"name": self.name, "ms": round(self.seconds * 1e3, 6), "what": self.what}


@dataclass(frozen=True)
class Prediction:
    seconds: float
    dram_s: float
    l1_s: float
    shared_s: float
    issue_s: float
    terms: tuple[Term, ...] = ()
    overhead_s: float = 0.0
    occupancy: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)      # the workload figures the terms used

    @property
    def bound(self) -> str:
        if self.terms:
            return max(self.terms, key=lambda t: t.seconds).name
        terms = {"DRAM": self.dram_s, "L1": self.l1_s, "shared": self.shared_s, "issue": self.issue_s}
        return max(terms, key=terms.get)

    @property
    def bound_s(self) -> float:
        return max((t.seconds for t in self.terms), default=max(self.dram_s, self.l1_s, self.shared_s, self.issue_s))

    @property
    def ms(self) -> float:
        return self.seconds * 1e3

    def explain(self) -> str:
        """ "bound by shared wavefronts: 0.26 ms of 0.27 ms" """
        return f"bound by {self.bound}: {self.bound_s * 1e3:.4g} ms of {self.ms:.4g} ms"

    def term(self, name: str) -> float:
        return next((t.seconds for t in self.terms if t.name == name), 0.0)

    def as_dict(self) -> dict:
        d = {"ms": round(self.ms, 6), "bound": self.bound, "dram_ms": round(self.dram_s * 1e3, 6),
             "l1_ms": round(self.l1_s * 1e3, 6), "shared_ms": round(self.shared_s * 1e3, 6),
             "issue_ms": round(self.issue_s * 1e3, 6)}
        if self.terms:
            d.update(bound_ms=round(self.bound_s * 1e3, 6), overhead_ms=round(self.overhead_s * 1e3, 6),
                     explain=self.explain(), terms=[t.as_dict() for t in self.terms], occupancy=dict(self.occupancy),
                     inputs=dict(self.inputs))
        return d


def _interp(x: float, xs, ys) -> float:
    """Piecewise-linear through (xs, ys), flat beyond the ends."""
    if x <= xs[0]:
        return ys[0]
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return ys[-1]


def occupancy(device: DeviceModel, threads_per_block: int, registers: int | None, shared_bytes: int) -> dict:
    """Resident blocks per SM and what limits them (threads, blocks, registers, shared memory)."""
    warps = -(-threads_per_block // WARP)
    limits = {"threads": device.max_threads_per_sm // max(1, warps * WARP), "blocks": device.max_blocks_per_sm}
    if registers:
        # At least 16 registers per thread are allocated (Nsight Compute's
        # launch__registers_per_thread is max(16, ptxas's count) for all 101 shipped launches),
        # per warp in units of 256.
        per_warp = -(-max(16, registers) * WARP // 256) * 256
        limits["registers"] = device.registers_per_sm // max(1, per_warp * warps)
    if shared_bytes:
        limits["shared memory"] = device.shared_per_sm // (-(-(shared_bytes + 1024) // 128) * 128)
    k = max(1, min(limits.values()))
    by = min(limits, key=limits.get)
    return {"blocks_per_sm": k, "limited_by": by, "warps_per_sm": k * warps, "limits": limits,
            "registers": registers, "shared_bytes": shared_bytes}


def merged_text(w: Workload) -> str:
    """What the stored-sector count leaves out: the sectors of stores that went to L2 in a
    warp's earlier write (``reuse._writes``, ``tracemodel.merge_stores``), when there are any."""
    if not w.merged_store_sectors:
        return ""
    return (f" ({w.merged_store_sectors / 1e6:.4g} M more of the store instructions' sectors joined a warp's "
            f"earlier write to their line)")


def predict_launch(w: Workload, device: DeviceModel = H100) -> Prediction:
    """The prediction for a launch (see the module docstring)."""
    sms_busy = max(1, min(device.sm_count, w.blocks))
    clk = device.clock_hz
    occ = occupancy(device, w.threads_per_block, w.registers, w.shared_bytes)
    k = occ["blocks_per_sm"]
    per_sm = -(-w.blocks // device.sm_count)           # the busiest SM's blocks (the tail of small grids)
    waves = per_sm / k if per_sm > k else 1.0
    terms = []
    dram = w.dram_bytes / device.dram_bytes_per_s
    dram_text = f"{w.dram_bytes / 1e6:.4g} MB after reuse / {device.dram_bytes_per_s / 1e9:.0f} GB/s"
    if w.dram_scatter_bytes and device.dram_scatter_bytes_per_s:
        # A gather's reads land on a new DRAM page each: they stream at the scattered rate.
        streamed = max(0.0, w.dram_bytes - w.dram_scatter_bytes)
        dram = streamed / device.dram_bytes_per_s + w.dram_scatter_bytes / device.dram_scatter_bytes_per_s
        dram_text = (f"{streamed / 1e6:.4g} MB streamed / {device.dram_bytes_per_s / 1e9:.0f} GB/s + "
                     f"{w.dram_scatter_bytes / 1e6:.4g} MB of scattered reads / "
                     f"{device.dram_scatter_bytes_per_s / 1e9:.0f} GB/s")
    terms.append(Term("DRAM", dram, dram_text))
    # L2 slices serve the requests L1 sends (a tag lookup each, then a data slot per
    # sector), merge each partly written store sector into its 32-byte granule, and take
    # DRAM's fills (DeviceModel.l2_costs).
    t_req, t_sec, t_st, t_part = device.l2_costs()
    requests = w.l2_requests if w.l2_requests else w.l2_sectors / 4
    fills = w.dram_read_bytes / SECTOR_BYTES
    loads = max(0.0, w.l2_sectors - w.l2_store_sectors)
    l2 = (requests * t_req + (loads + fills) * t_sec + w.l2_store_sectors * t_st
          + w.partial_store_sectors * t_part)
    terms.append(Term("L2", l2, f"{requests / 1e6:.4g} M requests x {t_req * 1e12:.3g} ps + ({loads / 1e6:.4g} M "
                                f"loaded sectors + {fills / 1e6:.4g} M DRAM fills) x {t_sec * 1e12:.3g} ps + "
                                f"{w.l2_store_sectors / 1e6:.4g} M stored sectors{merged_text(w)} x {t_st * 1e12:.3g} ps + "
                                f"{w.partial_store_sectors / 1e6:.4g} M partly written x {t_part * 1e12:.3g} ps"))
    l1 = w.sectors / (sms_busy * device.l1_sectors_per_clock * clk)
    terms.append(Term("L1", l1, f"{w.sectors / 1e6:.4g} M sectors / ({sms_busy} SMs x "
                                f"{device.l1_sectors_per_clock:g} per clock)"))
    # Shared wavefronts and global data share the L1's data pipe (one pass of 128 bytes
    # per clock): a global request takes one pass per line it touches.
    shared = (w.wavefronts + w.global_lines) / (sms_busy * device.wavefronts_per_clock * clk)
    terms.append(Term("shared" if w.wavefronts >= w.global_lines else "L1 data", shared,
                      f"({w.wavefronts / 1e6:.4g} M shared wavefronts + {w.global_lines / 1e6:.4g} M global "
                      f"lines) / ({sms_busy} SMs x {device.wavefronts_per_clock:g} per clock)"))
    issue = w.instructions / (sms_busy * device.lsu_instructions_per_clock * clk)
    terms.append(Term("LSU issue", issue, f"{w.instructions / 1e6:.4g} M memory instructions / ({sms_busy} SMs x "
                                          f"{device.lsu_instructions_per_clock:g} per clock)"))
    issue_all = w.warp_instructions / (sms_busy * device.issue_per_clock * clk)
    issue_text = (f"{w.warp_instructions / 1e6:.4g} M warp instructions ({w.instructions_from}) / "
                  f"({sms_busy} SMs x {device.issue_per_clock:g} per clock)")
    # A scheduler issues one instruction per clock over all its warps, and a warp no faster
    # than its own issue allows (its instructions with the stalls ptxas scheduled between
    # them, ``own_issue_s``). When a warp's own issue is longer than its scheduler's share
    # of all the instructions, the scheduler has too few warps to fill that warp's stalls:
    # the warp waits and issues in turn, so its own issue adds to its chain (softmax_row: one
    # warp per scheduler; gemm_tiled: two). Otherwise the share is the issue term.
    alone = waves * w.own_issue_s > issue_all
    own_s = w.own_issue_s if alone else 0.0
    blocks_t = per_sm * device.block_launch_s
    terms.append(Term("block launches", blocks_t, f"{per_sm} blocks per SM x {device.block_launch_s * 1e9:.0f} ns"))
    if w.tma_box_s:
        terms.append(Term("TMA", per_sm * w.tma_box_s, f"{per_sm} blocks per SM x {w.tma_box_s * 1e9:.4g} ns of TMA "
                                                        f"per block (min(rows, {TMA_ROW_CAP}) x "
                                                        f"{TMA_ROW_NS_BYTES:g} ns / row bytes per box)"))
    # A DRAM load waits longer the busier DRAM is (the measured table ``loaded_latency``:
    # extra wait by the DRAM rate). The rate is the launch's own: DRAM bytes over its time,
    # and its time depends on the wait, so the two are solved together (a fixed point;
    # the time only grows with the wait, the rate only falls, so it settles).
    xs = [x for x, _ in device.loaded_latency]
    ys = [y for _, y in device.loaded_latency]
    others = max([t.seconds for t in terms] + [issue_all])
    slope = max(0.0, w.chain_loaded_s - w.chain_s) / 1000.0      # chain seconds per ns of extra wait
    extra_ns = 0.0
    for _ in range(60):
        lat_try = waves * (device.block_launch_s + w.chain_s + own_s + slope * extra_ns)
        t_try = max(others, lat_try if alone else math.hypot(lat_try, issue_all))
        gbps_now = w.dram_bytes / t_try / 1e9 if t_try > 0 else 0.0
        new_extra = (_interp(gbps_now, xs, ys) - ys[0]) if xs else 0.0
        if abs(new_extra - extra_ns) < 0.5:
            extra_ns = new_extra
            break
        extra_ns = 0.5 * (extra_ns + new_extra)
    rho = min(1.0, dram / t_try) if t_try > 0 else 0.0
    chain_s = w.chain_s + slope * extra_ns
    block_life = device.block_launch_s + chain_s + own_s
    lat = waves * block_life
    chain_text = " + ".join(f"{n:g} x {what} {s * 1e9:.0f} ns" for what, n, s in w.chain if n) or "no waits"
    if own_s:
        chain_text += (f" + its own issue {own_s * 1e9:.0f} ns, alone on its scheduler (its instructions with the "
                       f"cycles ptxas scheduled between them and its waits on shuffles, MUFU and the like)")
    lat_text = (f"{waves:.4g} waves ({per_sm} blocks per SM, {k} resident, limited by {occ['limited_by']}) x "
                f"{block_life * 1e9:.0f} ns per block (start {device.block_launch_s * 1e9:.0f} ns + {chain_text}; "
                f"DRAM loads at {device.dram_latency_s * 1e9 + extra_ns:.0f} ns with DRAM {100 * rho:.0f}% busy)")
    # A warp's waiting and its issuing overlap only in part: alone, a block needs its chain
    # plus its instructions' issue time; with many warps hiding each other, the larger of
    # the two. Between those, the model takes their quadrature sum, named after the larger.
    both = math.hypot(lat, issue_all)
    note = (f"; with the other ({{other:.4g}} ms) in quadrature: sqrt({lat * 1e3:.4g}^2 + {issue_all * 1e3:.4g}^2) ms, "
            f"as waiting and issuing overlap only in part")
    if alone:
        # nothing else issues while it waits, and its issue is in its chain already
        terms.append(Term("latency", lat, lat_text))
        terms.append(Term("instruction issue", issue_all, issue_text))
    elif lat >= issue_all:
        terms.append(Term("latency", both, f"{lat * 1e3:.4g} ms = " + lat_text + note.format(other=issue_all * 1e3)))
        terms.append(Term("instruction issue", issue_all, issue_text))
    else:
        terms.append(Term("latency", lat, lat_text))
        terms.append(Term("instruction issue", both, f"{issue_all * 1e3:.4g} ms = " + issue_text
                          + note.format(other=lat * 1e3)))
    terms = _memory_and_pipes(terms, Term("instruction issue", issue_all, issue_text),
                              w.global_instructions / (sms_busy * device.lsu_instructions_per_clock * clk))
    body = max(t.seconds for t in terms)
    inputs = {"dram_bytes": round(w.dram_bytes), "l2_sectors_from_l1": round(w.l2_sectors),
              "l2_requests": round(w.l2_requests), "l2_store_sectors": round(w.l2_store_sectors),
              "dram_scatter_bytes": round(w.dram_scatter_bytes), "partial_store_sectors": round(w.partial_store_sectors),
              "merged_store_sectors": round(w.merged_store_sectors), "warp_instructions": round(w.warp_instructions),
              "chain_ns": round(chain_s * 1e9, 1), "own_issue_ns": round(w.own_issue_s * 1e9, 1),
              "dram_busy": round(rho, 3)}
    overhead = device.launch_touch_s or device.launch_overhead_s
    return Prediction(body + overhead, dram, l1, shared, issue, tuple(terms), overhead, occ, inputs)


MEMORY_TERMS = ("DRAM", "L2")                                # the memory side, shared by all SMs
PIPE_TERMS = ("shared", "LSU issue")    # each SM's own pipes (a global load's L1 passes belong to its memory phase)


def _memory_and_pipes(terms: list, issue: Term | None = None, global_issue_s: float = 0.0) -> list:
    """The SM's pipes (shared, LSU issue) overlap only in part with the memory side and with
    instruction issue. A warp waits for its global data, then uses the shared pipe, so
    while the resident warps all wait for memory the pipe idles, and the other way round
    (transpose-tile: DRAM 0.18 ms and shared 0.28 ms alone, 0.34 ms measured, with the
    shared pipe at 81% of its peak); and a warp throttled at a full shared-memory queue
    holds its scheduler's issue slot (gemm_nt_swizzle_add: issue at 92% and LSU at 67% of
    their peaks at once). The larger of the pipes and their partner (the larger of the
    memory side and ``issue``, the warps' own instruction issue) is replaced by their
    quadrature sum, as latency and issue are.

    Global loads and stores are the exception: one holds its place in the L1's in-order
    pipeline until its data is there, so the LSU issue of global instructions
    (``global_issue_s``) adds to the memory side's time instead (gemm-naive: 180 M global
    loads take 0.69 ms of LSU issue, DRAM 0.60 ms, measured 1.27 ms with warps stalled on
    a full L1 queue, lg_throttle, 30% of the time)."""
    mem_terms = [t for t in terms if t.name in MEMORY_TERMS]
    if global_issue_s > 0 and mem_terms:
        top = max(mem_terms, key=lambda t: t.seconds)
        new = Term(top.name, top.seconds + global_issue_s,
                   f"{top.seconds * 1e3:.4g} ms = {top.what}; + {global_issue_s * 1e3:.4g} ms of LSU issue for "
                   f"the global instructions, which wait in the L1's in-order pipeline for their data")
        terms = [new if t is top else t for t in terms]
        mem_terms = [new if t is top else t for t in mem_terms]
        lsu = next((t for t in terms if t.name == "LSU issue"), None)
        if lsu is not None:     # what is left of the LSU term: the shared instructions' issue
            rest = max(0.0, lsu.seconds - global_issue_s)
            terms = [Term("LSU issue", rest, f"{lsu.what} (of which {global_issue_s * 1e3:.4g} ms global, counted "
                                             f"with {top.name})") if t is lsu else t for t in terms]
    mem = max(mem_terms + ([issue] if issue is not None else []), key=lambda t: t.seconds, default=None)
    pipe = max((t for t in terms if t.name in PIPE_TERMS), key=lambda t: t.seconds, default=None)
    if mem is None or pipe is None or not mem.seconds or not pipe.seconds:
        return terms
    big, small = (mem, pipe) if mem.seconds >= pipe.seconds else (pipe, mem)
    both = math.hypot(big.seconds, small.seconds)
    text = (f"{big.seconds * 1e3:.4g} ms = {big.what}; with {small.name} ({small.seconds * 1e3:.4g} ms) in "
            f"quadrature: sqrt({big.seconds * 1e3:.4g}^2 + {small.seconds * 1e3:.4g}^2) ms, as the SM's pipes "
            f"overlap only in part with {'issue' if pipe is small else 'them'}")
    if big.name == "instruction issue":    # the issue term in the list may hold the latency's share already
        cur = next(t for t in terms if t.name == "instruction issue")
        if cur.seconds >= both:
            return terms
        return [Term(t.name, both, text) if t is cur else t for t in terms]
    return [Term(t.name, both, text) if t is big else t for t in terms]


# ---------------------------------------------------------------------------- from the engine


def totals(metrics: dict[str, int]) -> dict[str, int]:
    """Sectors, wavefronts and memory warp instructions from the ten metric totals."""
    g = lambda k: int(metrics.get(k, 0))  # noqa: E731
    return {
        "sectors": g("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") + g("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
        "wavefronts": g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
        + g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
        "instructions": g("smsp__inst_executed_op_shared_ld.sum") + g("smsp__inst_executed_op_shared_st.sum")
        + g("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") + g("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
        # ldmatrix / stmatrix: their own instruction counters (viz.kinds.ldmatrix)
        + g("smsp__inst_executed_op_ldsm.sum") + g("smsp__inst_executed_op_shared_stsm.sum"),
        "global_instructions": g("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
        + g("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
    }


def dram_bytes(sectors_and_lines) -> int:
    """64 x min(sectors, 2 x lines), summed over (sectors, lines) of each instruction: the
    DRAM bytes without any reuse (every instruction's sectors from DRAM)."""
    return sum(64 * min(s, 2 * ln) for s, ln in sectors_and_lines)


def workload(an, repeat: int = 1, device: DeviceModel = H100, registers: int | None = None,
             shared_bytes: int | None = None, reuse=None, blocks_total: int | None = None,
             generated: bool = True, serial_loops: bool = False, resident: bool = False,
             sass_profile: dict | None = None) -> Workload:
    """The Workload of ``repeat`` replicas of an analysed scenario (``viz.engine.Analysis``).
    ``reuse`` is ``viz.gpu.reuse.analyze_reuse`` of it (computed here when None).
    ``blocks_total``: the analysis covers only the first rows of a launch of that many
    blocks whose blocks all do the same work (``viz.gpu.predict.analysis_of``): its
    counts are scaled up to it. ``generated``: warpviz's generated kernel (its ``when``
    accesses sit in vote + branch + loop, ``estimate_instructions``), else a hand-written one.
    ``serial_loops``: the kernel's loops are not unrolled (``#pragma unroll 1``): each
    iteration waits for its own loads before the next one issues.
    ``resident``: the timed loop's data (all its buffer sets) fits in half of L2, so each
    launch finds what the previous ones left there (``analyze_reuse``). ``sass_profile``: the
    compiled kernel's static profile (``viz.toolchain.sass.profile_of``, recorded in a results
    file's ``timing.resources.sass``): the warp instructions are counted from it
    (``viz.toolchain.sass.dynamic_instructions``), else estimated from the scenario's shape."""

    from .reuse import analyze_reuse

    sc = an.scenario
    t = totals(an.metrics)
    tpb = sc.launch.threads_per_block
    if shared_bytes is None:
        shared_bytes = sum(a.footprint for a in sc.arrays if a.space == "shared")
    occ = occupancy(device, tpb, registers, shared_bytes)
    if reuse is None:
        reuse = analyze_reuse(sc, device.sm_count * occ["blocks_per_sm"], device.l2_bytes, replicas=repeat,
                              blocks_total=blocks_total, serial_loops=serial_loops, resident=resident)
    chain_s, chain = _chain(an, reuse, device, generated, serial_loops)
    chain_loaded_s, _ = _chain(an, reuse, replace(device, dram_latency_s=device.dram_latency_s + 1e-6), generated,
                               serial_loops)
    blocks = blocks_total or sc.launch.blocks
    f = repeat * blocks / sc.launch.blocks
    if sass_profile:
        from ..toolchain.sass import dynamic_instructions, engine_counts

        counts, warps = engine_counts(an)
        est = dynamic_instructions(sass_profile, {k: v * f for k, v in counts.items()}, warps * f,
                                   device.latency_cycles())
        warp_instructions = est.instructions
        own_issue_s = est.issue_cycles / max(1.0, warps * f) / device.clock_hz
        instructions_from = "from the compiled kernel's SASS"
    else:
        own_issue_s = 0.0
        warp_instructions = estimate_instructions(an, generated) * f
        instructions_from = "estimated from the kernel's shape"
    # The copy engines' global side (cp.async's source, a TMA box): its sectors come through
    # L2 from DRAM once each (their reuse is not tracked), unless the timed loop keeps them
    # in L2. cp-async-pipeline: 537 MB from DRAM in 0.17 ms, as a copy. A generated TMA
    # kernel's tensor map has a plane per replica, so each replica copies its own box (a
    # kind whose replicas share one copy says copy_per_replica=False: DRAM moves it once).
    # Nor does the L2 term count TMA boxes:
    # tma-ldmatrix-128b took 277 MB of them in 0.023 ms, 12 TB/s, above the 8.1 TB/s at which
    # L2 serves the LSU's loads, so the TMA's path is not the one calibrated.
    # Which accesses those are, and how, each kind says (Kind.copy_engine, copy_in_l2, copy_per_replica).
    copy_sectors = sum(s.sectors for s in an.stats if _copy(s.op, "copy_in_l2")) * f
    tma_box_s = tma_seconds_per_block(an)
    copy_dram = 0.0 if resident else 32 * (
        sum(s.sectors for s in an.stats if _copy(s.op, "copy_per_replica")) * f
        + sum(s.sectors for s in an.stats if _copy(s.op, "copy_per_replica", False)) * f / max(1, repeat))
    return Workload(
        blocks=blocks * repeat, threads_per_block=tpb, sectors=round(t["sectors"] * f),
        wavefronts=round(t["wavefronts"] * f), instructions=round(t["instructions"] * f),
        global_instructions=round(t["global_instructions"] * f), tma_box_s=tma_box_s,
        dram_bytes=reuse.dram_bytes * f + copy_dram, l2_sectors=reuse.l2_sectors * f + copy_sectors,
        l2_requests=reuse.l2_requests * f + copy_sectors / 4,
        l2_store_sectors=reuse.store_sectors * f, dram_scatter_bytes=reuse.dram_scatter_bytes * f,
        chain_s=chain_s, chain=chain, own_issue_s=own_issue_s,
        chain_loaded_s=max(chain_loaded_s, chain_s),
        partial_store_sectors=reuse.partial_store_sectors * f, merged_store_sectors=reuse.merged_store_sectors * f,
        dram_read_bytes=reuse.dram_read_bytes * f + copy_dram,
        warp_instructions=warp_instructions, instructions_from=instructions_from,
        global_lines=round(sum(s.lines for s in an.stats if s.space == "global") * f),
        registers=registers, shared_bytes=shared_bytes)


def _copy(op: str, flag: str, value: bool = True) -> bool:
    """Whether ``op`` is a copy-engine kind (``Kind.copy_engine``) whose ``flag`` is ``value``."""
    k = kind_of(op)
    return k is not None and k.copy_engine and getattr(k, flag) == value


def tma_seconds_per_block(an) -> float:
    """The SM's copy-engine time per block: each warp instruction of a kind with an engine
    term (``Kind.engine_seconds``: a tma.load box, min(rows, TMA_ROW_CAP) x TMA_ROW_NS_BYTES /
    row bytes, the H100 probe) times that term."""
    sc = an.scenario
    total = 0.0
    for s in an.stats:
        k = kind_of(s.op)
        if k is None or k.engine_seconds is None or not s.warp_instructions:
            continue
        total += k.engine_seconds(sc.accesses[s.instruction.access], sc, s.warp_instructions)
    return total / max(1, sc.launch.blocks)


# accesses whose global side the reuse replay does not see: the copy-engine kinds (cp.async, tma.load)
COPY_ENGINE_OPS = tuple(k.op for k in kinds() if k.copy_engine)
GUARDED_LOADS_OVERLAP = False  # a generated kernel's guarded global load waits for its own data (see _chain)
LOADS_IN_FLIGHT = 16   # independent loads a warp has in flight: ptxas issues about 16 LDGs ahead of
                       # their first use (SASS of the generated gemm-naive kernel)
BRANCH_CYCLES = 24     # a predicated access (``when``) sits in its own vote + branch + one-trip loop
                       # (LDC, VOTE.ANY, ISETP, BRA; SASS of reduction-tree): its load cannot overlap


BURST_WHAT = "barrier segment held by the block's shared wavefronts"


def shared_burst_s(wavefronts: float, device: DeviceModel) -> float:
    """The least time a barrier segment of a block takes whose warps put ``wavefronts``
    through the SM's shared pipe: the pipe passes ``wavefronts_per_clock`` of them a clock
    (the warps' shared accesses queue there, whatever their own chains), and the last one's
    data arrives a shared load's latency later. 0 for none."""
    if wavefronts <= 0:
        return 0.0
    return device.shared_latency_s + wavefronts / (device.wavefronts_per_clock * device.clock_hz)


def _load_latency(s, reuse, device: DeviceModel) -> tuple[float, str]:
    """Expected latency of one warp's global load instruction, and the level it mostly waits on."""
    r = reuse.per_instruction.get(s.instruction.number) if reuse is not None else None
    spr = (r.sectors / r.requests) if r and r.requests else 1.0
    # A request waits for its slowest sector: it misses when any of its sectors misses.
    # Hits on sectors still on their way wait like misses (reuse.IN_FLIGHT).
    p_miss1 = min(1.0, (1 - (r.l1_hits - r.l1_waits) / r.sectors) * spr) if r and r.sectors else 1.0
    # (a waiting L1 hit waits for the fetch of the sector it found: the same L2 outcome)
    miss = (r.sectors - r.l1_hits) if r else 0
    p_miss2 = min(1.0, (1 - (r.l2_hits - r.l2_waits) / miss) * spr) if r and miss else (0.0 if r else 1.0)
    e = device.l1_latency_s + p_miss1 * ((device.l2_latency_s - device.l1_latency_s)
                                         + p_miss2 * (device.dram_latency_s - device.l2_latency_s))
    level = "DRAM" if p_miss1 * p_miss2 >= 0.5 else "L2" if p_miss1 >= 0.5 else "L1"
    return e, level


# SASS instructions of the generated kernels, from their shape (cuobjdump -sass of coalesced,
# stencil-global, reduction-tree, transpose-tile, gemm-naive on sm_90): a prologue (ids,
# pointers) and epilogue (the sink test), a plain access (the load or store with its offset
# folded in, the hash of a loaded value, an address step), and
# an access with a ``when`` (vote, branch, one-trip loop around it; a warp with no active
# lane only votes and branches over it).
SASS_PROLOGUE, SASS_EPILOGUE = 22, 6
SASS_PLAIN = {"global": 3, "shared": 2}
SASS_PREDICATED = {"global": 21, "shared": 12}
SASS_SKIPPED = 3


def estimate_instructions(an, generated: bool = True) -> float:
    """Warp instructions one replica issues (every SASS instruction, not only memory ones).
    A hand-written kernel (``generated=False``) guards an access with a plain predicate: no
    vote, branch or loop around it."""
    import numpy as np

    sc = an.scenario
    nb = sc.launch.blocks
    nw = -(-sc.launch.threads_per_block // WARP)
    from .codegen import plan_groups

    barriers = sum(1 for g in plan_groups(sc) if g.barrier_before)
    total = float(nb * nw * (SASS_PROLOGUE + SASS_EPILOGUE + barriers))
    for s in an.stats:
        if s.per_warp_active is None:
            continue
        acc = sc.accesses[s.instruction.access]
        active = int(np.count_nonzero(s.per_warp_active))
        idle = s.per_warp_active.size - active
        if acc.when is not None and generated:
            total += active * SASS_PREDICATED[s.space] + idle * SASS_SKIPPED
        else:
            total += active * SASS_PLAIN[s.space] + (idle if acc.when is not None else 0)
    return total


def program_order(an) -> list[tuple[int, object]]:
    """(barrier segment, InstrStats) in the order a thread runs them: the generator's groups
    (``codegen.plan_groups``) in turn; inside a group with loops, loop point by loop point,
    each point running the group's accesses in order."""
    from .codegen import plan_groups

    sc = an.scenario
    by_key: dict = {}
    for s in an.stats:
        by_key.setdefault((s.instruction.access, s.instruction.loop), []).append(s)
    out = []
    seg = 0
    for g in plan_groups(sc):
        if g.barrier_before:
            seg += 1
        idx = {a.index for a in g.accesses}
        points = []
        for s in an.stats:
            if s.instruction.access in idx and s.instruction.loop not in points:
                points.append(s.instruction.loop)
        for pt in points:
            for a in g.accesses:
                out.extend((seg, s) for s in by_key.get((a.index, pt), []))
    return out


def _chain(an, reuse, device: DeviceModel, generated: bool = True, serial_loops: bool = False) -> tuple[float, tuple]:
    """One block's dependent chain, for its slowest warp: loads issue back to back and
    overlap (up to LOADS_IN_FLIGHT) until a store, which writes a loaded value and so waits
    for them, or a barrier, which waits for every warp; a predicated shared access of the
    generated kernel waits alone. The generated kernel's global arrays are ``__restrict__``,
    so a global store ends the run only when a later load of the same barrier segment reads
    the array it writes (ptxas moves the loads of other arrays above it). Returns (seconds,
    ((what, count, seconds each), ...))."""
    import numpy as np

    sc = an.scenario
    nw = -(-sc.launch.threads_per_block // WARP)
    counts = {lv: np.zeros(nw) for lv in ("shared", "L1", "L2", "DRAM")}
    branches = np.zeros(nw)
    branch_s = BRANCH_CYCLES / device.clock_hz
    level_s = {"shared": device.shared_latency_s, "L1": device.l1_latency_s, "L2": device.l2_latency_s,
               "DRAM": device.dram_latency_s}
    warp_time = np.zeros(nw)            # this segment so far, per warp
    run_sum = np.zeros(nw)              # the open run of overlapping loads
    run_max = np.zeros(nw)
    run_shared = np.zeros(nw, bool)
    total = 0.0
    barriers = 0
    seg = 0

    seg_wf = 0                          # the block's shared wavefronts in this barrier segment
    bursts = [0, 0.0]                   # segments the shared pipe bounds, and the time it adds

    def segment_end() -> float:
        # the slowest warp, or the block's shared wavefronts through the SM's pipe (shared_burst_s)
        slowest = float(warp_time.max())
        pipe = shared_burst_s(seg_wf, device)
        if pipe > slowest:
            bursts[0] += 1
            bursts[1] += pipe - slowest
        return max(slowest, pipe)

    def close_run():
        nonlocal run_sum, run_max, warp_time, run_shared
        warp_time = warp_time + np.maximum(run_max, run_sum / LOADS_IN_FLIGHT)
        run_sum = np.zeros(nw)
        run_max = np.zeros(nw)
        run_shared = np.zeros(nw, bool)

    prev_loop = None
    order = program_order(an)
    # The generated kernel's global arrays are __restrict__: ptxas moves a global load above a
    # store to another array (grid-stride-loop: its seven guarded loads issue back to back,
    # the stores after them), so such a store does not end the run for the loads after it.
    later_global_loads: list[frozenset] = [frozenset()] * len(order)
    seen: set = set()
    for n in range(len(order) - 1, -1, -1):
        k_n, s_n = order[n]
        if n + 1 < len(order) and order[n + 1][0] != k_n:
            seen = set()                # a barrier between: what follows is another segment's
        later_global_loads[n] = frozenset(seen)
        if s_n.space == "global" and s_n.op == "load":
            seen.add(sc.accesses[s_n.instruction.access].array)
    for idx, (k, s) in enumerate(order):
        if serial_loops and s.instruction.loop and s.instruction.loop != prev_loop:
            close_run()                 # a `#pragma unroll 1` loop waits for each iteration's loads
        prev_loop = s.instruction.loop
        if k != seg:
            close_run()
            total += segment_end() + device.syncthreads_s   # the barrier waits for all warps
            barriers += 1
            warp_time = np.zeros(nw)
            seg_wf = 0
            seg = k
        if s.per_warp_active is None or not len(s.per_warp_active):
            continue
        acc = sc.accesses[s.instruction.access]
        active = s.per_warp_active[0] > 0
        predicated = acc.when is not None and generated
        # A guarded access pays its vote and branch and waits for its own data, global ones
        # included (GUARDED_LOADS_OVERLAP). grid-stride-loop's SASS has its seven guarded LDGs
        # in one stretch, and with them joining one run the model drifted with the DRAM: 1.12
        # on the H100, 1.32 on the H200 (measured / predicted). By Little's law the measured
        # launch keeps about one load in flight per warp on both (1.42 TB/s of reads at about
        # 700 ns: 7.5 KB per SM, 56 warps), and with each guarded load waiting alone the
        # prediction is 0.86 on both GPUs (tools/gpu/h200_breakdown.sh, docs/GPU.md).
        guarded_global = predicated and s.space == "global" and GUARDED_LOADS_OVERLAP
        if predicated:
            if not guarded_global:
                close_run()
            warp_time[active] += branch_s
            branches[active] += 1
            predicated = not guarded_global
        if s.op != "load":
            if s.space == "shared" and s.per_warp is not None:
                seg_wf += int(s.per_warp[0].sum())
            # A store writes a loaded value, so it waits for the open run of loads, and later
            # loads that may alias it cannot move above it: any global store, and a shared
            # store after shared loads. ptxas does move global loads above shared stores (SASS
            # of gemm-tiled: every LDG of the tile first, then the STSs), so those keep overlapping.
            stored = sc.accesses[s.instruction.access].array
            if s.space == "global" and generated and stored not in later_global_loads[idx]:
                continue                # later loads of other arrays move above it
            if s.space == "global" or run_shared.any():
                close_run()
            continue
        if s.space == "shared":
            e, level = device.shared_latency_s, "shared"
        else:
            e, level = _load_latency(s, reuse, device)
        counts[level][active] += 1
        if s.space == "shared" and s.per_warp is not None:
            seg_wf += int(s.per_warp[0].sum())
        if predicated:
            warp_time[active] += e      # used at once inside its own branch
        else:
            run_sum[active] += e
            run_max[active] = np.maximum(run_max[active], e)
            if s.space == "shared":
                run_shared[active] = True
    close_run()
    total += segment_end()
    busiest = 0
    chain = tuple((f"{lv} load", float(c[busiest]), level_s[lv]) for lv, c in counts.items()) + \
        (("predicated access", float(branches[busiest]), branch_s), ("__syncthreads", float(barriers),
                                                                       device.syncthreads_s),
         (BURST_WHAT, float(bursts[0]), bursts[1] / max(1, bursts[0])))
    return total, chain


def predict(metrics: dict[str, int], device: DeviceModel = H100, repeat: int = 1,
            blocks: int | None = None, dram: int | None = None) -> Prediction:
    """A quick prediction from the ten metric totals alone (no addresses: no reuse, no
    latency chain): ``repeat`` replicas, ``blocks`` blocks, ``dram`` bytes per replica
    (``dram_bytes``, else sectors x 32). The bench uses ``predict_launch(workload(...))``."""
    t = totals(metrics)
    w = Workload(blocks=blocks if blocks is not None else device.sm_count, threads_per_block=256,
                 sectors=t["sectors"] * repeat, wavefronts=t["wavefronts"] * repeat,
                 instructions=t["instructions"] * repeat,
                 dram_bytes=(t["sectors"] * 32 if dram is None else dram) * repeat,
                 l2_sectors=t["sectors"] * repeat)
    return predict_launch(replace(w), device)


__all__ = ["for_gpu", "calibration_caveat", "DeviceModel", "H100", "Prediction", "Term", "Workload", "predict", "predict_launch", "workload",
           "shared_burst_s", "occupancy", "totals", "dram_bytes", "DEFAULTS"]
