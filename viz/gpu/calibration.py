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

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import assets
from ..errors import WarpvizError

FORMAT = 1
CALIBRATION_DIR = assets.root() / "calibration"     # assets/calibration, or inside a wheel


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
        for key, f in figures.items():
            v = f.get("value") if isinstance(f, dict) else None
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v != v:
                raise CalibrationError(f"{where}: figures.{key}.value must be a number, not {v!r}; {fix}")
        return cls(dict(d.get("device", {})), dict(d.get("figures", {})), str(d.get("measured", "")),
                   str(d.get("label", "")), path, {k: v for k, v in d.items()
                                                   if k not in ("device", "figures", "measured", "label")})


def load_calibration(device_name: str = "NVIDIA H100 80GB HBM3", directory: Path | None = None) -> Calibration | None:
    """The shipped (or written) calibration of a device, or None when there is none."""
    p = (directory or CALIBRATION_DIR) / f"{slug(device_name)}.json"
    if not p.is_file():
        return None
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise CalibrationError(f"{p}: line {err.lineno}, column {err.colno}: {err.msg}; fix the file or run "
                               f"`warpviz calibrate` to write a new one") from None
    except (OSError, UnicodeDecodeError) as err:
        raise CalibrationError(f"{p}: cannot be read ({err}); run `warpviz calibrate` to write a new one") from None
    return Calibration.from_json(doc, str(p))


__all__ = ["Calibration", "CalibrationError", "load_calibration", "slug", "FORMAT", "CALIBRATION_DIR"]
