"""Compile a launch file's source: ``nvcc -ptx -lineinfo``, instrument the PTX, assemble the
plain and the instrumented PTX with the same ``ptxas`` (so the only difference between
the kernel Nsight Compute counts and the one that records is the recorder).

``kernel_ptx`` is the one way from a launch file to its kernel's PTX: the CUDA source
compiled (or the launch file's PTX module, checked), the ``kernel`` name resolved to the
module's entry (``viz.trace.names``: demangled, matched, a template instantiated through a
generated file that includes the source where the source does not instantiate it), the
module cut down to that kernel (``viz.trace.module.prune``), the arguments checked against
its parameters and, for a PTX module, the module assembled by ``ptxas`` before anything
runs. The entry's name (mangled, for C++) is what the cubin is asked for.

Needs nvcc and ptxas only (no GPU, no driver). Reuses ``viz.toolchain.compile`` to find them.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..kinds.registry import trace_kind
from ..toolchain import GpuUnavailable
from ..toolchain.compile import ARCH, find_tool, nvcc_version, require_nvcc, sass_memory_instructions
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
    entry: str = ""                         # the kernel's PTX entry (mangled for C++)
    label: str = ""                         # its demangled signature, as messages show it
    instantiated: bool = False              # warpviz instantiated the template (``names.instantiation_source``)


@dataclass
class KernelPtx:
    """A launch file's kernel as PTX: ``ptx`` (the module cut down to the kernel, line
    numbers kept), ``entry`` (its PTX name), ``label`` (its demangled signature), ``arch``
    (ptxas's ``-arch``), ``instantiated`` (through warpviz's generated file)."""

    ptx: str
    entry: str
    label: str
    arch: str
    instantiated: bool = False


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


def nvcc_command(launch: Launch, arch: str, nvcc: str, tmp: Path, source: Path | None = None) -> list[str]:
    """nvcc's argument list for the launch's PTX (``tmp/kernel.ptx``; the defines header is
    written into ``tmp``). Every argument after nvcc itself is checked for the characters
    ``sh`` would act on (``launch.unsafe_chars``): nvcc puts each path between double quotes
    for ``sh`` and escapes neither ``$`` nor the backquote, and a trailing backslash ends its
    quotes early. ``load_launch`` refuses such paths already; this is the last guard.
    ``source``: the file to compile instead of the launch file's (warpviz's instantiation
    file, which includes it)."""
    cmd = [nvcc, "-ptx", f"-arch={arch}", *NVCC_FLAGS]
    if launch.relaxed_constexpr:            # a fixed flag the launch file switches on: no text of its own
        cmd.append("--expt-relaxed-constexpr")
    if launch.defines:
        header = tmp / "defines.h"
        header.write_text(defines_header(launch), encoding="utf-8")
        cmd += ["-include", str(header)]
    cmd += [f"-I{p}" for p in launch.include_dirs]
    src = source or launch.source
    cmd += ["-o", str(tmp / "kernel.ptx"), str(src)]
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


def compile_ptx(launch: Launch, arch: str = ARCH, timeout: float = 300, wrapper: str | None = None) -> str:
    """``nvcc -ptx`` of the launch's source (or, with ``wrapper``, of that C++ text, written
    to a file in a temporary folder: warpviz's instantiation file). TraceError with nvcc's
    first error line when it does not compile."""
    if launch.ptx:
        return launch.source_text or _read_ptx(launch)
    nvcc = require_nvcc()
    with tempfile.TemporaryDirectory(prefix="warpviz-trace-") as tmp:
        out = Path(tmp) / "kernel.ptx"
        source = None
        if wrapper is not None:
            source = Path(tmp) / "warpviz_instantiate.cu"
            source.write_text(wrapper, encoding="utf-8")
        cmd = nvcc_command(launch, arch, nvcc, Path(tmp), source)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise TraceError(launch.source, "", f"nvcc took more than {timeout:.0f} s", "") from None
        if proc.returncode != 0 or not out.exists():
            log = (proc.stderr or proc.stdout).replace(str(Path(tmp) / "defines.h"), "(the launch file's defines)")
            if source is not None:
                log = log.replace(str(source), "(warpviz's instantiation)")
                raise _Uninstantiable(first_error_line(log)[:400])
            raise TraceError(launch.source, "nvcc", f"the source does not compile: {first_error_line(log)[:400]}",
                             "fix the source (nvcc's full message: run the nvcc command by hand)")
        return out.read_text(encoding="utf-8", errors="replace")


class _Uninstantiable(Exception):
    """nvcc refused warpviz's instantiation file (its first error line)."""


def _read_ptx(launch: Launch) -> str:
    from .launch import MAX_PTX_BYTES, read_text_file

    return read_text_file(launch.source, "PTX file", MAX_PTX_BYTES, report=(launch.path, "ptx"))


def resolve(launch: Launch, ptx: str, arch: str = ARCH) -> tuple[str, "names.Entry", bool]:
    """(the module that holds the kernel, its entry, whether warpviz instantiated it):
    ``launch.kernel`` matched against the demangled entries of ``ptx`` (``names.match``);
    a template instantiation the source lacks is compiled through a generated file that
    includes the source (``names.instantiation_source``). TraceError (key ``kernel``) for
    no match, for several (overloads, template arguments left out) and for a template
    warpviz could not instantiate, each listing what the module has."""
    from . import module, names

    kn = launch.kernel_name
    found_names = module.entry_names(ptx)
    what = "the PTX" if launch.ptx else "the source"
    if not found_names:
        raise TraceError(launch.path, "kernel", f"{what} has no kernel (no __global__ function)",
                         "give a source that defines the kernel")
    ents = names.entries_of(found_names)
    hit = names.match(kn, ents)
    if len(hit) > 1:
        problem, fix = names.ambiguity(kn, hit)
        raise TraceError(launch.path, "kernel", problem, fix)
    if hit:
        return ptx, hit[0], False
    if kn.targs is not None and not launch.ptx:
        text = names.instantiation_source(kn, str(launch.source))
        try:
            ptx2 = compile_ptx(launch, arch, wrapper=text)
        except _Uninstantiable as err:
            same = [e for e in ents if names.canonical(e.name).split("<")[0].endswith(
                names.canonical(kn.qualified))]
            have = f" (it has: {names.listing(same or ents)})"
            raise TraceError(launch.path, "kernel", f"the source does not instantiate `{kn.template_id}`, and "
                             f"warpviz could not instantiate it: nvcc says {err}{have}",
                             names.how_to_instantiate(kn) + ", or name an instantiation the source has") from None
        ents2 = names.entries_of(module.entry_names(ptx2))
        hit = names.instantiated(kn, ents2, found_names)
        if len(hit) == 1:
            return ptx2, hit[0], True
    shown = names.listing(ents)
    fix = ("name one of its kernels as the source writes it (`transposeNaive`, `ns::k`, `MatrixMulCUDA<32>`) "
           "or by its mangled name" if launch.format >= 2 or launch.ptx or any(e.mangled != e.demangled for e in ents)
           else 'name one of its kernels; the kernel must be extern "C" __global__ so that its name is kept, or '
                "the launch file `format = 2` (C++ names)")
    raise TraceError(launch.path, "kernel", f"{what} has no kernel `{launch.kernel}` (it has: {shown})", fix)


def kernel_ptx(launch: Launch, arch: str = ARCH) -> KernelPtx:
    """The launch's kernel as PTX (see the module doc): compiled or read, resolved, cut
    down to the kernel and checked against the [[arg]] tables; a PTX module is also
    assembled by ``ptxas`` here, so that a module this toolkit refuses is reported (key
    ``ptx``, with ptxas's first error line) before anything runs."""
    from . import module

    if launch.ptx:
        text = compile_ptx(launch, arch)
        try:
            h = module.header(text)
            arch = module.ptxas_arch(h, arch)
        except module.PtxModuleError as err:
            raise TraceError(launch.path, "ptx", err.problem, err.fix) from None
    else:
        if launch.arch_specific and not arch.endswith("a"):
            arch += "a"                     # sm_90a: wgmma and setmaxnreg (CUTLASS 3's Hopper kernels)
        text = compile_ptx(launch, arch)
    full, entry, instantiated = resolve(launch, text, arch)
    ptx = module.prune(full, entry.mangled)
    check_params(launch, ptx, entry.mangled, entry.shown)
    check_block(launch, ptx, entry)
    if launch.ptx:
        assemble_ptx_input(launch, ptx, arch)
    return KernelPtx(ptx, entry.mangled, entry.shown, arch, instantiated)


def check_block(launch: Launch, ptx: str, entry) -> None:
    """The launch's block against the kernel's ``.reqntid`` (it must be launched with exactly
    that block: Triton's kernels say 32 x num_warps) and ``.maxntid`` (``__launch_bounds__``):
    TraceError (key ``block``) instead of a launch that CUDA refuses."""
    from . import module

    lim = module.thread_limits(ptx, entry.mangled)
    want = lim.get("reqntid")
    threads = launch.threads_per_block
    if want is not None:
        full = tuple(want) + (1,) * (3 - len(want))
        if tuple(launch.block) != full:
            raise TraceError(launch.path, "block", f"`{entry.shown}` must be launched with a block of "
                             f"{list(want)} (its .reqntid), not {list(launch.block)}",
                             f"write `block = {list(want)}` (Triton: 32 x num_warps threads)")
    most = lim.get("maxntid")
    if most is not None:
        cap = 1
        for x in most:
            cap *= x
        if threads > cap:
            raise TraceError(launch.path, "block", f"`{entry.shown}` takes at most {cap} threads per block (its "
                             f"__launch_bounds__, .maxntid {', '.join(map(str, most))}), the launch has {threads}",
                             f"use a block of at most {cap} threads")


def assemble_ptx_input(launch: Launch, ptx: str, arch: str) -> bytes:
    """The launch file's PTX module assembled as it is: TraceError (key ``ptx``) with
    ptxas's first error line where this toolkit's ptxas refuses it (a ``.version`` newer
    than it knows, a target it does not, an error in the text)."""
    try:
        return assemble(ptx, arch, "plain")
    except RuntimeError as err:
        from ..toolchain.compile import nvcc_version

        line = re.sub(r"^ptxas \S+?\.ptx, line (\d+); (error|fatal)\s*:\s*", r"line \1: ",
                      str(err).split(": ", 1)[-1])
        raise TraceError(launch.path, "ptx", f"ptxas ({arch}, CUDA {nvcc_version()}) refuses the PTX: {line[:300]}",
                         "give PTX that this CUDA toolkit accepts: compile it with a CUDA version no newer than this "
                         "one (Triton: the same CUDA as warpviz's), or update CUDA") from None


def assemble(ptx: str, arch: str = ARCH, what: str = "kernel", timeout: float = 300) -> bytes:
    return assemble_verbose(ptx, arch, what, timeout, verbose=False)[0]


def assemble_verbose(ptx: str, arch: str = ARCH, what: str = "kernel", timeout: float = 300,
                     verbose: bool = True) -> tuple[bytes, str]:
    """(cubin, ptxas's output) of ``ptxas -O3 --generate-line-info`` (with ``-v``: the
    registers and shared memory of each kernel, ``viz.toolchain.compile.parse_ptxas_usage``)."""
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
    kp = kernel_ptx(launch, arch)
    text, instrs, regions = instrument_full(kp.ptx)
    return Build(kp.ptx, text, assemble(kp.ptx, kp.arch, "plain"), assemble(text, kp.arch, "instrumented"), instrs,
                 kp.arch, nvcc_version(), regions, tuple(parse(kp.ptx).events), kp.entry, kp.label, kp.instantiated)


def build_check(launch: Launch, arch: str = ARCH) -> tuple[bytes, list[MemInstr]]:
    """The fault-finding cubin (``ptx.check_block``) and its instruction table."""
    kp = kernel_ptx(launch, arch)
    text, instrs, _ = instrument_full(kp.ptx, check=True)
    return assemble(text, kp.arch, "fault-finding"), instrs


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
    own: dict[str, int] = {}        # what kinds' own recording blocks add (TraceForm.recorder_sass)
    for ins in b.instrs:
        f = trace_kind(ins.kind) if ins.space != "none" else None
        for op, n in (f.recorder_sass(ins) if f is not None and f.recorder_sass is not None else {}).items():
            own[op] = own.get(op, 0) + n
    return {"problems": compare_sass(a, c, len(b.instrs) + len(b.events), b.regions, own),
            "note": predication_note(a, b.instrs),
            "sass": a, "predicated": None if pred is None else {str(k): v for k, v in pred.items()}}


__all__ = ["Build", "KernelPtx", "build", "kernel_ptx", "resolve", "compile_ptx", "assemble", "assemble_ptx_input",
           "sass_guard", "sass_memory", "first_error_line"]
