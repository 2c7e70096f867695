"""Random scenarios of the format 3 kinds (``warpviz validate --random N --kinds ...``).

Each kind's generator is its ``Kind.random_text`` (``viz.kinds.random_text`` for cp.async,
atomic and tma.load): seeded like ``viz.gpu.randomgen`` (whose random index expressions they
share). Every scenario the model accepts can run on the GPU.
"""

from __future__ import annotations

import random

from ..engine import analyze
from ..kinds import kinds as _kinds
from ..kinds.random_text import atomic_text, cp_async_text, tma_text  # noqa: F401 - the kinds' own, re-exported
from ..scenario import Scenario, ScenarioError, loads


def makers() -> dict:
    """Every registered kind that makes random scenarios (its ``Kind.random_text``), in the
    registry's order."""
    return {k.op: k.random_text for k in _kinds() if k.random_text is not None}


MAKERS = makers()
KINDS = tuple(MAKERS)       # the kinds `validate --kinds` offers


def scenarios(count: int, seed: int = 0, kinds: tuple[str, ...] = KINDS) -> list[tuple[str, Scenario]]:
    """``count`` random scenarios of ``kinds`` (in turn) that the model accepts, named
    random-KIND-SEED-K."""
    made = makers()
    for k in kinds:
        if k not in made:
            raise ValueError(f"unknown kind {k!r}: the kinds are {', '.join(made)}")
    r = random.Random(seed)
    out: list[tuple[str, Scenario]] = []
    tries = 0
    while len(out) < count and tries < count * 60:
        kind = kinds[len(out) % len(kinds)]
        tries += 1
        text = made[kind](r)
        if not text:
            continue
        name = f"random-{kind.replace('.', '')}-{seed}-{len(out)}"
        try:
            sc = loads(text, source=name, name=name)
            analyze(sc)
        except ScenarioError:
            continue
        out.append((name, sc))
    return out


__all__ = ["scenarios", "KINDS", "cp_async_text", "atomic_text", "tma_text"]
