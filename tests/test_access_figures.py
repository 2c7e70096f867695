"""The figures record (viz.access_figures.AccessFigures): its fields are the JSON keys the docs
give, the JSON of a scenario and of a trace is the records' to_dict() key for key and in
order, and a kind's own key is kept in its place."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from viz.access_figures import FIGURES, AccessFigures, given
from viz.engine import analyze
from viz.report import explain_access, to_json
from viz.scenario import load

ROOT = Path(__file__).resolve().parents[1]

# every kind of record a scenario makes: plain global and shared, a whole struct, ldmatrix,
# stmatrix, cp.async, atomics, tma.load (swizzled, out of bounds), tma.store
SCENARIOS = ("transpose-tile", "float3-whole", "ldmatrix-x4-tile", "stmatrix-accumulator", "cp-async-pipeline",
             "shared-histogram-few-bins", "tma-swizzle-128b", "tma-oob-edge", "tma-store-swizzle-128b")
# and a trace: generic atomics, cp.async .ca and .cg, ldmatrix, SASS-fused loads, TMA copies and
# control instructions, wgmma
TRACES = ("generic_atomic", "block_sum_cg", "ldmatrix_cpasync", "sgemm_float4", "tma_copy_triton",
          "triton_wgmma_matmul")


def _section(path: Path, heading: str) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n#", start + len(heading))
    return text[start:end if end >= 0 else len(text)]


def _table_keys(section: str, after: str) -> set[str]:
    """The backticked keys in the first column of the first table after ``after``."""
    rows = section[section.index(after):].split("\n\n| key |", 1)[1].split("\n\n", 1)[0].splitlines()
    keys: set[str] = set()
    for row in rows[2:]:                     # after the header's separator row
        first = row.split("|")[1]
        keys |= set(re.findall(r"`([a-z_]+)`", first))
    return keys


def test_the_record_names_exactly_the_keys_the_docs_give():
    scenario = _table_keys(_section(ROOT / "docs/scenario-format.md", "### The JSON document"), "`accesses` holds")
    trace = _table_keys(_section(ROOT / "docs/trace-format.md", "## What `analyze` prints for a trace"),
                        "An `accesses` entry of a trace")
    # instruction_numbers is added by viz.report.to_json beside the record (the app's numbering)
    # the kinds' own keys (wgmma, tma, tma_control) are documented there too: the record keeps them in
    # ``extra`` (AccessFigures.kind_figures), so a new kind's key needs no field here
    assert scenario | trace == set(FIGURES) | {"instruction_numbers"} | KIND_KEYS
    assert "instruction_numbers" not in FIGURES and "wavefronts" in scenario & trace


def test_every_field_is_typed_and_documented():
    src = (ROOT / "viz/access_figures.py").read_text(encoding="utf-8")
    for f in dataclasses.fields(AccessFigures):
        assert f.type and f.type != "Any", f.name
        # a docstring right under each field (the record documents itself)
        assert re.search(rf"\n    {f.name}: [^\n]+\n    \"\"\"", src), f.name


KIND_KEYS = {"wgmma", "tma", "tma_control"}     # keys the kinds' modules add (viz/kinds/wgmma.py, tma_copy.py)


def _check(rec: AccessFigures, entry: dict) -> None:
    assert set(rec.extra) <= KIND_KEYS, f"a key the record does not name: {sorted(rec.extra)}"
    for key in KIND_KEYS:
        assert rec.kind_figures(key) == entry.get(key), key
    assert rec.to_dict() == {k: v for k, v in entry.items() if k != "instruction_numbers"}
    assert [k for k in entry if k != "instruction_numbers"] == list(rec.json_keys)     # the same order
    for name in FIGURES:
        assert rec.has(name) == (name in entry) == (name in rec), name
        assert getattr(rec, name) == entry.get(name), name


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_scenarios_json_is_its_records_in_order(name):
    an = analyze(load(name))
    records = an.per_access()
    doc = to_json(an)
    assert len(records) == len(doc["accesses"]) == len(an.scenario.accesses)
    for rec, entry in zip(records, doc["accesses"]):
        assert isinstance(rec, AccessFigures)
        _check(rec, entry)
        assert list(entry)[-1] == "instruction_numbers"
        # the reasons read the record; an entry of the JSON gives the same rows
        assert explain_access(rec) == explain_access(entry) == explain_access(json.loads(json.dumps(entry)))


@pytest.mark.parametrize("name", TRACES)
def test_a_traces_json_is_its_records_in_order(name):
    from viz.trace.analysis import analyze_trace, explain_trace, to_json as trace_json
    from viz.trace.tracefile import load as read_trace

    an = analyze_trace(read_trace(ROOT / "assets/traces" / f"{name}.wvtrace"))
    records = an.per_access(True)
    doc = trace_json(an, True)
    assert records and len(records) == len(doc["accesses"])
    for rec, entry in zip(records, doc["accesses"]):
        _check(rec, entry)
        assert explain_trace(rec) == explain_trace(entry)
    json.dumps(doc)             # plain JSON all the way down


def test_the_trace_records_hold_every_optional_group():
    """Between them the traces above give every figure a trace has (so the check above saw them)."""
    from viz.trace.analysis import analyze_trace
    from viz.trace.tracefile import load as read_trace

    seen: set[str] = set()
    for name in TRACES:
        for rec in analyze_trace(read_trace(ROOT / "assets/traces" / f"{name}.wvtrace")).per_access(True):
            seen |= set(rec.json_keys)
    assert {"sass", "ptx_width", "atomic_rule", "ldgsts_side", "tma", "tma_control", "wgmma", "wavefronts",
            "sectors", "never_true_shared_loads"} <= seen


def test_a_kinds_own_key_stays_in_its_place_and_the_record_is_read_only():
    d = {"index": 3, "op": "load", "space": "global", "access_bytes": 4, "warp_instructions": 2,
         "active_lanes": 64, "toy_figure": [1, 2], "bytes_requested": 256, "requests": 2, "sectors": 16}
    rec = AccessFigures.from_dict(d)
    assert rec.to_dict() == d and list(rec.to_dict()) == list(d)
    assert json.dumps(rec.to_dict()) == json.dumps(d)
    assert rec.extra == {"toy_figure": [1, 2]} and rec["toy_figure"] == [1, 2] and rec.has("toy_figure")
    assert rec.sectors == 16 and rec.wavefronts is None and not rec.has("wavefronts") and "wavefronts" not in rec
    with pytest.raises(KeyError):
        rec["wavefronts"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.sectors = 3                                                     # type: ignore[misc]
    assert {**rec} == d and dict(rec) == d and rec == d and len(rec) == len(d)
    # replace keeps the order; a figure the record lacks goes last
    r2 = rec.replace(sectors=8, wavefronts=5)
    assert list(r2.to_dict()) == [*d, "wavefronts"] and r2.sectors == 8 and r2.wavefronts == 5 and rec.sectors == 16
    assert AccessFigures.of(rec) is rec and AccessFigures.of(d).to_dict() == d
    with pytest.raises(TypeError):                                         # the seven every access has
        AccessFigures.from_dict({"index": 0, "op": "load"})
    assert given(rec.sectors) == 16
    with pytest.raises(ValueError, match="no wavefronts"):
        given(rec.wavefronts, "wavefronts")


def test_the_record_and_the_reasons_are_clean_under_mypy(tmp_path):
    """The record under --strict; the reasons of scenarios and kinds read it typed (a figure
    that may be None is narrowed or given(): viz.access_figures.given)."""
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    for flags, files in ((["--strict"], ["viz/access_figures.py"]), ([], ["viz/report.py", "viz/kinds/report.py"])):
        proc = subprocess.run([sys.executable, "-m", "mypy", *flags, "--follow-imports=silent",
                               "--ignore-missing-imports", "--cache-dir", str(tmp_path / "cache"),
                               *(str(ROOT / f) for f in files)],
                              cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_api_gives_the_accesses_as_records_too():
    import warpviz

    a = warpviz.scenario("cp-async-pipeline").analyze()
    recs = a.access_figures
    assert recs and all(isinstance(r, AccessFigures) for r in recs)
    assert [{**r.to_dict(), "instruction_numbers": e["instruction_numbers"]} for r, e in zip(recs, a.accesses)] \
        == a.accesses
    t = warpviz.open_trace(ROOT / "assets/traces/block_sum_cg.wvtrace").analysis()
    assert [r.to_dict() for r in t.access_figures] == t.accesses and t.access_figures[0].number == 1


def test_warpvizs_own_readers_use_the_attributes(monkeypatch):
    """Nothing under viz/ reads a record as a mapping (rec["x"], rec.get("x"), "x" in rec, {**rec}):
    analyze's text and JSON, every reason, the Source panel's rows, for every record above."""
    from viz.report import to_table
    from viz.trace import analysis as T
    from viz.trace.tracefile import load as read_trace

    viz_dir = str(ROOT / "viz")
    caught: list[str] = []

    def _caller() -> str:
        f = sys._getframe(2)
        while f is not None and "_collections_abc" in f.f_code.co_filename:     # Mapping.get, .keys()
            f = f.f_back
        return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "?"

    def spy(method):
        def wrapped(self, key):
            where = _caller()
            if where.startswith(viz_dir):
                caught.append(f"{method.__name__}({key!r}) at {where}")
            return method(self, key)
        return wrapped

    monkeypatch.setattr(AccessFigures, "__getitem__", spy(AccessFigures.__getitem__))
    monkeypatch.setattr(AccessFigures, "__contains__", spy(AccessFigures.__contains__))
    for name in SCENARIOS:
        an = analyze(load(name))
        to_table(an), to_json(an)
        for rec in an.per_access():
            explain_access(rec)
    for name in TRACES:
        an = T.analyze_trace(read_trace(ROOT / "assets/traces" / f"{name}.wvtrace"))
        T.to_table(an, True), T.to_json(an, True), T.source_lines(an), an.per_line()
        for rec in an.per_access(True):
            T.explain_trace(rec), T.sass_text(rec)
    assert not caught, "\n".join(caught)
    # the spy sees such a read where a module of viz/ makes it
    rec = AccessFigures.from_dict({"index": 0, "op": "load", "space": "global", "access_bytes": 4,
                                   "warp_instructions": 1, "active_lanes": 1, "bytes_requested": 4})
    exec(compile("rec['op'], rec.get('space'), 'sectors' in rec", viz_dir + "/a_reader.py", "exec"), {"rec": rec})
    assert [c.split(" at ")[0] for c in caught] == ["__getitem__('op')", "__getitem__('space')",
                                                    "__contains__('sectors')"]
