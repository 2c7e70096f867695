"""Host-built tensor maps and structures passed by value in launch files (viz/trace/tensormaps.py):
[[buffer]], [[tensormap]], tensormap / pointer / struct [[arg]]s, the parameter buffer they
become, Triton's host TensorDescriptors (trace_triton), and the captured-launch converter for
programs with their own main() (tools/gpu/capture_to_launch.py). No GPU: the map itself is
encoded by the driver on the GPU machine (tests/test_tensormaps.py's GPU test and
tools/gpu/cutlass_gemm.sh run that)."""

from __future__ import annotations

import json
import struct
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from helpers import HAVE_NVCC
from viz.cli import main
from viz.trace import TraceError, tensormaps as tm
from viz.trace.launch import load_launch
from viz.trace.pyargs import ArgumentError, triton_params, write_launch_folder

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "tensormaps"
nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")

HEAD = 'format = 2\nsource = "k.cu"\nkernel = "k"\nblock = [128]\ngrid = [1]\n'
BUFFER = '[[buffer]]\nname = "A"\ntype = "half*"\ncount = 65536\nfill = "random"\n'
MAP = ('[[tensormap]]\nname = "mA"\ntensor = "A"\ndtype = "float16"\ndims = [256, 256]\nstrides = [512]\n'
       'box = [64, 128]\nswizzle = "128B"\n')
STRUCT = ('[[arg]]\ntype = "struct"\nbytes = 256\nalign = 128\nhex = "0102"\n'
          '[[arg.field]]\noffset = 0\nmap = "mA"\n'
          '[[arg.field]]\noffset = 128\npointer = "A"\nbuffer_offset = 16\n'
          '[[arg.field]]\noffset = 136\ntype = "int"\nvalue = -5\n')


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "k.cu").write_text('extern "C" __global__ void k(float* a) {}\n')
    p = tmp_path / "k.launch.toml"
    p.write_text(text)
    return p


def fake_encoder(spec: dict, address: int) -> bytes:
    """Stands in for the driver: the address and the first dim, repeated (so a test sees where
    a map landed and for which buffer address it was encoded)."""
    return (struct.pack("<QQ", address, spec["dims"][0]) * 8)


def test_a_struct_holding_a_map_a_pointer_and_an_int_is_packed_as_the_abi_lays_it_out(tmp_path):
    p = write(tmp_path, HEAD + BUFFER + MAP + STRUCT
              + '[[arg]]\ntype = "tensormap"\nmap = "mA"\n[[arg]]\ntype = "pointer"\nbuffer = "A"\n'
                '[[arg]]\ntype = "int"\nvalue = 3\n')
    L = load_launch(p)
    assert [a.type for a in L.args] == ["struct", "tensormap", "pointer", "int"]
    assert [b.name for b in L.buffers] == ["A"] and L.buffers[0].nbytes == 131072
    assert L.named_offsets() == {"A": 0} and L.buffer_bytes == 131072
    m = L.tensormaps[0]
    assert (m.dims, m.strides, m.box, m.element_strides, m.swizzle, m.rank) == ((256, 256), (512,), (64, 128), (1, 1),
                                                                               "128B", 2)
    args = [a.as_dict() for a in L.args]
    assert tm.param_layout(args) == [(0, 256, 128), (256, 128, 64), (384, 8, 8), (392, 4, 4)]
    base = 0x7F0000000000
    raw = tm.param_buffer(args, L.buffer_offsets(), L.named_offsets(), {m.name: m.as_dict()}, base, fake_encoder)
    assert len(raw) == 396
    assert raw[0:16] == struct.pack("<QQ", base, 256)               # the map over the struct's hex bytes
    assert raw[128:136] == struct.pack("<Q", base + 16)             # the pointer, 16 bytes into A
    assert raw[136:140] == struct.pack("<i", -5) and raw[140:256] == bytes(116)
    assert raw[256:272] == struct.pack("<QQ", base, 256)            # the tensormap [[arg]] at 256
    assert raw[384:392] == struct.pack("<Q", base) and raw[392:396] == struct.pack("<i", 3)


def test_encode_args_are_the_drivers_enums(tmp_path):
    L = load_launch(write(tmp_path, HEAD + BUFFER + MAP.replace('swizzle = "128B"', 'swizzle = "64B"\n'
                                                                 'l2_promotion = "256B"\noob_fill = "nan"')
                          .replace("box = [64, 128]", "box = [32, 128]") + STRUCT))
    d = L.tensormaps[0].as_dict()
    assert tm.encode_args(d, 0x1000) == (6, 2, 0x1000, (256, 256), (512,), (32, 128), (1, 1), 0, 2, 3, 1)


def test_named_buffer_args_and_hidden_buffers_share_one_allocation(tmp_path):
    text = (HEAD + '[[arg]]\ntype = "float*"\ncount = 100\nname = "X"\n' + BUFFER
            + MAP.replace('tensor = "A"', 'tensor = "X"').replace("dims = [256, 256]", "dims = [8, 12]")
                 .replace("strides = [512]", "strides = [32]").replace("box = [64, 128]", "box = [8, 4]")
                 .replace('swizzle = "128B"', 'swizzle = "none"').replace('dtype = "float16"', 'dtype = "float32"')
            + '[[arg]]\ntype = "tensormap"\nmap = "mA"\nalign = 128\n')
    L = load_launch(write(tmp_path, text))
    assert L.named_offsets() == {"X": 0, "A": 512} and L.buffer_bytes == 512 + 131072
    assert L.args[1].spec.align == 128


HOSTILE = {
    "past the buffer": (MAP.replace("dims = [256, 256]", "dims = [256, 257]"), "tensormap 1.dims", "spans"),
    "stride not 16": (MAP.replace("strides = [512]", "strides = [520]"), "tensormap 1.strides[0]", "multiple of 16"),
    "box over 256": (MAP.replace("box = [64, 128]", "box = [64, 512]"), "tensormap 1.box[1]", "256"),
    "inner box bytes": (MAP.replace("box = [64, 128]", "box = [4, 128]"), "tensormap 1.box", "multiple of 16"),
    "swizzle too narrow": (MAP.replace('swizzle = "128B"', 'swizzle = "32B"'), "tensormap 1.swizzle", "wider"),
    "unknown dtype": (MAP.replace('"float16"', '"float8"'), "tensormap 1.dtype", "float8"),
    "rank 6": (MAP.replace("dims = [256, 256]", "dims = [2, 2, 2, 2, 2, 2]"), "tensormap 1.dims", "rank 1 to 5"),
    "no such buffer": (MAP.replace('tensor = "A"', 'tensor = "B"'), "tensormap 1.tensor", "no named buffer"),
    "misaligned offset": (MAP + "offset = 8\n", "tensormap 1.offset", "multiple of 16"),
    "negative dim": (MAP.replace("dims = [256, 256]", "dims = [256, -1]"), "tensormap 1.dims[1]", "whole number"),
    "interleave rank 2": (MAP + 'interleave = "32B"\n', "tensormap 1.interleave", "rank 3"),
    "nan fill on ints": (MAP.replace('"float16"', '"uint16"') + 'oob_fill = "nan"\n', "tensormap 1.oob_fill",
                         "floating"),
    "element stride 9": (MAP + "element_strides = [1, 9]\n", "tensormap 1.element_strides[1]", "whole number"),
    "unknown key": (MAP + 'shell = "$(touch /tmp/x)"\n', "tensormap 1.shell", "unknown key"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_tensor_maps_are_refused_naming_the_key(tmp_path, case):
    table, key, words = HOSTILE[case]
    with pytest.raises(TraceError) as err:
        load_launch(write(tmp_path, HEAD + BUFFER + table + STRUCT))
    assert err.value.where == key and words in err.value.problem, (err.value.where, err.value.problem)


STRUCT_HOSTILE = {
    "overlap": (STRUCT + '[[arg.field]]\noffset = 132\ntype = "int"\nvalue = 1\n', "arg 1.field", "overlap"),
    "past the end": (STRUCT.replace("bytes = 256", "bytes = 138"), "arg 1.field[2].offset", "ends past"),
    "misaligned pointer": (STRUCT.replace("offset = 128\npointer", "offset = 140\npointer"), "arg 1.field[1].offset",
                           "aligned"),
    "align too small": (STRUCT.replace("align = 128", "align = 8"), "arg 1.align", "aligned to 8"),
    "odd align": (STRUCT.replace("align = 128", "align = 3"), "arg 1.align", "must be one of"),
    "odd hex": (STRUCT.replace('hex = "0102"', 'hex = "010"'), "arg 1.hex", "hexadecimal"),
    "hex too long": (STRUCT.replace('hex = "0102"', 'hex = "' + "00" * 257 + '"'), "arg 1.hex", "hexadecimal"),
    "no such map": (STRUCT.replace('map = "mA"', 'map = "mB"'), "arg 1.field[0].map", "no [[tensormap]]"),
    "no such buffer": (STRUCT.replace('pointer = "A"', 'pointer = "Z"'), "arg 1.field[1]", "no named buffer"),
    "pointer past the buffer": (STRUCT.replace("buffer_offset = 16", "buffer_offset = 131073"),
                                "arg 1.field[1].offset", "whole number"),
    "int overflow": (STRUCT.replace("value = -5", "value = 4294967296"), "arg 1.field[2].value", "does not fit"),
    "two kinds": (STRUCT + '[[arg.field]]\noffset = 144\ntype = "int"\nvalue = 1\nmap = "mA"\n', "arg 1.field[3]",
                  "exactly one"),
    "huge struct": (STRUCT.replace("bytes = 256", "bytes = 40000"), "arg 1.bytes", "whole number"),
}


@pytest.mark.parametrize("case", sorted(STRUCT_HOSTILE))
def test_hostile_structures_are_refused_naming_the_key(tmp_path, case):
    table, key, words = STRUCT_HOSTILE[case]
    with pytest.raises(TraceError) as err:
        load_launch(write(tmp_path, HEAD + BUFFER + MAP + table))
    assert err.value.where == key, (err.value.where, err.value.problem)
    assert words is None or words in err.value.problem, err.value.problem


def test_the_new_tables_need_format_2_and_flags_must_be_booleans(tmp_path):
    with pytest.raises(TraceError) as err:
        load_launch(write(tmp_path, HEAD.replace("format = 2\n", "") + BUFFER + MAP + STRUCT))
    assert err.value.where == "buffer" and "format 2" in err.value.problem
    with pytest.raises(TraceError) as err:
        load_launch(write(tmp_path, HEAD + 'arch_specific = "yes"\n' + BUFFER + MAP + STRUCT))
    assert err.value.where == "arch_specific"
    with pytest.raises(TraceError) as err:
        load_launch(write(tmp_path, HEAD + BUFFER + BUFFER + MAP + STRUCT))
    assert err.value.where == "buffer 2.name" and "two buffers" in err.value.problem
    with pytest.raises(TraceError) as err:
        load_launch(write(tmp_path, HEAD + BUFFER.replace("count = 65536", "count = 0") + MAP + STRUCT))
    assert err.value.where == "buffer 1.count"


def test_the_cli_refuses_a_hostile_struct_with_exit_2_and_one_paragraph(tmp_path, capsys):
    p = write(tmp_path, HEAD + BUFFER + MAP.replace("dims = [256, 256]", "dims = [256, 100000]") + STRUCT)
    assert main(["trace", str(p)]) == 2
    err = capsys.readouterr().err
    assert "tensormap 1.dims" in err and "Traceback" not in err


@nvcc
def test_a_struct_arg_is_checked_against_the_compiled_parameter(tmp_path):
    from viz.trace import build

    L = load_launch(ROOT / "kernels" / "format2" / "tma_struct_param.launch.toml")
    kp = build.kernel_ptx(L, "sm_90")
    assert kp.entry == "tma_struct_param"
    bad = (ROOT / "kernels" / "format2" / "tma_struct_param.launch.toml").read_text().replace("align = 128",
                                                                                            "align = 64")
    (tmp_path / "tma_struct_param.cu").write_text((ROOT / "kernels" / "format2" / "tma_struct_param.cu").read_text())
    p = tmp_path / "bad.launch.toml"
    p.write_text(bad)
    with pytest.raises(TraceError) as err:
        build.kernel_ptx(load_launch(p), "sm_90")
    assert err.value.where == "arg 1.type" and "aligned to 128" in err.value.problem


# ---------------------------------------------------------------------------- Triton's host descriptors

META = [{"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [128, 64], "fp4_padded": False},
        {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [64, 64], "fp4_padded": False},
        {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [64, 64], "fp4_padded": False},
        {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [128, 64], "fp4_padded": False}]
SIG = {"sm_scale": "fp32", "M": "*fp32", "Z": "i32", "H": "i32", "desc_q": "tensordesc<fp16[128, 64]>",
       "desc_k": "tensordesc<fp16[64, 64]>", "desc_v": "tensordesc<fp16[64, 64]>", "desc_o": "tensordesc<fp16[128, 64]>",
       "N_CTX": "i32", "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr"}


def desc(t, y, d, padding="zero"):
    return types.SimpleNamespace(base=t, shape=[y, d], strides=[d, 1], block_shape=[1, 1], padding=padding)


def test_a_host_descriptor_becomes_a_map_then_its_shape_and_strides_as_triton_passes_them():
    q = np.zeros((2, 256, 64), np.float16)
    bound = dict(sm_scale=0.5, M=np.zeros(512, np.float32), Z=1, H=2, desc_q=desc(q, 512, 64),
                 desc_k=desc(q, 512, 64), desc_v=desc(q, 512, 64), desc_o=desc(q, 512, 64, "nan"), N_CTX=256,
                 HEAD_DIM=64, BLOCK_M=128)
    vals = triton_params(SIG, bound, tensordesc_meta=META)
    assert len(vals) == 4 + 4 * 5 + 1
    m = vals[4]
    assert isinstance(m, tm.TensorMapArg) and vals[5:9] == [512, 64, 64, 1]
    assert (m.dtype, m.dims, m.strides, m.box, m.swizzle, m.l2_promotion, m.oob_fill) == (
        "float16", (64, 512), (128,), (64, 128), "128B", "128B", "none")
    assert vals[19].oob_fill == "nan" and vals[9].box == (64, 64)
    lowered = triton_params(SIG, bound, tensordesc_meta=[None] * 4)       # a pointer-lowered descriptor
    assert lowered[4] is q and lowered[5:14] == [512, 64, 64, 1, 0, 512, 64, 64, 1]


def test_a_descriptor_argument_that_is_not_one_is_refused():
    bound = dict(sm_scale=0.5, M=None, Z=1, H=2, desc_q=np.zeros(4), desc_k=None, desc_v=None, desc_o=None,
                 N_CTX=1, HEAD_DIM=64, BLOCK_M=128)
    with pytest.raises(ArgumentError, match="desc_q.*TensorDescriptor"):
        triton_params(SIG, bound, tensordesc_meta=META)
    bad = [dict(META[0], swizzle=7)] + META[1:]
    q = np.zeros((512, 64), np.float16)
    bound.update(desc_q=desc(q, 512, 64))
    with pytest.raises(ArgumentError, match="swizzle mode 7"):
        triton_params(SIG, bound, tensordesc_meta=bad)


@nvcc
def test_the_tutorials_attention_with_host_descriptors_makes_a_launch_folder_that_assembles(tmp_path):
    """Triton 3.5's PTX of the fused-attention tutorial's _attn_fwd for sm_90 with host
    descriptors (tests/data/tensormaps): the launch folder warpviz writes for it loads, its
    four CUtensorMap parameters match the compiled ones (128 bytes aligned to 64) and ptxas
    assembles the module."""
    from viz.api import triton_launch
    from viz.trace import build

    ptx = (DATA / "triton35_tutorial06_attn_fwd_sm90.ptx").read_text()
    md = types.SimpleNamespace(name="_attn_fwd", num_ctas=1, cluster_dims=(1, 1, 1), tensordesc_meta=META,
                               num_warps=4, shared=49184, global_scratch_size=0, profile_scratch_size=0)
    sig = dict(SIG, HEAD_DIM="constexpr", BLOCK_M="constexpr", BLOCK_N="constexpr", FP8_OUTPUT="constexpr",
               STAGE="constexpr", warp_specialize="constexpr", IS_HOPPER="constexpr")
    compiled = types.SimpleNamespace(metadata=md, asm={"ptx": ptx}, src=types.SimpleNamespace(signature=sig))
    q = np.random.default_rng(1).random((1, 2, 256, 64)).astype(np.float16)
    bound = dict(sm_scale=0.5, M=np.zeros((1, 2, 256), np.float32), Z=1, H=2, desc_q=desc(q, 512, 64),
                 desc_k=desc(q, 512, 64), desc_v=desc(q, 512, 64), desc_o=desc(np.zeros_like(q), 512, 64), N_CTX=256,
                 HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, FP8_OUTPUT=False, STAGE=1, warp_specialize=False, IS_HOPPER=True)
    ptx2, name, block, shared, values, _ = triton_launch(compiled, bound, (2, 2, 1))
    p = write_launch_folder(tmp_path, ptx2, name, (2, 2, 1), block, values, shared, "attention", "attn")
    L = load_launch(p)
    assert [m.name for m in L.tensormaps] == ["map5", "map10", "map15", "map20"]
    assert [a.type for a in L.args].count("tensormap") == 4
    assert L.named_offsets() == {"tensor5": 2048, "tensor10": 67584, "tensor15": 133120, "tensor20": 198656}
    assert np.array_equal(np.load(tmp_path / "arg5.npy"), q.reshape(-1))
    kp = build.kernel_ptx(L, "sm_90")
    assert kp.arch == "sm_90a"


# ---------------------------------------------------------------------------- captured launches


def test_a_captured_launch_becomes_a_launch_file_with_maps_and_pointers(tmp_path):
    sys.path.insert(0, str(ROOT / "tools" / "gpu"))
    import capture_to_launch

    ptx = (".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(\n"
           "\t.param .align 128 .b8 k_param_0[256],\n\t.param .u64 k_param_1,\n\t.param .align 4 .b8 k_param_2[8]\n)\n"
           "{\n\tret;\n}\n")
    A, B = 0x7F0000000000, 0x7F0000100000
    tmap = bytes(range(128))
    p0 = bytearray(256)
    p0[0:128] = tmap
    p0[128:136] = struct.pack("<Q", B + 64)
    p0[136:140] = struct.pack("<i", 7)
    cap = {"kernel": "k", "grid": [2, 1, 1], "block": [128, 1, 1], "cluster": [2, 1, 1], "shared_bytes": 1024,
           "params": [{"offset": 0, "size": 256, "hex": bytes(p0).hex()},
                      {"offset": 256, "size": 8, "hex": struct.pack("<Q", A).hex()},
                      {"offset": 264, "size": 8, "hex": struct.pack("<ii", 3, 4).hex()}],
           "allocations": [{"address": A, "bytes": 4096, "file": "alloc_0.bin"},
                           {"address": B, "bytes": 8192, "file": "alloc_1.bin"}],
           "tensormaps": [{"dtype": 6, "rank": 2, "address": A, "interleave": 0, "swizzle": 3, "l2_promotion": 2,
                           "oob_fill": 0, "dims": [32, 64], "strides": [64], "box": [32, 16],
                           "element_strides": [1, 1], "hex": tmap.hex()}]}
    capd = tmp_path / "cap"
    capd.mkdir()
    (capd / "launch.json").write_text(json.dumps(cap))
    (capd / "alloc_0.bin").write_bytes(bytes(4096))
    (capd / "alloc_1.bin").write_bytes(bytes(8192))
    (tmp_path / "k.ptx").write_text(ptx)
    (tmp_path / "k.cu").write_text('extern "C" __global__ void k() {}\n')
    out = tmp_path / "k.launch.toml"
    assert capture_to_launch.main([str(capd), str(tmp_path / "k.ptx"), str(out), "--source", "k.cu",
                                   "--arch-specific"]) == 0
    L = load_launch(out)
    assert [b.name for b in L.buffers] == ["buf0", "buf1"] and L.arch_specific
    assert L.tensormaps[0].as_dict() == {"name": "map0", "tensor": "buf0", "offset": 0, "dtype": "float16",
                                         "dims": [32, 64], "strides": [64], "box": [32, 16], "element_strides": [1, 1],
                                         "interleave": "none", "swizzle": "128B", "l2_promotion": "128B",
                                         "oob_fill": "none"}
    s0, s1, s2 = (a.spec for a in L.args)
    assert (s0.kind, s0.size, s0.align) == ("struct", 256, 128)
    assert [(f.offset, f.kind, f.ref, f.extra) for f in s0.fields] == [(0, "tensormap", "map0", 0),
                                                                       (128, "pointer", "buf1", 64)]
    assert s0.raw[136:140] == struct.pack("<i", 7)
    assert (s1.kind, s1.fields[0].ref) == ("pointer", "buf0")
    assert (s2.kind, s2.size, s2.align, s2.raw) == ("struct", 8, 4, struct.pack("<ii", 3, 4))
    assert "cluster [2, 1, 1]" in L.notes


# ---------------------------------------------------------------------------- on the GPU


@pytest.mark.gpu
def test_gpu_a_map_inside_a_struct_is_encoded_recorded_and_equals_nsight_compute(tmp_path):
    """kernels/format2/tma_struct_param: the map encoded on the GPU machine for warpviz's own
    buffer, the TMA copy recorded through the struct parameter's address, every counter equal
    to Nsight Compute's (tools/gpu/cutlass_gemm.sh runs the same launch file first)."""
    import shutil

    from helpers import have_pycuda

    if shutil.which("nvcc") is None or not have_pycuda():
        pytest.skip("needs PyCUDA, a GPU and nvcc")
    import warpviz

    t = warpviz.trace_launch(ROOT / "kernels" / "format2" / "tma_struct_param.launch.toml", validate=True,
                             out=tmp_path / "t.wvtrace")
    v = t.validation
    bad = [r for r in v["rows"] + v["other"] if not r["match"]]
    assert not bad, bad
    tma = [a for a in t.analysis().accesses if a["kind"] == "tma"]
    assert len(tma) == 1 and tma[0]["executed"] == 8          # 8 blocks; warp 0's lane 0 issues (the others branch around)


class _FakeDriver:
    """libcuda's few entry points DriverFunction calls, recording what it is given."""

    def __init__(self, launch_rc=0):
        self.launch_rc, self.launches = launch_rc, []

    def cuModuleLoadData(self, ref, data):
        ref._obj.value = 1234
        return 0

    def cuModuleGetFunction(self, ref, mod, name):
        ref._obj.value, self.name = 5678, name
        return 0

    def cuModuleGetGlobal_v2(self, pref, sref, mod, sym):
        pref._obj.value, sref._obj.value = 0xDEAD00, 64
        return 0

    def cuFuncSetAttribute(self, fn, attr, value):
        self.attribute = (attr.value, value.value)
        return 0

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        import ctypes

        self.launches.append(([x.value for x in (gx, gy, gz, bx, by, bz, shared)],
                              [ctypes.string_at(params[k], n) for k, n in enumerate(self.sizes)]))
        return self.launch_rc

    def cuGetErrorString(self, rc, ref):
        ref._obj.value = b"too many resources requested for launch"
        return 0


def test_a_launch_with_struct_args_passes_each_parameters_bytes_to_cuLaunchKernel(monkeypatch):
    """record._kernel_args gives each parameter's bytes; DriverFunction hands the driver one
    pointer per parameter (kernelParams) and the launch's grid, block and shared memory."""
    from viz.kinds import tensormap as kt
    from viz.trace import record

    L = load_launch(ROOT / "kernels" / "format2" / "tma_struct_param.launch.toml")
    req = {"args": [a.as_dict() for a in L.args], "offsets": L.buffer_offsets(), "named": L.named_offsets(),
           "tensormaps": {m.name: m.as_dict() for m in L.tensormaps}}
    monkeypatch.setattr(tm, "encode", lambda spec, address: struct.pack("<Q", address) * 16)
    params = record._kernel_args(req, 0x7000000)
    assert [len(p) for p in params] == [256]
    assert params[0][:8] == struct.pack("<Q", 0x7000000) and params[0][128:136] == struct.pack("<Q", 0x7000000 + 32768)
    assert struct.unpack("<ii", params[0][136:144]) == (64, 128)
    fake = _FakeDriver()
    fake.sizes = [256]
    monkeypatch.setattr(kt, "libcuda", lambda: fake)
    fn = tm.DriverFunction(b"cubin", "tma_struct_param")
    assert fake.name == b"tma_struct_param" and fn._wv_module.get_global("x") == (0xDEAD00, 64)
    fn.set_attribute(8, 60000)
    assert fake.attribute == (8, 60000)
    fn(*params, block=(128,), grid=(4, 2), shared=60000)
    assert fake.launches == [([4, 2, 1, 128, 1, 1, 60000], params)]
    fake.launch_rc = 701

    class Refused(Exception):
        pass

    with pytest.raises(Refused, match="cuLaunchKernel of tma_struct_param failed: too many resources"):
        tm.DriverFunction(b"cubin", "tma_struct_param", Refused)(*params, block=(128,), grid=(1,))
