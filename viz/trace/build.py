"""Compile a launch file's source: ``nvcc -ptx -lineinfo``, instrument the PTX, assemble the
plain and the instrumented PTX with the same ``ptxas`` (so the only difference between
the kernel Nsight Compute counts and the one that records is the recorder).

Needs nvcc and ptxas only (no GPU, no driver). Reuses ``viz.gpu.compile`` to find them.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..gpu import GpuUnavailable
from ..gpu.compile import ARCH, find_tool, nvcc_version, require_nvcc, sass_memory_instructions
from . import TraceError
from .launch import Launch, check_params
from .ptx import MemInstr, SkipRegion, compare_sass, instrument_full, parse, predication_note, sass_predicated

NVCC_FLAGS = ("-O3", "-std=c++17", "-lineinfo")


@dataclass
class Build:
    ptx: str
    instrumented_ptx: str
    cubin: bytes
    instrumented_cubin: bytes
    instrs: list[MemInstr]
    arch: str
    nvcc: str
    regions: list[SkipRegion]
    events: tuple[MemInstr, ...] = ()       # recorded non-memory instructions (ptx.EVENT_BASE ids)


def first_error_line(log: str) -> str:
    for ln in log.splitlines():
        if re.search(r"\berror\b", ln):
            return ln.strip()
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    return lines[0] if lines else "(no message)"


def compile_ptx(launch: Launch, arch: str = ARCH, timeout: float = 300) -> str:
    nvcc = require_nvcc()
    cmd = [nvcc, "-ptx", f"-arch={arch}", *NVCC_FLAGS]
    cmd += [f"-D{k}={v}" for k, v in launch.defines.items()]
    cmd += [f"-I{p}" for p in launch.include_dirs]
    with tempfile.TemporaryDirectory(prefix="warpviz-trace-") as tmp:
        out = Path(tmp) / "kernel.ptx"
        cmd += ["-o", str(out), str(launch.source)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TraceError(launch.source, "", f"nvcc took more than {timeout:.0f} s", "") from None
        if proc.returncode != 0 or not out.exists():
            log = proc.stderr or proc.stdout
            raise TraceError(launch.source, "nvcc", f"the source does not compile: {first_error_line(log)}",
                             "fix the source (nvcc's full message: run the nvcc command by hand)")
        return out.read_text()


def assemble(ptx: str, arch: str = ARCH, what: str = "kernel", timeout: float = 300) -> bytes:
    return assemble_verbose(ptx, arch, what, timeout, verbose=False)[0]


def assemble_verbose(ptx: str, arch: str = ARCH, what: str = "kernel", timeout: float = 300,
                     verbose: bool = True) -> tuple[bytes, str]:
    """(cubin, ptxas's output) of ``ptxas -O3 --generate-line-info`` (with ``-v``: the
    registers and shared memory of each kernel, ``viz.gpu.compile.parse_ptxas_usage``)."""
    ptxas = find_tool("ptxas")
    if not ptxas:
        raise GpuUnavailable("ptxas (the PTX assembler, part of the CUDA toolkit) is not installed", "nvcc")
    with tempfile.TemporaryDirectory(prefix="warpviz-ptxas-") as tmp:
        src, out = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(ptx)
        proc = subprocess.run([ptxas, f"-arch={arch}", "-O3", "--generate-line-info", *(["-v"] if verbose else []),
                               "-o", str(out), str(src)], capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"ptxas refused the {what} PTX: {first_error_line(proc.stderr or proc.stdout)}")
        return out.read_bytes(), proc.stderr + proc.stdout


def build(launch: Launch, arch: str = ARCH) -> Build:
    ptx = compile_ptx(launch, arch)
    check_params(launch, ptx)
    text, instrs, regions = instrument_full(ptx)
    return Build(ptx, text, assemble(ptx, arch, "plain"), assemble(text, arch, "instrumented"), instrs, arch,
                 nvcc_version(), regions, tuple(parse(ptx).events))


def build_check(launch: Launch, arch: str = ARCH) -> tuple[bytes, list[MemInstr]]:
    """The fault-finding cubin (``ptx.check_block``) and its instruction table."""
    ptx = compile_ptx(launch, arch)
    text, instrs, _ = instrument_full(ptx, check=True)
    return assemble(text, arch, "fault-finding"), instrs


def sass_memory(cubin: bytes) -> list[str] | None:
    """Memory instructions of the cubin (all functions) via cuobjdump, or None without it."""
    return sass_memory_instructions(cubin)


def sass_guard(b: Build) -> dict | None:
    """What cuobjdump shows about the two cubins, or None without cuobjdump:
    ``problems`` (memory opcodes whose number the instrumentation changed: ptxas merged,
    split or dropped memory instructions differently), ``note`` (see ``predication_note``)
    and the plain kernel's SASS memory instructions."""
    a, c = sass_memory(b.cubin), sass_memory(b.instrumented_cubin)
    if a is None or c is None:
        return None
    pred = sass_predicated(a, b.instrs)
    return {"problems": compare_sass(a, c, len(b.instrs) + len(b.events), b.regions), "note": predication_note(a, b.instrs),
            "sass": a, "predicated": None if pred is None else {str(k): v for k, v in pred.items()}}


__all__ = ["Build", "build", "compile_ptx", "assemble", "sass_guard", "sass_memory", "first_error_line"]
