"""The generated and hand-written kernels: every one compiles with nvcc for sm_90, and the
generated code has exactly the model's memory instructions (checked in the PTX)."""

import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import access, global_array, scenario, shared_array
from viz.gpu import codegen, handwritten
from viz.gpu.codegen import generate, plan_groups
from viz.toolchain.compile import compile_many, find_nvcc
from viz.gpu.randomgen import scenarios as random_scenarios
from viz.scenario import load, runnable_builtins

needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")


def builtins():
    return runnable_builtins()


def nvcc(source: str, what: str = "-cubin") -> str:
    """Compile one translation unit (many kernels at once: one nvcc start); return PTX or ''."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "all.cu"
        src.write_text(source)
        out = Path(tmp) / "out"
        proc = subprocess.run([find_nvcc(), "-arch=sm_90", what, "-O3", "-o", str(out), str(src)],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return out.read_text() if what == "-ptx" else ""


def kernel_name(i: int) -> str:
    return f"k{i:03d}"


@needs_nvcc
def test_every_builtin_kernel_compiles_for_sm90():
    items = builtins()
    assert len(items) > 40
    nvcc("\n".join(generate(sc, name=kernel_name(i)).source for i, (_, sc) in enumerate(items)))


@needs_nvcc
def test_every_hand_written_kernel_compiles_for_sm90():
    files = sorted({k.file for k in handwritten.manifest()})
    assert {"copy.cu", "transpose.cu", "gemm.cu", "reduction.cu", "stencil.cu", "shared.cu", "strided.cu"} <= set(files)
    results = compile_many([handwritten.file_source(f) for f in files], jobs=2)
    for f, r in zip(files, results):
        assert isinstance(r, bytes), f"{f}: {getattr(r, 'log', r)}"


@needs_nvcc
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**31))
def test_random_scenarios_compile(seed):
    items = random_scenarios(25, seed)
    nvcc("\n".join(generate(sc, name=kernel_name(i)).source for i, (_, sc) in enumerate(items)))


def _ptx_functions(ptx: str) -> dict[str, str]:
    parts = re.split(r"\.entry\s+(\w+)\(", ptx)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


@needs_nvcc
def test_loop_free_kernels_have_exactly_the_models_instructions():
    """Without loops the PTX lists each instruction once: the counts must be the model's,
    plus the single never-executed sink store."""
    items = [(n, sc) for n, sc in builtins() if not any(a.loops for a in sc.accesses)]
    assert len(items) > 15
    ptx = nvcc("\n".join(generate(sc, name=kernel_name(i)).source for i, (_, sc) in enumerate(items)), "-ptx")
    funcs = _ptx_functions(ptx)
    for i, (name, sc) in enumerate(items):
        body = funcs[kernel_name(i)]
        want = codegen.expected_instructions(sc)
        got = {
            "ld.global": len(re.findall(r"\bld(\.volatile)?\.global\.", body)),
            "st.global": len(re.findall(r"\bst(\.volatile)?\.global\.", body)) - 1,
            "ld.shared": len(re.findall(r"\bld\.volatile\.shared\.", body)),
            "st.shared": len(re.findall(r"\bst\.volatile\.shared\.", body)),
        }
        assert got == want, name


@needs_nvcc
def test_wide_types_are_single_vector_instructions():
    sc = load("vector-int4")
    ptx = nvcc(generate(sc).source, "-ptx")
    assert "ld.global.v4.b32" in ptx and "st.global.v4.b32" in ptx
    f3 = nvcc(generate(load("float3-whole")).source, "-ptx")
    assert len(re.findall(r"ld\.global\.b32", f3)) == 3 and "v4" not in f3


# ---------------------------------------------------------------------------- structure


def test_shared_arrays_are_carved_at_the_models_offsets():
    sc = scenario(shared_array("a", "char", "[3]") + shared_array("b", "float4", "[8]", "offset = 16")
                  + access("a[lane % 3]") + access("b[lane % 8]"), block="[32]")
    src = generate(sc).source
    assert sc.array("b").base == 128 + 16
    assert "wv_sbase + (unsigned)(144LL + wv_e * 16LL)" in src
    assert "wv_sbase + (unsigned)(0LL + wv_e * 1LL)" in src
    assert "extern __shared__ __align__(1024) unsigned char wv_smem[];" in src


def test_global_arrays_are_pointer_args_with_their_offset():
    sc = scenario(global_array("x", "float", "[100]", "offset = 4") + global_array("y", "float", "[10]")
                  + access("x[lane]") + access("y[lane % 10]", op="store"))
    k = generate(sc)
    assert k.global_arrays == ("x", "y") and k.global_starts == (0, 512)
    assert "g_x + (4LL + wv_e * 4LL)" in k.source
    assert k.replica_bytes == 768


def test_names_are_long_long_locals_and_params_literals():
    sc = scenario(global_array() + access("g[(threadIdx.x - 1 + N) * 2]"), params="N = 5")
    src = generate(sc).source
    assert "const long long wv_tx = threadIdx.x" in src
    assert "(((wv_tx - 1LL) + (5LL)) * 2LL)" in src


def test_when_is_an_if_behind_a_warp_vote():
    sc = scenario(global_array() + access("g[tid]", when="lane < 3"), block="[48]")
    src = generate(sc).source
    assert "if (__any_sync(wv_wmask, wv_on)) {" in src and "wv_r < wv_one" in src
    assert "wv_warp < 1 ? 0xffffffffu : ((1u << 16) - 1u)" in src


def test_barriers_separate_dependent_accesses_and_loops_fuse():
    groups = plan_groups(load("transpose-tile-pad"))
    assert [[a.index for a in g.accesses] for g in groups] == [[0, 1], [2, 3]]
    assert [g.barrier_before for g in groups] == [False, True]
    assert generate(load("coalesced")).barriers == 0


def test_repeated_global_addresses_are_volatile():
    sc = scenario(global_array() + access("g[tid]", loops={"j": "0:4"}))
    assert "ld.volatile.global.b32" in generate(sc).source
    sc = scenario(global_array() + access("g[tid + j]", loops={"j": "0:4"}))
    assert "ld.global.b32" in generate(sc).source


def test_names_never_come_from_the_raw_text():
    # The `at` text has odd spacing and a comment-like run; the kernel prints the tree.
    sc = scenario(global_array() + access("g[ threadIdx.x  +  1 ]"))
    assert "threadIdx.x  +  1" not in generate(sc).source


@needs_nvcc
def test_one_nvcc_run_gives_the_cubin_and_the_resources(tmp_path, monkeypatch):
    """compile_cubin and resource_usage of one source share one nvcc run (the bench and the
    cost model ask for both): the second is served from the cache."""
    from viz.toolchain import compile as comp

    monkeypatch.setenv("WARPVIZ_CACHE", str(tmp_path))
    src = 'extern "C" __global__ void k(float* p) { p[threadIdx.x] *= 2.0f; }\n'
    runs = []
    real = comp._nvcc
    monkeypatch.setattr(comp, "_nvcc", lambda *a: runs.append(1) or real(*a))
    cubin = comp.compile_cubin(src)
    use = comp.resource_usage(src)
    assert len(runs) == 1 and cubin[:4] == b"\x7fELF" and use["k"]["registers"] > 0
    assert comp.compile_cubin(src) == cubin and len(runs) == 1
