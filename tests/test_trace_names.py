"""C++ kernel names in launch files (format 2): the name grammar (what may reach a generated
source), demangling and matching against the entries nvcc really emits (the real nvcc here,
cu++filt where the toolkit has it, else the C++ runtime's demangler), overloads and absent
names as one paragraph listing what exists, templates that warpviz instantiates, and the PTX
module cut down to one kernel."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import HAVE_NVCC
from viz.trace import TraceError
from viz.trace import module as M
from viz.trace import names as N
from viz.trace.launch import parse_launch

nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")

# A C++ source with what real code has: namespaces, templates with type and value
# arguments, overloads, an extern "C" kernel, host code with main(), dynamic shared memory.
CPP = r"""
#include <cstdio>
namespace ns { namespace detail {
template <typename T, int N> __global__ void scan(T* out, const T* in, int n) {
    extern __shared__ unsigned char smem[];
    T* s = reinterpret_cast<T*>(smem);
    int i = threadIdx.x;
    s[i] = in[i];
    __syncthreads();
    if (i < n) out[i] = s[(i + N) % blockDim.x];
}
}}
template <class T, unsigned int blockSize, bool nIsPow2> __global__ void reduce6(T* g_idata, T* g_odata, unsigned int n) {
    __shared__ T sdata[blockSize];
    unsigned int tid = threadIdx.x;
    sdata[tid] = tid < n ? g_idata[tid] : T(0);
    __syncthreads();
    if (nIsPow2 && tid == 0) g_odata[blockIdx.x] = sdata[0];
}
__global__ void over(float* a, int n) { if (threadIdx.x < n) a[threadIdx.x] = 1.0f; }
__global__ void over(double* a, int n) { if (threadIdx.x < n) a[threadIdx.x] = 2.0; }
__global__ void plain(float* a) { a[threadIdx.x] += 1.0f; }
extern "C" __global__ void c_kernel(int* a) { a[threadIdx.x] = 3; }
template __global__ void ns::detail::scan<float, 1>(float*, const float*, int);
template __global__ void reduce6<int, 256, true>(int*, int*, unsigned int);
template __global__ void reduce6<float, 128, false>(float*, float*, unsigned int);
int main() { float* d; cudaMalloc(&d, 1024); plain<<<1, 32>>>(d); printf("done\n"); return 0; }
"""


# ---------------------------------------------------------------------------- the grammar


@pytest.mark.parametrize("text, qualified, targs, params", [
    ("transposeNaive", "transposeNaive", None, None),
    ("ns::detail::scan<float>", "ns::detail::scan", "float", None),
    ("::k", "k", None, None),
    ("MatrixMulCUDA<32>", "MatrixMulCUDA", "32", None),
    ("reduce6<int, 256, true>", "reduce6", "int, 256, true", None),
    ("reduce6< int ,256,  true >", "reduce6", "int ,256, true", None),
    ("f(float*, int)", "f", None, ("float*", "int")),
    ("f()", "f", None, ()),
    ("f(void)", "f", None, ()),
    ("k<cute::Shape<int, 4>>(float const*, int)", "k", "cute::Shape<int, 4>", ("float const*", "int")),
    ("k<-1, (2)>", "k", "-1, (2)", None),
])
def test_names_that_parse(text, qualified, targs, params):
    k = N.parse_kernel_name(text)
    assert (k.qualified, k.targs, k.params) == (qualified, targs, params)


@pytest.mark.parametrize("text, words", [
    ("", "empty"),
    ("1k", "must start with a C++ name"),
    ("k<int>; system(\"x\")", "follows the name"),
    ("k<int; system(1)>", "';'"),
    ("k<int", "not closed"),
    ("k<>", "empty"),
    ("k<int)>", "pair up"),
    ("k<int /* c */>", "'/'"),
    ("k<int>#include", "follows the name"),
    ("k<a\nb>", "'\\n'"),
    ("k<a\\>", "'\\\\'"),
    ("k<int>{}", "follows the name"),
    ("f(float*; int)", "parameter list"),
    ("f(float*", "parameter list"),
    ("k x", "follows the name"),
    ("k<" + "a" * 1100 + ">", "limit"),
])
def test_names_refused_with_a_reason(text, words):
    with pytest.raises(N.KernelNameError) as err:
        N.parse_kernel_name(text)
    assert words in err.value.problem and err.value.fix


FORBIDDEN = set(';{}#/"\'\\\n\r\0`$')


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(sorted(set("ab_:<>,*-() 019;{}#/\"'\\\n`$"))), max_size=40))
def test_a_name_that_parses_cannot_leave_its_declaration(text):
    """Whatever a launch file writes, a name that passes carries no character that could end
    the instantiation, open a comment, a string or a preprocessor line, and its brackets pair
    up, so the generated line is one declaration."""
    try:
        k = N.parse_kernel_name(text)
    except N.KernelNameError:
        return
    assert not FORBIDDEN & set(k.template_id + "".join(k.params or ()))
    if k.targs is not None:
        src = N.instantiation_source(k, "/x/y.cu")
        decl = src.splitlines()[-1]
        assert decl.count(";") == 1 and decl.endswith(";")
        assert decl.count("(") == decl.count(")") and decl.count("<") == decl.count(">")


# ---------------------------------------------------------------------------- canonical text


@pytest.mark.parametrize("a, b", [
    ("reduce6<int, 256, true>", "reduce6<int, 256u, true>"),
    ("multi_warp_cg_reduce<int, 1024, 512>", "multi_warp_cg_reduce<int, 1024ul, 512ul>"),
    ("f(float*, unsigned)", "f(float *, unsigned int)"),
    ("k<size_t>", "k<unsigned long>"),
    ("f(const float*, long int)", "f(float const*, long)"),
    ("cudapy::add", "cudapy::add[abi:v1][abi:cw51c]"),
])
def test_canonical_text_equal(a, b):
    assert N.canonical(a) == N.canonical(b)


@pytest.mark.parametrize("a, b", [("k<32>", "k<320>"), ("k<int>", "k<unsigned int>"), ("f(float*)", "f(double*)"),
                                  ("k<-1>", "k<1>")])
def test_canonical_text_different(a, b):
    assert N.canonical(a) != N.canonical(b)


def test_split_signature():
    assert N.split_signature("void ns::k<int, 256u>(int*, int*, unsigned int)") == \
        ("ns::k<int, 256u>", ("int*", "int*", "unsigned int"))
    assert N.split_signature("transposeNaive(float*, float*, int, int)") == \
        ("transposeNaive", ("float*", "float*", "int", "int"))
    assert N.split_signature("c_kernel") == ("c_kernel", None)
    assert N.split_signature("f()") == ("f", ())
    assert N.split_signature("void k<(char)65>(void)") == ("k<(char)65>", ())


# ---------------------------------------------------------------------------- real nvcc output


@pytest.fixture(scope="module")
def cpp_ptx(tmp_path_factory):
    if not HAVE_NVCC:
        pytest.skip("needs nvcc")
    d = tmp_path_factory.mktemp("cpp")
    (d / "k.cu").write_text(CPP)
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-O3", "-std=c++17", "-lineinfo", "-o", str(d / "k.ptx"),
                    str(d / "k.cu")], check=True, capture_output=True, timeout=600)
    return (d / "k.ptx").read_text()


@nvcc
@pytest.mark.nvcc
def test_demangled_entries_of_real_nvcc_output(cpp_ptx):
    ents = N.entries_of(M.entry_names(cpp_ptx))
    want = ["ns::detail::scan<float, 1>(float*, float const*, int)", "reduce6<int, 256u, true>(int*, int*, unsigned int)",
            "reduce6<float, 128u, false>(float*, float*, unsigned int)", "over(float*, int)", "over(double*, int)",
            "plain(float*)", "c_kernel"]
    assert sorted(N.canonical(e.shown) for e in ents) == sorted(N.canonical(w) for w in want)
    by = {N.canonical(e.shown): e.mangled for e in ents}
    assert by[N.canonical("plain(float*)")] == "_Z5plainPf" and by["c_kernel"] == "c_kernel"
    # the demangler's own spelling keeps the suffixes that the names leave out
    assert any("256u" in e.demangled for e in ents)


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("name, mangled", [
    ("plain", "_Z5plainPf"),
    ("c_kernel", "c_kernel"),
    ("_Z5plainPf", "_Z5plainPf"),
    ("ns::detail::scan<float, 1>", "_ZN2ns6detail4scanIfLi1EEEvPT_PKS2_i"),
    ("scan<float,1>", "_ZN2ns6detail4scanIfLi1EEEvPT_PKS2_i"),       # namespaces left out
    ("detail::scan<float, 1>", "_ZN2ns6detail4scanIfLi1EEEvPT_PKS2_i"),
    ("ns::detail::scan", "_ZN2ns6detail4scanIfLi1EEEvPT_PKS2_i"),     # the only instantiation
    ("reduce6<int, 256, true>", "_Z7reduce6IiLj256ELb1EEvPT_S1_j"),
    ("reduce6<int,256u,true>", "_Z7reduce6IiLj256ELb1EEvPT_S1_j"),
    ("over(float*, int)", "_Z4overPfi"),
    ("over(double *, int)", "_Z4overPdi"),
    ("::plain(float*)", "_Z5plainPf"),
])
def test_names_match_the_right_entry(cpp_ptx, name, mangled):
    found = N.match(N.parse_kernel_name(name), N.entries_of(M.entry_names(cpp_ptx)))
    assert [e.mangled for e in found] == [mangled]


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("name, n, fix", [
    ("over", 2, "full signature"),
    ("reduce6", 2, "template arguments"),
    ("over(int)", 0, None),
    ("reduce6<int, 128, true>", 0, None),
    ("scan<int, 1>", 0, None),
    ("nothere", 0, None),
])
def test_ambiguous_and_absent_names(cpp_ptx, name, n, fix):
    k = N.parse_kernel_name(name)
    found = N.match(k, N.entries_of(M.entry_names(cpp_ptx)))
    assert len(found) == n
    if n > 1:
        problem, how = N.ambiguity(k, found)
        assert f"names {n} kernels" in problem and fix in how
        for e in found:
            assert e.mangled in problem and e.shown in problem


# ---------------------------------------------------------------------------- through a launch file


def _launch(tmp_path: Path, kernel: str, args: str, source: str = CPP, extra: str = "") -> Path:
    (tmp_path / "k.cu").write_text(source)
    p = tmp_path / "k.launch.toml"
    p.write_text(f'format = 2\nsource = "k.cu"\nkernel = "{kernel}"\nblock = [32]\ngrid = [1]\n{extra}{args}')
    return p


def _args(*items: str) -> str:
    out = []
    for t in items:
        if t.endswith("*"):
            out.append(f'[[arg]]\ntype = "{t}"\ncount = 256\n')
        else:
            out.append(f'[[arg]]\ntype = "{t}"\nvalue = 32\n')
    return "\n".join(out)


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("kernel, args, entry, made", [
    ("plain", ("float*",), "_Z5plainPf", False),
    ("reduce6<int, 256, true>", ("int*", "int*", "unsigned"), "_Z7reduce6IiLj256ELb1EEvPT_S1_j", False),
    # not instantiated by the source: warpviz includes it in a generated file that does
    ("reduce6<double, 64, true>", ("double*", "double*", "unsigned"), "_Z7reduce6IdLj64ELb1EEvPT_S1_j", True),
    ("ns::detail::scan<int, 3>", ("int*", "int*", "int"), "_ZN2ns6detail4scanIiLi3EEEvPT_PKS2_i", True),
    ("over(float*, int)", ("float*", "int"), "_Z4overPfi", False),
])
def test_cpp_kernels_build(tmp_path, kernel, args, entry, made):
    from viz.trace.build import build

    la = parse_launch(_launch(tmp_path, kernel, _args(*args), extra="shared_bytes = 1024\n").read_text(),
                      tmp_path / "k.launch.toml")
    b = build(la)
    assert b.entry == entry and b.instantiated == made
    assert M.entry_names(b.ptx) == [entry]            # cut down to the one kernel
    assert b.instrs and all(i.function == entry for i in b.instrs)
    assert b.cubin and b.instrumented_cubin


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("kernel, args, words, fix", [
    ("nothere", ("float*",), "the source has no kernel `nothere` (it has: ", "name one of its kernels"),
    ("over", ("float*", "int"), "`over` names 2 kernels: over(float*, int) (mangled _Z4overPfi); "
     "over(double*, int) (mangled _Z4overPdi)", "full signature"),
    ("reduce6", ("int*", "int*", "unsigned"), "`reduce6` names 2 kernels", "template arguments"),
    ("plain<int>", ("float*",), "does not instantiate `plain<int>`", "template __global__ void plain<int>"),
    ("over<float>(float*, int)", ("float*", "int"), "does not instantiate", "template __global__ void"),
    ("plain", ("float*", "int"), "`plain(float*)` takes 1 parameter(s) but the file gives 2", "one [[arg]]"),
    ("over(float*, int)", ("double*", "float"), "parameter 2 of `over(float*, int)` is `.u32`", "C type"),
])
def test_bad_cpp_names_are_one_paragraph_and_nothing_runs(tmp_path, capsys, kernel, args, words, fix):
    from viz.cli import main
    from viz.trace.build import build

    p = _launch(tmp_path, kernel, _args(*args))
    with pytest.raises(TraceError) as err:
        build(parse_launch(p.read_text(), p))
    msg = str(err.value)
    assert words in msg and fix in err.value.fix and "\n" not in msg
    assert err.value.where in ("kernel", "arg", "arg 2.type")
    if "has no kernel" in words:             # the listing names what exists, demangled
        assert "plain(float*)" in msg and "reduce6<int, 256, true>(int*, int*, unsigned int)" in msg
        assert "c_kernel" in msg


def test_format_1_refuses_cpp_names_and_says_format_2(tmp_path):
    (tmp_path / "k.cu").write_text(CPP)
    text = 'source = "k.cu"\nkernel = "MatrixMulCUDA<32>"\nblock = [32]\ngrid = [1]\n'
    with pytest.raises(TraceError) as err:
        parse_launch(text, tmp_path / "k.launch.toml")
    assert err.value.where == "kernel" and "format = 2" in err.value.fix
    with pytest.raises(TraceError) as err:
        parse_launch(text.replace("MatrixMulCUDA<32>", "k;rm -rf x"), tmp_path / "k.launch.toml")
    assert "not a C identifier" in err.value.problem
    la = parse_launch("format = 2\n" + text, tmp_path / "k.launch.toml")
    assert la.kernel == "MatrixMulCUDA<32>" and la.kernel_name.targs == "32"


@nvcc
@pytest.mark.nvcc
def test_format_1_kernel_name_finds_a_cpp_kernel(tmp_path):
    """A plain name in a format 1 file also finds a C++ kernel (transposeNaive in a sample)."""
    from viz.trace.build import build

    p = _launch(tmp_path, "plain", _args("float*"))
    p.write_text(p.read_text().replace("format = 2\n", ""))
    b = build(parse_launch(p.read_text(), p))
    assert b.entry == "_Z5plainPf" and b.label == "plain(float*)"


# ---------------------------------------------------------------------------- the module cut down


@nvcc
@pytest.mark.nvcc
def test_prune_keeps_one_kernel_and_its_functions_line_for_line(tmp_path):
    src = r"""
__device__ __noinline__ float helper(float x) { return x * 2.0f; }
__device__ __noinline__ float unused(float x) { return x + 1.0f; }
__global__ void a(float* p) { p[threadIdx.x] = helper(p[threadIdx.x]); }
__global__ void b(float* p) { p[threadIdx.x] = unused(p[threadIdx.x]); }
"""
    (tmp_path / "k.cu").write_text(src)
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-O3", "-o", str(tmp_path / "k.ptx"), str(tmp_path / "k.cu")],
                   check=True, capture_output=True, timeout=600)
    ptx = (tmp_path / "k.ptx").read_text()
    fns = {f.name: f for f in M.functions(ptx)}
    assert {"_Z1aPf", "_Z1bPf", "_Z6helperf", "_Z6unusedf"} <= set(fns)
    cut = M.prune(ptx, "_Z1aPf")
    assert len(cut.split("\n")) == len(ptx.split("\n"))
    assert [f.name for f in M.functions(cut) if f.body] == ["_Z6helperf", "_Z1aPf"] or \
        sorted(f.name for f in M.functions(cut) if f.body) == ["_Z1aPf", "_Z6helperf"]
    for f in M.functions(cut):                   # what stays is the same text on the same lines
        lines = ptx.split("\n")[f.start:f.end + 1]
        assert cut.split("\n")[f.start:f.end + 1] == lines
    from viz.trace.build import assemble

    assert assemble(cut, "sm_90")


def test_functions_skip_comments_and_debug_sections():
    ptx = """.version 8.0
.target sm_90
.address_size 64
// .entry fake( in a comment
/* .entry alsofake(
   .param .u64 x
) { */
.extern .func (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.visible .entry k(
	.param .u64 .ptr .global .align 16 k_param_0, // a pointer
	.param .align 4 .b8 k_param_1[12],
	.param .f32 k_param_2
)
.reqntid 128
{
	{ // a nested scope
	.reg .b32 %r<2>;
	}
	ret;
}
	.section	.debug_info
	{
.b8 1
	}
.entry second()
{
	ret;
}
"""
    fns = M.functions(ptx)
    assert [(f.kind, f.name, f.body) for f in fns] == [("func", "vprintf", False), ("entry", "k", True),
                                                       ("entry", "second", True)]
    ps = M.params(ptx, "k")
    assert [(p.type, p.bytes, p.pointer, p.array) for p in ps] == [("u64", 8, True, False), ("b8", 12, False, True),
                                                                   ("f32", 4, False, False)]
    assert M.params(ptx, "second") == [] and M.params(ptx, "fake") is None
    cut = M.prune(ptx, "second")
    assert M.entry_names(cut) == ["second"] and "vprintf" in cut and ".debug_info" in cut


@pytest.mark.parametrize("text, words", [
    (".target sm_90\n.address_size 64\n", "`.version`"),
    (".version 8.0\n.address_size 64\n", "`.target`"),
    (".version 8.0\n.target compute_90\n.address_size 64\n", "not a GPU architecture"),
    (".version 8.0\n.target sm_90\n.address_size 32\n", "64-bit"),
])
def test_header_refusals(text, words):
    with pytest.raises(M.PtxModuleError) as err:
        M.header(text)
    assert words in err.value.problem


@pytest.mark.parametrize("target, gpu, arch", [("sm_80", "sm_90", "sm_90"), ("sm_90a", "sm_90", "sm_90a"),
                                               ("sm_90", "sm_90", "sm_90"), ("sm_100", "sm_90", None),
                                               ("sm_80a", "sm_90", None)])
def test_ptxas_arch(target, gpu, arch):
    h = M.header(f".version 8.0\n.target {target}\n.address_size 64\n")
    if arch is None:
        with pytest.raises(M.PtxModuleError):
            M.ptxas_arch(h, gpu)
    else:
        assert M.ptxas_arch(h, gpu) == arch


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("{}()/*;\n .entryfuncparam_kx0")), max_size=300))
def test_module_readers_survive_any_text(text):
    """Hostile text never hangs or raises anything but PtxModuleError (bounded loops)."""
    fns = M.functions(text)
    for f in fns:
        assert 0 <= f.start <= f.end < max(1, len(text.split("\n")))
    for name in M.entry_names(text):
        M.params(text, name)
        try:
            M.prune(text, name)
        except M.PtxModuleError:
            pass


# ---------------------------------------------------------------------------- the demangler


@nvcc
@pytest.mark.nvcc
def test_cu_filt_path_gets_names_as_arguments(cpp_ptx, monkeypatch, tmp_path):
    """cu++filt (here played by the system's c++filt where the CUDA toolkit lacks it: the
    same interface, names as arguments, one line each) gives the same names as the C++
    runtime's demangler, and no shell is involved."""
    import shutil

    tool = shutil.which("cu++filt") or shutil.which("c++filt")
    if not tool:
        pytest.skip("no cu++filt or c++filt")
    names = M.entry_names(cpp_ptx)
    calls = []
    real_run = subprocess.run

    def spy(cmd, *a, **kw):
        calls.append((cmd, kw.get("shell", False)))
        return real_run(cmd, *a, **kw)

    monkeypatch.setattr("viz.toolchain.compile.find_tool", lambda n: tool if n == "cu++filt" else None)
    monkeypatch.setattr(N.subprocess, "run", spy)
    via_tool = N.demangle(names)
    assert calls and all(isinstance(c, list) and not shell for c, shell in calls)
    monkeypatch.setattr("viz.toolchain.compile.find_tool", lambda n: None)
    via_runtime = N.demangle(names)
    norm = lambda s: re.sub(r"\s+", "", s).replace("constfloat*", "floatconst*")  # noqa: E731
    assert {k: norm(v) for k, v in via_tool.items()} == {k: norm(v) for k, v in via_runtime.items()}
    assert via_runtime["c_kernel"] == "c_kernel"


# ---------------------------------------------------------------------------- cu++filt's spelling

# Entry names demangled on the GPU machine by the CUDA toolkit's cu++filt (13.0) and by GNU
# c++filt, as they printed them. cu++filt writes every non-type template argument as a cast
# (`MatrixMulCUDA<(int)16>`, `reduce6<int, (unsigned int)256, (bool)1>`) and a template's
# parameters in the parameter list as T1, T2... (`reduce0<int>(T1 *, T1 *, unsigned int)`).
DEMANGLED = [tuple(ln.split("\t")) for ln in
             (Path(__file__).parent / "data" / "demangle" / "cu++filt-13.0.tsv").read_text().splitlines()
             if ln and not ln.startswith("#")]
BY_MANGLED = {m: (cu, gnu) for m, cu, gnu in DEMANGLED}


def test_the_recorded_cu_filt_output_is_cu_filt_s():
    assert len(DEMANGLED) >= 30
    assert BY_MANGLED["_Z13MatrixMulCUDAILi32EEvPfS0_S0_ii"][0] == \
        "void MatrixMulCUDA<(int)32>(float *, float *, float *, int, int)"
    assert BY_MANGLED["_Z7reduce6IiLj256ELb1EEvPT_S1_j"] == (
        "void reduce6<int, (unsigned int)256, (bool)1>(T1 *, T1 *, unsigned int)",
        "void reduce6<int, 256u, true>(int*, int*, unsigned int)")


@pytest.mark.parametrize("column", [1, 2], ids=["cu++filt", "c++filt"])
@pytest.mark.parametrize("name, mangled, shown", [
    ("MatrixMulCUDA<32>", "_Z13MatrixMulCUDAILi32EEvPfS0_S0_ii", "MatrixMulCUDA<32>(float*, float*, float*, int, int)"),
    ("MatrixMulCUDA<8>", "_Z13MatrixMulCUDAILi8EEvPfS0_S0_ii", "MatrixMulCUDA<8>(float*, float*, float*, int, int)"),
    ("reduce6<int, 256, true>", "_Z7reduce6IiLj256ELb1EEvPT_S1_j", "reduce6<int, 256, true>(int*, int*, unsigned int)"),
    ("reduce6<int, 256u, false>", "_Z7reduce6IiLj256ELb0EEvPT_S1_j", "reduce6<int, 256, false>(int*, int*, unsigned int)"),
    ("reduce4<int, 128>", "_Z7reduce4IiLj128EEvPT_S1_j", "reduce4<int, 128>(int*, int*, unsigned int)"),
    ("reduce4<int, 128>(int*, int*, unsigned)", "_Z7reduce4IiLj128EEvPT_S1_j", None),
    ("multi_warp_cg_reduce<int, 256, 128>", "_Z20multi_warp_cg_reduceIiLm256ELm128EEvPT_S1_j",
     "multi_warp_cg_reduce<int, 256, 128>(int*, int*, unsigned int)"),
    ("histogram<64>", "_Z9histogramILi64EEvPKhPji", None),
    ("own::stencil::stencil1d<float, 3>", "_ZN3own7stencil9stencil1dIfLi3EEEvPKT_PS2_i", None),
    ("stencil1d<float,3>(const float*, float*, int)", "_ZN3own7stencil9stencil1dIfLi3EEEvPKT_PS2_i", None),
    ("ki<-5>", "_Z2kiILin5EEvPf", "ki<-5>(float*)"),
    ("ki<-2147483648>", "_Z2kiILin2147483648EEvPf", None),
    ("ku<256u>", "_Z2kuILj256EEvPf", "ku<256>(float*)"),
    ("kb<true>", "_Z2kbILb1EEvPf", "kb<true>(float*)"),
    ("kb<false>", "_Z2kbILb0EEvPf", "kb<false>(float*)"),
    ("kc<(char)65>", "_Z2kcILc65EEvPf", "kc<(char)65>(float*)"),
    ("kc<65>", "_Z2kcILc65EEvPf", None),
    ("kc<(char)-3>", "_Z2kcILcn3EEvPf", "kc<(char)-3>(float*)"),
    ("kl<-7>", "_Z2klILln7EEvPf", "kl<-7>(float*)"),
    ("kl<-7l>", "_Z2klILln7EEvPf", None),
    ("kul<9ul>", "_Z3kulILm9EEvPf", "kul<9>(float*)"),
    ("kll<11>", "_Z3kllILx11EEvPf", "kll<11>(float*)"),
    ("kull<123>", "_Z4kullILy123EEvPf", "kull<123>(float*)"),
    ("ks<(short)12>", "_Z2ksILs12EEvPf", "ks<(short)12>(float*)"),
    ("kuc<200>", "_Z3kucILh200EEvPf", "kuc<(unsigned char)200>(float*)"),
    ("ksc<(signed char)-1>", "_Z3kscILan1EEvPf", "ksc<(signed char)-1>(float*)"),
    ("ke<(Mode)1>", "_Z2keIL4Mode1EEvPf", "ke<(Mode)1>(float*)"),
    ("kec<(Sc)2>", "_Z3kecIL2Sc2EEvPf", "kec<(Sc)2>(float*)"),
    ("kw<(wchar_t)66>", "_Z2kwILw66EEvPf", "kw<(wchar_t)66>(float*)"),
    ("ken<(Mode)2, 4>", "_Z3kenIL4Mode2ELi4EEvPf", "ken<(Mode)2, 4>(float*)"),
    ("two<float, int>(float*, int*, int)", "_Z3twoIfiEvPT_PT0_i", "two<float, int>(float*, int*, int)"),
    ("ptrs<double, -2>", "_Z4ptrsIdLin2EEvPKT_PS0_S0_", None),
])
def test_names_match_as_either_demangler_writes_them(column, name, mangled, shown):
    """A kernel named as the source writes it matches its entry whether cu++filt or GNU's
    demangler wrote the entries (casts, suffixes, T1/T2 and spacing aside), and the entry is
    shown as the user writes it."""
    ents = [N.Entry(m, row[column]) for m, *_ in DEMANGLED for row in [(m, *BY_MANGLED[m])]]
    found = N.match(N.parse_kernel_name(name), ents)
    assert [e.mangled for e in found] == [mangled]
    if shown is not None:
        assert found[0].shown == shown
    assert "(int)" not in found[0].shown and "(bool)" not in found[0].shown and " *" not in found[0].shown


def test_both_demanglers_give_the_same_names_and_signatures():
    for m, cu, gnu in DEMANGLED:
        a, b = N.Entry(m, cu), N.Entry(m, gnu)
        assert N.canonical(a.shown) == N.canonical(b.shown), m
        assert N.canonical(a.name) == N.canonical(b.name), m
        assert "T1" not in a.shown and "T2" not in a.shown, a.shown


@pytest.mark.parametrize("text, want", [
    ("MatrixMulCUDA<(int)16>", "MatrixMulCUDA<16>"),
    ("reduce4<int, (unsigned int)256>", "reduce4<int, 256>"),
    ("reduce6<int, (unsigned int)256, (bool)1>", "reduce6<int, 256, true>"),
    ("kb<(bool)0>", "kb<false>"),
    ("ki<(int)-5>", "ki<-5>"),
    ("kl<(long)-7>", "kl<-7>"),
    ("k<(unsigned long long)123>", "k<123>"),
    ("kc<(char)65>", "kc<(char)65>"),
    ("ke<(Mode)1>", "ke<(Mode)1>"),
    ("ns::k<cute::Shape<(int)4, (int)8>, (int)2>", "ns::k<cute::Shape<4, 8>, 2>"),
    ("reduce6<int, 256u, true>", "reduce6<int, 256, true>"),
    ("f(float *, const int *)", "f(float*, const int*)"),
])
def test_readable_is_the_users_form(text, want):
    assert N.readable(text) == want


@pytest.mark.parametrize("a, b", [
    ("k<(int)16>", "k<16>"), ("k<(unsigned int)256>", "k<256u>"), ("k<(bool)1>", "k<true>"),
    ("k<(bool)0>", "k<false>"), ("k<(char)65>", "k<65>"), ("k<(long)-7>", "k<-7l>"), ("k<(Mode)2>", "k<2>"),
    ("k<int, (int)3>(const T1 *)", "k<int, 3>(T1 const*)"), ("f(const unsigned char *)", "f(unsigned char const*)"),
])
def test_canonical_reads_casts_as_their_numbers(a, b):
    assert N.canonical(a) == N.canonical(b)


@pytest.mark.parametrize("a, b", [("k<(int)16>", "k<(int)160>"), ("k<(bool)1>", "k<false>"), ("k<(int)-1>", "k<1>"),
                                  ("k<(Mode)1>", "k<(Mode)2>")])
def test_canonical_casts_still_differ(a, b):
    assert N.canonical(a) != N.canonical(b)


def test_template_parameters_resolved():
    assert N.template_params_resolved("reduce4<int, (unsigned int)256>", ("T1 *", "T1 *", "unsigned int")) == \
        ("int *", "int *", "unsigned int")
    assert N.template_params_resolved("two<float, int>", ("T1 *", "T2 *", "T10")) == ("float *", "int *", "T10")
    assert N.template_params_resolved("ns::k<cute::Shape<int, 4>, double>", ("const T2 *",)) == ("const double *",)
    assert N.template_params_resolved("plain", ("T1 *",)) == ("T1 *",)
    # a type called T1 in a name that refers to no template parameter stays as it is
    assert N.Entry("_Z1kP2T1", "void k(T1 *)").params == ("T1 *",)


@pytest.mark.parametrize("tool", ["c++filt", "llvm-cxxfilt"])
def test_gnu_c_filt_here_prints_the_recorded_column(tool):
    """The third column is what the GNU (and LLVM) demanglers print: the C++ runtime's
    demangler, warpviz's fallback where the toolkit has no cu++filt, prints the same."""
    import shutil

    exe = shutil.which(tool)
    if exe is None:
        pytest.skip(f"no {tool} here")
    out = subprocess.run([exe, *BY_MANGLED], capture_output=True, text=True, check=True,
                         timeout=600).stdout.splitlines()
    assert out == [gnu for _, gnu in BY_MANGLED.values()]
    if N._cxa() is not None:
        assert [N._cxa_demangle(m) for m in BY_MANGLED] == out


def _replay_cu_filt(tmp_path: Path) -> str:
    """A stand-in for the toolkit's cu++filt that prints, for each name given as an argument,
    what the real one printed on the GPU machine (the recorded column), and any other name as
    it is (as cu++filt does with a name it cannot demangle)."""
    import json
    import sys

    exe = tmp_path / "cu++filt"
    table = {m: cu for m, cu, _ in DEMANGLED}
    exe.write_text(f"#!{sys.executable}\nimport sys\nT = {json.dumps(table)}\n"
                   "for a in sys.argv[1:]:\n    print(T.get(a, a))\n")
    exe.chmod(0o755)
    return str(exe)


OWN_TEMPLATES = r"""
template <int BLOCK_SIZE> __global__ void MatrixMulCUDA(float* C, float* A, float* B, int wA, int wB) {
    __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
    int tx = threadIdx.x, ty = threadIdx.y;
    As[ty][tx] = A[ty * wA + tx];
    __syncthreads();
    C[ty * wB + tx] = As[tx][ty] + B[tx];
}
void host(float* c, float* a, float* b) {            // the sample instantiates 16 and 32 through launches
    MatrixMulCUDA<16><<<1, dim3(16, 16)>>>(c, a, b, 16, 16);
    MatrixMulCUDA<32><<<1, dim3(32, 32)>>>(c, a, b, 32, 32);
}
int main() { return 0; }
"""


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("source, kernel, args, block, entry, made", [
    ("own", "histogram<64>", ("char*", "unsigned*", "int"), 256, "_Z9histogramILi64EEvPKhPji", True),
    ("own", "own::stencil::stencil1d<float, 3>", ("float*", "float*", "int"), 128,
     "_ZN3own7stencil9stencil1dIfLi3EEEvPKT_PS2_i", True),
    ("own", "gather", ("float*", "float*", "int*", "int"), 128, "_Z6gatherPfPKfPKii", False),
    ("mm", "MatrixMulCUDA<32>", ("float*", "float*", "float*", "int", "int"), 32, "_Z13MatrixMulCUDAILi32EEvPfS0_S0_ii",
     False),
    ("mm", "MatrixMulCUDA<8>", ("float*", "float*", "float*", "int", "int"), 8, "_Z13MatrixMulCUDAILi8EEvPfS0_S0_ii",
     True),
])
def test_templates_resolve_and_instantiate_with_cu_filt(tmp_path, monkeypatch, source, kernel, args, block, entry,
                                                        made):
    """With the toolkit's cu++filt (its recorded output replayed), a template the source
    instantiates is found (`MatrixMulCUDA<32>`) and one it never instantiates
    (`histogram<64>`, `stencil1d<float, 3>`, `MatrixMulCUDA<8>`) is instantiated through
    warpviz's generated file: the entries cu++filt writes `MatrixMulCUDA<(int)8>`,
    `histogram<(int)64>` match the names as the source writes them."""
    import sys

    import viz.toolchain.compile as C
    from viz.trace.build import build

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "gpu"))
    import real_kernels

    fake = _replay_cu_filt(tmp_path)
    real = C.find_tool
    monkeypatch.setattr(C, "find_tool", lambda n: fake if n == "cu++filt" else real(n))
    assert N.demangler() == "cu++filt"
    text = real_kernels.OWN_SOURCE if source == "own" else OWN_TEMPLATES
    dims = f"block = [{block}]" if source == "own" else f"block = [{block}, {block}]"
    p = _launch(tmp_path, kernel, _args(*args), source=text).read_text().replace("block = [32]", dims)
    (tmp_path / "k.launch.toml").write_text(p)
    b = build(parse_launch(p, tmp_path / "k.launch.toml"))
    assert b.entry == entry and b.instantiated == made
    assert "(int)" not in b.label and " *" not in b.label, b.label


@nvcc
@pytest.mark.nvcc
def test_absent_template_lists_the_users_form_with_cu_filt(tmp_path, monkeypatch):
    import viz.toolchain.compile as C
    from viz.trace.build import build

    fake = _replay_cu_filt(tmp_path)
    real = C.find_tool
    monkeypatch.setattr(C, "find_tool", lambda n: fake if n == "cu++filt" else real(n))
    p = _launch(tmp_path, "MatrixMulCUDA", _args("float*", "float*", "float*", "int", "int"), source=OWN_TEMPLATES)
    with pytest.raises(TraceError) as err:
        build(parse_launch(p.read_text(), p))
    msg = str(err.value)
    assert "`MatrixMulCUDA` names 2 kernels" in msg and "MatrixMulCUDA<16>(float*, float*, float*, int, int)" in msg
    assert "(int)" not in msg and 'kernel = "MatrixMulCUDA<16>"' in err.value.fix
