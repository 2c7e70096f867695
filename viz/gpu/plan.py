"""How big a timed run is, and what its timings say (pure: no GPU, no PyCUDA).

A scenario is written at a size that is easy to look at (a 256x256 transpose, 64 KiB of
copies); timed at that size the GPU would be mostly idle and the L2 cache would hold
everything. So a timed run is scaled up:

1. The scenario's ``[timing]`` table, if any, overrides params and the launch grid
   (``params = { W = 8192 }``, ``grid = ["W / TILE", "W / TILE"]``), and may fix the
   number of ``replicas``. This is the scenario's own statement of how it scales.
2. Replicas (``viz.gpu.codegen``) then repeat the whole launch on further copies of the
   global arrays, each 256-byte aligned, until one launch's global footprint reaches
   ``TARGET_BYTES`` and there are enough blocks to fill every SM many times over.
3. Several such buffer sets are rotated between timed launches when one launch's data
   would fit in four L2 caches, so no launch finds the previous launch's data in L2.

The scale (params, grid, replicas, sets, bytes) is recorded with every result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import WarpvizError
from ..expr import ExprError, names, parse
from ..scenario import Launch, Scenario, ScenarioError, loads, with_params
from ..gpus import reference

_REF = reference()

TARGET_BYTES = 512 << 20      # global footprint of one timed launch (about 10 L2 caches of an H100)
MIN_BLOCKS_PER_SM = 256       # enough blocks that launch and tail effects fade
MAX_REPLICAS = 1 << 20
MAX_GRID_X = 2**31 - 1
MAX_SETS = 8
TIMING_KEYS = {"params", "grid", "replicas", "note"}


class TimingError(WarpvizError, ValueError):
    """A scenario's [timing] table cannot be used; the message names the key and the fix."""


@dataclass(frozen=True)
class DeviceLimits:
    sm_count: int = _REF.sm_count        # the reference GPU's (viz.gpus): 132 SMs, 50 MiB of L2
    l2_bytes: int = _REF.l2_bytes
    free_bytes: int = 64 << 30


@dataclass(frozen=True)
class Scale:
    """One timed launch: the scaled scenario (R = 1 unit) and how it is repeated."""

    scenario: Scenario
    params: dict = field(default_factory=dict)   # overrides from [timing]
    grid: tuple[int, int, int] | None = None    # grid from [timing]
    replicas: int = 1
    buffer_sets: int = 1
    unit_bytes: int = 0                          # one replica's global footprint (aligned)

    @property
    def launch_bytes(self) -> int:
        return self.unit_bytes * self.replicas

    def as_dict(self) -> dict:
        return {"params": dict(self.params), "grid": list(self.grid) if self.grid else None,
                "replicas": self.replicas, "buffer_sets": self.buffer_sets,
                "launch_global_bytes": self.launch_bytes,
                "launch": {"block": list(self.scenario.launch.block), "grid": list(self.scenario.launch.grid)}}


def const_value(text, scope: dict[str, int], where: str) -> int:
    from ..lanes import Evaluator, Lanes, Space

    if isinstance(text, int) and not isinstance(text, bool):
        return text
    if not isinstance(text, str):
        raise TimingError(f"[timing] {where} must be an integer or an expression string, not {text!r}")
    try:
        tree = parse(text)
    except ExprError as err:
        raise TimingError(f"[timing] {where}: {err.describe()}") from None
    unknown = names(tree) - set(scope)
    if unknown:
        raise TimingError(f"[timing] {where}: unknown name {sorted(unknown)[0]!r}; only params may be used")
    value, faults = Evaluator(Space({k: Lanes.const(v) for k, v in scope.items()}, (1, 1))).evaluate(tree)
    if faults:
        raise TimingError(f"[timing] {where}: {faults[0].problem}")
    return int(value.scalar())


def scaled_scenario(sc: Scenario) -> tuple[Scenario, dict, tuple[int, int, int] | None]:
    """Apply the scenario's [timing] params and grid; the result is the unit that replicas repeat."""
    t = dict(sc.timing or {})
    unknown = set(t) - TIMING_KEYS
    if unknown:
        raise TimingError(f"[timing] has unknown key {sorted(unknown)[0]!r}; keys: {', '.join(sorted(TIMING_KEYS))}")
    params = t.get("params") or {}
    if not isinstance(params, dict):
        raise TimingError("[timing] params must be a table, e.g. params = { W = 8192 }")
    out = sc
    if params:
        try:
            # Re-validating from the text drops earlier overrides (a sweep's PAD = 3):
            # keep every param that differs from the file's own value.
            defaults = loads(sc.text, sc.source, sc.name).params if sc.text else {}
            keep = {k: v for k, v in sc.params.items() if defaults.get(k) != v}
            out = with_params(sc, {**keep, **params})
        except ScenarioError as err:
            raise TimingError(f"[timing] params: {err.problem}") from None
    grid = None
    if "grid" in t:
        raw = t["grid"]
        raw = raw if isinstance(raw, list) else [raw]
        if not 1 <= len(raw) <= 3:
            raise TimingError("[timing] grid must be 1 to 3 numbers or expressions")
        dims = [const_value(x, dict(out.params), f"grid[{k}]") for k, x in enumerate(raw)]
        dims += [1] * (3 - len(dims))
        if any(d < 1 for d in dims) or dims[1] > 65535 or dims[2] > 65535:
            raise TimingError(f"[timing] grid {dims} is outside the GPU's limits")
        grid = tuple(dims)
        out = replace(out, launch=Launch(out.launch.block, grid))
    return out, dict(params), grid


def global_unit_bytes(sc: Scenario) -> int:
    from .codegen import REPLICA_ALIGN

    fp = max((a.start + a.footprint for a in sc.arrays if a.space == "global"), default=0)
    return -(-fp // REPLICA_ALIGN) * REPLICA_ALIGN


def plan_scale(sc: Scenario, limits: DeviceLimits = DeviceLimits(), target_bytes: int = TARGET_BYTES,
               replicas: int | None = None) -> Scale:
    """The timed launch for a scenario on a device (see the module's docstring)."""
    unit, params, grid = scaled_scenario(sc)
    unit_bytes = global_unit_bytes(unit)
    fixed = replicas if replicas is not None else (sc.timing or {}).get("replicas")
    blocks = unit.launch.blocks
    if fixed is not None:
        if not isinstance(fixed, int) or isinstance(fixed, bool) or fixed < 1:
            raise TimingError("[timing] replicas must be a positive integer")
        r = fixed
    else:
        r_mem = math.ceil(target_bytes / unit_bytes) if unit_bytes else 1
        r_blocks = math.ceil(limits.sm_count * MIN_BLOCKS_PER_SM / blocks)
        r = max(1, r_mem, r_blocks)
    budget = max(unit_bytes, limits.free_bytes // 3)
    if unit_bytes:
        r = min(r, max(1, budget // unit_bytes))
    r = min(r, MAX_REPLICAS, max(1, MAX_GRID_X // unit.launch.grid[0]))
    launch_bytes = unit_bytes * r
    return Scale(unit, params, grid, r, buffer_sets(launch_bytes, limits, budget), unit_bytes)


def buffer_sets(launch_bytes: int, limits: DeviceLimits = DeviceLimits(), budget: int | None = None) -> int:
    """Buffer sets rotated between timed launches (step 3 of the module's docstring): enough
    that four L2 caches lie between two launches on the same set, at most ``MAX_SETS``, within
    ``budget`` bytes (a third of the free memory)."""
    if budget is None:
        budget = max(launch_bytes, limits.free_bytes // 3)
    if launch_bytes and launch_bytes < 4 * limits.l2_bytes:
        return min(MAX_SETS, math.ceil(4 * limits.l2_bytes / launch_bytes), max(1, budget // launch_bytes))
    return 1


def l2_resident(launch_bytes: int, buffer_sets: int, l2_bytes: int) -> bool:
    """Whether a timed loop's data stays in L2 from launch to launch: all its buffer sets
    together fit in half of L2 (the timed loop rotates ``buffer_sets`` sets of
    ``launch_bytes``; too few to push each other out)."""
    return 0 < launch_bytes * max(1, buffer_sets) <= l2_bytes // 2


# ---------------------------------------------------------------------------- statistics


NOISY_SPREAD = 0.05


@dataclass(frozen=True)
class Timing:
    """Times of repeated launches, in milliseconds per launch.

    Each entry of ``times_ms`` is one sample: the mean of ``launches_per_sample`` launches
    run back to back (``runner.Session.batch_times``). ``attempts`` counts the runs it
    took (a noisy run is repeated with longer samples); ``starved`` says the GPU may have
    waited for the host inside a sample."""

    times_ms: tuple[float, ...]
    launches_per_sample: int = 1
    attempts: int = 1
    starved: bool = False

    @property
    def runs(self) -> int:
        return len(self.times_ms)

    @property
    def median_ms(self) -> float:
        return float(np.median(self.times_ms))

    def quantile(self, q: float) -> float:
        return float(np.quantile(self.times_ms, q))

    @property
    def spread(self) -> float:
        """(90th percentile - 10th percentile) / median: how repeatable the runs were."""
        m = self.median_ms
        return (self.quantile(0.9) - self.quantile(0.1)) / m if m > 0 else 0.0

    @property
    def noisy(self) -> bool:
        """The spread stayed at or above ``NOISY_SPREAD`` (5%): the median is less certain."""
        return self.spread >= NOISY_SPREAD

    def as_dict(self) -> dict:
        return {"median_ms": round(self.median_ms, 6), "p10_ms": round(self.quantile(0.1), 6),
                "p90_ms": round(self.quantile(0.9), 6), "min_ms": round(min(self.times_ms), 6),
                "max_ms": round(max(self.times_ms), 6), "runs": self.runs, "spread": round(self.spread, 5),
                "launches_per_sample": self.launches_per_sample, "attempts": self.attempts,
                "noisy": self.noisy, **({"starved": True} if self.starved else {})}


def gbps(nbytes: float, ms: float) -> float:
    """Gigabytes (10^9 bytes) per second."""
    return nbytes / (ms * 1e-3) / 1e9 if ms > 0 else 0.0


__all__ = ["Scale", "plan_scale", "buffer_sets", "scaled_scenario", "Timing", "DeviceLimits", "TimingError", "gbps",
           "global_unit_bytes", "TARGET_BYTES", "NOISY_SPREAD"]
