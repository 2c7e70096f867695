"""Host-built tensor maps and structures passed by value, in a launch file (format 2).

CUTLASS 3 kernels take their tensor maps inside a ``Params`` structure passed by value
(a ``__grid_constant__`` parameter), each map encoded on the host with
``cuTensorMapEncodeTiled``; Triton passes a host-side ``TensorDescriptor`` as a
``CUtensorMap`` parameter followed by its shape and strides. A launch file says so with
three kinds of tables (docs/trace-format.md, "Tensor maps and structures passed by value"):

* ``[[buffer]]``: a named device buffer that no parameter is itself (the tensor a map
  describes; a pointer inside a structure points into it), filled like a buffer ``[[arg]]``;
* ``[[tensormap]]``: every argument of ``cuTensorMapEncodeTiled`` except the map itself: the
  tensor (a named buffer and a byte offset: its global address), data type, rank, dims,
  strides, box, element strides, interleave, swizzle, L2 promotion, out-of-bounds fill;
* ``[[arg]]`` tables of ``type = "tensormap"`` (a ``CUtensorMap`` parameter, 128 bytes,
  aligned to 64), ``type = "pointer"`` (an address into a named buffer) and
  ``type = "struct"`` (``bytes``, ``align``, optional raw ``hex`` bytes and ``[[arg.field]]``
  tables that put a pointer, a tensor map or a scalar at a byte offset).

Everything is checked when the launch file is read (``parse_*``: hostile input, one
paragraph naming the key), including that the tensor a map describes lies inside its buffer,
so the TMA cannot be pointed outside warpviz's allocation. The maps are encoded on the GPU
machine, at every launch, for the buffers' real addresses (``encode``: ctypes on libcuda's
``cuTensorMapEncodeTiled``; PyCUDA has no binding for it), and the kernel's parameters are
packed into one buffer laid out as the CUDA ABI lays out parameters (``param_buffer``).
Pure data and ctypes: no PyCUDA, no Qt.
"""

from __future__ import annotations

import re
import struct as _struct
from dataclasses import dataclass

from . import TraceError

# CUtensorMapDataType (cuda.h): name -> (enum, bytes per element)
DTYPES = {"uint8": (0, 1), "uint16": (1, 2), "uint32": (2, 4), "int32": (3, 4), "uint64": (4, 8), "int64": (5, 8),
          "float16": (6, 2), "float32": (7, 4), "float64": (8, 8), "bfloat16": (9, 2), "float32_ftz": (10, 4),
          "tfloat32": (11, 4), "tfloat32_ftz": (12, 4)}
INTERLEAVE = {"none": 0, "16B": 1, "32B": 2}
SWIZZLE = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
SWIZZLE_SPAN = {"none": 0, "32B": 32, "64B": 64, "128B": 128}
L2_PROMOTION = {"none": 0, "64B": 1, "128B": 2, "256B": 3}
OOB_FILL = {"none": 0, "nan": 1}
MAX_RANK = 5
MAX_BOX = 256                      # elements per box dimension (the driver's limit)
MAX_DIM = 1 << 32                  # elements per dimension (the driver's limit)
MAX_STRIDE = 1 << 40               # bytes (the driver's limit)
MAX_PARAM_BYTES = 32764            # CUDA's parameter space (32 KiB minus 4)
MAX_STRUCT_FIELDS = 1024
MAX_BUFFERS = 256
MAX_TENSORMAPS = 256
ALIGNS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
TENSORMAP_BYTES, TENSORMAP_ALIGN = 128, 64
SCALARS = {"char": ("b", 1), "short": ("h", 2), "int": ("i", 4), "unsigned": ("I", 4), "long long": ("q", 8),
           "unsigned long long": ("Q", 8), "float": ("f", 4), "double": ("d", 8)}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
TYPES = ("tensormap", "pointer", "struct")


@dataclass(frozen=True)
class TensorMapSpec:
    """One ``[[tensormap]]`` table: cuTensorMapEncodeTiled's arguments, the global address
    given as a buffer's name and a byte offset into it."""
    name: str
    tensor: str
    offset: int
    dtype: str
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    box: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: str = "none"
    swizzle: str = "none"
    l2_promotion: str = "none"
    oob_fill: str = "none"

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def element_bytes(self) -> int:
        return DTYPES[self.dtype][1]

    def extent_bytes(self) -> int:
        """The bytes from the tensor's first element to just past its last (what the TMA may touch)."""
        last = (self.dims[0] - 1) * self.element_bytes
        for d, s in zip(self.dims[1:], self.strides):
            last += (d - 1) * s
        return last + self.element_bytes

    def as_dict(self) -> dict:
        return {"name": self.name, "tensor": self.tensor, "offset": self.offset, "dtype": self.dtype,
                "dims": list(self.dims), "strides": list(self.strides), "box": list(self.box),
                "element_strides": list(self.element_strides), "interleave": self.interleave,
                "swizzle": self.swizzle, "l2_promotion": self.l2_promotion, "oob_fill": self.oob_fill}


@dataclass(frozen=True)
class Field:
    """A value at ``offset`` inside a structure: kind "pointer" (``ref`` a buffer,
    ``extra`` a byte offset into it), "tensormap" (``ref`` a [[tensormap]]) or a scalar
    type (``value``)."""
    offset: int
    kind: str
    ref: str = ""
    extra: int = 0
    value: float | int = 0

    @property
    def size(self) -> int:
        if self.kind == "pointer":
            return 8
        if self.kind == "tensormap":
            return TENSORMAP_BYTES
        return SCALARS[self.kind][1]

    def as_dict(self) -> dict:
        d = {"offset": self.offset}
        if self.kind == "pointer":
            d.update(pointer=self.ref, buffer_offset=self.extra)
        elif self.kind == "tensormap":
            d["map"] = self.ref
        else:
            d.update(type=self.kind, value=self.value)
        return d


@dataclass(frozen=True)
class ParamSpec:
    """A tensormap, pointer or struct [[arg]]: its size, alignment and contents."""
    kind: str                     # "tensormap" | "pointer" | "struct"
    size: int
    align: int
    raw: bytes = b""              # struct: the base bytes (zero-filled to ``size``)
    fields: tuple[Field, ...] = ()

    def as_dict(self) -> dict:
        d = {"bytes": self.size, "align": self.align}
        if self.raw:
            d["hex"] = self.raw.hex()
        d["fields"] = [f.as_dict() for f in self.fields]
        return d


def _err(path, key: str, problem: str, fix: str) -> TraceError:
    return TraceError(path, key, problem, fix)


def _r(v, n: int = 60) -> str:
    s = repr(v)
    return s if len(s) <= n else s[:n] + "..."


def _int(path, key: str, v, lo: int, hi: int, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _err(path, key, f"`{key.rsplit('.', 1)[-1]} = {_r(v)}` must be a whole number from {lo:,} to {hi:,}",
                   f"give {what}")
    return v


def _ints(path, key: str, v, n: int | None, lo: int, hi: int, what: str) -> tuple[int, ...]:
    if not isinstance(v, list) or (n is not None and len(v) != n):
        want = f"{n} whole numbers" if n is not None else "a list of whole numbers"
        raise _err(path, key, f"`{key.rsplit('.', 1)[-1]}` must be {want}, not {_r(v)}", f"give {what}")
    return tuple(_int(path, f"{key}[{k}]", x, lo, hi, what) for k, x in enumerate(v))


def _choice(path, key: str, v, choices: dict, default: str) -> str:
    if v is None:
        return default
    if not isinstance(v, str) or v not in choices:
        raise _err(path, key, f"`{key.rsplit('.', 1)[-1]} = {_r(v)}` is not one of {', '.join(choices)}",
                   f"write one of {', '.join(choices)}")
    return v


def _name(path, key: str, v, what: str) -> str:
    if not isinstance(v, str) or not NAME.fullmatch(v):
        raise _err(path, key, f"{what} {_r(v)} is not a name (ASCII letters, digits and _, at most 64, not starting "
                   "with a digit)", 'write e.g. `name = "A"`')
    return v


def _unknown(path, where: str, table: dict, keys: set, what: str) -> None:
    extra = sorted(set(table) - keys)
    if extra:
        k = re.sub(r"[^\w]", "?", str(extra[0]))[:40]
        raise _err(path, f"{where}.{k}", f"unknown key `{k}` in {what}", f"{what} has " + ", ".join(sorted(keys)))


def parse_tensormap(path, n: int, t, buffers: dict[str, int]) -> TensorMapSpec:
    """[[tensormap]] table ``n`` (1-based); ``buffers``: {name: bytes} of the named buffers."""
    where = f"tensormap {n}"
    if not isinstance(t, dict):
        raise _err(path, where, "each [[tensormap]] must be a table", "write `[[tensormap]]` then its keys")
    _unknown(path, where, t, {"name", "tensor", "offset", "dtype", "dims", "strides", "box", "element_strides",
                              "interleave", "swizzle", "l2_promotion", "oob_fill"}, "a [[tensormap]]")
    for key in ("name", "tensor", "dtype", "dims", "box"):
        if key not in t:
            raise _err(path, f"{where}.{key}", f"[[tensormap]] {n} has no `{key}`",
                       "give name, tensor, dtype, dims, strides (rank > 1), box (see docs/trace-format.md)")
    name = _name(path, f"{where}.name", t["name"], "the tensor map's name")
    tensor = _name(path, f"{where}.tensor", t["tensor"], "the tensor's buffer")
    if tensor not in buffers:
        raise _err(path, f"{where}.tensor", f"[[tensormap]] {name} describes `{tensor}`, which is no named buffer "
                   f"(named: {', '.join(sorted(buffers)) or 'none'})",
                   "name a [[buffer]] (or a buffer [[arg]] with `name`) that holds the tensor")
    dtype = _choice(path, f"{where}.dtype", t["dtype"], DTYPES, "")
    esize = DTYPES[dtype][1]
    dims = _ints(path, f"{where}.dims", t["dims"], None, 1, MAX_DIM, "the tensor's extents, innermost first")
    rank = len(dims)
    if not 1 <= rank <= MAX_RANK:
        raise _err(path, f"{where}.dims", f"a tensor map has rank 1 to {MAX_RANK}, not {rank}",
                   "give 1 to 5 extents, innermost first")
    strides = _ints(path, f"{where}.strides", t.get("strides", []), rank - 1, 16, MAX_STRIDE - 1,
                    f"the byte strides of dimensions 1 to {rank - 1} (multiples of 16)")
    for k, s in enumerate(strides):
        if s % 16:
            raise _err(path, f"{where}.strides[{k}]", f"stride {s:,} bytes is not a multiple of 16 (the driver's rule)",
                       "use a stride that is a multiple of 16 bytes")
    box = _ints(path, f"{where}.box", t["box"], rank, 1, MAX_BOX, "the box's extents, innermost first (1 to 256)")
    estr = _ints(path, f"{where}.element_strides", t.get("element_strides", [1] * rank), rank, 1, 8,
                 "the element strides (1 to 8 each)")
    inter = _choice(path, f"{where}.interleave", t.get("interleave"), INTERLEAVE, "none")
    swz = _choice(path, f"{where}.swizzle", t.get("swizzle"), SWIZZLE, "none")
    l2 = _choice(path, f"{where}.l2_promotion", t.get("l2_promotion"), L2_PROMOTION, "none")
    oob = _choice(path, f"{where}.oob_fill", t.get("oob_fill"), OOB_FILL, "none")
    offset = _int(path, f"{where}.offset", t.get("offset", 0), 0, 1 << 40, "a byte offset into the buffer")
    if offset % (32 if inter == "32B" else 16):
        raise _err(path, f"{where}.offset", f"the tensor starts {offset:,} bytes into `{tensor}`: its address must be "
                   f"a multiple of {32 if inter == '32B' else 16} bytes", "use an offset that is a multiple of 16")
    if inter != "none" and rank < 3:
        raise _err(path, f"{where}.interleave", "an interleaved tensor map needs rank 3 or more", 'use interleave "none"')
    inner = box[0] * esize
    if inter == "none" and inner % 16:
        raise _err(path, f"{where}.box", f"the box's inner extent is {inner} bytes; without interleave it must be a "
                   "multiple of 16 bytes", "make box[0] x the element size a multiple of 16")
    if inter == "none" and swz != "none" and inner > SWIZZLE_SPAN[swz]:
        raise _err(path, f"{where}.swizzle", f"the box's inner extent ({inner} bytes) is wider than the {swz} swizzle",
                   f"use a box[0] of at most {SWIZZLE_SPAN[swz] // esize} elements, or a wider swizzle")
    if oob == "nan" and dtype.startswith(("uint", "int")):
        raise _err(path, f"{where}.oob_fill", "a NaN fill needs a floating-point type", 'use oob_fill "none"')
    spec = TensorMapSpec(name, tensor, offset, dtype, dims, strides, box, estr, inter, swz, l2, oob)
    need = offset + spec.extent_bytes()
    if need > buffers[tensor]:
        raise _err(path, f"{where}.dims", f"the tensor ({' x '.join(map(str, reversed(dims)))} {dtype}, strides "
                   f"{list(strides)}) spans {need:,} bytes from the start of `{tensor}`, which has {buffers[tensor]:,}",
                   "make the buffer larger or the tensor smaller: a tensor map may not reach past its buffer")
    return spec


def parse_param(path, n: int, a: dict, buffers: dict[str, int], maps: dict[str, TensorMapSpec]) -> ParamSpec:
    """An [[arg]] of type tensormap, pointer or struct (``a``: its table)."""
    where = f"arg {n}"
    t = a["type"]
    if t == "tensormap":
        _unknown(path, where, a, {"type", "map", "align"}, "a tensormap [[arg]]")
        ref = _name(path, f"{where}.map", a.get("map"), "the [[tensormap]]")
        if ref not in maps:
            raise _err(path, f"{where}.map", f"there is no [[tensormap]] named `{ref}`",
                       "add a [[tensormap]] table with that name")
        align = a.get("align", TENSORMAP_ALIGN)
        if isinstance(align, bool) or align not in (64, 128):
            raise _err(path, f"{where}.align", f"`align = {_r(align)}`: a CUtensorMap parameter is aligned to 64 "
                       "bytes (Triton) or 128 (CUDA 13's cuda.h)", "write `align = 64` or `align = 128`")
        return ParamSpec("tensormap", TENSORMAP_BYTES, align, b"", (Field(0, "tensormap", ref),))
    if t == "pointer":
        _unknown(path, where, a, {"type", "buffer", "offset"}, "a pointer [[arg]]")
        f = _pointer(path, where, 0, a.get("buffer"), a.get("offset", 0), buffers)
        return ParamSpec("pointer", 8, 8, b"", (f,))
    _unknown(path, where, a, {"type", "bytes", "align", "hex", "field"}, "a struct [[arg]]")
    size = _int(path, f"{where}.bytes", a.get("bytes"), 1, MAX_PARAM_BYTES, "the structure's size in bytes")
    align = a.get("align")
    if isinstance(align, bool) or align not in ALIGNS:
        raise _err(path, f"{where}.align", f"`align = {_r(align)}` must be one of {', '.join(map(str, ALIGNS))}",
                   "give the structure's alignment (the PTX's `.param .align N`)")
    raw = b""
    if "hex" in a:
        h = a["hex"]
        if not isinstance(h, str) or len(h) > 2 * size or len(h) % 2 or not re.fullmatch(r"[0-9a-fA-F]*", h):
            raise _err(path, f"{where}.hex", f"`hex` must be an even number of hexadecimal digits, at most {2 * size:,} "
                       "(the structure's bytes)", "give the structure's bytes as hexadecimal, or leave `hex` out (zeros)")
        raw = bytes.fromhex(h)
    raw_fields = a.get("field", [])
    if not isinstance(raw_fields, list) or len(raw_fields) > MAX_STRUCT_FIELDS:
        raise _err(path, f"{where}.field", f"`field` must be at most {MAX_STRUCT_FIELDS} [[arg.field]] tables",
                   "write one [[arg.field]] table per value")
    fields = []
    for k, f in enumerate(raw_fields):
        fw = f"{where}.field[{k}]"
        if not isinstance(f, dict):
            raise _err(path, fw, "each [[arg.field]] must be a table", "write `[[arg.field]]` then `offset = ...`")
        _unknown(path, fw, f, {"offset", "pointer", "buffer_offset", "map", "type", "value"}, "an [[arg.field]]")
        off = _int(path, f"{fw}.offset", f.get("offset"), 0, size - 1, "the field's byte offset in the structure")
        kinds = [x for x in ("pointer", "map", "type") if x in f]
        if len(kinds) != 1:
            raise _err(path, fw, "an [[arg.field]] has exactly one of `pointer`, `map` or `type`",
                       'write `pointer = "BUFFER"`, `map = "TENSORMAP"` or `type = "int"` with `value`')
        if "pointer" in f:
            fld = _pointer(path, fw, off, f["pointer"], f.get("buffer_offset", 0), buffers)
        elif "map" in f:
            if "buffer_offset" in f or "value" in f:
                raise _err(path, fw, "a tensor-map field takes only `offset` and `map`", "remove the other keys")
            ref = _name(path, f"{fw}.map", f["map"], "the [[tensormap]]")
            if ref not in maps:
                raise _err(path, f"{fw}.map", f"there is no [[tensormap]] named `{ref}`",
                           "add a [[tensormap]] table with that name")
            fld = Field(off, "tensormap", ref)
        else:
            fld = _scalar(path, fw, off, f)
        if fld.offset % min(fld.size, TENSORMAP_ALIGN):
            raise _err(path, f"{fw}.offset", f"a {fld.kind} at byte {off} is not aligned to {min(fld.size, 64)} bytes",
                       "put it at an aligned offset, as the compiler lays out the structure")
        if min(fld.size, TENSORMAP_ALIGN) > align:
            raise _err(path, f"{where}.align", f"the structure holds a {fld.kind} but is aligned to {align} bytes only",
                       f"the structure's alignment is at least {min(fld.size, 64)}")
        if off + fld.size > size:
            raise _err(path, f"{fw}.offset", f"a {fld.kind} at byte {off} ends past the structure's {size} bytes",
                       "check the offset and the structure's `bytes`")
        fields.append(fld)
    spans = sorted((f.offset, f.offset + f.size) for f in fields)
    for (a0, a1), (b0, _b1) in zip(spans, spans[1:]):
        if b0 < a1:
            raise _err(path, f"{where}.field", f"two fields overlap (bytes {a0}-{a1 - 1} and from {b0})",
                       "give each field its own bytes")
    return ParamSpec("struct", size, align, raw, tuple(fields))


def _pointer(path, where: str, off: int, ref, extra, buffers: dict[str, int]) -> Field:
    name = _name(path, f"{where}.buffer" if off == 0 and "field" not in where else f"{where}.pointer", ref,
                 "the buffer")
    if name not in buffers:
        raise _err(path, where, f"the pointer names `{name}`, which is no named buffer (named: "
                   f"{', '.join(sorted(buffers)) or 'none'})", "name a [[buffer]] or a buffer [[arg]] with `name`")
    extra = _int(path, f"{where}.offset", extra, 0, buffers[name], "a byte offset inside the buffer (up to its size)")
    return Field(off, "pointer", name, extra)


def _scalar(path, where: str, off: int, f: dict) -> Field:
    t = f["type"]
    if not isinstance(t, str) or t not in SCALARS:
        raise _err(path, f"{where}.type", f"unknown field type {_r(t)}", "use one of " + ", ".join(SCALARS))
    v = f.get("value")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _err(path, f"{where}.value", "a scalar field needs a numeric `value`", "write e.g. `value = 512`")
    code, size = SCALARS[t]
    if code not in "fd":
        if not isinstance(v, int):
            raise _err(path, f"{where}.value", f"`{t}` needs a whole number, not {_r(v)}", "write a whole number")
        bits = 8 * size
        lo, hi = (0, 2**bits - 1) if code.isupper() else (-(2**(bits - 1)), 2**(bits - 1) - 1)
        if not lo <= v <= hi:
            raise _err(path, f"{where}.value", f"{v} does not fit in `{t}`", f"use a value from {lo} to {hi}")
    return Field(off, t, value=v)


def parse_buffer_name(path, where: str, v) -> str:
    return _name(path, where, v, "the buffer's name")


@dataclass
class TensorMapArg:
    """A ``CUtensorMap`` kernel argument made in Python (``viz.api.trace_ptx``; Triton's host
    ``TensorDescriptor``s, ``viz.trace.pyargs.triton_params``): the tensor (an array: its
    contents become a [[buffer]]) and cuTensorMapEncodeTiled's other arguments, innermost
    dimension first, strides in bytes (the launch folder's [[tensormap]])."""
    tensor: object
    dtype: str
    dims: tuple
    strides: tuple
    box: tuple
    element_strides: tuple | None = None
    interleave: str = "none"
    swizzle: str = "none"
    l2_promotion: str = "none"
    oob_fill: str = "none"

    def table(self, name: str, tensor: str) -> dict:
        """The [[tensormap]] table (checked when the launch file is read)."""
        return {"name": name, "tensor": tensor, "offset": 0, "dtype": self.dtype, "dims": [int(x) for x in self.dims],
                "strides": [int(x) for x in self.strides], "box": [int(x) for x in self.box],
                "element_strides": [int(x) for x in (self.element_strides or [1] * len(self.dims))],
                "interleave": self.interleave, "swizzle": self.swizzle, "l2_promotion": self.l2_promotion,
                "oob_fill": self.oob_fill}


# Triton's device-side element type numbering -> CUtensorMapDataType (triton's driver.py,
# TMA_DTYPE_DEVICE_TO_HOST: equal except 8, 9, 10)
_TRITON_DTYPE = {**{i: i for i in range(16)}, 8: 10, 9: 8, 10: 9}
_DTYPE_NAME = {v[0]: k for k, v in DTYPES.items()}
_SWIZZLE_NAME = {v: k for k, v in SWIZZLE.items()}


def triton_host_descriptor(desc, meta: dict) -> list:
    """What Triton's launcher passes for a host ``TensorDescriptor`` argument whose kernel
    uses a CUtensorMap (``tensordesc_meta`` entry ``meta``; triton's
    ``make_tensordesc_arg``/``fill_tma_descriptor_tiled``, Triton 3.5 and 3.6): the map
    (dims and box innermost first, byte strides, element strides 1, no interleave, the
    kernel's swizzle, L2 promotion 128B, NaN fill for ``padding="nan"``), then the shape
    and the strides as they are."""
    shape = [int(x) for x in desc.shape]
    strides = [int(x) for x in desc.strides]
    if strides[-1] != 1:
        raise ValueError("the descriptor's last dimension must be contiguous (stride 1)")
    if meta.get("is_im2col"):
        raise ValueError("an im2col tensor descriptor is not traced by warpviz yet")
    expanded = list(shape)
    if meta.get("fp4_padded"):
        expanded[-1] *= 2
    etype = int(meta["elem_type"])
    if getattr(desc, "round_f32_to_tf32", False):
        dt = DTYPES["tfloat32"][0]
    else:
        dt = _TRITON_DTYPE.get(etype, -1)
    if dt not in _DTYPE_NAME:
        raise ValueError(f"Triton's element type {etype} is not one warpviz encodes")
    esize = int(meta["elem_size"])
    swz = _SWIZZLE_NAME.get(int(meta["swizzle"]))
    if swz is None:
        raise ValueError(f"Triton's swizzle mode {meta['swizzle']} is not one warpviz encodes")
    block = [int(x) for x in meta["block_size"]]
    rank = len(block)
    tm = TensorMapArg(desc.base, _DTYPE_NAME[dt], tuple(reversed(expanded)),
                      tuple(esize * s for s in reversed(strides[:-1])), tuple(reversed(block)), (1,) * rank,
                      "none", swz, "128B", "nan" if getattr(desc, "padding", "zero") == "nan" else "none")
    return [tm, *shape, *strides]


# ---------------------------------------------------------------------------- the GPU side


def encode_args(spec: dict, address: int) -> tuple:
    """cuTensorMapEncodeTiled's arguments (after the output map) for ``spec``
    (``TensorMapSpec.as_dict``) at global ``address``, as plain Python values."""
    return (DTYPES[spec["dtype"]][0], len(spec["dims"]), address, tuple(spec["dims"]), tuple(spec["strides"]),
            tuple(spec["box"]), tuple(spec["element_strides"]), INTERLEAVE[spec["interleave"]],
            SWIZZLE[spec["swizzle"]], L2_PROMOTION[spec["l2_promotion"]], OOB_FILL[spec["oob_fill"]])


def encode(spec: dict, address: int) -> bytes:
    """The 128-byte CUtensorMap the driver encodes for ``spec`` at ``address`` (needs libcuda:
    runs in the GPU process)."""
    import ctypes

    from ..kinds.tensormap import TensorMapError, libcuda

    dt, rank, addr, dims, strides, box, estr, inter, swz, l2, oob = encode_args(spec, address)
    fn = libcuda().cuTensorMapEncodeTiled
    fn.restype = ctypes.c_int
    out = (ctypes.c_uint64 * 16)()
    rc = fn(ctypes.byref(out), ctypes.c_int(dt), ctypes.c_uint32(rank), ctypes.c_void_p(addr),
            (ctypes.c_uint64 * rank)(*dims), (ctypes.c_uint64 * max(1, rank - 1))(*(strides or (0,))),
            (ctypes.c_uint32 * rank)(*box), (ctypes.c_uint32 * rank)(*estr), ctypes.c_int(inter), ctypes.c_int(swz),
            ctypes.c_int(l2), ctypes.c_int(oob))
    if rc != 0:
        raise TensorMapError(f"cuTensorMapEncodeTiled refused the tensor map `{spec['name']}` (CUresult {rc}): "
                             f"{spec['dtype']}, dims {spec['dims']}, strides {spec['strides']}, box {spec['box']}, "
                             f"swizzle {spec['swizzle']}, interleave {spec['interleave']}")
    return bytes(out)


def has_params(args: list[dict]) -> bool:
    """Does a launch (``request``'s ``args``) take a tensor map, pointer or structure [[arg]]?"""
    return any(a.get("type") in TYPES for a in args)


_SCALAR_CODES = {"char": "b", "short": "h", "int": "i", "unsigned": "I", "long long": "q",
                 "unsigned long long": "Q", "float": "f", "double": "d"}


def param_layout(args: list[dict]) -> list[tuple[int, int, int]]:
    """(offset, size, align) of each parameter, laid out as CUDA lays out a kernel's
    parameters: each at the next multiple of its alignment."""
    out, at = [], 0
    for a in args:
        t = a["type"]
        if t in TYPES:
            size, align = int(a["bytes"]), int(a["align"])
        elif t.endswith("*"):
            size = align = 8
        else:
            size = align = _struct.calcsize(_SCALAR_CODES[t])
        at = -(-at // align) * align
        out.append((at, size, align))
        at += size
    return out


def param_buffer(args: list[dict], offsets: list[int], named: dict[str, int], maps: dict[str, dict],
                 base: int, encoder=None) -> bytes:
    """The kernel's parameters as one buffer (``param_layout``): buffers at ``base`` +
    their offset (NULL for -1), scalars, and tensor-map / pointer / struct [[arg]]s with
    their maps encoded (``encoder``) for the named buffers' addresses (``named``: name ->
    offset in the allocation)."""
    encoder = encoder or encode
    layout = param_layout(args)
    total = (layout[-1][0] + layout[-1][1]) if layout else 0
    buf = bytearray(total)
    cache: dict[str, bytes] = {}

    def tmap(name: str) -> bytes:
        if name not in cache:
            spec = maps[name]
            cache[name] = encoder(spec, base + named[spec["tensor"]] + int(spec["offset"]))
        return cache[name]

    for a, off, (at, size, _al) in zip(args, offsets, layout):
        t = a["type"]
        if t in TYPES:
            raw = bytes.fromhex(a.get("hex", ""))
            buf[at:at + len(raw)] = raw
            for f in a.get("fields", []):
                p = at + int(f["offset"])
                if "pointer" in f:
                    buf[p:p + 8] = _struct.pack("<Q", base + named[f["pointer"]] + int(f.get("buffer_offset", 0)))
                elif "map" in f:
                    buf[p:p + TENSORMAP_BYTES] = tmap(f["map"])
                else:
                    buf[p:p + SCALARS[f["type"]][1]] = _struct.pack("<" + SCALARS[f["type"]][0], f["value"])
        elif t.endswith("*"):
            buf[at:at + 8] = _struct.pack("<Q", 0 if off < 0 else base + off)
        else:
            buf[at:at + size] = _struct.pack("<" + _SCALAR_CODES[t], a["value"])
    return bytes(buf)


def param_values(args: list[dict], offsets: list[int], named: dict[str, int], maps: dict[str, dict],
                 base: int, encoder=None) -> list[bytes]:
    """Each parameter's own bytes (``param_buffer`` cut at ``param_layout``), for
    ``cuLaunchKernel``'s ``kernelParams``: the driver puts each where the kernel expects it."""
    raw = param_buffer(args, offsets, named, maps, base, encoder)
    return [raw[at:at + size] for at, size, _al in param_layout(args)]


class DriverFunction:
    """A kernel launched through the driver's ``cuLaunchKernel`` with ``kernelParams`` (one
    pointer per parameter, as the CUDA runtime launches), for launches with tensor-map,
    pointer or struct [[arg]]s; its module is loaded with ``cuModuleLoadData`` into the current
    context (the GPU process's PyCUDA context). It offers what ``viz.trace.record`` uses of a
    PyCUDA function: calling it, ``set_attribute`` and ``_wv_module.get_global`` (device
    addresses as ints, which PyCUDA's copies take). ``error``: the exception class to raise
    (PyCUDA's, so the runner's guard turns a failure into a KernelFault)."""

    def __init__(self, cubin: bytes, name: str, error=RuntimeError):
        import ctypes

        from ..kinds.tensormap import libcuda

        self._ct = ctypes
        self._lib = libcuda()
        self._error = error
        self._name = name
        self._mod = ctypes.c_void_p()
        self._check(self._lib.cuModuleLoadData(ctypes.byref(self._mod), ctypes.c_char_p(cubin)), "cuModuleLoadData")
        self._fn = ctypes.c_void_p()
        self._check(self._lib.cuModuleGetFunction(ctypes.byref(self._fn), self._mod, name.encode()),
                    "cuModuleGetFunction")
        self._wv_module = self

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            text = self._ct.c_char_p()
            self._lib.cuGetErrorString(rc, self._ct.byref(text))
            why = text.value.decode(errors="replace") if text.value else f"CUresult {rc}"
            try:
                err = self._error(f"{what} failed: {why}")
            except Exception:  # noqa: BLE001 - an exception class that takes no message
                err = RuntimeError(f"{what} failed: {why}")
            raise err

    def get_global(self, symbol: str) -> tuple[int, int]:
        ptr, size = self._ct.c_uint64(), self._ct.c_size_t()
        self._check(self._lib.cuModuleGetGlobal_v2(self._ct.byref(ptr), self._ct.byref(size), self._mod,
                                                   symbol.encode()), "cuModuleGetGlobal")
        return int(ptr.value), int(size.value)

    def set_attribute(self, attribute, value: int) -> None:
        self._check(self._lib.cuFuncSetAttribute(self._fn, self._ct.c_int(int(attribute)), self._ct.c_int(int(value))),
                    "cuFuncSetAttribute")

    def __call__(self, *params: bytes, block=(1, 1, 1), grid=(1, 1, 1), shared: int = 0) -> None:
        ct = self._ct
        bufs = [(ct.c_uint64 * max(1, -(-len(p) // 8)))() for p in params]     # 8-byte aligned copies
        for b, p in zip(bufs, params):
            ct.memmove(b, p, len(p))
        ptrs = (ct.c_void_p * max(1, len(bufs)))(*[ct.cast(b, ct.c_void_p) for b in bufs])
        g = tuple(grid) + (1,) * (3 - len(grid))
        bl = tuple(block) + (1,) * (3 - len(block))
        self._check(self._lib.cuLaunchKernel(self._fn, *(ct.c_uint(int(x)) for x in g), *(ct.c_uint(int(x)) for x in bl),
                                             ct.c_uint(int(shared)), ct.c_void_p(0), ptrs, ct.c_void_p(0)),
                    f"cuLaunchKernel of {self._name[:80]}")


__all__ = ["param_values", "DriverFunction", "TensorMapArg", "triton_host_descriptor", "TensorMapSpec", "ParamSpec", "Field", "parse_tensormap", "parse_param", "parse_buffer_name",
           "encode", "encode_args", "param_layout", "param_buffer", "has_params", "DTYPES", "SWIZZLE",
           "INTERLEAVE", "L2_PROMOTION", "OOB_FILL", "TYPES"]
