"""Scenarios against hostile input: loading is linear, the analysis' work is bounded before it
starts, sizes and values stay within 64 bits, and expressions of any depth are safe to
evaluate, compare, print and copy."""

from __future__ import annotations

import copy
import cProfile
import os
import pickle
import pstats
import re
import stat

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from viz import counting as counting_mod
from viz import engine as engine_mod
from viz.cli import main
from viz.engine import analyze
from viz.expr import BINARY_OPS, ExprError, parse, to_text
from viz.lanes import Evaluator, Lanes, Space, evaluate_exact, lane_form
from viz.scenario import (MAX_ARRAY_BYTES, MAX_TEXT_BYTES, ScenarioError, builtin_names, load, loads, read_text,
                          resolve)
from viz.work import MAX_WORK, estimate

HEAD = '[launch]\nblock = [32]\ngrid = [1]\n[arrays.a]\ntype = "float"\nshape = [1024]\n'
ACCESS = '[[access]]\nop = "load"\nat = "a[threadIdx.x]"\n'


def accesses(n: int, tag: str = "") -> str:
    return f'title = "{n} accesses{tag}"\n' + HEAD + ACCESS * n


def param_chain(n: int, tag: str = "") -> str:
    """n params, each the one before plus one, used by n accesses with a loop."""
    params = "P0 = 1\n" + "".join(f'P{i} = "P{i - 1} + 1"\n' for i in range(1, n))
    body = "".join(f'[[access]]\nop = "load"\nat = "a[threadIdx.x + P{i} - P{i}]"\nfor = {{ j = "0:2" }}\n'
                   for i in range(n))
    return f'title = "{n} params{tag}"\n[params]\n' + params + HEAD + body


def calls(text: str) -> int:
    """Python function calls made by loads(text): deterministic, unlike a clock."""
    prof = cProfile.Profile()
    prof.enable()
    loads(text)
    prof.disable()
    return pstats.Stats(prof).total_calls


# ---------------------------------------------------------------------------- linear loading


@pytest.mark.parametrize("make", [accesses, param_chain])
def test_loading_is_linear_in_the_accesses_and_params(make):
    loads(make(3, " warm-up"))
    small, large = calls(make(300)), calls(make(600))
    # Twice the file is twice the work (the quadratic versions scanned every line per access
    # and copied every param per param: a ratio near 4 at these sizes).
    assert 1.8 < large / small < 2.3, (small, large)


def test_five_thousand_accesses_and_eight_thousand_params_load():
    sc = loads(accesses(5000))
    assert len(sc.accesses) == 5000 and sc.accesses[-1].line == 8 + 3 * 4999
    params = "[params]\n" + "".join(f"P{i} = {i}\n" for i in range(8000))
    sc = loads(params + HEAD + '[[access]]\nop = "load"\nat = "a[threadIdx.x + P7999 - 7999]"\n')
    assert sc.params["P7999"] == 7999 and len(sc.params) == 8000


def test_an_error_in_the_last_of_many_accesses_names_its_line():
    text = accesses(2000) + '[[access]]\nop = "load"\nat = "a[threadIdx.x + nope]"\n'
    with pytest.raises(ScenarioError) as err:
        loads(text)
    assert err.value.where.startswith("access 2000") and err.value.line == 10 + 3 * 2000     # its at


# ---------------------------------------------------------------------------- the work bound

HOSTILE = """[launch]
grid = [65536]
block = [1024]
[arrays.a]
type = "float"
shape = [1024]
[[access]]
op = "load"
at = "a[threadIdx.x]"
for = { j = "0:LOOP" }
"""


def test_a_small_file_that_asks_for_days_of_work_is_refused_before_it_starts():
    text = HOSTILE.replace("LOOP", "99999")
    assert len(text) < 1024
    with pytest.raises(ScenarioError) as err:
        loads(text, source="hostile.toml")
    msg = str(err.value)
    assert msg.startswith("hostile.toml, line 10: access 0 (load a[threadIdx.x]): the analysis would take about")
    assert "99,999 warp instructions per thread, 65,536 blocks of 1,024 threads" in msg
    assert "Even one block is too much: use fewer loop iterations (for)" in msg


def test_a_large_grid_is_refused_with_a_grid_that_fits():
    text = HOSTILE.replace("LOOP", "64")
    with pytest.raises(ScenarioError) as err:
        loads(text, source="big.toml")
    assert err.value.where == "launch" and err.value.line == 2          # the line of grid
    m = re.search(r"at most ([\d,]+), e\.g\. \[launch\] grid = \[(\d+)\]", str(err.value))
    assert m, str(err.value)
    fit = int(m.group(2))
    assert int(m.group(1).replace(",", "")) == fit and 1 <= fit < 65536
    # The grid it suggests is accepted, and one block more is not: the bound is exact.
    sc = loads(text.replace("[65536]", f"[{fit}]"))
    assert estimate(sc).total <= MAX_WORK
    with pytest.raises(ScenarioError, match="Analyse fewer blocks"):
        loads(text.replace("[65536]", f"[{fit + 1}]"))


def test_too_many_accesses_are_refused_before_they_are_built():
    with pytest.raises(ScenarioError, match=r"the scenario has 20,000 \[\[access\]\] tables, over the limit of 8,192"):
        loads(accesses(20000))


def test_every_builtin_is_far_within_the_bound():
    for name in builtin_names():
        sc = load(name)
        assert estimate(sc).total <= MAX_WORK // 20, name     # the GEMMs: about 2 %


def test_analyze_refuses_a_scenario_made_larger_after_loading():
    from dataclasses import replace

    from viz.scenario import Launch

    sc = loads(HOSTILE.replace("LOOP", "2").replace("[65536]", "[2]"))
    big = replace(sc, launch=Launch(sc.launch.block, (65536, 1, 1)), accesses=sc.accesses * 40)
    with pytest.raises(ScenarioError, match="the analysis would take about"):
        analyze(big)


@pytest.mark.parametrize("args", [["analyze"], ["analyze", "--json"], ["export", "-o", "OUT/x.mp4"],
                                  ["export", "-o", "OUT/x.png", "-i", "1"], ["matrix"], ["layout", "--array", "a"]])
def test_every_command_ends_at_once_on_the_hostile_file(tmp_path, capsys, args):
    path = tmp_path / "hostile.toml"
    path.write_text(HOSTILE.replace("LOOP", "99999"))
    cmd, *rest = args
    rest = [a.replace("OUT", str(tmp_path)) for a in rest]
    assert main([cmd, str(path), *rest]) == 2
    out, err = capsys.readouterr()
    assert "Traceback" not in err and err.count("\n") == 1 and "the analysis would take about" in err
    assert not list(tmp_path.glob("x.*"))


# The engine never counts more lanes, or evaluates more chunks, than the estimate allows.

def _random_scenarios():
    from viz.gpu.randomgen import scenario_text

    return st.randoms(use_true_random=False).map(scenario_text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_random_scenarios(), st.sampled_from([1, 3, 300]))
def test_the_estimate_bounds_what_the_engine_does(text, grid):
    try:
        sc = loads(re.sub(r"grid = \[[^\]]*\]", f"grid = [{grid}]", text, count=1))
    except ScenarioError:
        return
    counted, chunks = [], []
    # count_addresses is what viz.counting.count_chunk calls (the engine's own name for it was never called)
    real_count, real_eval = counting_mod.count_addresses, engine_mod.evaluate_instruction

    def count(space, size, addr, mask, nw, is_load):
        counted.append(addr.shape[0] * addr.shape[1])
        return real_count(space, size, addr, mask, nw, is_load)

    def evaluate(*a, **k):
        chunks.append(1)
        return real_eval(*a, **k)

    counting_mod.count_addresses, engine_mod.evaluate_instruction = count, evaluate
    try:
        analyze(sc)
    except ScenarioError:
        return
    finally:
        counting_mod.count_addresses, engine_mod.evaluate_instruction = real_count, real_eval
    work = estimate(sc)
    assert sum(counted) <= work.counted and len(chunks) <= work.chunks


# ---------------------------------------------------------------------------- sizes and values


def test_an_array_past_any_address_is_refused():
    with pytest.raises(ScenarioError, match=r"arrays\.a: a is .* more than the 4 PiB warpviz can address"):
        loads(HEAD.replace("shape = [1024]", "shape = [1099511627776, 1099511627776]") + ACCESS)
    # Two arrays that fill the bound exactly fit; one row more, and b is past it.
    assert MAX_ARRAY_BYTES == 2 * 16777216 * 8388608 * 16
    two = ('[launch]\nblock = [32]\ngrid = [1]\n[arrays.a]\ntype = "float4"\nshape = [16777216, 8388608]\n'
           '[arrays.b]\ntype = "float4"\nshape = [ROWS, 8388608]\n[[access]]\nop = "load"\nat = "b[0][lane]"\n')
    loads(two.replace("ROWS", "16777216"))
    with pytest.raises(ScenarioError, match=r"arrays\.b: the global arrays up to b take 4 PiB \(4,503,599,761,588,224 bytes\)"):
        loads(two.replace("ROWS", "16777217"))


def test_set_to_a_huge_value_is_a_message_not_an_overflow(capsys):
    assert main(["analyze", "transpose-tile", "--set", "W=99999999999"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "arrays.in: in is" in err and "4 PiB" in err


@pytest.mark.parametrize("value, fragment", [
    ('"(1 << 40) * (1 << 40)"', "does not fit in 64 bits"),
    ('"4611686018427387904 + 4611686018427387904"', "does not fit in 64 bits"),
    ('"-4611686018427387904 * 2 - 4611686018427387904 * 2"', "does not fit in 64 bits"),
    ('"1 << 63"', "does not fit in 64 bits"),
    ('"1 << 64"', "shift by a count outside 0..63"),
    ('"5 / (2 - 2)"', "division by zero"),
    ('"rev(1, 63)"', "rev(x, bits) needs bits between 0 and 62"),
])
def test_constants_are_exact_and_refused_when_they_leave_64_bits(value, fragment):
    with pytest.raises(ScenarioError, match=re.escape(fragment)):
        loads(f"[params]\nX = {value}\n" + HEAD + ACCESS)


def test_a_loop_bound_that_overflows_is_refused():
    with pytest.raises(ScenarioError, match="does not fit in 64 bits"):
        loads(HEAD + ACCESS + 'for = { j = "0:(1 << 62) * 4" }\n')


# ---------------------------------------------------------------------------- reading files


def test_only_regular_files_of_a_scenarios_size_are_read(tmp_path):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)                       # reading it would wait for a writer forever
    with pytest.raises(ScenarioError, match="is not a regular file"):
        load(fifo)
    with pytest.raises(ScenarioError, match="is not a regular file"):
        load(tmp_path)
    if os.path.exists("/dev/zero") and stat.S_ISCHR(os.stat("/dev/zero").st_mode):
        with pytest.raises(ScenarioError, match="is not a regular file"):
            read_text(resolve("/dev/zero"))
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:            # sparse: no disk used
        f.truncate(MAX_TEXT_BYTES + 1)
    with pytest.raises(ScenarioError, match="larger than the 4 MiB a scenario may be"):
        load(big)
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'title = "caf\xe9"\n')
    with pytest.raises(ScenarioError, match="cannot be read"):
        load(latin)
    with pytest.raises(ScenarioError, match="no such file"):
        load("x" * 5000 + ".toml")       # a name too long for the system
    with pytest.raises(ScenarioError, match="neither a file nor a built-in"):
        load("nul\x00name")


def test_deep_toml_and_long_text_are_refused():
    with pytest.raises(ScenarioError, match="nested too deeply"):
        loads("x = " + "[" * 5000 + "]" * 5000)
    with pytest.raises(ScenarioError, match="characters long"):
        loads("#" * (MAX_TEXT_BYTES + 1))
    with pytest.raises(ScenarioError, match="must be a string"):
        loads(b"title = 1")


def test_a_message_is_one_line_however_the_file_writes_its_values():
    with pytest.raises(ScenarioError) as err:
        loads(HEAD + '[[access]]\nop = "load"\nat = """a[threadIdx.x\n+ nope]"""\n')
    assert "\n" not in str(err.value) and "nope" in str(err.value)
    with pytest.raises(ScenarioError) as err:
        loads(HEAD + "[[access]]\nop = [" + ", ".join(["1"] * 5000) + ']\nat = "a[0]"\n')
    assert 500 < len(str(err.value)) <= 1000 and "op must be" in str(err.value)


# ---------------------------------------------------------------------------- deep expressions

PLACES = {
    "at": ('at = "a[threadIdx.x + ({e}) - ({v})]"', "access 0"),
    "when": ('when = "({e}) == ({v})"', "access 0"),
    "param": ('X = "{e}"', "params"),
    "loop": ('for = {{ j = "0:({e}) - ({v}) + 2" }}', "access 0"),
    "shape": ('shape = ["({e}) - ({v}) + 1024"]', "arrays.a"),
    "block": ('block = ["({e}) - ({v}) + 32"]', "launch"),
    "swizzle": ('swizzle = "expr:col ^ (({e}) - ({v}))"', "arrays.s"),
}


def _place(where: str, e: str, v: int) -> str:
    line = PLACES[where][0].format(e=e, v=v)
    return f"""{"[params]" + chr(10) + line if where == "param" else ""}
[launch]
{line if where == "block" else "block = [32]"}
grid = [2]
[arrays.a]
type = "float"
{line if where == "shape" else "shape = [1024]"}
[arrays.s]
space = "shared"
type = "float"
shape = [32, 32]
{line if where == "swizzle" else ""}
[[access]]
op = "load"
at = "{'a[threadIdx.x + (' + e + ') - (' + str(v) + ')]' if where == "at" else 'a[threadIdx.x]'}"
{line if where in ("when", "loop") else ""}
[[access]]
op = "store"
at = "s[lane][lane]"
"""


def chain(op: str, n: int) -> tuple[str, int]:
    """n terms joined by op (written without spaces, as a hostile file would), and its value."""
    first, then = ("3", "0") if op in ("<<", ">>") else ("3", "1")
    text = first + "".join(f"{op}{then}" for _ in range(n - 1))
    return text, evaluate_exact(parse(text), {})


@pytest.mark.parametrize("op", BINARY_OPS)
@pytest.mark.parametrize("where", list(PLACES))
def test_a_long_chain_of_any_operator_works_everywhere(op, where):
    text, value = chain(op, 495)          # 989 nodes, 494 levels deep: a RecursionError before
    sc = loads(_place(where, text, value))
    an = analyze(sc)
    assert an.metrics == analyze(loads(_place(where, "0", 0))).metrics
    if where == "param":
        assert sc.params["X"] == value


@pytest.mark.parametrize("text, value", [
    ("(" * 58 + "7" + ")" * 58, 7),
    ("-" * 58 + "7", 7),
    ("~" * 59 + "7", -8),
    ("!" * 58 + "7", 1),
    (" ".join(["1 ?"] * 31) + " 7" + " : 0" * 31, 7),
    ("(" * 31 + "1" + " ? 7 : 0)" * 31, 7),
    ("min(" * 32 + "7" + ", 9)" * 32, 7),
])
@pytest.mark.parametrize("where", list(PLACES))
def test_deep_but_allowed_nesting_works_everywhere(text, value, where):
    sc = loads(_place(where, text, value))
    assert analyze(sc).metrics == analyze(loads(_place(where, "0", 0))).metrics


@pytest.mark.parametrize("text", ["(" * 65 + "1" + ")" * 65, "-" * 65 + "1", "1 ? " * 70 + "1" + " : 1" * 70,
                                  "1" + "+1" * 600])
@pytest.mark.parametrize("where", list(PLACES))
def test_too_deep_or_too_long_is_a_scenario_error_everywhere(text, where):
    with pytest.raises(ScenarioError, match="nested more than|more than 1000 parts") as err:
        loads(_place(where, text, 0))
    assert err.value.where.startswith(PLACES[where][1])


def test_trees_of_a_thousand_nodes_compare_hash_print_and_copy():
    text = "+".join(["tid"] * 500)
    a, b = parse(text), parse(" " + text)
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != parse(text.replace("tid", "lane", 1))
    assert pickle.loads(pickle.dumps(a)) == a and copy.deepcopy(a) == a
    assert repr(a).startswith("Binary('(((") and repr(a).endswith("+ tid) + tid)')") and to_text(pickle.loads(pickle.dumps(a))) == to_text(a)
    assert pickle.loads(pickle.dumps(a)).left.pos == a.left.pos


# ---------------------------------------------------------------------------- the evaluators agree

NAMES = {"bx": Lanes(b=np.arange(3).reshape(-1, 1)), "tx": Lanes(t=np.arange(4).reshape(1, -1)),
         "p": Lanes.const(5), "q": Lanes.const(-3)}
FORMS = {"bx": "B", "tx": "T"}


def expressions(leaves):
    ops = st.sampled_from(BINARY_OPS)
    return st.recursive(
        st.one_of(st.integers(-70, 70).map(str), st.sampled_from(leaves)),
        lambda sub: st.one_of(
            st.tuples(sub, ops, sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(st.sampled_from("-~!"), sub).map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(sub, sub, sub).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
            st.tuples(st.sampled_from(["min", "max", "rev"]), sub, sub).map(lambda t: f"{t[0]}({t[1]}, {t[2]})")),
        max_leaves=12)


def _form(v: Lanes) -> str:
    if v.f is not None:
        return "F"
    if v.t is None:
        return "C" if v.b.ndim == 0 else "B"
    return "T" if v.b.ndim == 0 else "S"


@settings(max_examples=200, deadline=None)
@given(expressions(["bx", "tx", "p", "q"]))
def test_lane_form_is_the_form_the_evaluator_gives(text):
    value, _ = Evaluator(Space(NAMES, (3, 4))).evaluate(parse(text))
    assert lane_form(parse(text), FORMS) == _form(value)


@settings(max_examples=200, deadline=None)
@given(expressions(["p", "q"]))
def test_the_exact_constant_is_the_evaluators_value_or_a_clear_refusal(text):
    value, faults = Evaluator(Space(NAMES, (1, 1))).evaluate(parse(text))
    try:
        exact = evaluate_exact(parse(text), {"p": 5, "q": -3})
    except ExprError as err:
        assert faults or "does not fit in 64 bits" in err.problem, text
        if "does not fit" not in err.problem:
            assert err.problem == faults[0].problem
        return
    assert not faults and exact == value.scalar(), text


def test_the_documented_limits_are_the_programs():
    from pathlib import Path

    from viz.scenario import MAX_ACCESSES, MAX_ARRAY_BYTES, MAX_FIELDS, MAX_TEXT_BYTES
    from viz.work import CHUNK

    doc = (Path(__file__).resolve().parents[1] / "docs" / "scenario-format.md").read_text(encoding="utf-8")
    limits = doc[doc.index("### Limits"):doc.index("### The command line")]
    assert MAX_TEXT_BYTES == 4 * 2**20 and "at most 4 MiB of UTF-8" in limits
    assert MAX_ARRAY_BYTES == 2**52 and "4 PiB (2⁵² bytes) together" in limits
    assert MAX_WORK == 2 * 10**9 and "at most 2 × 10⁹ *lane operations*" in limits
    assert MAX_ACCESSES <= MAX_WORK // CHUNK and f"at most {MAX_ACCESSES:,} `[[access]]` tables" in limits
    assert f"at most {MAX_FIELDS:,} `fields`" in limits
    quoted = re.search(r"^    (warpviz: big\.toml.*?)\n\n", limits, re.M | re.S).group(1)
    with pytest.raises(ScenarioError) as err:
        loads(HOSTILE.replace("LOOP", "40"), source="big.toml")
    assert " ".join(quoted.split()) == "warpviz: " + str(err.value)
