"""The processes Nsight Compute profiles (viz.gpu.ncu_driver, viz.gpu.trace_ncu_driver) run
every launch of their spec through one loop: a launch that faults is reported on stderr by
its name and the others still run; the session is closed whatever happens."""

from __future__ import annotations

import pytest

from viz.gpu.ncu_driver import run_each


class Fault(Exception):
    pass


class FakeSession:
    closed = 0

    def close(self):
        self.closed += 1


def test_a_faulting_launch_is_reported_and_the_others_still_run(capsys):
    s, ran = FakeSession(), []

    def run(d):
        ran.append(d["name"])
        if d["name"] == "b":
            raise Fault("illegal address")

    assert run_each(s, [{"name": "a"}, {"name": "b"}, {"name": "c"}], run, Fault, "prog") == 1
    assert ran == ["a", "b", "c"] and s.closed == 1
    assert capsys.readouterr().err == "prog: b: illegal address\n"
    assert run_each(s, [{"name": "a"}], lambda d: None, Fault, "prog") == 0 and s.closed == 2


def test_another_error_ends_the_run_and_still_closes_the_session():
    s = FakeSession()
    with pytest.raises(KeyError):
        run_each(s, [{"name": "a"}], lambda d: d["missing"], Fault, "prog")
    assert s.closed == 1
