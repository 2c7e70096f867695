"""Numbers and paths on the command line: every numeric argument of every subcommand has a
documented range checked before anything is allocated or looped over (viz.argcheck). A
5,000-digit number (past Python's 4,300-digit int() limit), ``--scale 1e9``, an ``--out``
that is a folder or has a 300-character name: exit 2, one line naming the argument and its
range, never a traceback. Each case runs as the user runs it, in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from viz.argcheck import check_out_file, check_out_path, to_float, to_int

ROOT = Path(__file__).resolve().parents[1]
BIG = "9" * 5000
LONG = "x" * 300
LAUNCH = str(ROOT / "kernels" / "copy_2d.launch.toml")


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "viz.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


# (arguments, what the one-line message must say); {tmp} is the test's folder
CASES = {
    "matrix --block": (["matrix", "ldmatrix-x4-tile", "--block", BIG], "--block 9999"),
    "matrix -i": (["matrix", "ldmatrix-x4-tile", "-i", BIG], "use 1..10,000,000"),
    "matrix --warp": (["matrix", "ldmatrix-x4-tile", "--warp", "-" + BIG], "use 0..31"),
    "export --block": (["export", "transpose-tile", "--out", "{tmp}/a.png", "--block", BIG], "--block 9999"),
    "export -i": (["export", "transpose-tile", "--out", "{tmp}/a.png", "-i", "1-" + BIG], "use 1..16"),
    "export --warp": (["export", "transpose-tile", "--out", "{tmp}/a.png", "--warp", BIG], "--warp 9999"),
    "export --frames": (["export", "transpose-tile", "--out", "{tmp}/a.png", "--frames", BIG], "--frames 9999"),
    "export --size": (["export", "transpose-tile", "--out", "{tmp}/a.png", "--size", f"{BIG}x100"],
                      "width 64..7680"),
    "export --scale": (["export", "transpose-tile", "--out", "{tmp}/a.png", "--scale", "1e9"],
                       "--scale 1e9: out of range; use 0.25..8"),
    "export --fps": (["export", "transpose-tile", "--out", "{tmp}/a.gif", "--fps", BIG], "use 1..240"),
    "export --hold": (["export", "transpose-tile", "--out", "{tmp}/a.gif", "--hold", "1e308"], "use 0.001..600"),
    "export long --out": (["export", "transpose-tile", "--out", "{tmp}/" + LONG + ".png"], "over the 255"),
    "layout --size": (["layout", "(8,64):(64,1)", "--out", "{tmp}/b.png", "--size", f"10x{BIG}"], "height 64..4320"),
    "layout --shape": (["layout", "SwizzledSharedLayout(8, 1, 8, [1, 0])", "--shape", f"{BIG},8"],
                       "--shape 9999"),
    "layout long --out": (["layout", "(8,64):(64,1)", "--out", "{tmp}/" + LONG + ".svg"], "over the 255"),
    "validate --random": (["validate", "transpose-tile", "--random", BIG], "use 0..10000"),
    "validate --seed": (["validate", "transpose-tile", "--random", "1", "--seed", "-1"], "--seed -1"),
    "calibrate --runs": (["calibrate", "--runs", BIG], "use 1..100"),
    "calibrate --out folder": (["calibrate", "--out", "{tmp}"], "is a folder"),
    "trace --blocks": (["trace", LAUNCH, "--blocks", BIG], "use 0..31"),
    "trace --blocks range": (["trace", LAUNCH, "--blocks", "0-" + BIG], "use 0..31"),
    "trace long --out": (["trace", LAUNCH, "--out", "{tmp}/" + LONG + ".wvtrace"], "over the 255"),
    "bench --out folder": (["bench", "transpose-tile", "--out", "{tmp}"], "is a folder"),
    "bench --traces --out folder": (["bench", "--traces", LAUNCH, "--dry-run", "--out", "{tmp}"], "is a folder"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_number_or_out_exits_2_with_one_line(tmp_path, name):
    args, says = CASES[name]
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and says in proc.stderr, proc.stderr[-2000:]
    assert len(proc.stderr) < 2000            # the 5,000 digits are cut, not echoed
    assert sorted(p.name for p in tmp_path.iterdir()) == []      # nothing written


def test_to_int_refuses_long_digit_strings_before_int():
    assert to_int("  0042 ", "--n", 0, 100) == 42
    with pytest.raises(ValueError, match=r"--block 9{24}…\(5,000 digits\): out of range; use 0\.\.1023$"):
        to_int(BIG, "--block", 0, 1023)
    with pytest.raises(ValueError, match="not a whole number"):
        to_int("1e3", "--n", 0, 10)
    with pytest.raises(ValueError, match="not a whole number"):
        to_int("١٢", "--n", 0, 100)           # Arabic-Indic digits: int() takes them, we do not
    with pytest.raises(ValueError, match="out of range; use 0..10"):
        to_int("11", "--n", 0, 10)


def test_to_float_refuses_inf_nan_and_huge_numbers():
    assert to_float("1.5", "--scale", 0.25, 8) == 1.5
    for bad in ("nan", "inf", "1e9", BIG, 10**5000, 1e308):
        with pytest.raises(ValueError, match="--scale .*out of range; use 0.25..8"):
            to_float(bad, "--scale", 0.25, 8)


def test_out_paths_the_file_system_cannot_hold(tmp_path):
    check_out_path(tmp_path / ("é" * 125 + ".png"))       # 'é' is 2 bytes in UTF-8: 254 bytes, taken
    with pytest.raises(ValueError, match="256 bytes long"):
        check_out_path(tmp_path / ("é" * 126 + ".png"))

    with pytest.raises(ValueError, match="over the 4,096"):
        check_out_path("/".join(["d" * 200] * 21))
    with pytest.raises(ValueError, match="NUL"):
        check_out_path("a\0b.png")
    with pytest.raises(ValueError, match="is a folder"):
        check_out_file(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        check_out_file(tmp_path / "no" / "r.json")
    check_out_file(tmp_path / "r.json")
