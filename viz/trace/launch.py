"""Launch files: a real CUDA source, one kernel in it, its launch and its arguments (TOML).

Pure data; nothing here runs anything. ``load_launch`` checks every key and value and
raises ``TraceError`` with one paragraph (file, key, problem, fix) for a bad file. The
check of the arguments against the kernel's real parameters needs the compiled PTX
(``check_params``).

A launch file is hostile until checked (docs/trace-format.md, "What a launch file may
say"): it and its source are read only when they are regular files under a size limit
(``read_text_file``: no pipe or device is opened for long, nothing unbounded is read),
as UTF-8; the source and the include folders resolve inside the launch file's folder and
hold none of the characters a shell gives a meaning inside double quotes (nvcc runs its
sub-steps through ``sh``, and it passes paths on quoted but not escaped); define names are
C identifiers and their values single lines, written into a header, never onto a command
line (``viz.trace.build``).

Format 2 (docs/trace-format.md, "Launch-file format 2") adds C++ kernel names
(``viz.trace.names``: checked here, matched against the compiled entries by
``viz.trace.build``), ``ptx`` in place of ``source`` (a PTX module from Triton, CuPy, Numba
or ``nvcc -ptx``, read as hostile text: bounded, UTF-8, its header checked here, its entry,
parameters and ``ptxas`` acceptance before anything runs), ``count = 0`` (a NULL pointer)
and buffers filled from files (``fill = "file:..."``, raw bytes, or ``"npy:..."``, a NumPy
array read without pickles), whose paths follow the rules of ``source``.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import cut
from ..fileio import format_bytes as _bytes
from . import TraceError

FORMAT = 2                       # the newest launch-file format this warpviz reads
FORMATS = (1, 2)
KEYS = {"format", "title", "notes", "source", "ptx", "kernel", "block", "grid", "shared_bytes", "defines",
        "include_dirs", "arg", "compare", "buffer", "tensormap", "arch_specific", "relaxed_constexpr"}
BUFFER_TYPES = {"char*": 1, "short*": 2, "half*": 2, "int*": 4, "unsigned*": 4, "float*": 4, "double*": 8,
                "long long*": 8, "int2*": 8, "int4*": 16, "float2*": 8, "float4*": 16, "double2*": 16, "void*": 1}
SCALAR_TYPES = {"char": 1, "short": 2, "int": 4, "unsigned": 4, "long long": 8, "unsigned long long": 8,
                "float": 4, "double": 8}
FILLS = ("zero", "iota", "ones", "random")
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BUFFER_BYTES = 256 << 30     # a sanity bound before asking the GPU (above any GPU's memory); ``check_fits`` checks the GPU's
MAX_SHARED_BYTES = 227 * 1024    # H100's opt-in maximum per block
MAX_LAUNCH_FILE_BYTES = 1 << 20  # a launch file is a few hundred bytes; 1 MiB is generous
MAX_SOURCE_BYTES = 8 << 20       # one CUDA source file (the kernel's own; headers it includes are nvcc's business)
MAX_PTX_BYTES = 32 << 20         # one PTX module (a Triton matmul's is ~200 KB; nvcc's of a whole sample file ~2 MB)
MAX_PTX_LINES = 500_000          # lines of one PTX module (nvcc's of a whole sample file: ~60,000), checked before parsing
MAX_DATA_BYTES = MAX_BUFFER_BYTES  # a fill file holds one buffer
MAX_DEFINES = 256
MAX_DEFINE_CHARS = 4096          # one define's value
MAX_INCLUDE_DIRS = 64
MAX_NAME_CHARS = 1024            # a kernel or define name
MAX_MANGLED_CHARS = 16384        # format 2: a kernel named by its mangled name (CUTLASS's run past 1,024)
MAX_ARGS = 4096                  # [[arg]] tables (CUDA's parameter space is 32 KiB: at most 4096 pointers)
# Inside the double quotes nvcc puts around a path for ``sh``, these still mean something (`$`,
# the backquote, `\`, `"`), or nvcc rewrites them (`'`). Control characters (newlines, NUL...)
# have no place in a path or a define either.
SHELL_CHARS = "$`\\\"'"
C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Arg:
    type: str
    count: int = 0          # buffers: elements (0: a NULL pointer, format 2)
    fill: str = "iota"      # also "file:PATH", "npy:PATH" (format 2) and "data" (``data``, from Python)
    value: float | int = 0  # scalars
    path: Path | None = field(default=None, compare=False)        # a file: / npy: fill's file, resolved and checked
    data: object = field(default=None, compare=False, repr=False)  # the buffer's bytes (numpy uint8), from Python
    name: str = ""          # format 2: a buffer's name, for tensor maps and pointers that refer to it
    spec: object = None     # type tensormap / pointer / struct: its ``viz.trace.tensormaps.ParamSpec``

    @property
    def is_buffer(self) -> bool:
        return self.type.endswith("*")

    @property
    def is_null(self) -> bool:
        """A pointer passed as NULL (``count = 0``)."""
        return self.is_buffer and self.count == 0

    @property
    def element_bytes(self) -> int:
        if self.spec is not None:
            return self.spec.size
        return BUFFER_TYPES[self.type] if self.is_buffer else SCALAR_TYPES[self.type]

    @property
    def nbytes(self) -> int:
        return self.count * self.element_bytes if self.is_buffer else self.element_bytes

    def as_dict(self) -> dict:
        if self.spec is not None:
            return {"type": self.type, **self.spec.as_dict()}
        if self.is_buffer:
            d = {"type": self.type, "count": self.count, "fill": self.fill}
            if self.name:
                d["name"] = self.name
            return d
        return {"type": self.type, "value": self.value}


@dataclass(frozen=True)
class Launch:
    path: Path
    text: str
    title: str
    notes: str
    source: Path
    kernel: str
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    shared_bytes: int
    defines: dict[str, str] = field(default_factory=dict)
    include_dirs: tuple[Path, ...] = ()
    args: tuple[Arg, ...] = ()
    compare: str = ""       # the trace (or scenario) the app compares this kernel's trace with
    source_text: str = ""   # the source as read when the file was loaded (checked: UTF-8, under MAX_SOURCE_BYTES)
    ptx: bool = False       # ``source`` is a PTX module (the `ptx` key, format 2), not CUDA C++
    entry: str = ""         # the kernel's PTX entry, set by ``viz.trace.build`` once resolved
    format: int = 1
    extra_sources: dict = field(default_factory=dict, compare=False)  # {file name: text} shown beside the
    #                          source (a Triton kernel's Python file, given by ``viz.api``)
    buffers: tuple[Arg, ...] = ()   # [[buffer]]: named buffers no parameter is (viz.trace.tensormaps)
    tensormaps: tuple = ()          # [[tensormap]]: ``viz.trace.tensormaps.TensorMapSpec``s
    arch_specific: bool = False     # compile for the GPU's architecture-specific target (sm_90a)
    relaxed_constexpr: bool = False  # nvcc --expt-relaxed-constexpr (CUTLASS needs it)

    @property
    def name(self) -> str:
        n = self.path.name
        for suffix in (".launch.toml", ".toml"):
            if n.endswith(suffix):
                return n[:-len(suffix)]
        return n

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def warps_per_block(self) -> int:
        return -(-self.threads_per_block // 32)

    def buffer_offsets(self) -> list[int]:
        """Each buffer's byte offset in one allocation (256-byte aligned, in order); -1 for
        scalars and for NULL pointers (``count = 0``), which take no space."""
        out, at = [], 0
        for a in self.args:
            if a.is_buffer and not a.is_null:
                out.append(at)
                at += -(-max(a.nbytes, 1) // 256) * 256
            else:
                out.append(-1)
        return out

    @property
    def buffer_bytes(self) -> int:
        at = 0
        for a in self.args + self.buffers:
            if a.is_buffer and not a.is_null:
                at += -(-max(a.nbytes, 1) // 256) * 256
        return max(at, 256)

    def named_offsets(self) -> dict[str, int]:
        """{name: byte offset in the allocation} of the named buffers: buffer [[arg]]s with a
        ``name``, then the [[buffer]] tables, placed after the [[arg]] buffers (256-byte aligned)."""
        out, at = {}, 0
        for a, off in zip(self.args, self.buffer_offsets()):
            if off >= 0:
                at = off + -(-max(a.nbytes, 1) // 256) * 256
                if a.name:
                    out[a.name] = off
        for b in self.buffers:
            out[b.name] = at
            at += -(-max(b.nbytes, 1) // 256) * 256
        return out

    @property
    def function(self) -> str:
        """The kernel's name in the PTX (the entry a cubin is asked for): ``entry`` once
        ``viz.trace.build`` resolved the launch file's ``kernel``, else ``kernel`` itself."""
        return self.entry or self.kernel

    @property
    def short_name(self) -> str:
        """The kernel's own identifier, as its definition spells it: ``MatrixMulCUDA`` for
        ``MatrixMulCUDA<32>``, ``scan`` for ``ns::scan<float>(float*)`` (what the app looks for
        in the source)."""
        return self.kernel.split("(")[0].split("<")[0].split("::")[-1].strip() or self.kernel

    @property
    def kernel_name(self):
        """``kernel`` as a checked ``viz.trace.names.KernelName``."""
        from .names import KernelName, parse_kernel_name

        if C_IDENTIFIER.fullmatch(self.kernel):
            return KernelName(self.kernel, self.kernel)
        return parse_kernel_name(self.kernel)


def check_fits(launch: Launch, free_bytes: int, gpu: str = "the GPU") -> None:
    """Before anything is allocated: raise ``TraceError`` when the launch's buffers (one
    allocation, each buffer 256-byte aligned) need more than the GPU's free memory. The
    paragraph names the largest buffer, its size, the total and the free memory."""
    if launch.buffer_bytes <= free_bytes:
        return
    raise _too_large(launch, f", but {gpu} has {_bytes(free_bytes)} free; nothing was allocated")


def _too_large(launch: Launch, why: str) -> TraceError:
    """The paragraph of a launch whose buffers do not fit: it names the largest buffer, its
    size and the total, then ``why`` (where they do not fit)."""
    need = launch.buffer_bytes
    bufs = [(a.nbytes, n) for n, a in enumerate(launch.args, 1) if a.is_buffer]
    size, n = max(bufs)
    a = launch.args[n - 1]
    others = f" (all {len(bufs)} buffers together: {_bytes(need)})" if len(bufs) > 1 else ""
    return TraceError(launch.path, f"arg {n}.count",
                      f"buffer [[arg]] {n} ({a.type}, count = {a.count:,}) needs {_bytes(size)}{others}{why}",
                      "use smaller `count`s (a trace needs only a small launch)")


def host_memory() -> int | None:
    """Bytes this process may still allocate: the system's available memory (Linux
    ``MemAvailable``), or less where an address-space limit (``ulimit -v``) says so; None
    where neither can be read."""
    avail = None
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f.read(1 << 16).decode("ascii", "replace").splitlines():
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        avail = None
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            used = 0
            with open("/proc/self/status", "rb") as f:
                for line in f.read(1 << 16).decode("ascii", "replace").splitlines():
                    if line.startswith("VmSize:"):
                        used = int(line.split()[1]) * 1024
            room = max(0, soft - used)
            avail = room if avail is None else min(avail, room)
    except (ImportError, OSError, ValueError, IndexError):
        pass
    return avail


def check_host_memory(launch: Launch, available: int | None = None) -> None:
    """Before the buffers are filled on the host (they are, before they go to the GPU):
    ``TraceError`` naming the largest buffer when they need more than half of the memory
    this process may still take (``host_memory``; the fill needs room to work: a random
    float buffer is drawn in doubles first)."""
    available = host_memory() if available is None else available
    if available is None or launch.buffer_bytes <= available // 2:
        return
    raise _too_large(launch, f"; the buffers are filled in this machine's memory before they go to the GPU, and it "
                             f"has {_bytes(available)} available (warpviz takes at most half of it); nothing was "
                             "allocated")



def _dims(path, key: str, v) -> tuple[int, int, int]:
    if isinstance(v, int) and not isinstance(v, bool):
        v = [v]
    if not isinstance(v, list) or not 1 <= len(v) <= 3 or not all(isinstance(x, int) and not isinstance(x, bool)
                                                                  for x in v):
        raise TraceError(path, key, f"`{key}` must be a list of 1 to 3 integers, not {_r(v)}",
                         f"write e.g. `{key} = [256]` or `{key} = [32, 8]`")
    if any(x <= 0 for x in v):
        raise TraceError(path, key, f"`{key}` = {v} has an extent of zero or less: nothing would run",
                         "give every extent a positive value")
    return tuple(list(v) + [1] * (3 - len(v)))  # type: ignore[return-value]


def _r(value, n: int = 80) -> str:
    """``repr(value)``, at most ``n`` characters (a message stays one short paragraph)."""
    try:
        r = repr(value)
    except ValueError:              # an integer too long to print
        return "a number of thousands of digits"
    return r if len(r) <= n else r[:n] + "…"


def _k(text: str) -> str:
    """A key or type name as written, or its bounded ``repr`` when it is long or holds control characters."""
    return text if len(text) <= 80 and not _controls(text) else _r(text)


def unsafe_chars(text: str) -> str:
    """The characters of ``text`` that may not reach nvcc's command line (``SHELL_CHARS`` and
    control characters), shown, in order of appearance; "" when there are none."""
    bad = []
    for c in text:
        if (c in SHELL_CHARS or ord(c) < 32 or ord(c) == 127) and c not in bad:
            bad.append(c)
    return " ".join(repr(c) for c in bad)


def _controls(text: str, allow: str = "") -> bool:
    return any((ord(c) < 32 or ord(c) == 127) and c not in allow for c in text)


def inside_folder(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _folder_path(path, key: str, value: str, here: Path, kind: str) -> Path:
    """``value`` (a ``source`` or ``include_dirs`` entry) resolved against the launch file's
    folder ``here``; refused unless it stays inside that folder and its resolved path is safe
    on nvcc's command line."""
    if not value:
        raise TraceError(path, key, f"the {kind} is an empty path", "give a path relative to the launch file")
    if "\0" in value or _controls(value):
        raise TraceError(path, key, f"the {kind} {_r(value)} holds control characters (a NUL byte, a newline...)",
                         "give a plain relative path")
    bad = unsafe_chars(value)
    if bad:
        raise TraceError(path, key, f"the {kind} {_r(value)} holds {bad}: nvcc passes paths to `sh`, where these "
                         "characters mean something", "rename the file or folder without $ ` \\ \" '")
    if Path(value).is_absolute() or value.startswith("~"):
        raise TraceError(path, key, f"the {kind} {_r(value)} is not relative to the launch file",
                         "give a path relative to the launch file's folder (inside it)")
    try:
        resolved = (here / value).resolve()
    except (OSError, RuntimeError, ValueError) as err:
        raise TraceError(path, key, f"the {kind} {_r(value)} cannot be resolved ({err})",
                         "give a path relative to the launch file's folder") from None
    if not inside_folder(resolved, here):
        raise TraceError(path, key, f"the {kind} {_r(value)} leads outside the launch file's folder ({_r(str(resolved), 200)})",
                         "keep the source and its include folders in the launch file's folder or below it "
                         "(move the launch file up)")
    bad = unsafe_chars(str(resolved))
    if bad:
        raise TraceError(path, key, f"the {kind}'s full path {_r(str(resolved), 200)} holds {bad}: nvcc passes paths to "
                         "`sh`, where these characters mean something",
                         "move the launch file and its source to a folder whose path has none of $ ` \\ \" '")
    return resolved


def parse_launch(text: str, path: Path) -> Launch:
    path = Path(path)
    if len(text) > MAX_LAUNCH_FILE_BYTES:
        raise TraceError(path, "", f"the launch file has {len(text):,} characters, over the limit of "
                         f"{MAX_LAUNCH_FILE_BYTES:,}", "a launch file is a few lines: give the right file")
    try:
        d = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise TraceError(path, "", f"not valid TOML: {err}", "fix the TOML syntax at the line named") from None
    except RecursionError:
        raise TraceError(path, "", "not a launch file: its tables or lists are nested too deeply to read",
                         "a launch file's values nest at most two levels (see docs/trace-format.md)") from None
    except ValueError as err:        # an integer of thousands of digits
        raise TraceError(path, "", f"not a launch file: {str(err)[:120]}", "write numbers of at most 19 digits") from None
    unknown = sorted(set(d) - KEYS)
    if unknown:
        raise TraceError(path, _k(unknown[0]), f"unknown key `{_k(unknown[0])}`",
                         "the keys are " + ", ".join(sorted(KEYS)) + " (`arg` as [[arg]] tables)")
    fmt = d.get("format", 1)
    if isinstance(fmt, bool) or fmt not in FORMATS:
        raise TraceError(path, "format", f"launch-file format {_r(fmt)} is not known to this warpviz (it reads "
                         f"{', '.join(map(str, FORMATS))})", f"write `format = {FORMAT}` or `format = 1`, or update warpviz")

    def needs_2(key: str, what: str) -> None:
        if fmt < 2:
            raise TraceError(path, key, f"{what} is launch-file format 2, but the file does not say so",
                             "add `format = 2` at the top of the launch file")

    for key in ("title", "notes", "source", "ptx", "kernel", "compare"):
        if key in d and not isinstance(d[key], str):
            raise TraceError(path, key, f"`{key}` must be a string", f'write `{key} = "..."`')
    if "ptx" in d:
        needs_2("ptx", "`ptx`")
        if "source" in d:
            raise TraceError(path, "ptx", "the file names both `source` and `ptx`: a kernel comes from one of them",
                             "keep `source` (CUDA C++) or `ptx` (a PTX module), not both")
        for key in ("defines", "include_dirs"):
            if key in d:
                raise TraceError(path, key, f"`{key}` is for compiling a CUDA source; a `ptx` module is already "
                                 "compiled", f"remove `{key}` (or give the CUDA `source` instead of `ptx`)")
    for key in ("source", "kernel", "block", "grid"):
        if key not in d and not (key == "source" and "ptx" in d):
            extra = " (or, in format 2, `ptx`: a PTX module)" if key == "source" else ""
            raise TraceError(path, key, f"the key `{key}` is missing{extra}",
                             f"add `{key} = ...` (see docs/trace-format.md)")
    kernel = d["kernel"]
    if fmt < 2 or C_IDENTIFIER.fullmatch(kernel.strip()):
        if len(kernel) > (MAX_NAME_CHARS if fmt < 2 else MAX_MANGLED_CHARS) or not C_IDENTIFIER.fullmatch(kernel):
            if fmt < 2 and len(kernel) <= MAX_NAME_CHARS and _c_plus_plus_name(kernel):
                needs_2("kernel", f"the C++ kernel name `{kernel}`")
            raise TraceError(path, "kernel", f"`kernel = {_r(kernel)}` is not a C identifier",
                             'name a __global__ function of the source (format 2 also takes C++ names: '
                             '`ns::k`, `k<32>`, `f(float*, int)`)')
    else:
        from .names import KernelNameError, parse_kernel_name

        try:
            parse_kernel_name(kernel)
        except KernelNameError as err:
            raise TraceError(path, "kernel", err.problem, err.fix) from None
    kernel = kernel.strip()
    block = _dims(path, "block", d["block"])
    grid = _dims(path, "grid", d["grid"])
    if block[0] * block[1] * block[2] > MAX_THREADS_PER_BLOCK or block[2] > 64:
        raise TraceError(path, "block", f"a block of {block[0] * block[1] * block[2]} threads {list(block)} is over "
                         f"CUDA's limit ({MAX_THREADS_PER_BLOCK} threads, z at most 64)", "use a smaller block")
    for k, (g, lim) in enumerate(zip(grid, MAX_GRID)):
        if g > lim:
            raise TraceError(path, "grid", f"grid extent {'xyz'[k]} = {g} is over CUDA's limit {lim}",
                             "use a smaller grid")
    shared = d.get("shared_bytes", 0)
    if not isinstance(shared, int) or isinstance(shared, bool) or not 0 <= shared <= MAX_SHARED_BYTES:
        raise TraceError(path, "shared_bytes", f"`shared_bytes = {_r(shared)}` must be an integer from 0 to "
                         f"{MAX_SHARED_BYTES}", "give the dynamic shared memory per block in bytes")
    defines = _defines(path, d.get("defines", {}))
    incs = d.get("include_dirs", [])
    if not isinstance(incs, list) or not all(isinstance(x, str) for x in incs):
        raise TraceError(path, "include_dirs", "`include_dirs` must be a list of strings",
                         'write e.g. `include_dirs = ["include"]`')
    if len(incs) > MAX_INCLUDE_DIRS:
        raise TraceError(path, "include_dirs", f"{len(incs)} include folders, over the limit of {MAX_INCLUDE_DIRS}",
                         "name only the folders the source includes from")
    try:
        here = path.parent.resolve()
    except (OSError, RuntimeError) as err:
        raise TraceError(path, "", f"the launch file's folder cannot be resolved ({err})", "check the path") from None
    is_ptx = "ptx" in d
    if is_ptx:
        name = d["ptx"]
        source = _folder_path(path, "ptx", name, here, "PTX file")
        if not name.endswith(".ptx"):
            raise TraceError(path, "ptx", f"the PTX file {_r(name)} is not a .ptx file",
                             "save the PTX as NAME.ptx (Triton: `compiled.asm[\"ptx\"]`; nvcc: `nvcc -ptx`)")
        if not source.exists():
            raise TraceError(path, "ptx", f"the PTX file `{name}` does not exist (looked for {source})",
                             "give the .ptx file's path relative to the launch file")
        source_text = read_text_file(source, "PTX file", MAX_PTX_BYTES, report=(path, "ptx"))
        check_ptx_text(path, source_text)
    else:
        name = d["source"]
        source = _folder_path(path, "source", name, here, "source")
        if not name.endswith(".cu"):
            raise TraceError(path, "source", f"the source {_r(name)} is not a .cu file (nvcc treats a file by its "
                             "extension)", "give the CUDA source file (NAME.cu)")
        if not source.exists():
            raise TraceError(path, "source", f"the source `{name}` does not exist (looked for {source})",
                             "give the .cu file's path relative to the launch file")
        source_text = read_text_file(source, "CUDA source", MAX_SOURCE_BYTES, report=(path, "source"))
    include_dirs = []
    for k, x in enumerate(incs):
        where = f"include_dirs[{k}]"
        inc = _folder_path(path, where, x, here, "include folder")
        if not inc.is_dir():
            raise TraceError(path, where, f"the include folder {_r(x)} is not a folder (looked for {inc})",
                             "give an existing folder relative to the launch file")
        include_dirs.append(inc)
    raw_args = d.get("arg", [])
    if not isinstance(raw_args, list):
        raise TraceError(path, "arg", "`arg` must be [[arg]] tables, one per kernel parameter",
                         'write one `[[arg]]` table with `type = "..."` per parameter')
    if len(raw_args) > MAX_ARGS:
        raise TraceError(path, "arg", f"{len(raw_args):,} [[arg]] tables, over the limit of {MAX_ARGS:,} (CUDA's "
                         "parameter space holds at most 32 KiB)", "give one [[arg]] per kernel parameter")
    args, buffers, maps = _args_and_maps(path, d, raw_args, fmt, here, needs_2)
    total = sum(a.nbytes for a in args + buffers if a.is_buffer)
    if total > MAX_BUFFER_BYTES:
        raise TraceError(path, "arg", f"the buffers need {total / 2**30:.1f} GiB, over warpviz's limit of "
                         f"{MAX_BUFFER_BYTES >> 30} GiB", "use smaller `count`s (a small launch traces quickly)")
    flags = {}
    for key in ("arch_specific", "relaxed_constexpr"):
        if key in d:
            needs_2(key, f"`{key}`")
            if not isinstance(d[key], bool):
                raise TraceError(path, key, f"`{key}` must be true or false", f"write `{key} = true`")
            if is_ptx:
                raise TraceError(path, key, f"`{key}` is for compiling a CUDA source; a `ptx` module is already "
                                 "compiled", f"remove `{key}`")
            flags[key] = d[key]
    return Launch(path, text, d.get("title", path.name), d.get("notes", ""), source, kernel, block, grid,
                  shared, defines, tuple(include_dirs), tuple(args), d.get("compare", ""), source_text, is_ptx,
                  format=fmt, buffers=tuple(buffers), tensormaps=tuple(maps), **flags)


def _args_and_maps(path, d: dict, raw_args: list, fmt: int, here: Path, needs_2):
    """The [[arg]] tables, the [[buffer]] tables and the [[tensormap]] tables
    (``viz.trace.tensormaps``): buffers first, then the maps that describe them, then the
    tensor-map, pointer and struct [[arg]]s that refer to both."""
    from . import tensormaps as tm

    args: list = [None] * len(raw_args)
    named: dict[str, int] = {}
    buffers = []
    raw_buffers = d.get("buffer", [])
    if "buffer" in d:
        needs_2("buffer", "[[buffer]]")
    if not isinstance(raw_buffers, list) or len(raw_buffers) > tm.MAX_BUFFERS:
        raise TraceError(path, "buffer", f"`buffer` must be at most {tm.MAX_BUFFERS} [[buffer]] tables",
                         'write `[[buffer]]` with `name`, `type`, `count`, `fill`')
    for n, b in enumerate(raw_buffers, 1):
        where = f"buffer {n}"
        if not isinstance(b, dict):
            raise TraceError(path, where, "each [[buffer]] must be a table", "write `[[buffer]]` then its keys")
        name = tm.parse_buffer_name(path, f"{where}.name", b.get("name"))
        t = b.get("type")
        if not isinstance(t, str) or not t.strip().endswith("*"):
            raise TraceError(path, f"{where}.type", f"[[buffer]] {name} needs a buffer type such as `half*`",
                             "use one of " + ", ".join(BUFFER_TYPES))
        if b.get("count") == 0:
            raise TraceError(path, f"{where}.count", f"[[buffer]] {name} needs `count` > 0", "give its elements")
        a = _arg(path, n, {k: v for k, v in b.items() if k != "name"}, fmt, here, where)
        if name in named:
            raise TraceError(path, f"{where}.name", f"two buffers are named `{name}`", "give each its own name")
        named[name] = a.nbytes
        buffers.append(Arg(a.type, a.count, a.fill, a.value, a.path, name=name))
    for n, a in enumerate(raw_args, 1):
        if isinstance(a, dict) and a.get("type") in tm.TYPES:
            needs_2(f"arg {n}.type", f"`type = \"{a['type']}\"`")
            continue
        arg = _arg(path, n, a, fmt, here)
        if isinstance(a, dict) and "name" in a:
            if fmt < 2 or not arg.is_buffer or arg.is_null:
                raise TraceError(path, f"arg {n}.name", "only a buffer [[arg]] (format 2, `count` > 0) has a `name`",
                                 "remove `name`")
            name = tm.parse_buffer_name(path, f"arg {n}.name", a["name"])
            if name in named:
                raise TraceError(path, f"arg {n}.name", f"two buffers are named `{name}`", "give each its own name")
            named[name] = arg.nbytes
            arg = Arg(arg.type, arg.count, arg.fill, arg.value, arg.path, name=name)
        args[n - 1] = arg
    raw_maps = d.get("tensormap", [])
    if "tensormap" in d:
        needs_2("tensormap", "[[tensormap]]")
    if not isinstance(raw_maps, list) or len(raw_maps) > tm.MAX_TENSORMAPS:
        raise TraceError(path, "tensormap", f"`tensormap` must be at most {tm.MAX_TENSORMAPS} [[tensormap]] tables",
                         "write one [[tensormap]] table per map")
    maps = {}
    for n, t in enumerate(raw_maps, 1):
        spec = tm.parse_tensormap(path, n, t, named)
        if spec.name in maps:
            raise TraceError(path, f"tensormap {n}.name", f"two tensor maps are named `{spec.name}`",
                             "give each its own name")
        maps[spec.name] = spec
    for n, a in enumerate(raw_args, 1):
        if args[n - 1] is None:
            args[n - 1] = Arg(a["type"], spec=tm.parse_param(path, n, a, named, maps))
    return args, buffers, list(maps.values())


def _c_plus_plus_name(text: str) -> bool:
    """Does ``text`` read as a C++ kernel name (format 2) rather than a C identifier?"""
    from .names import KernelNameError, parse_kernel_name

    try:
        parse_kernel_name(text)
    except KernelNameError:
        return False
    return True


def ptx_size_problem(text: str) -> str | None:
    """What is wrong with the size of a PTX module's text (over MAX_PTX_BYTES, or over
    MAX_PTX_LINES lines), or None: checked before any of it is parsed."""
    if len(text) > MAX_PTX_BYTES:
        return f"the PTX has {len(text):,} characters, over warpviz's limit of {MAX_PTX_BYTES:,} for one module"
    lines = text.count("\n") + 1
    if lines > MAX_PTX_LINES:
        return f"the PTX has {lines:,} lines, over warpviz's limit of {MAX_PTX_LINES:,} for one module"
    return None


def check_ptx_text(path, text: str, key: str = "ptx") -> None:
    """A PTX module's text checked before it is used (``viz.trace.module.header``): a
    ``.version``, a GPU ``.target``, 64-bit addresses, at least one kernel, no NUL byte.
    Raises ``TraceError`` naming ``path`` and ``key``."""
    from .module import PtxModuleError, entry_names, header

    if "\0" in text:
        raise TraceError(path, key, "the PTX holds a NUL byte (it is not PTX text)",
                         "give the PTX as its compiler wrote it")
    problem = ptx_size_problem(text)
    if problem:
        raise TraceError(path, key, problem, "give the PTX of the kernel's own module (Triton: "
                         "`compiled.asm[\"ptx\"]`; nvcc: `nvcc -ptx` of the one source file)")
    try:
        header(text)
    except PtxModuleError as err:
        raise TraceError(path, key, err.problem, err.fix) from None
    if not entry_names(text):
        raise TraceError(path, key, "the PTX has no kernel (no `.entry` function)",
                         "give the PTX of a kernel (a __global__ function, a @triton.jit function...)")


def _defines(path, defines) -> dict[str, str]:
    """``defines`` checked: a table of at most MAX_DEFINES C identifiers, each a number or a
    one-line string (what ``#define NAME value`` takes); the values as text."""
    if not isinstance(defines, dict):
        raise TraceError(path, "defines", "`defines` must be a table of NAME = value",
                         "write e.g. `defines = { TILE = 32 }`")
    if len(defines) > MAX_DEFINES:
        raise TraceError(path, "defines", f"{len(defines)} defines, over the limit of {MAX_DEFINES}",
                         "define fewer names (or put them in a header the source includes)")
    out = {}
    for k, v in defines.items():
        if len(k) > MAX_NAME_CHARS or not C_IDENTIFIER.fullmatch(k):
            raise TraceError(path, "defines", f"the define name {k[:80]!r} is not a C identifier (letters, digits "
                             "and _, not starting with a digit)", "write e.g. `defines = { TILE = 32 }`")
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise TraceError(path, f"defines.{k}", f"the value of `{k}` must be a number or a string",
                             f'write e.g. `defines = {{ {k} = 32 }}`')
        text = str(v)
        if isinstance(v, str):
            if _controls(text, allow="\t"):
                raise TraceError(path, f"defines.{k}", f"the value of `{k}` holds control characters (a newline, "
                                 "a NUL byte...): a define is one line", "write the value on one line")
            if text.endswith("\\"):
                raise TraceError(path, f"defines.{k}", f"the value of `{k}` ends with a backslash, which would "
                                 "continue the define onto the next line", "remove the trailing backslash")
            if len(text) > MAX_DEFINE_CHARS:
                raise TraceError(path, f"defines.{k}", f"the value of `{k}` has {len(text):,} characters, over the "
                                 f"limit of {MAX_DEFINE_CHARS:,}", "put a long definition in a header the source "
                                 "includes")
        out[k] = text
    return out


def _arg(path, n: int, a, fmt: int = 1, here: Path | None = None, where: str = "") -> Arg:
    where = where or f"arg {n}"
    if not isinstance(a, dict):
        raise TraceError(path, where, "each [[arg]] must be a table", 'write `[[arg]]` followed by `type = "..."`')
    unknown = sorted(set(a) - {"type", "count", "fill", "value"} - ({"name"} if fmt >= 2 else set()))
    if unknown:
        raise TraceError(path, f"{where}.{_k(unknown[0])}", f"unknown key `{_k(unknown[0])}` in [[arg]] {n}",
                         "an [[arg]] has `type` and either `count` (+ `fill`) or `value`")
    t = a.get("type")
    if not isinstance(t, str):
        raise TraceError(path, f"{where}.type", f"[[arg]] {n} has no `type`", 'add e.g. `type = "float*"`')
    t = " ".join(t.replace("*", " *").split()).replace(" *", "*")
    if t.endswith("*"):
        if t not in BUFFER_TYPES:
            raise TraceError(path, f"{where}.type", f"unknown buffer type `{_k(t)}`",
                             "use one of " + ", ".join(BUFFER_TYPES))
        count = a.get("count")
        if fmt >= 2 and count == 0 and not isinstance(count, bool):
            if "fill" in a or "value" in a:
                raise TraceError(path, f"{where}.fill", f"[[arg]] {n} has `count = 0`: it is passed as NULL and "
                                 "has no contents to fill", "remove `fill` (or give a `count` > 0)")
            return Arg(t, 0, "zero")
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            zero = " (`count = 0`, a NULL pointer, is launch-file format 2)" if count == 0 else ""
            raise TraceError(path, f"{where}.count", f"buffer [[arg]] {n} needs `count` > 0 (elements), not "
                             f"{_r(count)}{zero}", "write e.g. `count = 1048576`")
        fill = a.get("fill", "iota")
        data_path = None
        if isinstance(fill, str) and fill.startswith(("file:", "npy:")):
            if fmt < 2:
                raise TraceError(path, f"{where}.fill", f"`fill = {_r(fill)}` (data from a file) is launch-file "
                                 "format 2, but the file does not say so", "add `format = 2` at the top of the "
                                 "launch file")
            data_path = _data_file(path, f"{where}.fill", n, fill, t, count, here or Path(path).parent.resolve())
        elif fill not in FILLS:
            files = ', "file:PATH" (raw bytes), "npy:PATH" (a NumPy array)' if fmt >= 2 else ""
            raise TraceError(path, f"{where}.fill", f"unknown fill {_r(fill)}",
                             "use one of " + ", ".join(FILLS) + files)
        if "value" in a:
            raise TraceError(path, f"{where}.value", f"buffer [[arg]] {n} takes `count`, not `value`",
                             "remove `value`; give the number of elements as `count`")
        return Arg(t, count, fill, path=data_path)
    if t not in SCALAR_TYPES:
        raise TraceError(path, f"{where}.type", f"unknown type `{_k(t)}`",
                         "scalars: " + ", ".join(SCALAR_TYPES) + "; buffers: " + ", ".join(BUFFER_TYPES))
    v = a.get("value")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TraceError(path, f"{where}.value", f"scalar [[arg]] {n} needs a numeric `value`", "write e.g. `value = 1024`")
    if t not in ("float", "double"):
        if not isinstance(v, int):
            raise TraceError(path, f"{where}.value", f"`{t}` [[arg]] {n} needs an integer value, not {_r(v)}",
                             "write a whole number, or declare the parameter as float/double")
        bits = SCALAR_TYPES[t] * 8
        lo, hi = (0, 2**bits - 1) if t.startswith("unsigned") else (-(2**(bits - 1)), 2**(bits - 1) - 1)
        if not lo <= v <= hi:
            raise TraceError(path, f"{where}.value", f"{_r(v)} does not fit in `{t}`", f"use a value from {lo} to {hi}")
    if "count" in a or "fill" in a:
        raise TraceError(path, f"{where}.count", f"scalar [[arg]] {n} takes `value`, not `count`/`fill`",
                         "remove `count`/`fill`, or give a pointer type such as float*")
    return Arg(t, 0, "iota", v)


# ---------------------------------------------------------------------------- data files

# The NumPy element type of each buffer type's components (vector types: their scalar).
COMPONENT = {"char*": ("i", 1), "short*": ("i", 2), "half*": ("f", 2), "int*": ("i", 4), "unsigned*": ("i", 4),
             "float*": ("f", 4), "double*": ("f", 8), "long long*": ("i", 8), "int2*": ("i", 4), "int4*": ("i", 4),
             "float2*": ("f", 4), "float4*": ("f", 4), "double2*": ("f", 8), "void*": (None, 1)}


def _data_file(path, where: str, n: int, fill: str, t: str, count: int, here: Path) -> Path:
    """A ``file:`` / ``npy:`` fill's file, resolved and checked before anything is read
    beyond a ``.npy`` header: inside the launch file's folder, a regular file, of exactly
    the buffer's size (``file:``) or holding exactly its elements in a compatible dtype,
    without objects (``npy:``). Returns the resolved path."""
    kind, rel = fill.split(":", 1)
    p = _folder_path(path, where, rel, here, "data file")
    need = count * BUFFER_TYPES[t]
    st = _regular_file(path, where, p, rel)
    if kind == "file":
        if st.st_size != need:
            per = BUFFER_TYPES[t]
            hint = (f", or set `count = {st.st_size // per:,}` to use the whole file"
                    if st.st_size % per == 0 and st.st_size else "")
            raise TraceError(path, where, f"the data file {_r(rel)} has {st.st_size:,} bytes, but [[arg]] {n} "
                             f"({t}, count = {count:,}) needs exactly {count:,} x {per} = {need:,} bytes",
                             f"give a file of exactly {need:,} bytes{hint}")
        return p
    _npy_check(path, where, n, rel, p, st.st_size, t, count)
    return p


def _regular_file(path, where: str, p: Path, rel: str):
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise TraceError(path, where, f"the data file {_r(rel)} does not exist (looked for {_r(str(p), 200)})",
                         "give the file's path relative to the launch file") from None
    except OSError as err:
        raise TraceError(path, where, f"cannot read the data file {_r(rel)}: {err.strerror or err}",
                         "check the path") from None
    if not stat.S_ISREG(st.st_mode):
        raise TraceError(path, where, f"the data file {_r(rel)} is not a regular file (a folder, a pipe or a device)",
                         "give a file saved on disk")
    if st.st_size > MAX_DATA_BYTES + (1 << 20):
        raise TraceError(path, where, f"the data file {_r(rel)} has {st.st_size:,} bytes, over warpviz's limit",
                         "give a smaller buffer (a trace needs only a small launch)")
    return st


def npy_header(f) -> tuple[tuple[int, ...], bool, object, int]:
    """(shape, fortran_order, dtype, data offset) of an open ``.npy`` file, read without
    unpickling anything (NumPy parses the header as a literal). ValueError for a file that
    is not ``.npy``."""
    import numpy as np

    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(f)
        elif version == (3, 0) and hasattr(fmt, "_read_array_header"):
            shape, fortran, dtype = fmt._read_array_header(f, version)
        else:
            raise ValueError(f"unknown .npy format version {version}")
        shape = tuple(int(x) for x in shape)
    except ValueError:
        raise
    except Exception as err:  # noqa: BLE001 - a damaged header: NumPy's literal parser raises many kinds
        raise ValueError(f"its header cannot be read ({type(err).__name__})") from None
    if any(x < 0 for x in shape) or len(shape) > 32:
        raise ValueError("its header gives an impossible shape")
    return shape, bool(fortran), dtype, f.tell()


def _npy_check(path, where: str, n: int, rel: str, p: Path, size: int, t: str, count: int) -> None:
    """The ``.npy`` file's header against [[arg]] ``n``: a plain numeric array (no objects:
    those would be pickles) of exactly ``count`` elements of the type, and a file that holds
    exactly that many bytes after its header."""
    from ..fileio import ReadRefused, open_regular

    try:
        f, _ = open_regular(p, MAX_DATA_BYTES + (1 << 20), "data file")     # a FIFO swapped in is refused
        with f:
            shape, _, dtype, offset = npy_header(f)
    except ReadRefused as err:
        raise TraceError(path, where, f"the data file {_r(rel)}: {err.problem}", err.fix) from None
    except (OSError, ValueError, SyntaxError, EOFError) as err:
        raise TraceError(path, where, f"the data file {_r(rel)} is not a NumPy .npy file ({str(err)[:120]})",
                         "save the array with numpy.save(...)") from None
    if dtype.hasobject or dtype.fields or dtype.subdtype is not None or dtype.kind not in "biuf":
        raise TraceError(path, where, f"the data file {_r(rel)} holds an array of {dtype} (objects, records or "
                         "text): warpviz reads plain numbers only and never unpickles",
                         "save a plain numeric array (numpy.save(path, a.astype(numpy.float32), allow_pickle=False))")
    elements = 1
    for x in shape:
        elements *= x
    need = count * BUFFER_TYPES[t]
    kind, comp = COMPONENT[t]
    if kind is not None:
        ok = dtype.itemsize == comp and (dtype.kind == "f") == (kind == "f")
        if not ok:
            raise TraceError(path, where, f"the data file {_r(rel)} holds {dtype} numbers, but [[arg]] {n} is "
                             f"`{t}`", f"save it as {'float' if kind == 'f' else 'int'}{comp * 8} "
                             f"(a.astype(numpy.{('float' if kind == 'f' else 'int')}{comp * 8}))")
    if elements * dtype.itemsize != need:
        per = BUFFER_TYPES[t] // (comp if kind is not None else 1)
        want = count * per
        raise TraceError(path, where, f"the data file {_r(rel)} holds {elements:,} elements of shape "
                         f"{_r(list(shape))}, but [[arg]] {n} ({t}, count = {count:,}) needs exactly {want:,}",
                         f"save an array of {want:,} elements, or set `count` to match the file")
    if size != offset + need:
        raise TraceError(path, where, f"the data file {_r(rel)} has {size:,} bytes, but its header says "
                         f"{offset + need:,} (it is truncated or has data after the array)",
                         "save the array again with numpy.save(...)")


def read_data(a: Arg, where: str = "") -> bytes:
    """The bytes of a ``file:`` / ``npy:`` fill, read again at launch time with the same
    checks (a file that changed since the launch file was loaded is refused), little-endian
    and in C order."""
    import numpy as np

    p = a.path
    need = a.nbytes
    if p is None:
        raise TraceError("", where, "the data file of this buffer was not checked", "load the launch file again")
    from ..fileio import ReadRefused, open_regular

    try:
        f, _ = open_regular(p, MAX_DATA_BYTES + (1 << 20), "data file")     # a FIFO swapped in is refused
        with f:
            if a.fill.startswith("file:"):
                data = f.read(need + 1)
                if len(data) != need:
                    raise TraceError(p, where, f"the data file has {len(data):,} bytes, the buffer needs "
                                     f"{need:,} (it changed since the launch file was read)", "give the right file")
                return data
            shape, fortran, dtype, offset = npy_header(f)
            if dtype.hasobject or dtype.kind not in "biuf":
                raise TraceError(p, where, "the array is not plain numbers", "save a plain numeric array")
            elements = 1
            for x in shape:
                elements *= x
            if elements * dtype.itemsize != need:
                raise TraceError(p, where, "the array changed since the launch file was read",
                                 "load the launch file again")
            raw = f.read(need + 1)
    except ReadRefused as err:
        raise TraceError(p, where, err.problem, err.fix) from None
    except OSError as err:
        raise TraceError(p, where, f"cannot read the data file: {err.strerror or err}", "check the file") from None
    except ValueError as err:
        raise TraceError(p, where, f"not a NumPy .npy file ({str(err)[:120]})", "save it with numpy.save") from None
    if len(raw) != need:
        raise TraceError(p, where, "the array's data is shorter or longer than its header says",
                         "save the array again with numpy.save(...)")
    arr = np.ascontiguousarray(np.frombuffer(raw, dtype=dtype).reshape(shape, order="F" if fortran else "C"))
    return arr.astype(dtype.newbyteorder("<"), copy=False).tobytes()


def launch_name(path: str | Path) -> str:
    """``NAME`` of ``NAME.launch.toml`` (or ``NAME.toml``): the trace's default name."""
    n = Path(path).name
    for suffix in (".launch.toml", ".toml"):
        if n.lower().endswith(suffix):
            return n[:-len(suffix)]
    return n


def read_text_file(path: str | Path, what: str, limit: int, report: tuple | None = None) -> str:
    """The text of a file that must be a regular file of at most ``limit`` bytes, in UTF-8 (a
    leading byte-order mark is dropped): a pipe, a device or a folder is refused before it is
    read, and no more than ``limit`` + 1 bytes are ever read (a file that grows meanwhile is
    refused too). ``report``: (file, key) to name in the ``TraceError`` instead of the path
    itself (the launch file's ``source``)."""
    p = Path(path)
    owner, key = report if report is not None else (p, "")
    shown = f"the {what} {p}" if report is not None else f"the {what}"

    def fail(problem: str, fix: str):
        raise TraceError(owner, key, problem, fix)

    if "\0" in str(p):
        fail(f"{shown}: the path holds a NUL byte", "give the file's real path")
    from ..fileio import ReadRefused, read_bytes_limited

    try:        # the one bounded reader: a pipe or a device is refused before it is read
        data = read_bytes_limited(p, limit, what)
    except ReadRefused as err:
        if err.kind == "folder":
            fail(f"{shown} is a folder, not a file", "give the file itself")
        if err.kind == "special":
            fail(f"{shown} is not a regular file (a pipe, a device or a socket): warpviz does not read those",
                 "give a file saved on disk")
        if err.kind == "large":
            fail(f"{shown} has {err.size:,} bytes, over warpviz's limit of {limit:,} for a {what}",
                 "give the right file (a " + what + " is far smaller)")
        if err.kind == "grew":
            fail(f"{shown} grew past warpviz's limit of {limit:,} bytes while it was read", "give a file that is "
                 "not being written")
        fail(f"cannot read {shown}: {err.problem}", "check the path and its permissions")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        fail(f"{shown} is not UTF-8 text: line {line} has the byte 0x{data[err.start]:02x}, which UTF-8 does not "
             "allow there", "save the file as UTF-8")
    return text[1:] if text.startswith("\ufeff") else text


def load_launch(path: str | Path) -> Launch:
    p = Path(path)
    text = read_text_file(p, "launch file", MAX_LAUNCH_FILE_BYTES)
    return parse_launch(text, p)


# ---------------------------------------------------------------------------- against the PTX

def ptx_params(ptx: str, kernel: str) -> list[tuple[str, int]] | None:
    """(type, bytes) of each parameter of entry ``kernel`` in the PTX, or None if absent."""
    from .module import params

    ps = params(ptx, kernel)
    return None if ps is None else [(p.type, p.bytes) for p in ps]


def entries(ptx: str) -> list[str]:
    from .module import entry_names

    return entry_names(ptx)


def check_params(launch: Launch, ptx: str, entry: str | None = None, label: str | None = None) -> None:
    """The launch file's [[arg]] tables against the parameters of the kernel's entry in the
    PTX (``entry``, default ``launch.function``): their number, each one's size, a float
    scalar for a float parameter, a buffer (or a NULL ``count = 0``) for a pointer the PTX
    marks ``.ptr``. ``label``: how messages name the kernel (its demangled signature)."""
    from .module import params

    entry = entry or launch.function
    shown = label or launch.kernel
    what = "the PTX" if launch.ptx else "the source"
    ps = params(ptx, entry)
    if ps is None:
        found = entries(ptx)
        raise TraceError(launch.path, "kernel", f"{what} has no kernel `{launch.kernel}`"
                         + (f" (it has: {', '.join(cut(f, 120) for f in found[:24])})" if found
                            else " (it has no __global__ function)"),
                         "name one of its kernels")
    if len(ps) != len(launch.args):
        extra = ""
        if launch.ptx and len(ps) > len(launch.args) and all(p.pointer for p in ps[len(launch.args):]):
            extra = (f" (the last {len(ps) - len(launch.args)} are pointers the compiler added, such as Triton's "
                     "scratch pointers: give each a `void*` [[arg]] with `count = 0`)")
        raise TraceError(launch.path, "arg", f"`{shown}` takes {len(ps)} parameter(s) but the file gives "
                         f"{len(launch.args)} [[arg]] table(s){extra}", "give one [[arg]] per parameter, in order")
    for n, (p, a) in enumerate(zip(ps, launch.args), 1):
        if a.spec is not None:
            _check_spec_param(launch, n, p, a, shown)
            continue
        if p.array:
            raise TraceError(launch.path, f"arg {n}.type", f"parameter {n} of `{shown}` is a {p.bytes}-byte structure "
                             "passed by value: warpviz passes pointers and scalars only",
                             "trace a kernel whose parameters are pointers and scalars (a small kernel that takes "
                             "the structure's fields and calls the code)")
        want = 8 if a.is_buffer else a.element_bytes
        float_param = p.type.startswith("f")
        int_param = p.type[:1] in ("u", "s")
        float_arg = a.type in ("float", "double")
        wrong_kind = not a.is_buffer and ((float_param and not float_arg) or (int_param and float_arg))
        if p.bytes != want or wrong_kind or (p.pointer and not a.is_buffer):
            kind = " (a pointer)" if p.pointer else ""
            raise TraceError(launch.path, f"arg {n}.type", f"parameter {n} of `{shown}` is `.{p.type}` "
                             f"({p.bytes} bytes){kind} in the compiled kernel, but [[arg]] {n} is `{a.type}`",
                             "give the parameter's C type (pointers: a buffer type such as float*, or void* with "
                             "count = 0 for NULL)")


def _check_spec_param(launch: Launch, n: int, p, a: Arg, shown: str) -> None:
    """A tensor-map, pointer or struct [[arg]] against the compiled parameter: its size and
    alignment (``.param .align A .b8 p[N]``)."""
    s = a.spec
    align = getattr(p, "align", 0) or p.bytes
    if p.bytes != s.size or (p.array and align != s.align) or (s.kind == "pointer" and p.array):
        what = f"a {p.bytes}-byte structure aligned to {align}" if p.array else f"`.{p.type}` ({p.bytes} bytes)"
        raise TraceError(launch.path, f"arg {n}.type", f"parameter {n} of `{shown}` is {what} in the compiled kernel, "
                         f"but [[arg]] {n} is a {a.type} of {s.size} bytes aligned to {s.align}",
                         "describe the parameter as the compiler lays it out (`bytes` and `align` of a struct [[arg]]; "
                         "a tensormap is 128 bytes aligned to 64)")


def shipped_launch_file(trace_path: str | Path) -> Path | None:
    """The launch file in ``kernels/`` that a **shipped** trace (one of ``assets/traces``) was
    recorded from: the one named after the trace's own file (``NAME.wvtrace`` ->
    ``NAME.launch.toml``, found among the launch files that exist in ``kernels/``); None for any
    other trace. Nothing the trace says (its header) chooses the file: a trace never names a
    file for warpviz to compile. Record and ``bench --traces`` otherwise use the launch file
    the user opens or names."""
    from .. import assets
    from . import tracefile

    p = Path(trace_path)
    if not p.name.endswith(".wvtrace"):
        return None
    try:
        if p.resolve().parent != tracefile.shipped_dir().resolve():
            return None
        return _kernels_launch_files(assets.kernels_dir()).get(p.name[:-len(".wvtrace")])
    except (OSError, RuntimeError, ValueError):
        return None


def _kernels_launch_files(folder: Path) -> dict[str, Path]:
    """{NAME: path} of the launch files ``NAME.launch.toml`` under ``folder`` (kernels/)."""
    out: dict[str, Path] = {}
    for q in sorted(Path(folder).rglob("*.launch.toml")):
        out.setdefault(q.name[:-len(".launch.toml")], q)
    return out


def same_launch(header: dict, launch: Launch) -> str | None:
    """None when a trace's header records ``launch``'s kernel and launch (block, grid, dynamic
    shared memory, arguments); else what differs, in words."""
    if not isinstance(header, dict):
        return "the trace has no header"
    if header.get("kernel") != launch.kernel:
        return f"the trace is of the kernel {_r(header.get('kernel'))}, the launch file's is `{launch.kernel}`"
    hl = header.get("launch")
    hl = hl if isinstance(hl, dict) else {}
    mine = {"block": list(launch.block), "grid": list(launch.grid), "shared_bytes": launch.shared_bytes,
            "args": [a.as_dict() for a in launch.args]}
    for key, value in mine.items():
        if hl.get(key) != value:
            return f"the trace's launch has {key} = {_r(hl.get(key))}, the launch file's {_r(value)}"
    return None


__all__ = ["Launch", "Arg", "load_launch", "check_ptx_text", "ptx_size_problem", "MAX_PTX_LINES", "read_data", "npy_header", "FORMAT", "FORMATS", "shipped_launch_file", "same_launch", "read_text_file", "unsafe_chars", "check_fits", "check_host_memory", "host_memory", "parse_launch", "check_params", "ptx_params", "BUFFER_TYPES",
           "SCALAR_TYPES", "FILLS"]
