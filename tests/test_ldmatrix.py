"""ldmatrix / stmatrix (scenario format 3, viz/kinds/ldmatrix.py): loading, the refusals
with their fixes, the rule (one phase per 8x8 matrix) against a plain reference, the
register fragments, the reasons, and the generated kernels' real instructions."""

from __future__ import annotations

import random
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from viz.engine import analyze
from viz.gpu.codegen import generate
from viz.toolchain.compile import find_nvcc
from viz.gpu.randomgen import matrix_scenario_text, scenarios as random_scenarios
from viz.kinds.ldmatrix import (OP_NAMES, MatrixOp, fragment, fragment_table, holders, parse_op,
                                warp_wavefronts)
from viz.report import explain_access
from viz.scenario import ScenarioError, load, loads
from viz.warp import warp_detail

needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")


def text(op="ldmatrix.x4", at="t[lane % 16][8 * (lane / 16)]", block="[32]", fmt=3, space="shared",
         type_="half", shape="[64, 64]", extra="", access_extra=""):
    head = f"format = {fmt}\n" if fmt else ""
    return (head + f'title = "m"\n[launch]\nblock = {block}\ngrid = [1]\n[arrays.t]\nspace = "{space}"\n'
            f'type = "{type_}"\nshape = {shape}\n{extra}\n[[access]]\nop = "{op}"\nat = "{at}"\n{access_extra}')


def sc_of(**kw):
    return loads(text(**kw), source="m.toml")


def figures(sc):
    return {k: v for k, v in analyze(sc).metrics.items() if v}


# ---------------------------------------------------------------------------- ops


def test_every_op_name_parses_and_prints_back():
    assert len(OP_NAMES) == 12
    for name in OP_NAMES:
        op = parse_op(name)
        assert op is not None and op.text == name
        assert op.ptx == name.replace(".x", ".sync.aligned.m8n8.x") + ".shared.b16"
    assert parse_op("ldmatrix.x3") is None and parse_op("load") is None and parse_op(4) is None
    assert MatrixOp("stmatrix", 2, True).sass == "STSM.16.MT88.2" and MatrixOp("ldmatrix", 1).sass == "LDSM.16.M88"


def test_fragments_are_the_ptx_layout_and_invert():
    # lane 5: row 1, columns 2 and 3; transposed: rows 2 and 3 of column 1
    assert fragment(5, 0, False) == ((1, 2), (1, 3))
    assert fragment(5, 0, True) == ((2, 1), (3, 1))
    for trans in (False, True):
        seen = set()
        for lane in range(32):
            for rc in fragment(lane, 0, trans):
                assert holders(*rc, trans) == lane
                seen.add(rc)
        assert seen == {(r, c) for r in range(8) for c in range(8)}   # every element once
    table = fragment_table(MatrixOp("ldmatrix", 4))
    assert [len(x) for x in table] == [8] * 32 and table[0][2] == (1, 1, 0, 0)


# ---------------------------------------------------------------------------- loading and refusals


def test_ldmatrix_counts_as_a_shared_load_with_its_own_instruction_counter():
    sc = sc_of()
    a = sc.accesses[0]
    assert a.op == "load" and a.matrix == MatrixOp("ldmatrix", 4) and a.parts == ((0, 16),)
    # half tile, 128-byte rows: rows 0-7 of a matrix all on banks 0-3 -> 8 wavefronts a matrix
    assert figures(sc) == {"smsp__inst_executed_op_ldsm.sum": 1,
                           "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 32,
                           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 28}


def test_stmatrix_counts_with_the_shared_stores_and_its_own_instruction_counter():
    sc = sc_of(op="stmatrix.x2.trans", shape="[64, 72]")     # 144-byte rows: conflict-free
    assert figures(sc) == {"smsp__inst_executed_op_shared_stsm.sum": 1,
                           "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 2}


def test_x1_and_x2_ignore_the_other_lanes_addresses():
    # lanes 8-31 would be out of bounds: .x1 never reads their addresses
    sc = sc_of(op="ldmatrix.x1", at="t[lane < 8 ? lane : 1000][0]")
    assert figures(sc)["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 8
    d = analyze(sc).per_access()[0]
    assert d.active_lanes == 8 and d.phases == 1 and d.idle_phases == 0
    with pytest.raises(ScenarioError, match="row 1000 of t is out of bounds"):
        analyze(sc_of(op="ldmatrix.x4", at="t[lane < 8 ? lane : 1000][0]"))


def test_format_2_file_is_told_to_declare_format_3():
    with pytest.raises(ScenarioError) as info:
        sc_of(fmt=2)
    assert "part of scenario format 3" in info.value.problem and info.value.fix == "add format = 3 at the top of the file"
    assert info.value.line == 12                     # the op's line


@pytest.mark.parametrize("kw, where, problem, fix", [
    (dict(op="ldmatrix.x3"), "access 0", "unknown matrix op 'ldmatrix.x3'", "ldmatrix.x1, ldmatrix.x1.trans"),
    (dict(space="global"), "access 0 (ldmatrix.x4", "moves rows of shared memory, but t is a global array",
     'space = "shared"'),
    (dict(access_extra='when = "lane < 16"\n'), "access 0 (ldmatrix.x4", ".sync.aligned: every lane",
     "remove when"),
    (dict(block="[48]"), "access 0 (ldmatrix.x4", "needs whole warps, but the block has 48 threads",
     "multiple of 32"),
    (dict(type_="float2", at="t[lane][0].x"), "access 0 (ldmatrix.x4", "not a field", "remove .x"),
])
def test_bad_matrix_access_names_the_field_and_the_fix(kw, where, problem, fix):
    with pytest.raises(ScenarioError) as info:
        sc_of(**kw)
    err = info.value
    assert err.where.startswith(where) and problem in err.problem and fix in err.fix, err.message()
    assert err.line is not None


def test_misaligned_row_address_names_the_lane_and_the_fix():
    with pytest.raises(ScenarioError) as info:
        analyze(sc_of(at="t[lane % 16][4 + 8 * (lane / 16)]"))
    err = info.value
    assert "ldmatrix.x4 row address 8 (byte offset 8 in t) is not 16-byte aligned" in err.problem
    assert "[warp 0, lane 0]" in err.problem and "multiple of 8" in err.fix and err.line == 11


def test_row_past_the_end_of_the_array_is_refused():
    with pytest.raises(ScenarioError) as info:
        analyze(sc_of(at="t[8 * (lane % 13)]", shape="[100]", op="stmatrix.x2"))
    assert "the 16-byte row at byte offset 192 runs past the end of t (200 bytes)" in info.value.problem
    assert "[warp 0, lane 12]" in info.value.problem


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """``warpviz ARGS`` in this process (tests/test_cli.py runs the command itself): its exit
    status, standard output and standard error."""
    from viz.cli import main

    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as e:          # argparse's usage errors
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_exits_2_on_a_bad_matrix_access(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(text(at="t[lane][4]"))
    code, _, err = cli(capsys, "analyze", str(bad))
    assert code == 2
    assert "bad.toml, line 11: access 0 (ldmatrix.x4 t[lane][4]): ldmatrix.x4 row address 8" in err


# ---------------------------------------------------------------------------- the rule


def _engine_vs_reference(sc):
    an = analyze(sc)
    for st_ in an.stats:
        op = st_.matrix
        for b in range(sc.launch.blocks):
            for w in range(sc.launch.warps_per_block):
                wd = warp_detail(sc, st_.instruction, b, w)
                rows = [ln.byte_addr for ln in wd.lanes]
                wf, ideal = warp_wavefronts(op, rows)
                assert st_.per_warp[b, w] == wf == wd.wavefronts
                assert wd.active_phases == ideal == op.num


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31))
def test_engine_and_warp_detail_equal_the_reference_rule(seed):
    r = random.Random(seed)
    for _ in range(20):
        try:
            sc = loads(matrix_scenario_text(r), source="random.toml")
            analyze(sc)
        except ScenarioError:
            continue
        _engine_vs_reference(sc)
        return


@given(st.lists(st.integers(0, 255), min_size=32, max_size=32), st.sampled_from([1, 2, 4]))
@settings(max_examples=60, deadline=None)
def test_wavefronts_are_bounded_by_rows_and_broadcast(chunks, num):
    """Per matrix: at least 1, at most its distinct rows; the same rows in any order cost the same."""
    op = MatrixOp("ldmatrix", num)
    rows = [16 * c for c in chunks]
    wf, ideal = warp_wavefronts(op, rows)
    distinct = sum(len(set(rows[8 * i: 8 * i + 8])) for i in range(num))
    assert ideal == num <= wf <= distinct
    shuffled = [rows[8 * i + ((k * 3) % 8)] for i in range(4) for k in range(8)]
    assert warp_wavefronts(op, shuffled)[0] == wf


def test_random_matrix_scenarios_state_true_reasons():
    from test_report_reasons import check_access

    for _, sc in random_scenarios(12, seed=4, kind="ldmatrix"):
        for d in analyze(sc).per_access():
            check_access(d, sc)


def test_plain_and_swizzled_builtins():
    plain, sw = analyze(load("ldmatrix-x4-tile")).metrics, analyze(load("ldmatrix-x4-tile-sw128")).metrics
    key = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
    assert (plain[key], sw[key]) == (512, 64)
    wd = warp_detail(load("ldmatrix-x4-tile-sw128"), 0, 0, 1)
    # warp 1, matrix 0: rows 16-23, chunk 0 lands on chunk r % 8: eight different bank quads
    assert sorted({ln.banks[0] for ln in wd.lanes[:8]}) == [0, 4, 8, 12, 16, 20, 24, 28]


# ---------------------------------------------------------------------------- kernels


@needs_nvcc
def test_generated_kernels_emit_one_real_instruction_per_access():
    from test_gpu_codegen import _ptx_functions, nvcc

    items = random_scenarios(6, seed=9, kind="ldmatrix") + [(n, load(n)) for n in
                                                             ("ldmatrix-x4-tile", "stmatrix-accumulator")]
    funcs = _ptx_functions(nvcc("\n".join(generate(sc, name=f"k{i}").source for i, (_, sc) in enumerate(items)),
                                "-ptx"))
    for i, (name, sc) in enumerate(items):
        ptx = funcs[f"k{i}"]
        found = re.findall(r"\b((?:ld|st)matrix\.sync\.aligned\.m8n8\.x[124](?:\.trans)?\.shared\.b16)", ptx)
        # each access's own instruction (ptxas may unroll a loop into several copies)
        assert set(found) == {a.matrix.ptx for a in sc.accesses} and len(found) >= len(sc.accesses), name
        assert not re.search(r"\b(ld|st)\.(volatile\.)?shared\.", ptx), name   # nothing else touches shared


# ---------------------------------------------------------------------------- the picture


def test_matrix_map_table_and_cli(tmp_path, capsys):
    from viz.kinds.ldmatrix import matrix_map

    m = matrix_map(warp_detail(load("ldmatrix-x4-tile"), 0, 0, 1))
    assert (m.wavefronts, m.conflicts) == (32, 28)
    r = next(r for r in m.rows if r.lane == 9)
    assert (r.matrix, r.row, r.banks, r.byte_addr) == (1, 1, (0, 3), 16 * 128 + 128 + 1024)
    assert sorted(r.wavefront for r in m.rows) == list(range(1, 33))     # 8-way: one row per wavefront
    assert m.holder[0][1] == (4, 4, 5, 5, 6, 6, 7, 7)
    code, out, _ = cli(capsys, "matrix", "ldmatrix-x4-tile", "-w", "1")
    assert code == 0 and "\n    1     9       3200   0-3 " in out
    code, _, err = cli(capsys, "matrix", "coalesced")
    assert code == 2 and "no access is ldmatrix or stmatrix" in err


def _paint(m, size):
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    from viz.render import theme
    from viz.render.matrix_view import paint_matrix_map

    img = QImage(size[0], size[1], QImage.Format.Format_RGB32)
    p = QPainter(img)
    try:
        return paint_matrix_map(p, QRectF(0, 0, *size), m, theme("light"))
    finally:
        p.end()


@pytest.mark.parametrize("name, warp", [("ldmatrix-x4-tile-sw128", 1), ("stmatrix-accumulator-pad", 3)])
def test_matrix_picture_writes_every_number_at_14px_or_more_without_overlap(qapp, name, warp):
    from viz.kinds.ldmatrix import matrix_map

    m = matrix_map(warp_detail(load(name), 0, 0, warp))
    g = _paint(m, (1920, 1080))
    assert g.cell_px >= 14 and not g.notes
    assert min(px for _, _, px in g.texts) >= 14
    numbers = [t for _, t, _ in g.texts if t.isdigit()]
    assert len(g.cells) == 4 * 64 and len(numbers) >= 4 * 64       # every holder lane is written
    boxes = [b for b, _, _ in g.texts]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.adjusted(1, 1, -1, -1).intersects(b.adjusted(1, 1, -1, -1)), "texts overlap"


def test_matrix_picture_in_a_flat_strip_keeps_the_proportional_minimum(qapp):
    from viz.kinds.ldmatrix import matrix_map

    g = _paint(matrix_map(warp_detail(load("ldmatrix-x4-tile"), 0)), (1920, 300))
    assert min(px for _, _, px in g.texts) >= int(14 * 300 / 1080)
    assert g.cell_px > 0 and len(g.cells) == 256


def test_json_and_the_notebook_api_name_the_matrix_op(qapp):
    from viz import api
    from viz.report import to_json

    doc = to_json(analyze(load("stmatrix-accumulator-pad")))
    a = doc["accesses"][0]
    assert (a["op"], a["matrix_op"], a["matrices"], a["trans"]) == ("store", "stmatrix.x4", 4, False)
    assert doc["metrics"]["smsp__inst_executed_op_shared_stsm.sum"] == 16
    pic = api.scenario("ldmatrix-x4-tile-sw128").matrix_map(warp=1)
    assert "matrix 3 (register 3 of every lane)" in repr(pic) and pic.svg().startswith("<?xml")
    with pytest.raises(Exception, match="not an ldmatrix / stmatrix instruction"):
        api.scenario("coalesced").matrix_map(instruction=1)


def test_the_probe_scripts_python_side_runs_dry(tmp_path):
    """tools/probes/ldmatrix_wavefronts.py (the H100 probe's cases, metric choice and CSV parsing)
    on a made-up ncu query and CSV: every row address of every case is 16-byte aligned."""
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, str(root / "tools/probes/ldmatrix_wavefronts.py"), "--dry", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "dry: 365 cases" in proc.stdout and "collect ok" in proc.stdout
    offs = __import__("json").loads((tmp_path / "cases.json").read_text())
    assert all(o % 16 == 0 for c in offs for w in c["offsets"] for o in w)


def test_a_results_file_keeps_the_ldsm_and_stsm_counters():
    """warpviz bench writes the model and the counters of every scenario: a file with
    ldmatrix / stmatrix scenarios (their own instruction counters) must load again."""
    from viz.gpu import results

    doc = results.new_document({"name": "NVIDIA H100"}, "test", "2026-11-23", "0")
    m = analyze(load("stmatrix-accumulator")).metrics
    hw = dict(m, **{"smsp__inst_executed_op_shared_stsm.sum": 15})
    doc["scenarios"]["stmatrix-accumulator"] = {"model": m, "counters": hw}
    back = results.loads(results.dumps(doc))
    assert results.mismatches(back["scenarios"]["stmatrix-accumulator"]) == [
        {"metric": "smsp__inst_executed_op_shared_stsm.sum", "model": 16, "hardware": 15}]
    doc["scenarios"]["x"] = {"model": {"smsp__inst_executed_op_nonsense.sum": 1}}
    with pytest.raises(results.ResultsError, match="unknown metric"):
        results.dumps(doc)


def test_validate_takes_random_ldmatrix_scenarios_and_says_why_it_cannot_run(capsys):
    import importlib.util

    if importlib.util.find_spec("pycuda") is not None:
        pytest.skip("PyCUDA is installed here: validate would run")
    code, _, err = cli(capsys, "validate", "--random", "2", "--kind", "ldmatrix")
    assert code == 2 and "cannot validate on this machine" in err
    code, _, err = cli(capsys, "validate", "--random", "2", "--kind", "tma")
    assert code == 2 and "invalid choice: 'tma'" in err
