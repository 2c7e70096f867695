"""Kernel arguments from Python (``viz.api.trace_ptx``, ``trace_triton``) as a launch folder.

A launch from Python becomes what a launch file describes, written into a folder: the PTX
(``NAME.ptx``), each array's contents as ``argN.npy`` and ``NAME.launch.toml`` (format 2,
``fill = "npy:argN.npy"``, ``count = 0`` for ``None``); the trace is then recorded from that
file by the same checks and the same pipeline as ``warpviz trace``, and its header carries a
launch file that reproduces it (with the folder).

Arrays are NumPy arrays, CuPy arrays, PyTorch tensors (on the GPU or not) or anything with
``copy_to_host()`` (Numba's device arrays). A device array's contents are copied to the
host as they are: the memory the kernel can reach from the array's first element (its
strides' span), so a strided view keeps its layout. Nothing here imports CuPy, PyTorch or
Numba: an object is recognised by its module and its methods. Scalars take the type of the
kernel's parameter in the PTX (``.f32`` a float, ``.u64`` a 64-bit integer ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import WarpvizError
from ..fileio import write_files
from . import TraceError

MAX_ARRAY_BYTES = 8 << 30         # one array copied to the host for a trace (a trace needs a small launch)

_KIND = {("f", 2): "half*", ("f", 4): "float*", ("f", 8): "double*", ("i", 1): "char*", ("u", 1): "char*",
         ("b", 1): "char*", ("i", 2): "short*", ("u", 2): "short*", ("i", 4): "int*", ("u", 4): "unsigned*",
         ("i", 8): "long long*", ("u", 8): "long long*"}


class ArgumentError(WarpvizError, TypeError):
    """An argument warpviz cannot pass to the kernel (the message says which and why)."""


@dataclass
class HostArray:
    """An array's bytes on the host: ``data`` (1-D, little-endian), its buffer type and count."""

    data: np.ndarray
    type: str
    count: int


def _module(x) -> str:
    return type(x).__module__.split(".")[0]


def is_array(x) -> bool:
    return (isinstance(x, np.ndarray) or _module(x) in ("torch", "cupy") or hasattr(x, "copy_to_host")
            or hasattr(x, "__cuda_array_interface__"))


def host_array(x, n: int) -> HostArray:
    """Argument ``n``'s contents (see the module doc)."""
    mod = _module(x)
    if mod == "torch":
        a = _torch_span(x, n)
    elif mod == "cupy":
        a = _cupy_span(x, n)
    elif isinstance(x, np.ndarray):
        a = np.ascontiguousarray(x).reshape(-1)
    elif hasattr(x, "copy_to_host"):
        a = np.ascontiguousarray(x.copy_to_host()).reshape(-1)
    else:
        raise ArgumentError(f"argument {n}: a {type(x).__name__} is not an array warpviz can read (NumPy, CuPy, "
                            "PyTorch or Numba)")
    if a.dtype.hasobject or a.dtype.kind not in "biufc" or a.dtype.fields:
        raise ArgumentError(f"argument {n}: an array of {a.dtype} is not numbers")
    if a.nbytes > MAX_ARRAY_BYTES:
        raise ArgumentError(f"argument {n}: {a.nbytes:,} bytes, over warpviz's limit of {MAX_ARRAY_BYTES:,} for one "
                            "array (a trace needs only a small launch)")
    if a.dtype.kind == "c":                         # complex: pairs of floats
        a = a.view(np.dtype(f"<f{a.dtype.itemsize // 2}"))
    a = a.astype(a.dtype.newbyteorder("<"), copy=False)
    t = _KIND.get((a.dtype.kind, a.dtype.itemsize))
    if t is None:
        a, t = a.view(np.uint8), "void*"
    per = 2 if t in ("float2*", "double2*") else 1
    return HostArray(a, t, a.size // per)


def _span(shape, strides, itemsize: int, n: int) -> int:
    """Elements from the first to the last one the array reaches (strides in elements)."""
    if any(s < 0 for s in strides):
        raise ArgumentError(f"argument {n}: an array with negative strides (a reversed view) is not supported: "
                            "pass a contiguous copy")
    if any(d == 0 for d in shape):
        return 0
    return 1 + sum((d - 1) * s for d, s in zip(shape, strides))


def _torch_span(x, n: int) -> np.ndarray:
    import torch  # the caller passed a tensor, so PyTorch is there

    span = _span(tuple(x.shape), tuple(x.stride()), x.element_size(), n)
    flat = torch.as_strided(x.detach(), (span,), (1,)) if span else x.detach().reshape(-1)[:0]
    flat = flat.cpu()
    if flat.dtype == torch.bfloat16:
        flat = flat.view(torch.int16)
    elif str(flat.dtype).startswith("torch.float8"):
        flat = flat.view(torch.uint8)
    elif flat.dtype == torch.bool:
        flat = flat.to(torch.uint8)
    return flat.numpy()


def _cupy_span(x, n: int) -> np.ndarray:
    import cupy  # the caller passed a CuPy array

    item = x.dtype.itemsize
    strides = tuple(s // item for s in x.strides)
    span = _span(tuple(x.shape), strides, item, n)
    flat = cupy.ndarray((span,), dtype=x.dtype, memptr=x.data) if span else cupy.zeros(0, x.dtype)
    return cupy.asnumpy(flat)


# ---------------------------------------------------------------------------- scalars


def scalar_type(value, param, n: int) -> tuple[str, int | float]:
    """The launch file's scalar type and value of argument ``n`` for the PTX parameter
    ``param`` (a ``viz.trace.module.Param``, or None where the kernel was not found)."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, (int, float)):
        raise ArgumentError(f"argument {n}: {type(value).__name__} is neither an array, a number nor None")
    size = param.bytes if param is not None else None
    ptype = param.type if param is not None else ""
    if isinstance(value, float) or ptype.startswith("f"):
        if size == 8:
            return "double", float(value)
        if size in (None, 4):
            return "float", float(value)
        raise ArgumentError(f"argument {n}: {value!r} for a {size}-byte parameter (.{ptype}): warpviz passes 4- and "
                            "8-byte floating-point scalars")
    v = int(value)
    if size == 1:
        return "char", _fit(v, 8, n)
    if size == 2:
        return "short", _fit(v, 16, n)
    if size == 8 or (size is None and not -(2**31) <= v < 2**31):
        return ("unsigned long long", v) if v >= 2**63 else ("long long", _fit(v, 64, n))
    if size not in (None, 4):
        raise ArgumentError(f"argument {n}: a {size}-byte parameter (.{ptype}) takes no scalar warpviz can pass")
    return ("unsigned", v) if v >= 2**31 else ("int", _fit(v, 32, n))


def _fit(v: int, bits: int, n: int) -> int:
    lo, hi = -(2 ** (bits - 1)), 2 ** bits - 1
    if not lo <= v <= hi:
        raise ArgumentError(f"argument {n}: {v} does not fit in {bits} bits")
    return v - 2 ** bits if v >= 2 ** (bits - 1) else v


# ---------------------------------------------------------------------------- the folder


def entry_params(ptx: str, kernel: str):
    """The PTX parameters of the entry ``kernel`` names, or None where it names none or several."""
    from . import module, names

    try:
        kn = names.parse_kernel_name(kernel)
    except names.KernelNameError:
        return None
    found = names.match(kn, names.entries_of(module.entry_names(ptx)))
    return module.params(ptx, found[0].mangled) if len(found) == 1 else None


def _dims(v, what: str) -> list[int]:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        v = (v,)
    try:
        out = [int(x) for x in v]
    except (TypeError, ValueError):
        raise ArgumentError(f"{what} must be 1 to 3 integers, not {v!r}") from None
    if not 1 <= len(out) <= 3:
        raise ArgumentError(f"{what} must be 1 to 3 integers, not {v!r}")
    return out


def _npy_writer(data: np.ndarray):
    def write(path: Path) -> None:
        with open(path, "wb") as f:
            np.save(f, data, allow_pickle=False)
    return write


def write_launch_folder(folder: Path, ptx: str, kernel: str, grid, block, args, shared_bytes: int = 0,
                        title: str = "", name: str = "kernel", notes: str = "") -> Path:
    """Write ``NAME.ptx``, ``argN.npy`` and ``NAME.launch.toml`` into ``folder`` (see the module
    doc) and return the launch file's path. Raises ``ArgumentError`` for an argument warpviz
    cannot pass, before anything is written; ``viz.fileio.NotOursError`` when ``folder``
    holds one of those files and warpviz did not write it (the folder's manifest,
    ``.warpviz-written.json``, names what it wrote: a later run replaces only those);
    ``WriteError`` when the disk refuses. Everything else is checked when the launch file
    is loaded."""
    import tomlkit

    if not isinstance(ptx, str):
        raise ArgumentError(f"the PTX must be text (str), not {type(ptx).__name__}")
    if not isinstance(kernel, str):
        raise ArgumentError(f"the kernel's name must be a string, not {type(kernel).__name__}")
    grid, block = _dims(grid, "grid"), _dims(block, "block")
    if isinstance(shared_bytes, bool) or not isinstance(shared_bytes, (int, np.integer)) or shared_bytes < 0:
        raise ArgumentError(f"shared_bytes must be a whole number of bytes, not {shared_bytes!r}")
    if isinstance(args, (str, bytes)) or not hasattr(args, "__iter__"):
        raise ArgumentError("args must be a list of the kernel's arguments (arrays, numbers, None)")
    args = list(args)
    from .launch import ptx_size_problem

    problem = ptx_size_problem(ptx)        # before any of it is parsed
    if problem:
        raise ArgumentError(f"{problem}: give the PTX of the kernel's own module")
    params = entry_params(ptx, kernel)
    files: dict = {f"{name}.ptx": ptx}
    tables = []
    buffers, maps = [], []
    from .tensormaps import TensorMapArg

    for k, x in enumerate(args, 1):
        p = params[k - 1] if params is not None and k <= len(params) else None
        if x is None:
            tables.append({"type": "void*", "count": 0})
        elif isinstance(x, TensorMapArg):           # a CUtensorMap: its tensor as a [[buffer]], the map's table
            h = host_array(x.tensor, k)
            if h.count == 0:
                raise ArgumentError(f"argument {k}: the tensor map's tensor is empty")
            files[f"arg{k}.npy"] = _npy_writer(h.data)
            buffers.append({"name": f"tensor{k}", "type": h.type, "count": h.count, "fill": f"npy:arg{k}.npy"})
            maps.append(x.table(f"map{k}", f"tensor{k}"))
            tables.append({"type": "tensormap", "map": f"map{k}"})
        elif is_array(x):
            h = host_array(x, k)
            if h.count == 0:
                tables.append({"type": "void*", "count": 0})
                continue
            files[f"arg{k}.npy"] = _npy_writer(h.data)
            tables.append({"type": h.type, "count": h.count, "fill": f"npy:arg{k}.npy"})
        else:
            if p is not None and p.pointer:
                raise ArgumentError(f"argument {k}: the kernel's parameter {k} is a pointer, not a number: pass an "
                                    "array (or None for NULL)")
            t, v = scalar_type(x, p, k)
            tables.append({"type": t, "value": v})
    doc = {"format": 2, "title": title or kernel, "ptx": f"{name}.ptx", "kernel": kernel, "block": block,
           "grid": grid, "shared_bytes": int(shared_bytes), "arg": tables}
    if buffers:
        doc["buffer"], doc["tensormap"] = buffers, maps
    if notes:
        doc["notes"] = notes
    path = folder / f"{name}.launch.toml"
    files[path.name] = ("# Written by warpviz from a launch made in Python; the arrays are argN.npy beside it.\n"
                        + tomlkit.dumps(doc))
    # Every argument is checked before anything is written; then each file atomically, and
    # never over a file warpviz did not write (viz.fileio.write_files: NotOursError).
    write_files(folder, files)
    return path


# ---------------------------------------------------------------------------- Triton


TRITON_SCALARS = ("i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "fp64")


def triton_params(signature: dict, bound: dict, n_scratch: int = 2, tensordesc_meta=None) -> list:
    """The kernel's parameter values in the order Triton's launcher passes them: every
    argument whose signature type is not ``constexpr`` (tuples flattened; a host
    ``TensorDescriptor`` expanded as Triton expands it: ``viz.trace.tensormaps.
    triton_host_descriptor``, or base pointer, shape, strides, padding flag, shape and
    strides where the kernel does not use a CUtensorMap), then the scratch pointers (filled
    in by the caller). ``signature``: {name: type} from the compiled kernel's source;
    ``bound``: {name: value}; ``tensordesc_meta``: the compiled kernel's metadata, one entry
    per descriptor argument."""
    out: list = []
    metas = list(tensordesc_meta or [])
    seen = [0]

    def flat(ty, value, where: str):
        if isinstance(ty, tuple):
            vals = tuple(value) if isinstance(value, (tuple, list)) else None
            if vals is None or len(vals) != len(ty):
                raise ArgumentError(f"{where}: Triton's signature is a tuple of {len(ty)}, the argument is {value!r}")
            for k, (t, v) in enumerate(zip(ty, vals)):
                flat(t, v, f"{where}[{k}]")
            return
        if ty == "constexpr":
            return
        if ty == "nvTmaDesc":
            raise ArgumentError(f"{where}: a raw nvTmaDesc argument is not traced by warpviz; pass a TensorDescriptor")
        if str(ty).startswith("tensordesc"):
            out.extend(_tensordesc(value, metas, seen, where))
            return
        if str(ty).startswith("*"):
            out.append(value)
            return
        if ty not in TRITON_SCALARS:
            raise ArgumentError(f"{where}: Triton's type {ty!r} is not one warpviz knows")
        if ty in ("fp16", "bf16"):
            raise ArgumentError(f"{where}: 16-bit floating-point scalars are not passed by warpviz yet")
        out.append(value)

    for name, ty in signature.items():
        if name not in bound:
            raise ArgumentError(f"the kernel's argument `{name}` was not given")
        flat(ty, bound[name], f"argument `{name}`")
    return out


def _tensordesc(value, metas: list, seen: list, where: str) -> list:
    """A host ``TensorDescriptor`` argument, expanded as Triton's launcher expands it."""
    k = seen[0]
    seen[0] += 1
    for attr in ("base", "shape", "strides", "block_shape"):
        if not hasattr(value, attr):
            raise ArgumentError(f"{where}: Triton's signature says a tensor descriptor, the argument is "
                                f"{type(value).__name__} (pass a triton.tools.tensor_descriptor.TensorDescriptor)")
    if not is_array(value.base):
        raise ArgumentError(f"{where}: the tensor descriptor's base is not an array")
    meta = metas[k] if k < len(metas) else None
    if meta is None:        # lowered to a pointer: base, shape, strides, padding == "nan", shape, strides
        shape, strides = [int(x) for x in value.shape], [int(x) for x in value.strides]
        flags = [int(getattr(value, "padding", "zero") == "nan")]
        if hasattr(value, "round_f32_to_tf32"):            # Triton 3.6 passes it too
            flags.append(int(bool(value.round_f32_to_tf32)))
        return [value.base, *shape, *strides, *flags, *shape, *strides]
    from .tensormaps import triton_host_descriptor

    try:
        return triton_host_descriptor(value, meta)
    except (KeyError, TypeError, ValueError) as err:
        raise ArgumentError(f"{where}: {err}") from None


__all__ = ["ArgumentError", "HostArray", "host_array", "is_array", "scalar_type", "entry_params",
           "write_launch_folder", "triton_params", "TRITON_SCALARS"]
