"""The ldmatrix / stmatrix rule against Nsight Compute on an H100 (no GPU needed here).

assets/measurements/h100-ldmatrix-2026-11-23.json holds the 365 cases of the probe
tools/probes/ldmatrix_wavefronts.sh (ldmatrix and stmatrix, .x1/.x2/.x4, with and without .trans,
one to eight warps, contiguous rows, strides 32-1024 B, every row on the same banks,
repeated rows, half-bank patterns, plain/padded/swizzled tiles, random rows, arbitrary
addresses in the lanes .x1/.x2 ignore) with the counters the H100 reported. Each case is
rebuilt as a scenario whose lanes give exactly the recorded row addresses and analysed by
the engine: every counter must match exactly. The memory model page's evidence table
quotes the same file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from viz import assets
from viz.engine import analyze
from viz.scenario import loads

DATA = json.loads((assets.measurements_dir() / "h100-ldmatrix-2026-11-23.json").read_text())
CASES = {c["name"]: c for c in DATA["cases"]}
DOC = (Path(__file__).resolve().parent.parent / "docs" / "memory-model.md").read_text(encoding="utf-8")


def offsets_expr(offsets: list[list[int]]) -> str:
    """An index expression giving lane l of warp w the int4 element offsets[w][l] / 16."""
    def one(offs):
        return " + ".join(f"(lane == {k}) * {o // 16}" for k, o in enumerate(offs) if o)or "0"
    if all(o == offsets[0] for o in offsets):
        return one(offsets[0])
    return " + ".join(f"(warp == {w}) * ({one(offs)})" for w, offs in enumerate(offsets))


def scenario_of(case: dict):
    op = f"{case['op']}.x{case['num']}" + (".trans" if case["trans"] else "")
    text = f"""format = 3
title = "{case['name']}"
[launch]
block = [{32 * len(case['offsets'])}]
grid = [1]
[arrays.s]
space = "shared"
type = "int4"
shape = [2048]
[[access]]
op = "{op}"
at = "s[{offsets_expr(case['offsets'])}]"
"""
    return loads(text, source=case["name"])


def hardware_as_model(case: dict) -> dict[str, int]:
    """The recorded counters under the model's names (an sm__ total equals the smsp__ one)."""
    hw = dict(case["hardware"])
    hw["smsp__inst_executed_op_ldsm.sum"] = hw.pop("sm__inst_executed_op_ldsm.sum")
    hw["smsp__inst_executed_op_shared_stsm.sum"] = hw.pop("sm__inst_executed_op_shared_stsm.sum")
    return hw


def test_the_recording_covers_the_probe():
    assert len(CASES) == 365
    ops = {(c["op"], c["num"], c["trans"]) for c in CASES.values()}
    assert len(ops) == 12                                   # every form of both instructions
    assert max(len(c["offsets"]) for c in CASES.values()) == 8


@pytest.mark.parametrize("name", sorted(CASES))
def test_model_equals_the_h100(name):
    case = CASES[name]
    sc = scenario_of(case)
    assert sc.accesses[0].matrix.num == case["num"]
    metrics = analyze(sc).metrics
    for key, value in hardware_as_model(case).items():
        assert metrics.get(key, 0) == value, key


ROW = re.compile(r"^\| `([^`]+)` \| [^|]+ \| (\d+) / (\d+) \| (\d+) / (\d+) \|$", re.M)


def test_the_evidence_table_quotes_the_recording_and_the_model():
    rows = ROW.findall(DOC)
    assert len(rows) >= 20
    for name, wf_model, wf_hw, cf_model, cf_hw in rows:
        case = CASES[name]
        ld = case["op"] == "ldmatrix"
        hw = case["hardware"]
        wf_key = f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{'ld' if ld else 'st'}.sum"
        cf_key = f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{'ld' if ld else 'st'}.sum"
        assert (int(wf_hw), int(cf_hw)) == (hw[wf_key], hw[cf_key]), name
        m = analyze(scenario_of(case)).metrics
        assert (int(wf_model), int(cf_model)) == (m[wf_key], m[cf_key]), name


VALIDATE = DATA["validate"]["scenarios"]


def test_the_validate_run_covers_the_builtins_and_60_random_scenarios():
    builtins = {n for n, e in VALIDATE.items() if e["toml"] is None}
    assert builtins == {"ldmatrix-x4-tile", "ldmatrix-x4-tile-sw128", "stmatrix-accumulator",
                        "stmatrix-accumulator-pad"}
    assert len(VALIDATE) - len(builtins) == 60


@pytest.mark.parametrize("name", sorted(VALIDATE))
def test_generated_kernels_counters_equal_the_model(name):
    """warpviz validate on the H100: the generated kernel's counters, every one, are the model's."""
    from viz.scenario import load

    e = VALIDATE[name]
    sc = load(name) if e["toml"] is None else loads(e["toml"], source=name)
    metrics = analyze(sc).metrics
    assert e["hardware"]
    for key, value in e["hardware"].items():
        assert metrics.get(key, 0) == value, key


NOTE = re.compile(r"(\d[\d,]*) (LDSM instructions|STSM instructions|shared (?:load|store) wavefronts|bank conflicts)")
NOTE_KEY = {"LDSM instructions": "smsp__inst_executed_op_ldsm.sum",
            "STSM instructions": "smsp__inst_executed_op_shared_stsm.sum",
            "shared load wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            "shared store wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"}


@pytest.mark.parametrize("name", ["ldmatrix-x4-tile", "ldmatrix-x4-tile-sw128", "stmatrix-accumulator",
                                  "stmatrix-accumulator-pad"])
def test_builtin_notes_quote_the_recorded_counters(name):
    from viz.scenario import load

    sc = load(name)
    measured = sc.notes.split("Measured on the H100")[1].split(", as the model says")[0]
    hw = VALIDATE[name]["hardware"]
    claims = NOTE.findall(measured)
    assert len(claims) >= 2, measured
    op = "ld" if sc.accesses[0].matrix.is_load else "st"
    for n, what in claims:
        key = NOTE_KEY.get(what, f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum")
        assert int(n.replace(",", "")) == hw.get(key, 0), (name, n, what)
