"""Every kind of bad input is refused: exit status 2, one paragraph naming the file, the
field or access and the fix, no traceback, and nothing executed."""

import pytest

from viz.cli import main

GOOD = """
title = "ok"
[launch]
block = [64]
grid = [2]
[params]
N = 128
[arrays.g]
space = "global"
type = "float"
shape = ["N"]
[arrays.t]
space = "shared"
type = "float"
shape = [32, 32]
[[access]]
op = "load"
at = "g[blockIdx.x * blockDim.x + threadIdx.x]"
"""


def refuse(tmp_path, capsys, text, *fragments, args=()):
    path = tmp_path / "case.toml"
    path.write_text(text)
    code = main(["analyze", str(path), *args])
    out, err = capsys.readouterr()
    assert code == 2, out
    assert "Traceback" not in err and out == ""
    assert str(path) in err, "the message names the file"
    assert err.count("\n") == 1, "one paragraph"
    for f in fragments:
        assert f in err, err
    return err


def test_good_file_is_accepted(tmp_path, capsys):
    path = tmp_path / "good.toml"
    path.write_text(GOOD)
    assert main(["analyze", str(path)]) == 0


def test_toml_syntax(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.replace("[launch]", "[launch"), "line 3", "TOML syntax")


def test_unknown_name_suggests_the_right_one(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.replace("threadIdx.x]", "threadIdx.x + Nn]"),
           "access 0", "unknown name 'Nn'", "Did you mean N?")


def test_unknown_key(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.replace('op = "load"', 'op = "load"\nwhen_ = "1"'), "unknown key 'when_'",
           "Did you mean 'when'?")


def test_bad_type(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.replace('type = "float"', 'type = "flaot"', 1), "arrays.g", "unknown type 'flaot'",
           "Did you mean 'float'?")
    refuse(tmp_path, capsys, GOOD.replace("block = [64]", 'block = [true]'), "launch.block")


def test_bad_op(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.replace('op = "load"', 'op = "read"'), "access 0", "op must be")


@pytest.mark.parametrize("launch, fragment", [
    ("block = [0]", "at least 1"),
    ("block = [2048]", "above the GPU's limit of 1024"),
    ("block = [32, 32, 2]", "more than the 1024 a block may have"),
    ("grid = [1000000, 1000]", "threads, more than"),
])
def test_zero_or_oversized_launch(tmp_path, capsys, launch, fragment):
    key = launch.split(" ")[0]
    text = GOOD.replace(f"{key} = [64]" if key == "block" else f"{key} = [2]", launch)
    refuse(tmp_path, capsys, text, "launch", fragment)


def test_shared_memory_over_the_limit(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.replace("shape = [32, 32]", "shape = [256, 256]"), "shared arrays need 262,144 bytes",
           "232,448")


def test_out_of_bounds_names_lane_and_index(tmp_path, capsys):
    err = refuse(tmp_path, capsys, GOOD.replace("threadIdx.x]", "threadIdx.x + 1]"), "access 0",
                 "index 128 of g is out of bounds (valid: 0..127)", "block (1,0,0) thread (63,0,0)", "lane 31")
    assert "when" in err  # the fix


def test_negative_index(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.replace("threadIdx.x]", "threadIdx.x - 3]"), "index -3 of g is negative",
           "block (0,0,0) thread (0,0,0)")


def test_division_by_zero_names_first_lane_and_block(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.replace("threadIdx.x]", "64 / (threadIdx.x - 5)]"), "division by zero",
           "block (0,0,0) thread (5,0,0)", "lane 5")


def test_division_by_zero_in_an_untaken_branch_is_fine(tmp_path, capsys):
    path = tmp_path / "ok.toml"
    path.write_text(GOOD.replace("threadIdx.x]", "(threadIdx.x != 5 ? 64 / (threadIdx.x - 5) : 0) & 63]"))
    assert main(["analyze", str(path)]) == 0


def test_misaligned_vector_access(tmp_path, capsys):
    text = GOOD.replace('type = "float"', 'type = "int2"\noffset = 4', 1)
    refuse(tmp_path, capsys, text, "misaligned 8-byte access", "not a multiple of 8")


def test_non_bijective_swizzle_names_colliding_columns(tmp_path, capsys):
    text = GOOD.replace("shape = [32, 32]", 'shape = [32, 32]\nswizzle = "expr:col / 2"')
    refuse(tmp_path, capsys, text, "arrays.t", "not a bijection", "row 0: columns 0 and 1 both land on 0")


def test_swizzle_needing_power_of_two(tmp_path, capsys):
    text = GOOD.replace("shape = [32, 32]", 'shape = [32, 24]\nswizzle = "xor"')
    refuse(tmp_path, capsys, text, "power-of-two")


def test_zero_loop_step(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.replace('at = "g', 'for = { j = "0:8:0" }\nat = "g'), "step 0")


def test_runaway_loop(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.replace('at = "g', 'for = { j = "0:100000000" }\nat = "g'), "too many")


@pytest.mark.parametrize("hostile", [
    "__import__('os').system('touch PWNED')",
    "g[0]; system(\\\"touch PWNED\\\"); //",
    "0]; asm(\\\"trap;\\\"); g[0",
    "exec('import os')",
    "open('PWNED', 'w')",
    "{{7*7}}",
])
def test_hostile_expressions_are_refused_and_not_executed(tmp_path, capsys, monkeypatch, hostile):
    monkeypatch.chdir(tmp_path)
    text = GOOD.replace('at = "g[blockIdx.x * blockDim.x + threadIdx.x]"', f'at = "g[{hostile}]"')
    refuse(tmp_path, capsys, text, "access 0")
    assert not (tmp_path / "PWNED").exists()


def test_absurd_nesting(tmp_path, capsys):
    deep = "(" * 2000 + "0" + ")" * 2000
    refuse(tmp_path, capsys, GOOD.replace("threadIdx.x]", f"threadIdx.x + {deep}]"), "characters long")
    deep = "(" * 80 + "0" + ")" * 80
    refuse(tmp_path, capsys, GOOD.replace("threadIdx.x]", f"threadIdx.x + {deep}]"), "nested more than 64")


def test_huge_shift(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.replace("threadIdx.x]", "threadIdx.x + (1 << 70)]"), "shift by a count outside 0..63")


def test_missing_pieces(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.split("[[access]]")[0], "at least one [[access]]")
    refuse(tmp_path, capsys, GOOD.replace("[launch]\nblock = [64]\ngrid = [2]\n", ""), "missing [launch]")
    refuse(tmp_path, capsys, GOOD.replace("[arrays.g]", "[arrays.h]"), "unknown array 'g'")


def test_wrong_dimensions_and_field(tmp_path, capsys):
    refuse(tmp_path, capsys, GOOD.replace("at = \"g[blockIdx.x * blockDim.x + threadIdx.x]\"", 'at = "t[lane]"'),
           "t has 2 dimension(s)")
    refuse(tmp_path, capsys, GOOD.replace("threadIdx.x]\"", "threadIdx.x].y\""), "no field or component 'y'")


def test_newer_format_is_not_misread(tmp_path, capsys):
    refuse(tmp_path, capsys, "format = 4\n" + GOOD, "format 4", "newer than this warpviz reads", "Update warpviz")


def test_unreadable_and_missing_files(tmp_path, capsys):
    code = main(["analyze", str(tmp_path / "nope.toml")])
    assert code == 2 and "no such file" in capsys.readouterr().err
    bad = tmp_path / "bin.toml"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    assert main(["analyze", str(bad)]) == 2
    assert "UTF-8" in capsys.readouterr().err
