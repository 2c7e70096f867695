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
    proc = subprocess.run([sys.executable, "-m", "viz.cli", "analyze", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "bad.toml, line 1" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "viz.cli", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("warpviz ")


def test_unknown_builtin_suggests_a_name(capsys):
    code, _, err = run(capsys, "analyze", "transpose-tile-paf")
    assert code == 2 and "Did you mean transpose-tile-pad" in err


def test_bad_set(capsys):
    code, _, err = run(capsys, "analyze", "transpose-tile", "--set", "NOPE=1")
    assert code == 2 and "'NOPE' is not a param" in err
    code, _, err = run(capsys, "analyze", "transpose-tile", "--set", "NOPE")
    assert code == 2 and "NAME=VALUE" in err
