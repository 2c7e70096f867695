"""The command line of the contract: list, analyze (table and JSON), --set, and bad input."""

import json
import subprocess
import sys

import pytest

from viz.cli import main
from viz.engine import METRIC_NAMES


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_prints_name_tab_title(capsys):
    code, out, _ = run(capsys, "list")
    lines = out.strip().splitlines()
    assert code == 0 and len(lines) >= 30
    assert all(len(ln.split("\t")) == 2 for ln in lines)
    assert any(ln.startswith("transpose-tile-pad\t") for ln in lines)
    code, out, _ = run(capsys, "list", "--tag", "swizzle")
    assert code == 0 and "transpose-tile-xor\t" in out and "coalesced\t" not in out


def test_list_tags_with_counts_and_an_unknown_tag_is_an_error(capsys):
    """`warpviz list --tag` (no value) and `--tags` print each tag and how many built-ins
    carry it (counted from the files); an unknown tag exits 2 naming the known ones."""
    import tomllib

    from viz import assets
    from viz.scenario import builtin_names

    want: dict[str, int] = {}
    for name in builtin_names():
        for t in tomllib.loads((assets.scenario_dir() / f"{name}.toml").read_text())["tags"]:
            want[t] = want.get(t, 0) + 1
    for args in (("list", "--tag"), ("list", "--tags")):
        code, out, _ = run(capsys, *args)
        got = dict(line.split("\t") for line in out.strip().splitlines())
        assert code == 0 and {k: int(v) for k, v in got.items()} == want
        assert list(got) == sorted(got)
    assert want["hopper"] == 10 and want["stmatrix"] == 2
    code, out, _ = run(capsys, "list", "--tag", "stmatrix")
    assert sorted(line.split("\t")[0] for line in out.strip().splitlines()) == [
        "stmatrix-accumulator", "stmatrix-accumulator-pad"]
    code, out, _ = run(capsys, "list", "--tag", "hopper")
    names = [line.split("\t")[0] for line in out.strip().splitlines()]
    assert code == 0 and len(names) == 10 and all(n.startswith(("tma-", "stmatrix-")) for n in names)
    code, out, err = run(capsys, "list", "--tag", "hoper")
    assert code == 2 and out == ""
    assert "'hoper'" in err and "hopper (10)" in err and "swizzle (" in err and "--tags" in err


def test_export_frames_past_the_end_says_how_many_there_are(capsys, tmp_path):
    code, _, err = run(capsys, "export", "transpose-tile", "-i", "9", "--frames", "99", "--out",
                       str(tmp_path / "x.png"))
    assert code == 2 and "selects no frame" in err and "have 35 frames" in err
    code, _, err = run(capsys, "export", "transpose-tile", "--frames", "99", "--out", str(tmp_path / "x.gif"))
    assert code == 2 and "have 4 to 35 frames" in err
    code, _, err = run(capsys, "export", "ldmatrix-x4-tile-sw128", "-i", "1", "--compare", "--frames", "36",
                       "--out", str(tmp_path / "x.png"))
    assert code == 2 and "have 35 frames" in err      # a comparison: the longer story's 35
    assert not list(tmp_path.iterdir())


def test_analyze_json_follows_the_contract(capsys):
    code, out, _ = run(capsys, "analyze", "transpose-tile", "--json")
    assert code == 0
    doc = json.loads(out)
    assert list(doc["metrics"]) == list(METRIC_NAMES)
    assert doc["scenario"] and doc["accesses"][0]["index"] == 0
    assert {"op", "array", "warp_instructions"} <= set(doc["accesses"][0])
    # The column read of the unpadded tile: 32 wavefronts per instruction.
    reads = [a for a in doc["accesses"] if a["space"] == "shared" and a["op"] == "load"]
    assert reads and reads[0]["wavefronts_per_instruction"] == 32


def test_set_overrides_a_param(capsys):
    def column_read(*extra):
        code, out, _ = run(capsys, "analyze", "transpose-tile", "--json", *extra)
        assert code == 0
        doc = json.loads(out)
        return doc, next(a for a in doc["accesses"] if a["space"] == "shared" and a["op"] == "load")

    doc, plain = column_read()
    assert doc["params"]["PAD"] == 0 and plain["wavefronts_per_instruction"] == 32
    doc, padded = column_read("--set", "PAD=1")
    assert doc["params"]["PAD"] == 1 and padded["wavefronts_per_instruction"] == 1 and padded["bank_conflicts"] == 0


def test_readable_table_explains_each_figure(capsys):
    code, out, _ = run(capsys, "analyze", "offset-by-one")
    assert code == 0
    assert "sectors" in out and "5.00 per request" in out
    assert "sector efficiency" in out and "80.0%" in out
    assert "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum" in out


def test_console_script_exit_status_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[launch\nblock = [32]\n")
    proc = subprocess.run([sys.executable, "-m", "viz.cli", "analyze", str(bad)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 2
    assert "bad.toml, line 1" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "viz.cli", "--version"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.startswith("warpviz ")


def test_unknown_builtin_suggests_a_name(capsys):
    code, _, err = run(capsys, "analyze", "transpose-tile-paf")
    assert code == 2 and "Did you mean transpose-tile-pad" in err


def test_bad_set(capsys):
    code, _, err = run(capsys, "analyze", "transpose-tile", "--set", "NOPE=1")
    assert code == 2 and "'NOPE' is not a param" in err
    code, _, err = run(capsys, "analyze", "transpose-tile", "--set", "NOPE")
    assert code == 2 and "NAME=VALUE" in err
