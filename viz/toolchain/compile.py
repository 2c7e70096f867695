"""nvcc for the GPU's compile target (``ARCH``: sm_90 for the H100 and H200, from its description in
assets/gpus/, ``viz.gpus.active``), with an on-disk cubin cache keyed by the source's hash.

Used by the runner (to load cubins into PyCUDA), the counters driver and the tests
(which compile every kernel without a GPU). Compiling needs only ``nvcc``, no driver.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..cachedir import cubin_dir, touch, trim
from ..errors import WarpvizError
from ..gpus import GpuDescriptionError, active, reference
from ..fileio import write_atomic
from . import GpuUnavailable



def _target() -> str:
    """The active GPU description's target; the reference's when $WARPVIZ_GPU names none (the
    command line says so before anything compiles: ``viz.cli.main``)."""
    try:
        return active().target
    except GpuDescriptionError:
        return reference().target


ARCH = _target()      # "sm_90": the GPU description's target (viz.gpus; $WARPVIZ_GPU picks another)
NVCC_FLAGS = ("-O3", "-std=c++17", "-lineinfo")


class CompileError(WarpvizError, RuntimeError):
    """nvcc refused a kernel; ``log`` is its message."""

    def __init__(self, log: str):
        self.log = log
        super().__init__(f"nvcc failed:\n{log}")


def find_nvcc() -> str | None:
    cand = shutil.which("nvcc")
    if cand:
        return cand
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_ROOT"), os.environ.get("CUDA_PATH"),
                 "/usr/local/cuda"):
        if root and Path(root, "bin", "nvcc").exists():
            return str(Path(root, "bin", "nvcc"))
    return None


def find_tool(name: str) -> str | None:
    """A CUDA tool beside nvcc or on the PATH (cuobjdump, nvdisasm, ncu)."""
    cand = shutil.which(name)
    if cand:
        return cand
    nvcc = find_nvcc()
    if nvcc and Path(nvcc).with_name(name).exists():
        return str(Path(nvcc).with_name(name))
    return None


def cache_dir() -> Path:
    """The compile cache: ``cubin/`` in the platform's cache folder (``viz.cachedir``:
    ``$WARPVIZ_CACHE/cubin``, else e.g. ``~/.cache/warpviz/cubin``), capped at 256 MiB."""
    return cubin_dir()


def _key(source: str, arch: str, flags: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for part in (source, arch, " ".join(flags), _nvcc_version()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


_VERSION: str | None = None


def _nvcc_version() -> str:
    global _VERSION
    if _VERSION is None:
        nvcc = find_nvcc()
        if not nvcc:
            return "none"
        try:
            out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
            m = re.search(r"release [\d.]+, V([\d.]+)", out)
            _VERSION = m.group(1) if m else out.strip()[-40:]
        except (OSError, subprocess.SubprocessError):
            _VERSION = "unknown"
    return _VERSION


def nvcc_version() -> str:
    return _nvcc_version()


def require_nvcc() -> str:
    """nvcc's path, or GpuUnavailable saying it is missing."""
    nvcc = find_nvcc()
    if not nvcc:
        raise GpuUnavailable("nvcc (the CUDA compiler) is not installed or not on the PATH", "nvcc")
    return nvcc


def _nvcc(source: str, arch: str, flags: tuple[str, ...], timeout: float) -> tuple[bytes, dict[str, dict]]:
    """One nvcc run: (the cubin, ptxas's resources of each kernel: ``-Xptxas -v``). Raises
    CompileError with nvcc's message, GpuUnavailable without nvcc."""
    nvcc = require_nvcc()
    with tempfile.TemporaryDirectory(prefix="warpviz-nvcc-") as tmp:
        src = Path(tmp) / "kernel.cu"
        out = Path(tmp) / "kernel.cubin"
        src.write_text(source)
        try:
            proc = subprocess.run([nvcc, f"-arch={arch}", "-cubin", *flags, "-Xptxas", "-v", "-o", str(out),
                                   str(src)], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CompileError(f"nvcc took more than {timeout:.0f} s") from None
        if proc.returncode != 0 or not out.exists():
            raise CompileError((proc.stderr or proc.stdout).replace(str(src), "kernel.cu").strip())
        return out.read_bytes(), parse_ptxas_usage(proc.stderr + proc.stdout)


def _build(source: str, arch: str, flags: tuple[str, ...], timeout: float, use_cache: bool) -> tuple[bytes, dict]:
    """The cubin and the resources of one nvcc run, both cached (beside each other, by the
    source's key) so that neither compiles the source again."""
    import json

    data, usage = _nvcc(source, arch, flags, timeout)
    if use_cache:
        key = _key(source, arch, flags)
        write_atomic(cache_dir() / f"{key}.cubin", data)
        write_atomic(cache_dir() / f"{key}.usage.json", json.dumps(usage))
        trim()                      # the least recently used entries beyond the cap (viz.cachedir)
    return data, usage


def _arch_specific(source: str) -> bool:
    """Does generated CUDA hold PTX a kind needs the arch-specific target for (``Kind.arch_specific``:
    wgmma needs sm_90's arch-specific features)?"""
    from ..kinds import kinds

    return any(text in source for k in kinds() for text in k.arch_specific)


def compile_cubin(source: str, arch: str = ARCH, flags: tuple[str, ...] = NVCC_FLAGS,
                  use_cache: bool = True, timeout: float = 300) -> bytes:
    """The cubin for ``source``; raises CompileError with nvcc's message, GpuUnavailable without nvcc."""
    require_nvcc()
    if arch == ARCH and _arch_specific(source):
        arch = "sm_90a"
    cached = cache_dir() / f"{_key(source, arch, flags)}.cubin"
    if use_cache and cached.exists():
        touch(cached)
        data = _cached_cubin(cached)
        if data is not None:
            return data
    return _build(source, arch, flags, timeout, use_cache)[0]


MAX_CACHED_CUBIN_BYTES = 256 << 20     # one cubin in the compile cache
MAX_CACHED_USAGE_BYTES = 1 << 20       # one .usage.json beside it


def _cached_cubin(path: Path) -> bytes | None:
    """A cached cubin, or None when the entry is damaged (not an ELF file, a special file, too
    large): the cache is warpviz's own, so a damaged entry is built again and written over."""
    from ..fileio import ReadRefused, read_bytes_limited

    try:
        data = read_bytes_limited(path, MAX_CACHED_CUBIN_BYTES, "cached cubin")
    except ReadRefused:
        return None
    return data if data.startswith(b"\x7fELF") else None


def _cached_usage(path: Path) -> dict[str, dict] | None:
    """A cached ``resource_usage`` table, or None when the entry is damaged (not JSON, nested
    deeply: "maximum recursion depth exceeded" before, of the wrong shape): built again."""
    from ..fileio import ReadRefused, read_json_limited

    try:
        doc = read_json_limited(path, MAX_CACHED_USAGE_BYTES, "cached resource table")
    except ReadRefused:
        return None
    if not isinstance(doc, dict) or not all(
            isinstance(k, str) and isinstance(v, dict) and all(
                isinstance(n, str) and isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 1 << 40
                for n, x in v.items()) for k, v in doc.items()):
        return None
    return doc


def resource_usage(source: str, arch: str = ARCH, flags: tuple[str, ...] = NVCC_FLAGS,
                   use_cache: bool = True, timeout: float = 300) -> dict[str, dict]:
    """Registers per thread, static shared memory and barriers of each kernel in ``source``
    as ptxas reports them (``nvcc -Xptxas -v``; no GPU needed): {function: {"registers",
    "shared_bytes", "barriers", "spill_bytes"}}. Cached beside the cubins."""
    require_nvcc()
    cached = cache_dir() / f"{_key(source, arch, flags)}.usage.json"
    if use_cache and cached.exists():
        touch(cached)
        usage = _cached_usage(cached)
        if usage is not None:
            return usage
    return _build(source, arch, flags, timeout, use_cache)[1]


def parse_ptxas_usage(text: str) -> dict[str, dict]:
    """``ptxas -v`` output -> {function: {"registers", "shared_bytes", "barriers", "spill_bytes"}}."""
    out: dict[str, dict] = {}
    fn = None
    for line in text.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?([A-Za-z_][\w$]*)'?", line)
        if m:
            fn = m.group(1)
            out.setdefault(fn, {"registers": 0, "shared_bytes": 0, "barriers": 0, "spill_bytes": 0})
            continue
        if fn is None:
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m:
            out[fn]["registers"] = int(m.group(1))
            b = re.search(r"used (\d+) barriers", line)
            out[fn]["barriers"] = int(b.group(1)) if b else 0
            sm = re.search(r"(\d+) bytes smem", line)
            out[fn]["shared_bytes"] = int(sm.group(1)) if sm else 0
        m = re.search(r"(\d+) bytes spill stores", line)
        if m:
            out[fn]["spill_bytes"] = int(m.group(1))
    return out


def compile_many(sources: list[str], arch: str = ARCH, jobs: int | None = None) -> list[bytes | CompileError]:
    """Compile several kernels in parallel; each entry is a cubin or the CompileError."""

    def one(src: str):
        try:
            return compile_cubin(src, arch)
        except CompileError as err:
            return err

    jobs = jobs or max(1, min(16, os.cpu_count() or 1))
    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(one, sources))


def sass_memory_instructions(cubin: bytes) -> list[str] | None:
    """The cubin's memory instructions (LDG/STG/LDS/STS and widths) via cuobjdump, or None."""
    tool = find_tool("cuobjdump")
    if not tool:
        return None
    with tempfile.TemporaryDirectory(prefix="warpviz-sass-") as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        proc = subprocess.run([tool, "--dump-sass", str(path)], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return None
    return memory_lines(proc.stdout)


_MEM_OPS = {"LDG", "STG", "LDS", "STS", "LDL", "STL", "LD", "ST", "LDSM", "STSM", "LDGSTS", "ATOMG", "ATOMS", "RED",
            "ATOM"}


def memory_lines(sass: str) -> list[str]:
    """Lines of a SASS dump that access memory, as ``/*0090*/  LDG.E.128 R4, desc[UR4][R2.64] ;``."""
    out = []
    for line in sass.splitlines():
        code = line.split(";")[0]
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*)", code)
        if not m:
            continue
        text = m.group(2).strip()
        op = text.split()[0] if not text.startswith("@") else text.split()[1]
        if op.split(".")[0] in _MEM_OPS:
            out.append(f"/*{m.group(1)}*/ {text}")
    return out


__all__ = ["compile_cubin", "compile_many", "CompileError", "find_nvcc", "find_tool", "sass_memory_instructions",
           "memory_lines", "ARCH"]
