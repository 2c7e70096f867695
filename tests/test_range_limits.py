"""Block, warp and instruction selections typed as text (``--blocks``, ``--block``, ``-i``):
the number of parts, the digits of a number and the blocks selected are bounded before
anything is expanded; over a limit the message names it (exit 2 on the command line)."""

from __future__ import annotations

import pytest

from viz.export import MAX_RANGES, MAX_VIDEO_FRAMES, ExportError, parse_range
from viz.gpu.trace_pipeline import MAX_BLOCK_RANGES, SELECTABLE_BLOCKS, parse_blocks
from viz.trace import TraceError

LAUNCH = "kernels/trace/generic_atomic.launch.toml"


def test_many_parts_and_long_text_refused():
    with pytest.raises(TraceError, match="16,000 blocks or ranges"):
        parse_blocks(",".join(["0"] * 16_000), 1 << 20, "f")
    with pytest.raises(TraceError, match=f"over warpviz's limit of {MAX_BLOCK_RANGES}"):
        parse_blocks(",".join(["1"] * (MAX_BLOCK_RANGES + 1)), 100, "f")


def test_the_largest_selection_is_merged_not_repeated():
    got = parse_blocks(",".join(["0-65535"] * MAX_BLOCK_RANGES), 1 << 20, "f")
    assert got == list(range(SELECTABLE_BLOCKS))
    assert parse_blocks("5-9,0-6,3", 10, "f") == list(range(10))
    assert parse_blocks("0-3,7, 9", 10, "f") == [0, 1, 2, 3, 7, 9]


def test_a_number_of_5000_digits():
    with pytest.raises(TraceError, match="out of range"):
        parse_blocks("9" * 5000, 10, "f")
    with pytest.raises(ExportError, match="out of range"):
        parse_range("9" * 5000, "--block", 0, 10)


def test_parse_range_limits():
    with pytest.raises(ExportError, match=f"over the limit of {MAX_RANGES}"):
        parse_range(",".join(["1"] * (MAX_RANGES + 1)), "--block", 0, 10)
    with pytest.raises(ExportError, match=f"selects more than {MAX_VIDEO_FRAMES:,}"):
        parse_range("0-999999999999", "--block", 0, 10 ** 15)          # refused before it is expanded
    assert parse_range("1,4,7-9", "-i", 0, 20, base=1) == (0, 3, 6, 7, 8)


def test_cli_blocks_over_the_limit_exits_2(capsys):
    from viz.cli import main

    assert main(["trace", LAUNCH, "--blocks", ",".join(["0"] * 16_000)]) == 2
    err = capsys.readouterr().err
    assert "--blocks" in err and "limit" in err and "Traceback" not in err


def test_one_parser_reads_both_kinds_of_list():
    """viz.argcheck.range_parts is what export's selections and trace --blocks read: the pairs
    as written, each part checked as it is reached (a wrong part after a refused one is not
    what the message names), the two callers differing only in the separators and spaces."""
    from viz.argcheck import RangeTextError, range_parts

    assert list(range_parts("0-3, 7,9-8", 4)) == [(0, 3, "0-3"), (7, 7, "7"), (9, 8, "9-8")]
    assert list(range_parts(" 1 : 4 ,2", 4, "-:", spaced=True)) == [(1, 4, " 1 : 4 "), (2, 2, "2")]
    for text, problem in (("1,2,3", "parts"), ("0 - 3", "form"), ("1:4", "form"), ("9" * 20, "digits")):
        with pytest.raises(RangeTextError) as err:
            list(range_parts(text, 2))
        assert err.value.problem == problem
    with pytest.raises(TraceError, match="`12` is outside the grid's blocks 0..9"):
        parse_blocks("12,x", 10, "f")
    with pytest.raises(ExportError, match="is outside 0..9"):
        parse_range("12,x", "--block", 0, 9)
    assert parse_blocks("9-9,007", 10, "f") == [7, 9]
    with pytest.raises(TraceError, match="`3-1` is outside"):
        parse_blocks("3-1", 10, "f")
    assert parse_range("3-1", "--block", 0, 9) == (1, 2, 3)
