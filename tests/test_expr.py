"""The expression language: parsing into a tree, C semantics, CUDA printing, hostile input."""

import numpy as np
import pytest

from viz.expr import ExprError, depth, parse, parse_access, to_cuda, to_text
from viz.lanes import Evaluator, Lanes, Space


def value(text, **names):
    space = Space({k: Lanes.const(v) for k, v in names.items()}, (1, 1))
    v, faults = Evaluator(space).evaluate(parse(text))
    assert not faults, faults[0].problem
    return v.scalar()


@pytest.mark.parametrize("text, expected", [
    ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("1 << 2 + 1", 8), ("7 & 3 == 3", 1),
    ("1 | 2 ^ 3 & 1", 3), ("2 < 3 == 1", 1), ("0 || 1 && 0", 0), ("1 ? 2 : 0 ? 3 : 4", 2),
    ("0 ? 2 : 0 ? 3 : 4", 4), ("-2 * -3", 6), ("~0", -1), ("!5", 0), ("!0", 1),
    ("0x10 + 0b11", 19), ("min(3, -4)", -4), ("max(3, -4)", 3), ("rev(1, 5)", 16),
    ("rev(6, 3)", 3), ("rev(0xff, 4)", 15), ("10 - 4 - 3", 3), ("100 / 10 / 5", 2),
])
def test_precedence_and_values(text, expected):
    assert value(text) == expected


@pytest.mark.parametrize("a, b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3), (5, 5), (-1, 32)])
def test_division_and_remainder_truncate_toward_zero(a, b):
    q = int(a / b)  # Python float division then truncation = C semantics for these small values
    assert value("a / b", a=a, b=b) == q
    assert value("a % b", a=a, b=b) == a - q * b


def test_right_shift_is_arithmetic_and_64_bit():
    assert value("-8 >> 1") == -4
    assert value("1 << 40") == 1 << 40


def test_vectorised_over_blocks_and_threads_keeps_separable_form():
    b = np.arange(4).reshape(-1, 1)
    t = np.arange(8).reshape(1, -1)
    space = Space({"bx": Lanes(b=b), "tx": Lanes(t=t), "W": Lanes.const(100)}, (4, 8))
    v, _ = Evaluator(space).evaluate(parse("(bx * 2 + tx) * W + 3"))
    assert not v.is_full  # sums and products by constants stay block part + thread part
    assert np.array_equal(v.full((4, 8)), (b * 2 + t) * 100 + 3)
    x, _ = Evaluator(space).evaluate(parse("bx ^ tx"))
    assert x.is_full and np.array_equal(x.f, b ^ t)


def test_division_by_zero_only_faults_where_it_runs():
    t = np.arange(4).reshape(1, -1)
    space = Space({"t": Lanes(t=t)}, (1, 4))
    v, faults = Evaluator(space).evaluate(parse("t > 0 ? 8 / t : 0"))
    assert not faults
    assert list(v.full((1, 4))[0]) == [0, 8, 4, 2]
    _, faults = Evaluator(space).evaluate(parse("8 / t"))
    assert faults and list(np.broadcast_to(faults[0].mask, (1, 4))[0]) == [True, False, False, False]
    _, faults = Evaluator(space).evaluate(parse("t != 0 && 8 / t"))
    assert not faults


def test_cuda_printing_is_fully_parenthesised_and_64_bit():
    node = parse("(blockIdx.x * TILE + threadIdx.x) % 32 < 4 ? rev(lane, 5) : min(a, b)")
    cuda = to_cuda(node, {"blockIdx.x": "bx", "threadIdx.x": "tx"})
    assert cuda == ("(((long long)((((bx * TILE) + tx) % 32LL) < 4LL)) ? wv_rev(lane, 5LL) : "
                    "wv_min(a, b))")
    # Printing back and parsing again gives the same tree.
    assert parse(to_text(node)) == node


def test_access_parsing():
    ax = parse_access("tile[threadIdx.y + j][threadIdx.x ^ 4].r")
    assert ax.array == "tile" and len(ax.indices) == 2 and ax.field == "r"
    assert to_text(ax.indices[1]) == "(threadIdx.x ^ 4)"
    with pytest.raises(ExprError, match="unexpected '\\['"):
        parse_access("a[b[0]]")  # an index may not read memory: one access is one instruction
    with pytest.raises(ExprError):
        parse_access("a[1][2][3]")
    with pytest.raises(ExprError, match="never closed"):
        parse_access("a[1")


@pytest.mark.parametrize("text, fragment", [
    ("__import__('os').system('true')", "unexpected character"),
    ("x; system(1)", "unexpected character"),
    ("exec(1)", "unknown function"),
    ("open(1, 2)", "unknown function"),
    ("a.b", "unknown name"),
    ("1 +", "ends too early"),
    ("(1 + 2", "expected '\\)'"),
    ("1 2", "after a complete expression"),
    ("", "empty"),
    ("(" * 100 + "1" + ")" * 100, "nested more than"),
    ("-" * 200 + "1", "nested more than"),
    ("1" + "+1" * 600, "parts"),
    ("x" * 3000, "characters long"),
    ("99999999999999999999999", "too large"),
    ("min(1)", "takes 2 arguments"),
    ("\"; int main(){}", "unexpected character"),
])
def test_hostile_and_malformed_text_is_refused(text, fragment):
    with pytest.raises(ExprError, match=fragment):
        parse(text)


def test_depth_of_deep_but_allowed_expression():
    node = parse("(" * 40 + "1" + ")" * 40)
    assert depth(node) == 1
