"""Scenarios that made the analysis slow before it began: a struct of thousands of fields
(a quadratic duplicate check: 5,000 fields took 20 s) and thousands of [[access]] tables
(13,000 were all built, 9 s, before the work bound refused them). Each limit is checked
before the work it bounds, and its message names it."""

from __future__ import annotations

import pytest

from viz.scenario import MAX_ACCESSES, MAX_FIELDS, ScenarioError, loads

HEAD = """title = "t"
[launch]
block = [32]
grid = [1]
[arrays.p]
space = "global"
{type}
shape = [64]
"""
ACCESS = '[[access]]\nop = "load"\nat = "p[lane]{field}"\n'


def scenario(fields: list[str] | None, accesses: int = 1, field: str = "") -> str:
    t = 'type = "float"' if fields is None else "fields = [" + ", ".join(f'"{f}"' for f in fields) + "]"
    return HEAD.format(type=t) + ACCESS.format(field=field) * accesses


def test_a_struct_of_the_most_fields():
    sc = loads(scenario([f"f{i}:float" for i in range(MAX_FIELDS)], field=".f1023"))
    assert sc.arrays[0].type.size == 4 * MAX_FIELDS and len(sc.arrays[0].type.fields) == MAX_FIELDS


def test_more_fields_refused_before_they_are_read():
    with pytest.raises(ScenarioError, match=f"the struct has 5,000 fields, over the limit of {MAX_FIELDS:,}"):
        loads(scenario([f"f{i}:float" for i in range(5000)]))


def test_a_field_twice_among_many():
    fields = [f"f{i}:float" for i in range(MAX_FIELDS - 1)] + ["f7:int"]
    with pytest.raises(ScenarioError, match="field 'f7' appears twice"):
        loads(scenario(fields))


def test_the_most_accesses_and_more():
    assert len(loads(scenario(None, MAX_ACCESSES)).accesses) == MAX_ACCESSES
    with pytest.raises(ScenarioError, match=f"13,000 \\[\\[access\\]\\] tables, over the limit of {MAX_ACCESSES:,}"):
        loads(scenario(None, 13_000))
