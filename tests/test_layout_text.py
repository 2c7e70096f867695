"""Layouts as their authors write them (viz.layout_text): CuTe's documented examples, a
direct shape/stride evaluation, Swizzle<B,M,S>, Triton's swizzled and NVMMA shared
layouts, and the messages for bad layouts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from viz.layout import LayoutError, parse_swizzle, offset_tree
from viz.layout_text import CuteSwizzle, check, fit, flatten, parse_layout, size


def grid(text, extents=None, elem=2):
    lay = parse_layout(text)
    return lay.evaluate(extents or lay.extents(), elem).tolist()


# ---------------------------------------------------------------- CuTe's documented examples
# CUTLASS media/docs/cpp/cute/01_layout.md: print2D / print1D / print_layout outputs.

@pytest.mark.parametrize("text, want", [
    ("(2,(2,2)):(4,(2,1))", [[0, 2, 1, 3], [4, 6, 5, 7]]),                 # print_layout(s2xh4)
    ("(_2,_4):(_1,_2)", [[0, 2, 4, 6], [1, 3, 5, 7]]),                     # s2xs4
    ("(_2,4):(_12,_1)", [[0, 1, 2, 3], [12, 13, 14, 15]]),                 # s2xd4_a
    ("(2,(2,2)):(_1,(2,4))", [[0, 2, 4, 6], [1, 3, 5, 7]]),                # s2xh4_col
    ("(4,2):(1,4)", [[0, 4], [1, 5], [2, 6], [3, 7]]),
    ("(4,2):(2,1)", [[0, 1], [2, 3], [4, 5], [6, 7]]),
    ("((2,2),2):((4,1),2)", [[0, 2], [4, 6], [1, 3], [5, 7]]),
    ("(3,(2,3)):(3,(12,1))", [[0, 12, 1, 13, 2, 14], [3, 15, 4, 16, 5, 17], [6, 18, 7, 19, 8, 20]]),
    ("8:1", list(range(8))),
    ("8:2", [0, 2, 4, 6, 8, 10, 12, 14]),
    ("((4,2)):((2,1))", [0, 2, 4, 6, 1, 3, 5, 7]),
    ("((4,2)):((1,4))", list(range(8))),
    ("(2,4)", [[0, 2, 4, 6], [1, 3, 5, 7]]),                               # no stride: LayoutLeft
])
def test_cute_documented_examples(text, want):
    assert grid(text) == want


def test_cute_crd2idx_documented_example():
    # crd2idx(16, (3,(2,3)), (3,(12,1))) == 17: 1-D coordinate 16 is (1,5) in 2-D.
    g = grid("(3,(2,3)):(3,(12,1))")
    assert g[16 % 3][16 // 3] == 17


def test_print1d_is_column_major_order():
    # print1D(s2xh4) = 0 4 2 6 1 5 3 7: the 1-D coordinate runs down the columns first.
    g = np.array(grid("(2,(2,2)):(4,(2,1))"))
    assert g.T.reshape(-1).tolist() == [0, 4, 2, 6, 1, 5, 3, 7]


def test_cute_swizzle_composed_as_cute_prints_it():
    # CuTe prints a swizzled layout as "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)".
    a = grid("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)")
    b = grid("Sw<3,3,3> o (8,64):(64,1)")
    assert a == b
    # Row r: the 8-element (16-byte) chunk c lands on chunk c ^ r.
    for r in range(8):
        for c in range(64):
            assert a[r][c] == r * 64 + (((c // 8) ^ r) * 8) + c % 8


# ---------------------------------------------------------------- properties

def crd2idx(coord, shape, stride):
    """CuTe's index mapping written out: split coord colexicographically, inner product."""
    if isinstance(shape, tuple):
        total, rest = 0, coord
        for k, (s, d) in enumerate(zip(shape, stride)):
            if k == len(shape) - 1:
                total += crd2idx(rest, s, d)
            else:
                total += crd2idx(rest % size(s), s, d)
                rest //= size(s)
        return total
    return coord * stride


def shapes(depth=2):
    leaf = st.integers(1, 6)
    if depth == 0:
        return leaf
    return st.one_of(leaf, st.lists(shapes(depth - 1), min_size=1, max_size=3).map(tuple))


def strides_for(shape):
    if isinstance(shape, tuple):
        return st.tuples(*[strides_for(s) for s in shape])
    return st.integers(0, 40)


def render(t):
    return "(" + ",".join(render(x) for x in t) + ")" if isinstance(t, tuple) else str(t)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_cute_parser_agrees_with_direct_shape_stride_evaluation(data):
    rank2 = data.draw(st.booleans())
    if rank2:
        shape = (data.draw(shapes()), data.draw(shapes()))
    else:
        shape = (data.draw(shapes()),)             # one mode: "(...)" is rank 1
    stride = data.draw(strides_for(shape))
    lay = parse_layout(f"{render(shape)}:{render(stride)}")
    ext = lay.extents()
    got = lay.evaluate(ext, 4)
    if rank2:
        for r in range(ext[0]):
            for c in range(ext[1]):
                assert got[r, c] == crd2idx(r, shape[0], stride[0]) + crd2idx(c, shape[1], stride[1])
    else:
        for i in range(ext[0]):
            assert got[i] == crd2idx(i, shape, stride)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 6), st.integers(0, 8), st.integers(-10, 10), st.integers(0, (1 << 20) - 1))
def test_sw_is_an_involution(b, m, s, o):
    if b > 0 and abs(s) < b:
        return
    sw = CuteSwizzle(b, m, s)
    assert sw(sw(o)) == o
    # and the tree says the same as the function
    lay = parse_layout(f"Sw<{b},{m},{s}> o {o} o 2:1")     # CuTe's composed offset, then 2:1
    assert lay.evaluate((2,), 1).tolist() == [sw(o), sw(o + 1)]


def compact_layouts():
    """A random compact CuTe layout: leaves of power-of-two extents, strides a permuted
    prefix product (a bijection onto 0..n-1), split into two modes."""
    @st.composite
    def make(draw):
        leaves = draw(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=2, max_size=5))
        perm = draw(st.permutations(range(len(leaves))))
        strides = [0] * len(leaves)
        acc = 1
        for k in perm:
            strides[k] = acc
            acc *= leaves[k]
        cut = draw(st.integers(1, len(leaves) - 1))
        shape = (tuple(leaves[:cut]), tuple(leaves[cut:]))
        stride = (tuple(strides[:cut]), tuple(strides[cut:]))
        return shape, stride, acc
    return make()


@settings(max_examples=150, deadline=None)
@given(compact_layouts(), st.integers(0, 3), st.integers(0, 3), st.integers(1, 4))
def test_a_layout_that_claims_a_bijection_is_one(lay, b, m, s):
    shape, stride, n = lay
    text = f"{render(shape)}:{render(stride)}"
    if b and s >= b and (1 << (m + s + b)) <= n:
        text = f"Sw<{b},{m},{s}> o {text}"
    parsed = parse_layout(text)
    ext = parsed.extents()
    off = check(parsed, ext, 4)          # claims: inside the array and one-to-one
    assert sorted(off.reshape(-1).tolist()) == list(range(n))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4, 8, 16]),
       st.sampled_from([(1, 0), (0, 1)]), st.sampled_from([1, 2, 8, 16, 32]), st.sampled_from([8, 16, 32, 64, 128]))
def test_triton_swizzled_layout_is_a_bijection_and_follows_triton(vec, per_phase, max_phase, order, outer, inner):
    text = f"SwizzledSharedLayout({vec}, {per_phase}, {max_phase}, [{order[0]}, {order[1]}])"
    lay = parse_layout(text)
    assert lay.is_bijection_claimed()
    ext = (outer, inner) if order == (1, 0) else (inner, outer)
    off = check(lay, fit(lay, ext, 2), 2)
    assert sorted(off.reshape(-1).tolist()) == list(range(outer * inner))
    # Triton's formula, where the phase fits in the row (vec * maxPhase <= C).
    if vec * max_phase <= inner:
        for r in range(ext[0]):
            for c in range(ext[1]):
                o_, i_ = (r, c) if order == (1, 0) else (c, r)
                phase = (o_ // per_phase) % max_phase
                want = o_ * inner + ((i_ // vec) ^ phase) * vec + i_ % vec
                assert off[r, c] == want


@pytest.mark.parametrize("nbytes, tma, cute", [(128, "tma:128B", "Sw<3,3,3>"), (64, "tma:64B", "Sw<2,3,3>"),
                                               (32, "tma:32B", "Sw<1,3,3>")])
def test_nvmma_equals_the_tma_swizzle_and_cute(nbytes, tma, cute):
    cols = nbytes // 2
    nv = parse_layout(f"NVMMASharedLayout({nbytes}, 16)")
    a = nv.evaluate(fit(nv, (16, cols), 2), 2)
    swz = parse_swizzle(tma, cols, {}, 2)
    from viz.lanes import Evaluator, Lanes, Space
    r = np.arange(16).reshape(-1, 1)
    c = np.arange(cols).reshape(1, -1)
    v, _ = Evaluator(Space({"row": Lanes(b=r), "col": Lanes(t=c)}, (16, cols))).evaluate(offset_tree(swz, cols, 0))
    b = parse_layout(f"{cute} o (16,{cols}):({cols},1)").evaluate((16, cols), 2)
    assert a.tolist() == np.asarray(v.full((16, cols))).tolist() == b.tolist()
    # Triton's NVMMA parameters: vec 8 halves, perPhase 128/N, maxPhase N/16.
    sw = parse_layout(f"SwizzledSharedLayout(8, {128 // nbytes}, {nbytes // 16}, [1, 0])")
    assert sw.evaluate((16, cols), 2).tolist() == a.tolist()


def test_triton_forms_agree():
    forms = ["SwizzledSharedLayout(8, 1, 8, [1, 0])",
             "SwizzledSharedLayout(vec=8, per_phase=1, max_phase=8, order=[1, 0])",
             "ttgl.SwizzledSharedLayout(vec=8, per_phase=1, max_phase=8, order=[1,0])",
             "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"]
    grids = [grid(f, (8, 64)) for f in forms]
    assert all(g == grids[0] for g in grids)
    nv = ["NVMMASharedLayout(128)", "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)",
          "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"]
    assert all(grid(f, (8, 64)) == grids[0] for f in nv)


def test_nvmma_transposed_is_column_major():
    a = np.array(grid("NVMMASharedLayout(128, transposed=true)", (64, 8)))
    b = np.array(grid("NVMMASharedLayout(128)", (8, 64)))
    assert (a == b.T).all()


# ---------------------------------------------------------------- bad layouts

@pytest.mark.parametrize("text, fragment", [
    ("(8,(4,16):(64,(16,1))", "expected ')'"),
    ("(8,4):(1)", "do not have the same nesting"),
    ("(8,4):(1,8", "expected ')'"),
    ("(8,4,2):(1,8,32)", "rank 3"),
    ("(0,4):(1,1)", "at least 1"),
    ("Sw<3,3> o (8,64):(64,1)", "expected ','"),
    ("Sw<3,3,2> o (8,64):(64,1)", "|S| >= B"),
    ("Sw<3,3,3> (8,64):(64,1)", "expected 'o'"),
    ("(8,64):(64,1) extra", "unexpected 'extra'"),
    ("(8,64):(64,1.5)", "unexpected"),
    ("SwizzledSharedLayout(6, 1, 8, [1, 0])", "vec = 6 is not a power of two"),
    ("SwizzledSharedLayout(8, 3, 8, [1, 0])", "per_phase = 3 is not a power of two. Triton's swizzled layouts need powers of two; try 2 or 4"),
    ("SwizzledSharedLayout(8, 1, 8, [1, 2])", "order must be"),
    ("SwizzledSharedLayout(8, 1)", "missing max_phase"),
    ("SwizzledSharedLayout(8, 1, 8, [1, 0], bogus=1)", "unknown parameter 'bogus'"),
    ("NVMMASharedLayout(96)", "must be 0, 32, 64 or 128"),
    ("", "empty"),
])
def test_malformed_layouts_say_what_and_how(text, fragment):
    with pytest.raises(LayoutError) as info:
        parse_layout(text)
    assert fragment in str(info.value)
    assert info.value.fix or "try" in str(info.value)


def test_codomain_overflow_names_the_element_and_the_pad():
    lay = parse_layout("(32,32):(33,1)")           # CuTe's padded tile: reaches offset 1054
    with pytest.raises(LayoutError) as info:
        check(lay, (32, 32), 4)
    msg = str(info.value)
    assert "codomain overflows" in msg and "offset 1054" in msg and "1024 elements" in msg
    assert "add pad = 1" in msg
    off = check(lay, (32, 32), 4, pad=1)           # with the pad it fits
    assert off.max() == 1054


def test_non_injective_layout_is_refused():
    with pytest.raises(LayoutError, match="not one-to-one: \\(row 0, column 0\\) and \\(row 1, column 0\\)"):
        check(parse_layout("(2,4):(0,1)"), (2, 4), 4)


def test_triton_shape_rules():
    lay = parse_layout("SwizzledSharedLayout(8, 1, 8, [1, 0])")
    with pytest.raises(LayoutError, match=r"contiguous extent 48 is not a power of two\. .* make COLS 32 or 64"):
        fit(lay, (8, 48), 2)
    with pytest.raises(LayoutError, match="needs the array's shape"):
        fit(lay, None, 2)
    nv = parse_layout("NVMMASharedLayout(128, 16)")
    with pytest.raises(LayoutError, match="rows of 128 bytes \\(64 elements\\), not 64.*COLS = 64"):
        fit(nv, (8, 32), 2)
    with pytest.raises(LayoutError, match="16-bit elements but the array's are 32-bit"):
        fit(nv, (8, 32), 4)
    cute = parse_layout("(8,64):(64,1)")
    with pytest.raises(LayoutError, match="is 8x64 but the array's shape is \\[8, 32\\]"):
        fit(cute, (8, 32), 2)
    assert fit(cute, None, 2) == (8, 64)


def test_leaves_and_sizes():
    lay = parse_layout("(8,(4,16)):(64,(16,1))")
    assert lay.extents() == (8, 64)
    assert flatten(lay.shape) == [8, 4, 16] and flatten(lay.stride) == [64, 16, 1]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_check_never_passes_a_layout_that_is_not_a_bijection_into_the_array(data):
    """Any CuTe layout, any strides, any swizzle: check() either refuses it or it is
    one-to-one and inside the array's storage."""
    shape = (data.draw(shapes(1)), data.draw(shapes(1)))
    stride = data.draw(strides_for(shape))
    text = f"{render(shape)}:{render(stride)}"
    b = data.draw(st.integers(0, 2))
    if b:
        text = f"Sw<{b},{data.draw(st.integers(0, 3))},{data.draw(st.integers(b, 4))}> o {text}"
    lay = parse_layout(text)
    ext = lay.extents()
    pad = data.draw(st.integers(0, 8))
    try:
        off = check(lay, ext, 4, pad)
    except LayoutError as err:
        assert "overflows" in str(err) or "not one-to-one" in str(err) or "before the array" in str(err)
        return
    flat = off.reshape(-1)
    assert len(set(flat.tolist())) == flat.size
    assert flat.min() >= 0 and flat.max() < ext[0] * (ext[1] + pad)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([32, 64, 128]), st.sampled_from([1, 2, 4, 8]), st.booleans(), st.sampled_from([8, 16, 24, 64]))
def test_nvmma_layouts_are_bijections(nbytes, esize, transposed, outer):
    inner = nbytes // esize
    lay = parse_layout(f"NVMMASharedLayout({nbytes}, {8 * esize}, transposed={'true' if transposed else 'false'})")
    ext = (inner, outer) if transposed else (outer, inner)
    off = check(lay, fit(lay, ext, esize), esize)
    assert sorted(off.reshape(-1).tolist()) == list(range(outer * inner))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_offset_bounds_hold_the_enumerated_offsets(data):
    from viz.layout_text import offset_bounds

    shape = (data.draw(shapes(1)), data.draw(shapes(1)))
    stride = data.draw(strides_for(shape))
    text = f"{render(shape)}:{render(stride)}"
    b = data.draw(st.integers(0, 3))
    if b:
        s = data.draw(st.integers(b, 5)) * data.draw(st.sampled_from([1, -1]))
        text = f"Sw<{b},{data.draw(st.integers(0, 4))},{s}> o {text}"
    lay = parse_layout(text)
    off = lay.evaluate(lay.extents(), 4)
    lo, hi = offset_bounds(lay)
    assert lo <= off.min() and off.max() <= hi
