"""docs/memory-model.md stays true: every worked example (a one-warp scenario in a ```toml
block) loads, and every lane line (byte, words, banks, sector, line, phase, wavefront), every
"Counted:" line and every "H100, ..." line that follows it equals what the engine computes
and what the shipped H100 measurements recorded. Nothing is run on a GPU (seconds)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from viz import assets
from viz.engine import analyze
from viz.scenario import loads
from viz.warp import warp_detail

DOC = Path(__file__).resolve().parent.parent / "docs" / "memory-model.md"
TEXT = DOC.read_text(encoding="utf-8")
FENCE = re.compile(r"^```toml\n(.*?)^```\n(.*?)(?=^```|\Z)", re.M | re.S)
NUMS = r"(\d+(?:(?:, | and )\d+)*)"


def examples() -> list[tuple[str, str, str]]:
    """(title, toml, the text after it up to the next code block)."""
    out = []
    for m in FENCE.finditer(TEXT):
        title = re.search(r'^title = "(.*)"', m.group(1), re.M).group(1)
        out.append((title, m.group(1), m.group(2)))
    return out


EXAMPLES = examples()


def numbers(text: str) -> list[int]:
    return [int(x) for x in re.split(r", | and ", text)]


def test_the_page_has_its_worked_examples():
    assert len(EXAMPLES) >= 20
    for title, _toml, after in EXAMPLES:
        assert re.search(r"^- lane \d+:", after, re.M), f"{title}: no lane worked through"
        assert re.search(r"^Counted: ", after, re.M), f"{title}: no Counted line"


@pytest.mark.parametrize("title,toml,after", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_worked_example_numbers_are_the_engines(title, toml, after):
    sc = loads(toml, source=title)
    assert sc.launch.threads == 32 and len(sc.accesses) == 1, "an example is one access of one warp"
    an = analyze(sc)
    d = an.per_access()[0]
    details = [warp_detail(sc, ins, 0, 0) for ins in sc.instructions()]
    first = details[0]
    lane_lines = re.findall(r"^- lane (\d+): (.*)$", after, re.M)
    for lane_text, facts in lane_lines:
        ln = first.lanes[int(lane_text)]
        assert ln.active, f"{title}: lane {lane_text} is inactive"
        seen = 0
        for pattern, actual in ((r"\bbyte (\d+)", [ln.byte_addr]), (r"\bwords? " + NUMS, list(ln.words)),
                                (r"\bbanks? " + NUMS, list(ln.banks)), (r"\bsector (\d+)", [ln.sector]),
                                (r"\bline (\d+)", [ln.line]), (r"\bphase (\d+)", [ln.phase + 1]),
                                (r"\bwavefront (\d+)", [ln.wavefront + 1])):
            if m := re.search(pattern, facts):
                assert numbers(m.group(1)) == actual, f"{title}, lane {lane_text}: {m.group(0)!r}, engine {actual}"
                seen += 1
        assert seen >= 2 and re.fullmatch(r"(?:(?:byte|words?|banks?|sector|line|phase|wavefront) "
                                          + NUMS + r"(?:, (?=[a-z])|$))+", facts), f"{title}: {facts!r}"
    counted = re.search(r"^Counted: (.*)\.$", after, re.M).group(1)
    figures = {"wavefront": d.wavefronts, "phase": d.phases, "bank conflict": d.bank_conflicts,
               "request": d.requests, "sector": d.sectors, "line": d.lines}
    items = re.findall(r"(\d+) (wavefront|phase|bank conflict|request|sector|line)s?\b", counted)
    assert len(items) == len(counted.split(", ")) >= 3, counted
    for n, what in items:
        assert int(n) == figures[what], f"{title}: {n} {what}s, engine {figures[what]}"
    # The single-warp view (the picture) agrees with the whole-launch count.
    if d.space == "shared":
        assert sum(x.wavefronts for x in details) == d.wavefronts


COUNTERS = json.loads((assets.measurements_dir() / "h100-counters-2026-11-23.json").read_text())["scenarios"]
SHIPPED = json.loads((assets.measurements_dir() / "h100.json").read_text())["scenarios"]
METRIC = {
    ("shared", "wavefront"): "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{}.sum",
    ("shared", "bank conflict"): "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{}.sum",
    ("shared", "instruction"): "smsp__inst_executed_op_shared_{}.sum",
    ("global", "request"): "l1tex__t_requests_pipe_lsu_mem_global_op_{}.sum",
    ("global", "sector"): "l1tex__t_sectors_pipe_lsu_mem_global_op_{}.sum",
}
H100 = re.compile(r"^H100, (probe|built-in) `([^`]+)`[^:]*: (.*)\.$", re.M)


def h100_lines() -> list[tuple[str, str, str]]:
    return [m.groups() for m in H100.finditer(TEXT)]


def test_the_page_quotes_the_h100():
    kinds = [k for k, _, _ in h100_lines()]
    assert kinds.count("probe") >= 8 and kinds.count("built-in") >= 10


@pytest.mark.parametrize("kind,name,claims", h100_lines(), ids=[n for _, n, _ in h100_lines()])
def test_h100_lines_are_the_shipped_measurements(kind, name, claims):
    """Each quoted counter is the recorded one: probes from the counters file that
    tests/test_h100_counters.py checks the model against, built-ins from h100.json."""
    hardware = COUNTERS[f"probe: {name}"]["hardware"] if kind == "probe" else SHIPPED[name]["counters"]
    items = re.findall(r"([\d,]+) (load|store) (wavefront|bank conflict|instruction|request|sector)s?\b", claims)
    assert len(items) == len(claims.split(", ")) >= 2, claims
    for n, op, what in items:
        space = "global" if what in ("request", "sector") else "shared"
        key = METRIC[(space, what)].format("ld" if op == "load" else "st")
        assert int(n.replace(",", "")) == hardware[key], f"{name}: {n} {op} {what}s, recorded {hardware[key]}"
