"""Per-device calibration figures measured by ``warpviz calibrate`` (no Qt, no PyCUDA).

A calibration file, ``assets/calibration/<slug>.json`` (``slug`` from the device name,
e.g. ``nvidia-h100-80gb-hbm3``), is versioned JSON::

    {"format": 1,
     "device": {"name": ..., "sm_count": ..., "clock_mhz": ..., "driver": ..., "cuda": ...},
     "measured": "YYYY-MM-DD", "label": "where and how", "tool": "warpviz calibrate ...",
     "figures": {KEY: {"value": float, "unit": str, "spread_pct": float, "runs": int,
                       "how": "one sentence: the microbenchmark"}, ...}}

Keys (all optional; a reader falls back to a documented default when one is missing):
``dram_read_gbps``, ``dram_write_gbps``, ``dram_copy_gbps`` (read + write bytes),
``l2_read_gbps``, ``l1_read_gbps``, ``l1_sectors_per_clk_sm``,
``shared_wavefronts_per_clk_sm``, ``lsu_inst_per_clk_sm``, ``launch_overhead_us``,
``syncthreads_ns``, ``dram_latency_ns``, ``l2_latency_ns``, ``l1_latency_ns``,
``shared_latency_ns``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import assets
from ..errors import WarpvizError

FORMAT = 1
MAX_CALIBRATION_BYTES = 1 << 20     # a calibration file (the shipped H100 one: ~23 KB)
MAX_FIGURES = 256                    # figures in one file (warpviz calibrate writes 14)
MAX_FIGURE = 1e12                    # the largest figure's value (GB/s, ns, per clock...)
CALIBRATION_DIR = assets.root() / "calibration"     # assets/calibration, or inside a wheel
LOADED_STREAMS = (0, 1, 2, 4, 8)     # loaded_latency_ns_K: K streaming blocks of 256 threads per SM beside the chase


class CalibrationError(WarpvizError, ValueError):
    """A calibration file cannot be read; the message names the file, the place and the fix."""


def slug(device_name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")


@dataclass(frozen=True)
class Calibration:
    device: dict
    figures: dict
    measured: str = ""
    label: str = ""
    path: str = ""
    extra: dict = field(default_factory=dict)

    def value(self, key: str, default: float | None = None) -> float | None:
        f = self.figures.get(key)
        return float(f["value"]) if isinstance(f, dict) and "value" in f else default

    def failed_check(self, key: str) -> str | None:
        """What the figure was expected to be, when it failed its plausibility check at
        calibration time (``checks`` of the file); None when it passed or was not checked."""
        c = (self.extra.get("checks") or {}).get(key)
        if isinstance(c, dict) and c.get("ok") is False:
            return str(c.get("expected", "a plausible value"))
        return None

    @classmethod
    def from_json(cls, d: dict, path: str = "") -> "Calibration":
        where = path or "calibration"
        fix = "run `warpviz calibrate` to write a new one"
        if not isinstance(d, dict):
            raise CalibrationError(f"{where}: the file must hold a JSON object, not {type(d).__name__}; {fix}")
        fmt = d.get("format", 0)
        if not isinstance(fmt, int) or isinstance(fmt, bool):
            raise CalibrationError(f"{where}: \"format\" must be an integer, not {fmt!r}; {fix}")
        if fmt > FORMAT:
            raise CalibrationError(f"{where}: format {fmt} is newer than this warpviz reads ({FORMAT}); "
                                   f"update warpviz")
        figures = d.get("figures", {})
        if not isinstance(figures, dict):
            raise CalibrationError(f"{where}: \"figures\" must be an object of figures; {fix}")
        if len(figures) > MAX_FIGURES:
            raise CalibrationError(f"{where}: {len(figures):,} figures, over the limit of {MAX_FIGURES}; {fix}")
        for key, f in figures.items():
            v = f.get("value") if isinstance(f, dict) else None
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or \
                    not 0 <= v <= MAX_FIGURE:
                raise CalibrationError(f"{where}: figures.{key}.value must be a finite number from 0 to "
                                       f"{MAX_FIGURE:.0e}, not {str(v)[:40]!r}; {fix}")
            for name, kind, words in (("unit", str, "a text"), ("how", str, "a text"), ("runs", int, "a whole number"),
                                      ("spread_pct", (int, float), "a number"), ("at_gbps", (int, float), "a number"),
                                      ("run_spread_pct", (int, float), "a number")):
                x = f.get(name)
                if x is not None and (not isinstance(x, kind) or isinstance(x, bool) or
                                      isinstance(x, float) and not math.isfinite(x) or
                                      isinstance(x, str) and len(x) > 10_000):
                    raise CalibrationError(f"{where}: figures.{key}.{name} must be {words}, not "
                                           f"{str(x)[:40]!r}; {fix}")
                if name == "at_gbps" and x is not None and not 0 <= x <= MAX_FIGURE:
                    raise CalibrationError(f"{where}: figures.{key}.at_gbps must be from 0 to {MAX_FIGURE:.0e} GB/s, "
                                           f"not {x!r}; {fix}")
            runs = f.get("run_values")
            if runs is not None and (not isinstance(runs, list) or len(runs) > 10_000 or any(
                    not isinstance(r, (int, float)) or isinstance(r, bool) or not math.isfinite(r) for r in runs)):
                raise CalibrationError(f"{where}: figures.{key}.run_values must be a list of numbers; {fix}")
        for name, kind, words in (("device", dict, "an object"), ("measured", str, "a text"), ("label", str, "a text"),
                                  ("checks", dict, "an object"), ("tool", str, "a text")):
            if name in d and not isinstance(d[name], kind):
                raise CalibrationError(f"{where}: \"{name}\" must be {words}, not {type(d[name]).__name__}; {fix}")
        for name, x in d.get("device", {}).items():
            if isinstance(x, (dict, list)) or isinstance(x, float) and not math.isfinite(x) or \
                    isinstance(x, str) and len(x) > 1000:
                raise CalibrationError(f"{where}: device.{name} must be a short text or a number; {fix}")
        return cls(dict(d.get("device", {})), dict(d.get("figures", {})), str(d.get("measured", "")),
                   str(d.get("label", "")), path, {k: v for k, v in d.items()
                                                   if k not in ("device", "figures", "measured", "label")})


def load_calibration(device_name: str = "NVIDIA H100 80GB HBM3", directory: Path | None = None) -> Calibration | None:
    """The shipped (or written) calibration of a device, or None when there is none."""
    p = (directory or CALIBRATION_DIR) / f"{slug(device_name)}.json"
    if not p.is_file():
        return None
    return Calibration.from_json(read_json(p), str(p))


def read_json(path: str | Path):
    """A calibration file's JSON (``fileio.read_json_limited``: a regular file of at most
    MAX_CALIBRATION_BYTES, not nested deeply, no huge integer, no NaN), or CalibrationError
    naming the file and the fix."""
    from ..fileio import ReadRefused, read_json_limited

    try:
        return read_json_limited(path, MAX_CALIBRATION_BYTES, "calibration file")
    except ReadRefused as err:
        raise CalibrationError(f"{err}, or run `warpviz calibrate` to write a new one") from None


__all__ = ["LOADED_STREAMS", "Calibration", "CalibrationError", "load_calibration", "read_json", "MAX_CALIBRATION_BYTES", "slug", "FORMAT", "CALIBRATION_DIR"]
