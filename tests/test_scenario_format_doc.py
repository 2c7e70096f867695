"""docs/scenario-format.md stays true where it is cheap to check: its example file loads and
claims the right totals, its JSON example is what `warpviz analyze --json` prints, and the
worked numbers and quoted messages in its prose are the program's."""

from __future__ import annotations

import json
import re
from pathlib import Path

from viz.cli import _parser
from viz.engine import analyze
from viz.expr import parse
from viz.lanes import Evaluator, Space
from viz.report import to_json
from viz.scenario import ACCESS_KEYS, ARRAY_KEYS, TOP_KEYS, ScenarioError, load, loads
from viz.types import named_type, struct
from viz.warp import warp_detail

DOC = Path(__file__).resolve().parent.parent / "docs" / "scenario-format.md"
TEXT = DOC.read_text(encoding="utf-8")
FLAT = re.sub(r"\s+", " ", TEXT)


def block(lang: str, containing: str) -> str:
    return next(m.group(1) for m in re.finditer(rf"^```{lang}\n(.*?)^```", TEXT, re.M | re.S)
                if containing in m.group(1))


def message(text: str) -> str:
    try:
        analyze(loads(text, source="f.toml"))
    except ScenarioError as err:
        return str(err)
    raise AssertionError("no error")


def test_the_complete_file_loads_and_claims_its_totals():
    sc = loads(block("toml", "[launch]"), source="example.toml")
    metrics = analyze(sc).metrics
    assert sc.expected and all(metrics[k] == v for k, v in sc.expected.items())


def test_the_json_example_is_what_analyze_prints():
    shown = json.loads(block("json", '"metrics"'))
    doc = to_json(analyze(load(shown["name"])))
    assert shown["metrics"] == doc["metrics"]
    assert (shown["scenario"], shown["launch"], shown["params"]) == (doc["scenario"], doc["launch"], doc["params"])
    keys = set(doc["accesses"][0]) | {k for d in doc["accesses"] for k in d}
    documented = set(re.findall(r"`(\w+)`", "".join(re.findall(r"^\| (?:shared: |global: )?(`[^|]*)\|", TEXT, re.M))))
    assert keys <= documented, f"undocumented per-access keys: {sorted(keys - documented)}"


def test_every_key_the_loader_accepts_is_documented():
    for key in TOP_KEYS | ARRAY_KEYS | ACCESS_KEYS:
        assert f"`{key}`" in TEXT or f"`[{key}]`" in TEXT or f"[[{key}]]" in TEXT or f"[{key}." in TEXT, key


def test_the_layout_worked_example():
    m = re.search(r"Physical column 0 \^ \(5 % 32\) = (\d+), element offset 5 × 32 \+ \d+ = (\d+), byte (\d+), "
                  r"bank \(\d+ / 4\) % 32 = (\d+)", FLAT)
    sc = loads('[launch]\nblock = [32]\ngrid = [1]\n[arrays.tile]\nspace = "shared"\ntype = "float"\n'
               'shape = [32, 32]\nswizzle = "xor"\n[[access]]\nop = "load"\nat = "tile[threadIdx.x][0]"\n')
    lane = warp_detail(sc, 0).lanes[5]
    assert (int(m[1]), int(m[2]), int(m[3]), int(m[4])) == (lane.elem - 5 * 32, lane.elem, lane.byte_addr,
                                                             lane.banks[0])


def test_the_struct_layouts():
    m = re.search(r'`fields = \["d:double", "f:float"\]` puts `d` at byte (\d+) and `f` at byte (\d+) and is '
                  r'(\d+) bytes long', FLAT)
    t = struct([("d", named_type("double")), ("f", named_type("float"))])
    assert (int(m[1]), int(m[2]), int(m[3])) == (t.field("d").offset, t.field("f").offset, t.size)
    m = re.search(r'`\["c:char", "i:int"\]` puts `i` at byte (\d+) and is (\d+) bytes', FLAT)
    t = struct([("c", named_type("char")), ("i", named_type("int"))])
    assert (int(m[1]), int(m[2])) == (t.field("i").offset, t.size)


def test_the_expression_examples():
    def value(text: str) -> int:
        v, faults = Evaluator(Space({}, (1, 1))).evaluate(parse(text))
        assert not faults
        return v.scalar()

    for expr, shown in re.findall(r"`([^`]+)` = (−?\d+)", TEXT):
        assert value(expr) == int(shown.replace("−", "-")), expr


def test_the_quoted_messages_are_the_programs():
    head = '[launch]\nblock = [32, 2]\ngrid = [1]\n[arrays.tile]\nspace = "shared"\ntype = "float"\nshape = [32, 32]\n'
    cases = [
        head.replace("shape = [32, 32]\n", 'shape = [32, 32]\nswizzle = "expr:col % 4"\n')
        + '[[access]]\nop = "load"\nat = "tile[0][lane]"\n',
        head + '[[access]]\nop = "load"\nat = "tile[lane][threadIdx.y + 31 + j]"\nfor = { j = "0:2" }\n',
        head + '[[acess]]\nop = "load"\n',
    ]
    quoted = re.findall(r'\("([^"]*(?:"[^"]*"[^"]*)*?)"\)', FLAT)
    messages = [message(c) for c in cases]
    for q in ("swizzle 'expr:col % 4' is not a bijection", "column 32 of tile is out of bounds",
              "unknown key 'acess'. Did you mean 'access'?"):
        full = next(x for x in quoted if x.startswith(q))
        assert any(full in m for m in messages), full


def test_the_command_table_names_real_commands_and_options():
    sub = next(a for a in _parser()._actions if a.dest == "command").choices
    rows = re.findall(r"^\| `(warpviz [^`]*)` \|", TEXT, re.M)
    assert len(rows) >= 7
    for line in rows:
        words = line.split()
        if len(words) < 2 or words[1] not in sub:
            continue
        known = sub[words[1]]._option_string_actions
        for opt in re.findall(r"--[a-z][a-z-]*", line):
            assert opt in known, f"{line}: no option {opt}"
