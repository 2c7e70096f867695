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
                    str(d / "k.cu")], check=True, capture_output=True)
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
        assert "plain(float*)" in msg and "reduce6<int, 256u, true>(int*, int*, unsigned int)" in msg
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
                   check=True, capture_output=True)
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

    monkeypatch.setattr("viz.gpu.compile.find_tool", lambda n: tool if n == "cu++filt" else None)
    monkeypatch.setattr(N.subprocess, "run", spy)
    via_tool = N.demangle(names)
    assert calls and all(isinstance(c, list) and not shell for c, shell in calls)
    monkeypatch.setattr("viz.gpu.compile.find_tool", lambda n: None)
    via_runtime = N.demangle(names)
    norm = lambda s: re.sub(r"\s+", "", s).replace("constfloat*", "floatconst*")  # noqa: E731
    assert {k: norm(v) for k, v in via_tool.items()} == {k: norm(v) for k, v in via_runtime.items()}
    assert via_runtime["c_kernel"] == "c_kernel"
