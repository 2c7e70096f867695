"""The built-in library: every scenario loads, and the engine reproduces its hand-derived totals."""

import pytest

from viz.engine import METRIC_NAMES, analyze
from viz.scenario import ScenarioError, builtin_names, load

NAMES = builtin_names()

# Every example of the course material the library must cover.
REQUIRED = [
    "coalesced", "stride-2", "stride-16", "stride-32", "offset-by-one", "random-gather", "aos-float3-r",
    "soa-float-r", "vector-int", "vector-int2", "vector-int4", "misaligned-int2", "float3-whole",
    "grid-stride-loop", "gemm-naive", "block-2d", "boundary-n1003", "transpose-naive", "stencil-global",
    "stencil-shared", "shared-stride-1", "shared-stride-2", "shared-stride-8", "shared-stride-32",
    "shared-broadcast", "transpose-tile", "transpose-tile-pad", "transpose-tile-xor", "transpose-tile-xor4",
    "transpose-tile-diagonal", "transpose-tile-bitrev", "transpose-tile-bitrev-xor", "transpose-tile-cute",
    "gemm-tiled", "gemm-nt-swizzle-add", "gemm-nt-swizzle-xor", "transpose-tile-lcg", "reduction-tree",
    "pad-row-64-pad", "double-tile", "float4-tile", "char-shared", "short-shared",
]


def test_library_is_complete():
    assert len(NAMES) >= 30
    assert not [n for n in REQUIRED if n not in NAMES]


@pytest.mark.parametrize("name", NAMES)
def test_builtin(name):
    try:
        sc = load(name)
    except ScenarioError as err:
        sc = None
        load_error = err
    if sc is not None and sc.expect_error:
        with pytest.raises(ScenarioError) as info:
            analyze(sc)
        assert sc.expect_error in str(info.value)
        return
    assert sc is not None, f"{name} does not load: {load_error}"
    assert sc.title and sc.tags and len(sc.notes) > 40, "a built-in needs a title, tags and notes"
    assert sc.expected, "a built-in states its expected totals"
    metrics = analyze(sc).metrics
    # the contract's ten, and an access kind's own counter where the model counts one (LDSM)
    assert set(sc.expected) <= set(METRIC_NAMES) | set(metrics)
    for key, value in sc.expected.items():
        assert metrics[key] == value, key
    # Metrics the file does not list are zero.
    assert all(metrics[k] == 0 for k in METRIC_NAMES if k not in sc.expected)
