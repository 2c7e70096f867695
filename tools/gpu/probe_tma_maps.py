"""CUtensorMap byte layout probe (tools/gpu/probe_tma.sh runs it on the device machine).

  python3 tools/gpu/probe_tma_maps.py OUT.json

Encodes tensor maps with the driver (ctypes on libcuda.so.1: cuTensorMapEncodeTiled and
cuTensorMapEncodeIm2col), changing one field at a time from a base map, and writes each
map's 128 bytes as hex beside the inputs that made it (and the driver's result code), so
that the layout can be decoded without a GPU (viz/kinds/tma_copy.py reads these bytes).
Needs no PyTorch; needs a driver (cuInit). Written for warpviz.
"""

from __future__ import annotations

import ctypes as C
import json
import sys

DTYPES = {"UINT8": 0, "UINT16": 1, "UINT32": 2, "INT32": 3, "UINT64": 4, "INT64": 5, "FLOAT16": 6, "FLOAT32": 7,
          "FLOAT64": 8, "BFLOAT16": 9, "FLOAT32_FTZ": 10, "TFLOAT32": 11, "TFLOAT32_FTZ": 12,
          "16U4_ALIGN8B": 13, "16U4_ALIGN16B": 14, "16U6_ALIGN16B": 15}
SIZES = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4, 13: 1, 14: 1, 15: 1}
SWIZZLES = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3, "128B_ATOM_32B": 4, "128B_ATOM_32B_FLIP_8B": 5,
            "128B_ATOM_64B": 6}

BASE = dict(dtype=7, rank=2, address=0x7F1234560000, dims=[1024, 512], strides=[4096], box=[32, 64],
            estrides=[1, 1], interleave=0, swizzle=3, l2=2, oob=0)


def variants() -> list[tuple[str, dict]]:
    out = [("base", dict(BASE))]

    def v(label, **kw):
        d = dict(BASE)
        d.update(kw)
        out.append((label, d))

    for name, code in DTYPES.items():
        size = SIZES[code]
        v(f"dtype {name}", dtype=code, box=[max(1, 128 // size) if code < 13 else 128, 64],
          strides=[1024 * 16])
    for rank in (1, 2, 3, 4, 5):
        dims = [1024, 512, 7, 5, 3][:rank]
        strides, s = [], 4
        for d in dims[:-1]:
            s *= d
            strides.append(s)
        v(f"rank {rank}", rank=rank, dims=dims, strides=strides, box=[32, 64, 2, 3, 2][:rank], estrides=[1] * rank)
        v(f"rank {rank} distinct", rank=rank, dims=[1000, 700, 9, 6, 4][:rank],
          strides=[s * 16 for s in (256, 256 * 700, 256 * 700 * 9, 256 * 700 * 9 * 6)][:rank - 1],
          box=[16, 24, 3, 5, 2][:rank], estrides=[1, 2, 3, 4, 5][:rank])
    for addr in (0x10, 0x100, 0x1000, 0x7F0000000000, 0x7F0000000010, 0x7FFFFFFFFFF0, 0x1234567890):
        v(f"address {addr:#x}", address=addr)
    for i, dim in enumerate((1, 2, 3, 1000, 65535, 65536, 1 << 20, (1 << 32) - 1, 1 << 32)):
        v(f"dim0 {dim}", dims=[dim, 512])
        if i < 6:
            v(f"dim1 {dim}", dims=[1024, dim])
    for st in (16, 32, 4096, 4112, 1 << 20, (1 << 32), (1 << 36), (1 << 40) - 16):
        v(f"stride0 {st}", strides=[st])
    for b0 in (1, 2, 8, 16, 31, 32):
        v(f"box0 {b0}", box=[b0, 64])
    for b1 in (1, 2, 3, 64, 100, 255, 256):
        v(f"box1 {b1}", box=[32, b1])
    for e in ((1, 2), (2, 1), (3, 5), (8, 8), (1, 7)):
        v(f"estrides {e}", estrides=list(e))
    for name, code in SWIZZLES.items():
        v(f"swizzle {name}", swizzle=code, box=[32 if code in (0, 3) or code >= 4 else (8 if code == 1 else 16), 64])
    v("swizzle NONE box0 200", swizzle=0, box=[200, 4])
    for il, name in ((1, "16B"), (2, "32B")):
        for sw in (0, 1, 2, 3):
            v(f"interleave {name} swizzle {sw}", interleave=il, swizzle=sw, rank=3, dims=[16, 64, 64],
              strides=[64 * 16 * 4 // 16 * 16, 64 * 64 * 16 * 4], box=[4 if il == 1 else 8, 8, 8], estrides=[1, 1, 1])
    for l2 in range(4):
        v(f"l2 {l2}", l2=l2)
    for oob in (0, 1):
        v(f"oob {oob}", oob=oob)
    return out


def im2col_variants() -> list[tuple[str, dict]]:
    base = dict(dtype=6, rank=4, address=0x7F1234560000, dims=[64, 32, 32, 8], box_lower=[-1, -1],
                box_upper=[-1, -1], channels=64, pixels=128, estrides=[1, 1, 1, 1], interleave=0, swizzle=3, l2=2, oob=0)
    out = [("im2col base", dict(base))]
    for lo, hi in (([0, 0], [0, 0]), ([-2, -3], [1, 2]), ([-8, 0], [7, 0])):
        out.append((f"im2col corners {lo} {hi}", dict(base, box_lower=lo, box_upper=hi)))
    for ch in (8, 16, 32, 256):
        out.append((f"im2col channels {ch}", dict(base, channels=ch)))
    for px in (1, 32, 64, 256):
        out.append((f"im2col pixels {px}", dict(base, pixels=px)))
    out.append(("im2col rank 3", dict(base, rank=3, dims=[64, 32, 8], box_lower=[-1], box_upper=[1])))
    out.append(("im2col rank 5", dict(base, rank=5, dims=[64, 16, 16, 16, 2], box_lower=[-1, -2, -3],
                                      box_upper=[1, 2, 3])))
    out.append(("im2col estrides", dict(base, estrides=[1, 2, 3, 1])))
    return out


def main(path: str) -> None:
    cu = C.CDLL("libcuda.so.1")
    rc = cu.cuInit(0)
    dev = C.c_int()
    ctx = C.c_void_p()
    cu.cuDeviceGet(C.byref(dev), 0)
    cu.cuDevicePrimaryCtxRetain(C.byref(ctx), dev)
    cu.cuCtxSetCurrent(ctx)
    ver = C.c_int()
    cu.cuDriverGetVersion(C.byref(ver))
    u64, u32 = C.c_uint64, C.c_uint32
    results = {"driver_version": ver.value, "cuInit": rc, "enums": {"dtype": DTYPES, "swizzle": SWIZZLES,
               "interleave": {"NONE": 0, "16B": 1, "32B": 2}, "l2": {"NONE": 0, "64B": 1, "128B": 2, "256B": 3},
               "oob": {"NONE": 0, "NAN_REQUEST_ZERO_FMA": 1}},
               "notes": "strides: globalStrides in bytes for dims 1..rank-1 (CUDA's array); box and estrides "
                        "per dim, dim 0 innermost", "tiled": [], "im2col": []}
    for label, d in variants():
        m = (C.c_ubyte * 128)()
        r = d["rank"]
        err = cu.cuTensorMapEncodeTiled(
            m, C.c_int(d["dtype"]), u32(r), C.c_void_p(d["address"]), (u64 * 5)(*d["dims"]),
            (u64 * 5)(*d["strides"]) if d["strides"] else (u64 * 5)(), (u32 * 5)(*d["box"]), (u32 * 5)(*d["estrides"]),
            C.c_int(d["interleave"]), C.c_int(d["swizzle"]), C.c_int(d["l2"]), C.c_int(d["oob"]))
        results["tiled"].append({"label": label, "inputs": d, "result": err, "hex": bytes(m).hex()})
    enc = getattr(cu, "cuTensorMapEncodeIm2col", None)
    if enc is not None:
        for label, d in im2col_variants():
            m = (C.c_ubyte * 128)()
            r = d["rank"]
            strides, s = [], 2
            for x in d["dims"][:-1]:
                s *= x
                strides.append(s)
            d["strides"] = strides
            err = enc(m, C.c_int(d["dtype"]), u32(r), C.c_void_p(d["address"]), (u64 * 5)(*d["dims"]),
                      (u64 * 5)(*strides), (C.c_int * 3)(*d["box_lower"]), (C.c_int * 3)(*d["box_upper"]),
                      u32(d["channels"]), u32(d["pixels"]), (u32 * 5)(*d["estrides"]), C.c_int(d["interleave"]),
                      C.c_int(d["swizzle"]), C.c_int(d["l2"]), C.c_int(d["oob"]))
            results["im2col"].append({"label": label, "inputs": d, "result": err, "hex": bytes(m).hex()})
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    ok = sum(1 for x in results["tiled"] + results["im2col"] if x["result"] == 0)
    print(f"probe_tma_maps: driver {ver.value}, {len(results['tiled'])} tiled + {len(results['im2col'])} im2col maps, "
          f"{ok} encoded (result 0)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tensormaps.json")
