"""A real CUtensorMap for a generated kernel's ``tma.load``: ``cuTensorMapEncodeTiled``
called through ctypes on libcuda (the runner's process has a CUDA context already).

The map's data type is UINT8, UINT16 or UINT32 (an 8- or 16-byte element is 2 or 4
UINT32), the types the H100 probe copied with: the TMA moves bytes and its swizzles
permute 16-byte chunks, so only the size matters for where the box lands (measured: the
probe's UINT16 and UINT32 boxes landed alike). The 128 bytes are passed by value as the kernel's first
parameters (``viz.kinds.codegen``).
"""

from __future__ import annotations

import ctypes

from ..errors import WarpvizError

SWIZZLE = {"none": 0, "tma:32B": 1, "tma:64B": 2, "tma:128B": 3}   # CUtensorMapSwizzle
INTERLEAVE_NONE = 0
L2_PROMOTION_NONE = 0
OOB_FILL_NONE = 0

_lib = None


class TensorMapError(WarpvizError, RuntimeError):
    pass


def libcuda():
    global _lib
    if _lib is None:
        for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
            try:
                _lib = ctypes.CDLL(name)
                break
            except OSError:
                continue
        else:
            raise TensorMapError("libcuda could not be loaded: a tma.load needs the NVIDIA driver")
    return _lib


def encode_args(spec: dict, global_address: int):
    """The arguments of cuTensorMapEncodeTiled for ``spec`` (TensorMapSpec.to_json) at
    ``global_address``: (data type, dims innermost first, strides in bytes, box, element
    strides, swizzle). Three dimensions: columns, rows and the launch's replicas
    (``spec["replicas"]`` planes ``spec["replica_bytes"]`` apart; 1 and the row span when the
    spec has none), the box one plane deep."""
    from .codegen import data_type

    dtype, factor = data_type(spec["esize"])
    row_bytes = spec["cols"] * spec["esize"]
    replicas = int(spec.get("replicas", 1))
    plane = int(spec.get("replica_bytes", 0)) or -(-row_bytes * spec["rows"] // 16) * 16
    if replicas < 1 or plane % 16:
        raise TensorMapError(f"the tensor map of {spec['array']}: {replicas} replicas {plane} bytes apart "
                             "(at least one, a multiple of 16 bytes apart)")
    dims = (ctypes.c_uint64 * 3)(spec["cols"] * factor, spec["rows"], replicas)
    strides = (ctypes.c_uint64 * 2)(row_bytes, plane)
    box = (ctypes.c_uint32 * 3)(spec["box_cols"] * factor, spec["box_rows"], 1)
    estr = (ctypes.c_uint32 * 3)(1, 1, 1)
    return dtype, dims, strides, box, estr, SWIZZLE[spec["swizzle"]]


def encode(spec: dict, global_address: int) -> bytes:
    """The 128-byte CUtensorMap of ``spec`` for the tensor at ``global_address``."""
    if global_address % 16:
        raise TensorMapError(f"the tensor {spec['array']} starts at {global_address:#x}, not a multiple of 16 bytes")
    lib = libcuda()
    fn = lib.cuTensorMapEncodeTiled
    fn.restype = ctypes.c_int
    out = (ctypes.c_uint8 * 128)()
    dtype, dims, strides, box, estr, swz = encode_args(spec, global_address)
    rc = fn(ctypes.byref(out), ctypes.c_int(dtype), ctypes.c_uint32(len(dims)), ctypes.c_void_p(global_address),
            dims, strides, box, estr, ctypes.c_int(INTERLEAVE_NONE), ctypes.c_int(swz),
            ctypes.c_int(L2_PROMOTION_NONE), ctypes.c_int(OOB_FILL_NONE))
    if rc != 0:
        raise TensorMapError(f"cuTensorMapEncodeTiled refused the tensor map of {spec['array']} (CUresult {rc}): "
                             f"box {spec['box_rows']} x {spec['box_cols']} of {spec['esize']}-byte elements, "
                             f"swizzle {spec['swizzle']}")
    return bytes(out)


_modules: dict = {}


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{what} failed (CUresult {rc})")


def launch_with_kernel_params(spec, args: list) -> None:
    """Launch ``spec`` (viz.gpu.runner.LaunchSpec) with cuLaunchKernel's ``kernelParams``:
    one pointer per parameter, as the CUDA runtime launches a kernel. ``args`` are the
    runner's values in order (bytes for a tensor map, ints otherwise). The module is loaded
    into the current context (PyCUDA's) once per cubin and name."""
    import hashlib

    lib = libcuda()
    key = (hashlib.sha256(spec.cubin).hexdigest(), spec.name)
    fn = _modules.get(key)
    if fn is None:
        mod = ctypes.c_void_p()
        _check(lib.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(spec.cubin)), "cuModuleLoadData")
        fn = ctypes.c_void_p()
        _check(lib.cuModuleGetFunction(ctypes.byref(fn), mod, spec.name.encode()), "cuModuleGetFunction")
        if spec.shared > 48 * 1024:
            _check(lib.cuFuncSetAttribute(fn, ctypes.c_int(8), ctypes.c_int(spec.shared)),   # MAX_DYNAMIC_SHARED_SIZE
                   "cuFuncSetAttribute")
        _modules[key] = fn
    values = []
    for (kind, _v), a in zip(spec.args, args):
        if kind == "tmap":
            buf = (ctypes.c_uint64 * 16)()        # 8-byte aligned host copy of the 128 bytes
            ctypes.memmove(buf, a, 128)
            values.append(buf)
        elif kind in ("ptr", "sink", "u64"):
            values.append(ctypes.c_uint64(int(a)))
        elif kind == "i64":
            values.append(ctypes.c_int64(int(a)))
        else:
            values.append(ctypes.c_int32(int(a)))
    params = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values])
    gx, gy, gz = spec.grid
    bx, by, bz = spec.block
    _check(lib.cuLaunchKernel(fn, ctypes.c_uint(gx), ctypes.c_uint(gy), ctypes.c_uint(gz), ctypes.c_uint(bx),
                              ctypes.c_uint(by), ctypes.c_uint(bz), ctypes.c_uint(spec.shared), ctypes.c_void_p(0),
                              params, ctypes.c_void_p(0)), "cuLaunchKernel")


__all__ = ["encode", "encode_args", "TensorMapError", "SWIZZLE", "launch_with_kernel_params"]
