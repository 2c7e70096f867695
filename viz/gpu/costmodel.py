"""A simple, documented cost model: a launch's time from the model's counts.

The model counts what each warp instruction costs the memory system; the GPU serves
those costs in parallel units, and the slowest unit sets the time (a roofline over
three resources):

* DRAM:   ``DRAM bytes / DRAM bandwidth`` (measured D2D cudaMemcpy where known, read +
          write). DRAM moves 64-byte halves of a line: a sector whose neighbour in the
          same half is not touched still costs 64 bytes (measured on H100: a stride-16
          float read, two sectors per line in different halves, took twice as long as
          stride 8, four sectors per line). Per instruction the model gives sectors and
          lines, so DRAM bytes = 64 x min(sectors, 2 x lines): exact for consecutive
          sectors, and for one sector per half. Every byte is assumed to come from or go
          to DRAM once: no reuse through L1/L2, so kernels that re-read (stencils,
          gathers, GEMM tiles) are predicted slower than they run.
* L1:     ``sectors / (SMs x 4 sectors per clock)``: the L1/TEX tag stage of an SM
          handles one 128-byte line, 4 sectors, per clock.
* Shared: ``wavefronts / (SMs x 1 wavefront per clock)``: a shared-memory wavefront is
          one pass through the 32 banks, one per clock per SM.
* Issue:  ``memory warp instructions / (SMs x 1 per clock)``: the LSU takes one warp
          instruction per clock per SM.

``time = max(DRAM, L1, Shared, Issue) + launch overhead``. The terms assume the work is
spread evenly over the SMs; with fewer blocks than SMs the busy SMs set the time
(``active_sms``). Good enough to predict the *shape* of a sweep: padding a transpose
tile turns 32 wavefronts per column read into 1 and the time drops to the DRAM floor.
"""

from __future__ import annotations

from dataclasses import dataclass

LAUNCH_OVERHEAD_S = 3e-6   # an empty kernel launch on H100, back to back


@dataclass(frozen=True)
class DeviceModel:
    name: str
    sm_count: int
    clock_hz: float
    dram_bytes_per_s: float                # read + write
    l1_sectors_per_clock: float = 4.0
    wavefronts_per_clock: float = 1.0
    lsu_instructions_per_clock: float = 1.0
    launch_overhead_s: float = LAUNCH_OVERHEAD_S

    @classmethod
    def from_device(cls, info: dict, memcpy_gbps: float | None = None) -> "DeviceModel":
        """From a results file's ``device`` table (and the measured cudaMemcpy ceiling)."""
        bw = (memcpy_gbps or info.get("peak_bandwidth_gbs") or 3000.0) * 1e9
        return cls(info.get("name", "GPU"), int(info.get("sm_count", 132)),
                   float(info.get("clock_mhz", 1980)) * 1e6, bw)


# The H100 SXM (80 GB HBM3) of the device machine: 132 SMs, 1980 MHz boost clock, and the
# 2962 GB/s that a device-to-device cudaMemcpy reached there (assets/measurements/h100.json).
H100 = DeviceModel("NVIDIA H100 80GB HBM3", 132, 1.98e9, 2.962e12)


@dataclass(frozen=True)
class Prediction:
    seconds: float
    dram_s: float
    l1_s: float
    shared_s: float
    issue_s: float

    @property
    def bound(self) -> str:
        terms = {"DRAM": self.dram_s, "L1": self.l1_s, "shared": self.shared_s, "issue": self.issue_s}
        return max(terms, key=terms.get)

    @property
    def ms(self) -> float:
        return self.seconds * 1e3

    def as_dict(self) -> dict:
        return {"ms": round(self.ms, 6), "bound": self.bound, "dram_ms": round(self.dram_s * 1e3, 6),
                "l1_ms": round(self.l1_s * 1e3, 6), "shared_ms": round(self.shared_s * 1e3, 6),
                "issue_ms": round(self.issue_s * 1e3, 6)}


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
    }


def dram_bytes(sectors_and_lines) -> int:
    """64 x min(sectors, 2 x lines), summed over (sectors, lines) of each instruction."""
    return sum(64 * min(s, 2 * ln) for s, ln in sectors_and_lines)


def predict(metrics: dict[str, int], device: DeviceModel = H100, repeat: int = 1,
            blocks: int | None = None, dram: int | None = None) -> Prediction:
    """Predicted time of a launch whose counts are ``metrics`` x ``repeat`` (replicas);
    ``dram`` is one repeat's DRAM bytes (``dram_bytes``), else sectors x 32."""
    t = totals(metrics)
    sms = device.sm_count if blocks is None else max(1, min(device.sm_count, blocks))
    clk = device.clock_hz
    dram = (t["sectors"] * 32 if dram is None else dram) * repeat / device.dram_bytes_per_s
    l1 = t["sectors"] * repeat / (sms * device.l1_sectors_per_clock * clk)
    shared = t["wavefronts"] * repeat / (sms * device.wavefronts_per_clock * clk)
    issue = t["instructions"] * repeat / (sms * device.lsu_instructions_per_clock * clk)
    return Prediction(max(dram, l1, shared, issue) + device.launch_overhead_s, dram, l1, shared, issue)


__all__ = ["DeviceModel", "H100", "Prediction", "predict", "totals", "dram_bytes"]
