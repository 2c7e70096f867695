"""The user guide (docs/guide/) stays true: its scenarios load and give the numbers the text
claims, its commands parse with the real command line and name built-ins that exist, and
its links and pictures resolve. Nothing is run or rendered (seconds)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from viz.assets import named_launch, trace_names
from viz.cli import COMMANDS, _parser
from viz.engine import analyze
from viz.report import to_json
from viz.scenario import builtin_names, loads

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide"
PAGES = sorted(GUIDE.glob("*.md"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def blocks(lang: str) -> list[tuple[str, str]]:
    return [(page.name, m.group(2)) for page in PAGES for m in FENCE.finditer(page.read_text())
            if m.group(1) == lang]


def commands() -> list[tuple[str, str]]:
    """Every `warpviz ...` line of the guide's shell blocks, without its comment."""
    found = []
    for page, text in blocks("bash"):
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("warpviz "):
                found.append((page, re.sub(r"\s+>\s.*$", "", re.sub(r"\s+#.*$", "", line))))   # no redirection
    return found


def test_the_guide_has_its_chapters():
    names = {p.name for p in PAGES}
    assert {"README.md", "install.md", "tour.md", "lesson-plan.md", "writing-scenarios.md",
            "exporting.md", "gpu.md"} <= names


@pytest.mark.parametrize("page,text", [b for b in blocks("toml") if "[launch]" in b[1]],
                         ids=lambda v: v if v.endswith(".md") else "")
def test_guide_scenarios_load_and_analyse(page, text):
    doc = to_json(analyze(loads(text, source=page)))
    assert doc["accesses"]


def test_colsum_example_numbers():
    """writing-scenarios.md: 4 sectors per request by column, 32 by row, 8x the bytes."""
    colsum = next(t for _, t in blocks("toml") if "Column sums" in t)
    rowsum = colsum.replace('shape = ["R", "C"]', 'shape = ["C", "R"]').replace(
        "a[r][blockIdx.x * blockDim.x + threadIdx.x]", "a[blockIdx.x * blockDim.x + threadIdx.x][r]")
    by_col = to_json(analyze(loads(colsum)))["metrics"]
    by_row = to_json(analyze(loads(rowsum)))["metrics"]
    requests = by_col["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    assert by_col["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 4 * requests
    assert by_row["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 32 * requests


def test_swizzle_example_numbers():
    """writing-scenarios.md: the XOR tile's half-warp column read is 1 wavefront, 16 without."""
    text = next(t for _, t in blocks("toml") if "XOR-swizzled" in t)
    metric = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
    xor = to_json(analyze(loads(text)))
    plain = to_json(analyze(loads(text.replace('swizzle = "xor"', 'swizzle = "none"'))))
    warps = xor["accesses"][1]["warp_instructions"]
    assert xor["metrics"][metric] == warps and plain["metrics"][metric] == 16 * warps


@pytest.mark.parametrize("page,line", commands())
def test_guide_commands_parse_and_name_real_scenarios(page, line):
    argv = shlex.split(line)[1:]
    if not argv:
        return  # `warpviz`: the app
    traces = trace_names()                       # shipped traces are named (they work installed too)
    assert argv[0] in COMMANDS or argv[0].startswith("-") or argv[0].endswith((".toml", ".wvtrace")) \
        or argv[0] in builtin_names() or argv[0] in traces
    if argv[0] not in COMMANDS:
        return
    args = _parser().parse_args(argv)
    named = [getattr(args, "scenario", None), getattr(args, "compare", None),
             *(getattr(args, "scenarios", None) or [])]
    for name in filter(None, named):
        assert name.endswith((".toml", ".wvtrace")) or name in builtin_names() or name in traces, \
            f"{page}: no built-in or shipped trace {name!r}"
    launch = getattr(args, "launch", None)       # warpviz trace: a launch file, or a shipped one's name
    assert launch is None or launch.endswith(".toml") or named_launch(launch) is not None, f"{page}: {launch!r}"


def test_links_and_pictures_resolve():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name}: {target} does not exist"


def test_gpu_chapter_quotes_the_shipped_measurements():
    """gpu.md's H100 table: the same times, bandwidths and shares as assets/measurements/h100.json."""
    import json

    from viz import assets

    doc = json.loads((assets.measurements_dir() / "h100.json").read_text())
    text = (GUIDE / "gpu.md").read_text()
    assert f"({doc['ceiling']['memcpy_d2d']['gbps']:.0f} GB/s)" in text
    rows = re.findall(r"^\| `([\w-]+)`[^|]*\| ([\d.]+) ms \| (\d+) GB/s \| (\d+)% \|$", text, re.M)
    assert len(rows) >= 2
    for name, ms, gbps, share in rows:
        t = doc["scenarios"][name]["timing"]
        # the share is useful bandwidth over the cudaMemcpy ceiling (how close to a copy's speed)
        assert (ms, gbps, share) == (f"{t['median_ms']:.3f}", f"{t['useful_gbps']:.0f}",
                                     f"{100 * t['useful_gbps'] / doc['ceiling']['memcpy_d2d']['gbps']:.0f}"), name
    assert all(e.get("match") is True for e in doc["scenarios"].values()), "gpu.md says they all agree"
