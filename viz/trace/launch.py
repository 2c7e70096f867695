"""Launch files: a real CUDA source, one kernel in it, its launch and its arguments (TOML).

Pure data; nothing here runs anything. ``load_launch`` checks every key and value and
raises ``TraceError`` with one paragraph (file, key, problem, fix) for a bad file. The
check of the arguments against the kernel's real parameters needs the compiled PTX
(``check_params``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import TraceError

FORMAT = 1
KEYS = {"format", "title", "notes", "source", "kernel", "block", "grid", "shared_bytes", "defines", "include_dirs",
        "arg", "compare"}
BUFFER_TYPES = {"char*": 1, "short*": 2, "half*": 2, "int*": 4, "unsigned*": 4, "float*": 4, "double*": 8,
                "long long*": 8, "int2*": 8, "int4*": 16, "float2*": 8, "float4*": 16, "double2*": 16, "void*": 1}
SCALAR_TYPES = {"char": 1, "short": 2, "int": 4, "unsigned": 4, "long long": 8, "unsigned long long": 8,
                "float": 4, "double": 8}
FILLS = ("zero", "iota", "ones", "random")
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BUFFER_BYTES = 256 << 30     # a sanity bound before asking the GPU (above any GPU's memory); ``check_fits`` checks the GPU's
MAX_SHARED_BYTES = 227 * 1024    # H100's opt-in maximum per block


@dataclass(frozen=True)
class Arg:
    type: str
    count: int = 0          # buffers: elements
    fill: str = "iota"
    value: float | int = 0  # scalars

    @property
    def is_buffer(self) -> bool:
        return self.type.endswith("*")

    @property
    def element_bytes(self) -> int:
        return BUFFER_TYPES[self.type] if self.is_buffer else SCALAR_TYPES[self.type]

    @property
    def nbytes(self) -> int:
        return self.count * self.element_bytes if self.is_buffer else self.element_bytes

    def as_dict(self) -> dict:
        if self.is_buffer:
            return {"type": self.type, "count": self.count, "fill": self.fill}
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
        """Each buffer's byte offset in one allocation (256-byte aligned, in order)."""
        out, at = [], 0
        for a in self.args:
            if a.is_buffer:
                out.append(at)
                at += -(-max(a.nbytes, 1) // 256) * 256
            else:
                out.append(-1)
        return out

    @property
    def buffer_bytes(self) -> int:
        at = 0
        for a in self.args:
            if a.is_buffer:
                at += -(-max(a.nbytes, 1) // 256) * 256
        return max(at, 256)


def check_fits(launch: Launch, free_bytes: int, gpu: str = "the GPU") -> None:
    """Before anything is allocated: raise ``TraceError`` when the launch's buffers (one
    allocation, each buffer 256-byte aligned) need more than the GPU's free memory. The
    paragraph names the largest buffer, its size, the total and the free memory."""
    need = launch.buffer_bytes
    if need <= free_bytes:
        return
    bufs = [(a.nbytes, n) for n, a in enumerate(launch.args, 1) if a.is_buffer]
    size, n = max(bufs)
    a = launch.args[n - 1]
    others = f" (all {len(bufs)} buffers together: {_bytes(need)})" if len(bufs) > 1 else ""
    raise TraceError(launch.path, f"arg {n}.count",
                     f"buffer [[arg]] {n} ({a.type}, count = {a.count:,}) needs {_bytes(size)}{others}, but {gpu} "
                     f"has {_bytes(free_bytes)} free; nothing was allocated",
                     "use smaller `count`s (a trace needs only a small launch)")


def _bytes(n: int) -> str:
    return f"{n / 2**30:,.2f} GiB ({n:,} bytes)" if n >= 2**30 else f"{n / 2**20:,.1f} MiB ({n:,} bytes)"


def _dims(path, key: str, v) -> tuple[int, int, int]:
    if isinstance(v, int) and not isinstance(v, bool):
        v = [v]
    if not isinstance(v, list) or not 1 <= len(v) <= 3 or not all(isinstance(x, int) and not isinstance(x, bool)
                                                                  for x in v):
        raise TraceError(path, key, f"`{key}` must be a list of 1 to 3 integers, not {v!r}",
                         f"write e.g. `{key} = [256]` or `{key} = [32, 8]`")
    if any(x <= 0 for x in v):
        raise TraceError(path, key, f"`{key}` = {v} has an extent of zero or less: nothing would run",
                         "give every extent a positive value")
    return tuple(list(v) + [1] * (3 - len(v)))  # type: ignore[return-value]


def parse_launch(text: str, path: Path) -> Launch:
    try:
        d = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise TraceError(path, "", f"not valid TOML: {err}", "fix the TOML syntax at the line named") from None
    unknown = sorted(set(d) - KEYS)
    if unknown:
        raise TraceError(path, unknown[0], f"unknown key `{unknown[0]}`",
                         "the keys are " + ", ".join(sorted(KEYS)) + " (`arg` as [[arg]] tables)")
    fmt = d.get("format", FORMAT)
    if fmt != FORMAT:
        raise TraceError(path, "format", f"launch-file format {fmt!r} is not known to this warpviz (it reads {FORMAT})",
                         "write `format = 1`, or update warpviz")
    for key in ("source", "kernel", "block", "grid"):
        if key not in d:
            raise TraceError(path, key, f"the key `{key}` is missing", f"add `{key} = ...` (see docs/trace-format.md)")
    for key in ("title", "notes", "source", "kernel", "compare"):
        if key in d and not isinstance(d[key], str):
            raise TraceError(path, key, f"`{key}` must be a string", f'write `{key} = "..."`')
    if not re.fullmatch(r"[A-Za-z_]\w*", d["kernel"]):
        raise TraceError(path, "kernel", f"`kernel = {d['kernel']!r}` is not a C identifier",
                         'name an extern "C" __global__ function of the source')
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
        raise TraceError(path, "shared_bytes", f"`shared_bytes = {shared!r}` must be an integer from 0 to "
                         f"{MAX_SHARED_BYTES}", "give the dynamic shared memory per block in bytes")
    defines = d.get("defines", {})
    if not isinstance(defines, dict) or not all(re.fullmatch(r"[A-Za-z_]\w*", str(k)) for k in defines):
        raise TraceError(path, "defines", "`defines` must be a table of NAME = value",
                         "write e.g. `defines = { TILE = 32 }`")
    for k, v in defines.items():
        if not isinstance(v, (int, float, str)) or isinstance(v, bool):
            raise TraceError(path, f"defines.{k}", f"the value of `{k}` must be a number or a string",
                             f'write e.g. `defines = {{ {k} = 32 }}`')
    incs = d.get("include_dirs", [])
    if not isinstance(incs, list) or not all(isinstance(x, str) for x in incs):
        raise TraceError(path, "include_dirs", "`include_dirs` must be a list of strings",
                         'write e.g. `include_dirs = ["include"]`')
    here = path.parent
    source = (here / d["source"]).resolve()
    if not source.is_file():
        raise TraceError(path, "source", f"the source `{d['source']}` does not exist (looked for {source})",
                         "give the .cu file's path relative to the launch file")
    raw_args = d.get("arg", [])
    if not isinstance(raw_args, list):
        raise TraceError(path, "arg", "`arg` must be [[arg]] tables, one per kernel parameter",
                         'write one `[[arg]]` table with `type = "..."` per parameter')
    args = []
    for n, a in enumerate(raw_args, 1):
        args.append(_arg(path, n, a))
    total = sum(a.nbytes for a in args if a.is_buffer)
    if total > MAX_BUFFER_BYTES:
        raise TraceError(path, "arg", f"the buffers need {total / 2**30:.1f} GiB, over warpviz's limit of "
                         f"{MAX_BUFFER_BYTES >> 30} GiB", "use smaller `count`s (a small launch traces quickly)")
    return Launch(path, text, d.get("title", path.name), d.get("notes", ""), source, d["kernel"], block, grid,
                  shared, {str(k): str(v) for k, v in defines.items()}, tuple((here / x).resolve() for x in incs),
                  tuple(args), d.get("compare", ""))


def _arg(path, n: int, a) -> Arg:
    where = f"arg {n}"
    if not isinstance(a, dict):
        raise TraceError(path, where, "each [[arg]] must be a table", 'write `[[arg]]` followed by `type = "..."`')
    unknown = sorted(set(a) - {"type", "count", "fill", "value"})
    if unknown:
        raise TraceError(path, f"{where}.{unknown[0]}", f"unknown key `{unknown[0]}` in [[arg]] {n}",
                         "an [[arg]] has `type` and either `count` (+ `fill`) or `value`")
    t = a.get("type")
    if not isinstance(t, str):
        raise TraceError(path, f"{where}.type", f"[[arg]] {n} has no `type`", 'add e.g. `type = "float*"`')
    t = " ".join(t.replace("*", " *").split()).replace(" *", "*")
    if t.endswith("*"):
        if t not in BUFFER_TYPES:
            raise TraceError(path, f"{where}.type", f"unknown buffer type `{t}`",
                             "use one of " + ", ".join(BUFFER_TYPES))
        count = a.get("count")
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            raise TraceError(path, f"{where}.count", f"buffer [[arg]] {n} needs `count` > 0 (elements), not {count!r}",
                             "write e.g. `count = 1048576`")
        fill = a.get("fill", "iota")
        if fill not in FILLS:
            raise TraceError(path, f"{where}.fill", f"unknown fill {fill!r}", "use one of " + ", ".join(FILLS))
        if "value" in a:
            raise TraceError(path, f"{where}.value", f"buffer [[arg]] {n} takes `count`, not `value`",
                             "remove `value`; give the number of elements as `count`")
        return Arg(t, count, fill)
    if t not in SCALAR_TYPES:
        raise TraceError(path, f"{where}.type", f"unknown type `{t}`",
                         "scalars: " + ", ".join(SCALAR_TYPES) + "; buffers: " + ", ".join(BUFFER_TYPES))
    v = a.get("value")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TraceError(path, f"{where}.value", f"scalar [[arg]] {n} needs a numeric `value`", "write e.g. `value = 1024`")
    if t not in ("float", "double"):
        if not isinstance(v, int):
            raise TraceError(path, f"{where}.value", f"`{t}` [[arg]] {n} needs an integer value, not {v!r}",
                             "write a whole number, or declare the parameter as float/double")
        bits = SCALAR_TYPES[t] * 8
        lo, hi = (0, 2**bits - 1) if t.startswith("unsigned") else (-(2**(bits - 1)), 2**(bits - 1) - 1)
        if not lo <= v <= hi:
            raise TraceError(path, f"{where}.value", f"{v} does not fit in `{t}`", f"use a value from {lo} to {hi}")
    if "count" in a or "fill" in a:
        raise TraceError(path, f"{where}.count", f"scalar [[arg]] {n} takes `value`, not `count`/`fill`",
                         "remove `count`/`fill`, or give a pointer type such as float*")
    return Arg(t, 0, "iota", v)


def launch_name(path: str | Path) -> str:
    """``NAME`` of ``NAME.launch.toml`` (or ``NAME.toml``): the trace's default name."""
    n = Path(path).name
    for suffix in (".launch.toml", ".toml"):
        if n.lower().endswith(suffix):
            return n[:-len(suffix)]
    return n


def load_launch(path: str | Path) -> Launch:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as err:
        raise TraceError(p, "", f"cannot read the launch file: {err.strerror or err}", "check the path") from None
    return parse_launch(text, p)


# ---------------------------------------------------------------------------- against the PTX

_PARAM = re.compile(r"\.param\s+\.(\w+)\s+(?:\.ptr[\w.]*\s+)?(?:\.align\s+\d+\s+)?([\w$]+)(\[\d+\])?")


def ptx_params(ptx: str, kernel: str) -> list[tuple[str, int]] | None:
    """(type, bytes) of each parameter of entry ``kernel`` in the PTX, or None if absent."""
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\((.*?)\)", ptx, re.S)
    if not m:
        return None
    out = []
    for p in _PARAM.finditer(m.group(1)):
        t = p.group(1)
        size = int(re.sub(r"\D", "", t) or 8) // 8
        if p.group(3):
            size *= int(p.group(3)[1:-1])
        out.append((t, size))
    return out


def entries(ptx: str) -> list[str]:
    return re.findall(r"\.entry\s+([\w$]+)", ptx)


def check_params(launch: Launch, ptx: str) -> None:
    params = ptx_params(ptx, launch.kernel)
    if params is None:
        found = entries(ptx)
        raise TraceError(launch.path, "kernel", f"the source has no kernel `{launch.kernel}`"
                         + (f" (it has: {', '.join(found)})" if found else " (it has no __global__ function)"),
                         'name one of its kernels; the kernel must be extern "C" __global__ so that its name is kept')
    if len(params) != len(launch.args):
        raise TraceError(launch.path, "arg", f"`{launch.kernel}` takes {len(params)} parameter(s) but the file gives "
                         f"{len(launch.args)} [[arg]] table(s)", "give one [[arg]] per parameter, in order")
    for n, ((t, size), a) in enumerate(zip(params, launch.args), 1):
        want = 8 if a.is_buffer else a.element_bytes
        float_param = t.startswith("f")
        float_arg = a.type in ("float", "double")
        if size != want or (not a.is_buffer and float_param != float_arg):
            raise TraceError(launch.path, f"arg {n}.type", f"parameter {n} of `{launch.kernel}` is `.{t}` "
                             f"({size} bytes) in the compiled kernel, but [[arg]] {n} is `{a.type}`",
                             "give the parameter's C type (pointers: a buffer type such as float*)")


def find_launch_file(header: dict) -> Path | None:
    """The launch file a trace was recorded from (its header's ``launch_file_name`` and
    ``launch_file``), when it is among ``kernels/`` (the shipped traces' launch files) with the
    same keys and values; None otherwise."""
    from .. import assets

    def same(a: str, b: str) -> bool:
        """The same launch, wherever the file moved (the source compared by its file name)."""
        try:
            da, db = tomllib.loads(a), tomllib.loads(b)
        except tomllib.TOMLDecodeError:
            return False
        for d in (da, db):
            if isinstance(d.get("source"), str):
                d["source"] = Path(d["source"]).name
        return da == db

    name, text = header.get("launch_file_name"), header.get("launch_file")
    if not name or not text:
        return None
    try:
        for p in sorted(assets.kernels_dir().rglob(name)):
            if same(p.read_text(encoding="utf-8"), text):
                return p
    except (OSError, UnicodeDecodeError):
        return None
    return None


__all__ = ["Launch", "Arg", "load_launch", "find_launch_file", "check_fits", "parse_launch", "check_params", "ptx_params", "BUFFER_TYPES",
           "SCALAR_TYPES", "FILLS"]
