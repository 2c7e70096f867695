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
from .launch import C_IDENTIFIER, Launch, check_params, unsafe_chars
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


def defines_header(launch: Launch) -> str:
    """The launch file's ``defines`` as a header (``#define NAME value`` lines) for nvcc's
    ``-include``: no define value ever reaches a command line (nvcc hands ``-D`` values to
    ``sh`` unescaped). Checked again here (``Launch`` is a plain dataclass): names are C
    identifiers, values single lines."""
    lines = ["// the launch file's defines (warpviz)"]
    for k, v in launch.defines.items():
        if not C_IDENTIFIER.fullmatch(k) or any(ord(c) < 32 and c != "\t" or ord(c) == 127 for c in v) \
                or v.endswith("\\"):
            raise TraceError(launch.path, f"defines.{k[:80]}", "a define must be a C identifier with a one-line value",
                             "write e.g. `defines = { TILE = 32 }`")
        lines.append(f"#define {k} {v}".rstrip())
    return "\n".join(lines) + "\n"


def nvcc_command(launch: Launch, arch: str, nvcc: str, tmp: Path) -> list[str]:
    """nvcc's argument list for the launch's PTX (``tmp/kernel.ptx``; the defines header is
    written into ``tmp``). Every argument after nvcc itself is checked for the characters
    ``sh`` would act on (``launch.unsafe_chars``): nvcc puts each path between double quotes
    for ``sh`` and escapes neither ``$`` nor the backquote, and a trailing backslash ends its
    quotes early. ``load_launch`` refuses such paths already; this is the last guard."""
    cmd = [nvcc, "-ptx", f"-arch={arch}", *NVCC_FLAGS]
    if launch.defines:
        header = tmp / "defines.h"
        header.write_text(defines_header(launch), encoding="utf-8")
        cmd += ["-include", str(header)]
    cmd += [f"-I{p}" for p in launch.include_dirs]
    cmd += ["-o", str(tmp / "kernel.ptx"), str(launch.source)]
    for arg in cmd[1:]:
        bad = unsafe_chars(arg)
        if bad:
            where = ("source" if arg == str(launch.source) else "include_dirs" if arg.startswith("-I")
                     else "")
            fix = ("set TMPDIR to a folder whose path has none of them" if not where
                   else "move the files to a folder whose path has none of $ ` \\ \" '")
            raise TraceError(launch.path, where, f"nvcc would be given {arg[:200]!r}, which holds {bad}: nvcc passes "
                             "its arguments to `sh`, where these characters mean something", fix)
    return cmd


def compile_ptx(launch: Launch, arch: str = ARCH, timeout: float = 300) -> str:
    nvcc = require_nvcc()
    with tempfile.TemporaryDirectory(prefix="warpviz-trace-") as tmp:
        out = Path(tmp) / "kernel.ptx"
        cmd = nvcc_command(launch, arch, nvcc, Path(tmp))
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise TraceError(launch.source, "", f"nvcc took more than {timeout:.0f} s", "") from None
        if proc.returncode != 0 or not out.exists():
            log = (proc.stderr or proc.stdout).replace(str(Path(tmp) / "defines.h"), "(the launch file's defines)")
            raise TraceError(launch.source, "nvcc", f"the source does not compile: {first_error_line(log)[:400]}",
                             "fix the source (nvcc's full message: run the nvcc command by hand)")
        return out.read_text(encoding="utf-8", errors="replace")


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
