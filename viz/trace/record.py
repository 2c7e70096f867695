"""Run a launch on the GPU: the instrumented kernel (recording) or the plain one (for Nsight
Compute). PyCUDA is used only inside the functions here, which run in the GPU child
process of ``viz.gpu.worker`` (``Session.trace_record``), so a faulting kernel takes down
only that process.

Buffers: one allocation, each buffer at a 256-byte boundary, filled on the host with the
launch file's fill (``random`` from a fixed seed; ``file:`` / ``npy:`` data read again with
the launch file's checks; the bytes ``viz.api`` took from the caller's arrays), uploaded
before each run, so the counting run, the recording run and the Nsight Compute run see
the same data. A pointer with ``count = 0`` is passed as NULL and takes no space.
"""

from __future__ import annotations

import numpy as np

from .launch import Arg, Launch
from .ptx import BITMAP_SYMBOL, BITMAP_WORDS, CTL_SYMBOL, HEADER_WORDS, RECORD_BYTES

SEED = 12345
MAX_RECORDS = 4_000_000          # 288 bytes each on the GPU: about 1.1 GB; more is not recorded (said so)

_NP = {"char*": np.int8, "short*": np.int16, "half*": np.float16, "int*": np.int32, "unsigned*": np.uint32,
       "float*": np.float32, "double*": np.float64, "long long*": np.int64, "int2*": np.int32,
       "int4*": np.int32, "float2*": np.float32, "float4*": np.float32, "double2*": np.float64, "void*": np.uint8}
_SCALAR = {"char": np.int8, "short": np.int16, "int": np.int32, "unsigned": np.uint32, "long long": np.int64,
           "unsigned long long": np.uint64, "float": np.float32, "double": np.float64}


def fill_values(a: Arg, index: int) -> np.ndarray:
    """The bytes of buffer ``a`` (the ``index``-th argument) as the launch file fills it."""
    if a.fill.startswith(("file:", "npy:")):
        from .launch import read_data

        return np.frombuffer(read_data(a, f"arg {index + 1}.fill"), np.uint8)
    if a.fill == "data":
        data = np.asarray(a.data, np.uint8).reshape(-1) if a.data is not None else np.zeros(0, np.uint8)
        if data.size != a.nbytes:
            raise ValueError(f"argument {index + 1}: {data.size} bytes of data for a buffer of {a.nbytes}")
        return data
    comp = np.dtype(_NP[a.type])
    n = a.nbytes // comp.itemsize
    if a.fill == "zero":
        v = np.zeros(n, comp)
    elif a.fill == "ones":
        v = np.ones(n, comp)
    elif a.fill == "iota":
        per = a.element_bytes // comp.itemsize      # vector types: one index per element
        v = np.repeat(np.arange(a.count, dtype=np.int64), per).astype(comp)
    else:
        rng = np.random.default_rng(SEED + index)
        if np.issubdtype(comp, np.floating):
            v = rng.random(n).astype(comp)
        else:
            info = np.iinfo(comp)
            v = rng.integers(info.min, info.max, n, dtype=comp, endpoint=True)
    return v.view(np.uint8)


def host_buffer(launch: Launch) -> np.ndarray:
    """The launch's buffers as one host array, filled; ``TraceError`` (naming the largest
    buffer) before anything is allocated when this machine's memory cannot hold them."""
    from .launch import check_host_memory

    check_host_memory(launch)
    buf = np.zeros(launch.buffer_bytes, np.uint8)
    for k, (a, off) in enumerate(zip(launch.args, launch.buffer_offsets())):
        if a.is_buffer and not a.is_null:
            b = fill_values(a, k)
            buf[off:off + b.size] = b
    named = launch.named_offsets()
    for k, a in enumerate(launch.buffers):            # [[buffer]]: seeded after the [[arg]]s
        off = named[a.name]
        b = fill_values(a, len(launch.args) + k)
        buf[off:off + b.size] = b
    return buf


def request(launch: Launch, cubin: bytes, blocks: list[int] | None = None,
            max_records: int = MAX_RECORDS) -> dict:
    """Plain data for the GPU process (picklable)."""
    return {"kernel": launch.function, "cubin": cubin, "block": launch.block, "grid": launch.grid,
            "shared": launch.shared_bytes, "args": [a.as_dict() for a in launch.args],
            "offsets": launch.buffer_offsets(), "buffer": host_buffer(launch), "blocks": blocks,
            "max_records": max_records, "named": launch.named_offsets(),
            "tensormaps": {m.name: m.as_dict() for m in launch.tensormaps}}


def _kernel_args(req: dict, base: int) -> list:
    from .tensormaps import has_params, param_values

    if has_params(req["args"]):     # tensor maps, pointers into named buffers, structs: each parameter's bytes
        return param_values(req["args"], req["offsets"], req.get("named", {}), req.get("tensormaps", {}), base)
    out = []
    for a, off in zip(req["args"], req["offsets"]):
        if a["type"].endswith("*"):
            out.append(np.uint64(0) if off < 0 else np.uint64(base + off))     # count = 0: NULL
        else:
            out.append(_SCALAR[a["type"]](a["value"]))
    return out


def _kernel(driver, req: dict):
    from .tensormaps import DriverFunction, has_params

    # a launch with tensor-map, pointer or struct parameters goes through cuLaunchKernel's
    # kernelParams (viz.trace.tensormaps.DriverFunction), the others through PyCUDA
    k = driver.kernel(req["cubin"], req["kernel"], loader=DriverFunction if has_params(req["args"]) else None)
    k.allow_shared(req["shared"])
    return k


def _launch(kernel, req: dict, base: int) -> None:
    kernel.call(_kernel_args(req, base), grid=tuple(req["grid"]), block=tuple(req["block"]), shared=req["shared"])


def run_plain(session, req: dict) -> None:
    """One launch of the plain kernel (what Nsight Compute profiles).

    ``session`` is a ``viz.gpu.runner.Session`` (or a stand-in with its ``driver`` and
    ``guard``): the driver calls are ``viz.gpu.driver.Driver``'s named methods."""
    drv = session.driver

    def go():
        buf = drv.alloc_exact(req["buffer"].size)
        drv.upload(buf, req["buffer"])
        _launch(_kernel(drv, req), req, int(buf))
        drv.synchronize()
        buf.free()

    session.guard(f"launch of {req['kernel']}", go)


def run_recording(session, req: dict, progress=None) -> dict:
    """Count, then record (``progress("record")`` in between, when given). Returns {"header": (n, 8) uint32, "addr": (n, 32) uint64,
    "executed": total warp-level executions in the selected blocks, "capacity": slots}."""
    drv = session.driver

    def go():
        kernel = _kernel(drv, req)
        ctl = kernel.symbol(CTL_SYMBOL).address
        bitmap_ptr = kernel.symbol(BITMAP_SYMBOL).address
        bitmap = np.zeros(BITMAP_WORDS, np.uint32)
        selected = req["blocks"]
        if selected is not None:
            sel = np.asarray(selected, np.int64)
            sel = sel[sel < BITMAP_WORDS * 32]
            np.bitwise_or.at(bitmap, sel >> 5, (np.uint32(1) << (sel & 31).astype(np.uint32)))
        drv.upload(bitmap_ptr, bitmap)
        counter = drv.alloc_exact(256)
        buf = drv.alloc_exact(req["buffer"].size)

        def launch(records_ptr: int, cap: int) -> int:
            drv.upload(buf, req["buffer"])
            drv.upload(counter, np.zeros(64, np.uint32))
            c = np.zeros(4, np.uint64)
            c[0], c[1] = records_ptr, int(counter)
            c[2] = np.uint64(cap) | (np.uint64(1 if selected is not None else 0) << np.uint64(32))
            drv.upload(ctl, c)
            _launch(kernel, req, int(buf))
            drv.synchronize()
            n = np.zeros(64, np.uint32)
            drv.download(n, counter)
            return int(n[0])

        executed = launch(0, 0)
        if progress is not None:
            progress("record")
        cap = min(executed, int(req["max_records"]))
        records = drv.alloc_exact(max(1, cap) * RECORD_BYTES)
        again = launch(int(records), cap)
        host = np.empty(max(1, cap) * RECORD_BYTES, np.uint8)
        drv.download(host, records)
        records.free()
        buf.free()
        counter.free()
        rec = host[:cap * RECORD_BYTES].reshape(cap, RECORD_BYTES)
        header = np.ascontiguousarray(rec[:, :HEADER_WORDS * 4]).view(np.uint32).reshape(cap, HEADER_WORDS)
        addr = np.ascontiguousarray(rec[:, HEADER_WORDS * 4:]).view(np.uint64).reshape(cap, 32)
        return {"header": header, "addr": addr, "executed": executed, "executed_again": again, "capacity": cap}

    return session.guard(f"instrumented launch of {req['kernel']}", go)


def run_fault_check(session, req: dict) -> dict | None:
    """Run the fault-finding variant (``ptx.check_block``) once: lanes that would access
    outside the launch's buffers, or misaligned, are switched off and the first such warp
    is written down. Returns {"instr", "block", "warp", "lanes" (mask), "addr" (32), "base",
    "size"} or None when no such lane was found."""
    drv = session.driver

    def go():
        kernel = _kernel(drv, req)
        ctl = kernel.symbol(CTL_SYMBOL).address
        drv.upload(kernel.symbol(BITMAP_SYMBOL).address, np.zeros(BITMAP_WORDS, np.uint32))
        counter = drv.alloc_exact(512)
        drv.upload(counter, np.zeros(128, np.uint32))
        buf = drv.alloc_exact(req["buffer"].size)
        drv.upload(buf, req["buffer"])
        c = np.zeros(6, np.uint64)
        c[1] = int(counter)
        c[3], c[4] = int(buf), int(buf) + req["buffer"].size
        drv.upload(ctl, c)
        _launch(kernel, req, int(buf))
        drv.synchronize()
        out = np.zeros(128, np.uint32)
        drv.download(out, counter)
        base = int(buf)
        buf.free()
        counter.free()
        if out[1] == 0:
            return None
        addr = out[8:72].view(np.uint64).copy()
        return {"instr": int(out[4]), "block": int(out[5]), "warp": int(out[6]), "lanes": int(out[7]),
                "addr": addr, "base": base, "size": int(req["buffer"].size)}

    return session.guard(f"fault-finding launch of {req['kernel']}", go)


__all__ = ["request", "run_recording", "run_plain", "run_fault_check", "host_buffer", "fill_values", "MAX_RECORDS"]
