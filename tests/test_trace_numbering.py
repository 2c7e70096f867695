"""One numbering of a trace's instructions, and only the traced kernel's instructions:
``analyze`` (text and JSON), the Figures rows' model function (``per_access``), the picture's
per-warp header and ``warpviz matrix``, on shipped traces whose .cu holds other kernels."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from viz.cli import main
from viz.trace.analysis import (analyze_trace, instruction_number, instruction_numbers, kernel_entry,
                                kernel_instructions, to_json, to_table)
from viz.trace.detail import TraceSource
from viz.trace.tracefile import load

TRACES = Path(__file__).resolve().parents[1] / "assets" / "traces"
# transpose.cu holds 12 kernels, copy.cu 10: a trace's header lists them all
MULTI = ("transpose_tile_unpadded.wvtrace", "transpose_tile_pad1.wvtrace", "copy_grid_stride.wvtrace",
         "stencil_shared.wvtrace")


def _cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("name", MULTI)
def test_numbers_are_the_kernels_own_in_ptx_order(name):
    t = load(TRACES / name)
    entry = kernel_entry(t.header)
    ids = kernel_instructions(t)
    fns = {i["function"] for i in t.instructions}
    assert len(fns) > 1                                      # the source has other kernels
    assert ids == [i["id"] for i in t.instructions if i["function"] == entry]
    assert ids == sorted(ids) and len(ids) < len(t.instructions)
    nums = instruction_numbers(t)
    assert [nums[k] for k in ids] == list(range(1, len(ids) + 1))
    other = next(i["id"] for i in t.instructions if i["function"] != entry)
    assert instruction_number(t, other) == 0
    # every record is of the traced kernel
    assert set(np.unique(t.instr).tolist()) <= set(ids)


@pytest.mark.parametrize("name", ("transpose_tile_unpadded.wvtrace", "copy_grid_stride.wvtrace"))
def test_analyze_json_figures_rows_and_picture_agree(capsys, name):
    path = TRACES / name
    rc, out, _ = _cli(capsys, "analyze", "--json", str(path))
    assert rc == 0
    doc = json.loads(out)
    t = load(path)
    an = analyze_trace(t)
    nums = instruction_numbers(t)
    entry = kernel_entry(t.header)
    by_json = {a["index"]: a["number"] for a in doc["accesses"]}
    # only the traced kernel's instructions that executed, numbered 1..N in PTX order
    assert by_json == {k: nums[k] for k in nums if an.stats[k].executed}
    assert all(t.instructions[k]["function"] == entry for k in by_json)
    assert doc["trace"]["instructions"] == len(nums)
    # the Figures rows' model function: the same instructions and numbers
    assert {d.index: d.number for d in an.per_access()} == by_json
    # the picture's per-warp header: "step k of n · instruction m", m the same number
    src = TraceSource(t)
    rows = src.stream(0, 0)
    seen = set()
    for k in range(len(rows)):
        d = src.detail(0, 0, k)
        sid = int(t.instr[rows[k]])
        assert d.access.index == sid and d.access.option("number") == by_json[sid]
        seen.add(sid)
    assert seen and seen <= set(by_json)


def test_picture_header_names_the_instruction_number(qapp):
    from viz.render.painter import _header_plan
    from viz.render.theme import theme

    t = load(TRACES / "transpose_tile_unpadded.wvtrace")
    src = TraceSource(t)
    n = src.stream_length(0, 0)
    d = src.detail(0, 0, n - 1)
    num = instruction_number(t, int(t.instr[src.stream(0, 0)[n - 1]]))
    plan = _header_plan(d, theme(), 1.0, 12, 3000)
    text = " ".join(plan.line2)
    assert f"step {n} of {n} · instruction {num}" in text


def test_analyze_all_lists_the_never_executed_ones(capsys):
    # shared.cu's shared_stride: one of its memory instructions no recorded warp ran
    path = TRACES / "shared_stride--shared-stride-32.wvtrace"
    t = load(path)
    an = analyze_trace(t)
    nums = instruction_numbers(t)
    idle = [k for k in nums if not an.stats[k].executed and not an.stats[k].warp_instructions]
    assert idle and len(idle) < len(nums)
    ran = [k for k in nums if k not in idle]
    assert [d.index for d in an.per_access()] == ran
    assert [d.index for d in an.per_access(never_executed=True)] == sorted(nums)
    assert [a["number"] for a in to_json(an, True)["accesses"]] == list(range(1, len(nums) + 1))
    rc, out, _ = _cli(capsys, "analyze", str(path))
    assert rc == 0 and "--all lists the others" in out
    assert f"instruction {nums[idle[0]]}:" not in out
    rc, out, _ = _cli(capsys, "analyze", "--all", str(path))
    assert rc == 0 and f"instruction {nums[idle[0]]}:" in out


def test_analyze_text_has_no_other_kernel_and_the_line_table(capsys):
    path = TRACES / "transpose_tile_unpadded.wvtrace"
    rc, out, _ = _cli(capsys, "analyze", str(path))
    assert rc == 0
    t = load(path)
    an = analyze_trace(t)
    numbers = [int(m) for m in re.findall(r"^instruction (\d+):", out, re.M)]
    assert numbers == list(range(1, len(instruction_numbers(t)) + 1)) and len(numbers) < len(t.instructions)
    assert "executed 0" not in out
    # the per-source-line table: worst line first, conflicts and sectors in their own columns
    lines = an.per_line()
    table = out.split("per source line", 1)[1].split("totals", 1)[0].strip().splitlines()[2:]
    assert len(table) == len(lines) >= 2
    for row, r in zip(table, lines):
        cells = row.split()
        assert cells[0] == r["source"]
        assert cells[2:7] == [f"{r[k]:,}" for k in ("warp_instructions", "wavefronts", "bank_conflicts",
                                                     "requests", "sectors")]
    assert sum(r["bank_conflicts"] for r in lines) == sum((d.bank_conflicts or 0) for d in an.per_access()) > 0
    assert to_table(an) == out.rstrip("\n")


def test_matrix_accepts_a_trace(capsys):
    path = TRACES / "stmatrix_frag.wvtrace"
    t = load(path)
    nums = instruction_numbers(t)
    mat = [nums[i["id"]] for i in t.instructions if i["kind"] in ("ldmatrix", "stmatrix")]
    rc, out, _ = _cli(capsys, "matrix", str(path))
    assert rc == 0 and out.startswith("stmatrix.x4 ") and f"instruction {mat[0]})" in out.splitlines()[0]
    rc, out, _ = _cli(capsys, "matrix", str(path), "-i", str(mat[1]))
    assert rc == 0 and out.startswith("stmatrix.x4.trans ") and f"instruction {mat[1]})" in out.splitlines()[0]
    rc, out, _ = _cli(capsys, "matrix", str(path), "-i", str(mat[2]))
    assert rc == 0 and out.startswith("stmatrix.x2 ")
    plain = next(n for n in nums.values() if n not in mat)
    rc, _, err = _cli(capsys, "matrix", str(path), "-i", str(plain))
    assert rc == 2 and "not ldmatrix or stmatrix" in err
    rc, _, err = _cli(capsys, "matrix", str(path), "-i", str(len(nums) + 1))
    assert rc == 2 and f"instructions 1-{len(nums)}" in err
    rc, out, _ = _cli(capsys, "matrix", str(TRACES / "ldmatrix_cpasync.wvtrace"))
    assert rc == 0 and out.startswith("ldmatrix.x4 ")


def test_matrix_of_a_trace_with_none_is_a_clear_exit_2(capsys):
    rc, out, err = _cli(capsys, "matrix", str(TRACES / "transpose_tile_unpadded.wvtrace"))
    assert rc == 2 and not out and "no ldmatrix or stmatrix instruction" in err and "Traceback" not in err
