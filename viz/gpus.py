"""A GPU is one description: ``assets/gpus/<slug>.toml``, read here and nowhere else.

A description holds what warpviz needs to know of one GPU model:

* ``rules``: the architecture's memory rules the model counts with (warp size, banks and
  bank width, how 8- and 16-byte shared accesses split into phases, sector and line sizes,
  shared memory per SM and per block, residency limits) and the access kinds it has
  (``tma.load`` and ``wgmma`` only from sm_90);
* ``target``: the nvcc ``-arch`` warpviz compiles its own kernels for (``sm_90``), and
  ``target_features`` where architecture-specific instructions need it (``sm_90a``);
* ``spec``: the specification figures calibration checks its measurements against (SMs,
  boost clock, L2 size, DRAM peak);
* ``calibration``: the shipped calibration file (``assets/calibration/``) it uses;
* ``measured``: for each value (a dotted path: ``rules``, ``rules.phase_lanes``,
  ``spec.l2_bytes``, ``calibration``) where it was measured; every value not named there
  is unmeasured (a specification or a plan), and ``provenance`` says so.

Every file is checked like any hostile file (``GpuDescriptionError`` names the file and the
field, and the fix): types, ranges, unknown keys. ``for_device`` matches a running GPU
(its name, then its compute capability) to a description; an unknown GPU gets the
reference description (the H100's) and a caveat (``Match.caveat``) that says how to add one.
``REFERENCE`` is the H100's: every figure warpviz shipped before descriptions is its.

Nothing here imports the rest of warpviz but ``assets`` and ``errors``, so every layer may ask.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from . import assets
from .errors import WarpvizError

FORMAT = 1
MAX_DESCRIPTION_BYTES = 64 << 10
REFERENCE_SLUG = "nvidia-h100-80gb-hbm3"
HOW_TO_ADD = ("copy assets/gpus/nvidia-h100-80gb-hbm3.toml to assets/gpus/<your GPU>.toml, set its name, match, "
              "compute capability, target and specifications (docs/ARCHITECTURE.md, \"A new GPU\"), then run "
              "`warpviz calibrate`")


class GpuDescriptionError(WarpvizError, ValueError):
    """A GPU description cannot be used; the message names the file, the field and the fix."""


def gpus_dir() -> Path:
    return assets.root() / "gpus"


# field -> (type(s), low, high) for numbers; (str, max length) for texts
_RULES: dict[str, tuple] = {
    "warp_size": (int, 32, 32),          # warpviz's lanes are 32 (viz.lanes): another size is not modelled
    "banks": (int, 1, 64),
    "bank_bytes": (int, 1, 16),
    "sector_bytes": (int, 8, 256),
    "line_bytes": (int, 16, 1024),
    "phase_lanes": (dict, None, None),
    "shared_per_sm_bytes": (int, 1024, 1 << 22),
    "shared_per_block_bytes": (int, 1024, 1 << 22),
    "l1_bytes_per_clk_sm": (int, 16, 4096),
    "max_threads_per_sm": (int, 32, 1 << 16),
    "max_blocks_per_sm": (int, 1, 1024),
    "registers_per_sm": (int, 1024, 1 << 22),
    "schedulers_per_sm": (int, 1, 64),
    "kinds": (list, None, None),
}
_SPEC: dict[str, tuple] = {
    "sm_count": (int, 1, 4096),
    "boost_clock_mhz": ((int, float), 100, 10000),
    "l2_bytes": (int, 1 << 16, 1 << 36),
    "dram_bytes": (int, 1 << 20, 1 << 46),
    "dram_peak_gbps": ((int, float), 10, 1e6),
}
_TOP = {"format", "name", "family", "match", "compute_capability", "target", "target_features", "calibration",
        "rules", "spec", "measured", "unmeasured", "note"}
_TARGET = re.compile(r"sm_[0-9]{2,3}[af]?")
_CC = re.compile(r"[0-9]{1,2}\.[0-9]")
_KIND = re.compile(r"[a-z][a-z0-9._]{0,31}")
_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}\.json")


@dataclass(frozen=True)
class GpuDescription:
    """One GPU model (see the module docstring)."""

    slug: str
    name: str
    family: str
    match: tuple[str, ...]
    compute_capability: str
    target: str
    target_features: str
    calibration: str                  # a file name in assets/calibration/ ("" when none yet)
    warp_size: int
    banks: int
    bank_bytes: int
    sector_bytes: int
    line_bytes: int
    phase_lanes: dict                 # bytes a lane -> lanes per shared phase ({8: 16, 16: 8})
    shared_per_sm_bytes: int
    shared_per_block_bytes: int
    l1_bytes_per_clk_sm: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    schedulers_per_sm: int
    kinds: tuple[str, ...]
    sm_count: int
    boost_clock_mhz: float
    l2_bytes: int
    dram_bytes: int
    dram_peak_gbps: float
    measured: dict = field(default_factory=dict)     # dotted field -> where it was measured
    unmeasured: dict = field(default_factory=dict)   # dotted field -> why not yet (a plan)
    path: str = ""

    @property
    def bank_row_bytes(self) -> int:
        """Bytes one shared wavefront serves: all banks once (128 on every NVIDIA GPU so far)."""
        return self.banks * self.bank_bytes

    @property
    def sectors_per_line(self) -> int:
        return self.line_bytes // self.sector_bytes

    def has_kind(self, op: str) -> bool:
        return op in self.kinds

    def lacks(self, op: str) -> bool:
        """True where some shipped description lists ``op`` and this one does not: a kind no
        description names (a newly registered one) is not refused."""
        return op not in self.kinds and op in described_kinds()

    def provenance(self, key: str) -> str:
        """``measured: where`` for a value (a dotted path) or the section it is in, else
        ``unmeasured`` (with why, when the file says)."""
        parts = key.split(".")
        for i in range(len(parts), 0, -1):
            k = ".".join(parts[:i])
            if k in self.measured:
                return f"measured: {self.measured[k]}"
        for i in range(len(parts), 0, -1):
            k = ".".join(parts[:i])
            if k in self.unmeasured:
                return f"unmeasured: {self.unmeasured[k]}"
        return "unmeasured (specification)"

    def calibration_path(self) -> Path | None:
        if not self.calibration:
            return None
        return assets.root() / "calibration" / self.calibration

    @property
    def is_reference(self) -> bool:
        return self.slug == REFERENCE_SLUG


_FIX = 'fix the file (docs/ARCHITECTURE.md, "A new GPU")'


def _fail(where: str, what: str, fix: str = "") -> GpuDescriptionError:
    return GpuDescriptionError(f"{where}: {what}; {fix or _FIX}")


def _number(where: str, key: str, v, kinds, lo, hi):
    if isinstance(v, bool) or not isinstance(v, kinds):
        want = "a whole number" if kinds is int else "a number"
        raise _fail(where, f"{key} must be {want}, not {type(v).__name__} {str(v)[:40]!r}")
    if isinstance(v, float) and not math.isfinite(v) or not lo <= v <= hi:
        raise _fail(where, f"{key} = {str(v)[:40]} is out of range ({lo:g} to {hi:g})")
    return v


def _text(where: str, key: str, v, pattern: re.Pattern | None = None, limit: int = 200, empty: bool = False) -> str:
    if not isinstance(v, str):
        raise _fail(where, f"{key} must be a text, not {type(v).__name__}")
    if len(v) > limit or (not v and not empty) or any(ord(c) < 32 for c in v):
        raise _fail(where, f"{key} must be a one-line text of 1 to {limit} characters")
    if pattern is not None and v and not pattern.fullmatch(v):
        raise _fail(where, f"{key} = {v[:40]!r} is not of the form {pattern.pattern}")
    return v


def _table(where: str, key: str, v) -> dict:
    if not isinstance(v, dict):
        raise _fail(where, f"[{key}] must be a table, not {type(v).__name__}")
    return v


def parse(doc, path: str = "gpu description", slug: str = "") -> GpuDescription:
    """A description from a TOML document's data (``tomllib``), checked."""
    where = path
    if not isinstance(doc, dict):
        raise _fail(where, "the file must hold a TOML table")
    unknown = sorted(set(doc) - _TOP)
    if unknown:
        raise _fail(where, f"unknown key {unknown[0]!r} (known: {', '.join(sorted(_TOP))})")
    fmt = doc.get("format")
    if isinstance(fmt, bool) or not isinstance(fmt, int):
        raise _fail(where, f"format must be a whole number ({FORMAT}), not {str(fmt)[:20]!r}")
    if fmt > FORMAT or fmt < 1:
        raise _fail(where, f"format {fmt} is not one this warpviz reads ({FORMAT})", "update warpviz")
    for req in ("name", "match", "compute_capability", "target", "rules", "spec"):
        if req not in doc:
            raise _fail(where, f"{req} is missing")
    name = _text(where, "name", doc["name"])
    family = _text(where, "family", doc.get("family", ""), empty=True)
    match = doc["match"]
    if not isinstance(match, list) or not 1 <= len(match) <= 16:
        raise _fail(where, "match must be a list of 1 to 16 device-name prefixes")
    match = tuple(_text(where, f"match[{i}]", m, limit=100) for i, m in enumerate(match))
    cc = _text(where, "compute_capability", doc["compute_capability"], _CC, 8)
    target = _text(where, "target", doc["target"], _TARGET, 8)
    features = _text(where, "target_features", doc.get("target_features", target), _TARGET, 8)
    if re.sub(r"[af]$", "", features) != target:
        raise _fail(where, f"target_features {features!r} must be the target {target!r} with a or f")
    cal = _text(where, "calibration", doc.get("calibration", ""), _FILE, 132, empty=True)
    rules = _table(where, "rules", doc["rules"])
    spec = _table(where, "spec", doc["spec"])
    vals: dict = {}
    for section, table, known in (("rules", rules, _RULES), ("spec", spec, _SPEC)):
        extra = sorted(set(table) - set(known))
        if extra:
            raise _fail(where, f"unknown key {section}.{extra[0]} (known: {', '.join(known)})")
        for key, (kinds, lo, hi) in known.items():
            if key not in table:
                raise _fail(where, f"{section}.{key} is missing")
            v = table[key]
            if kinds is dict:
                v = _table(where, f"{section}.{key}", v)
                out = {}
                for b, lanes in v.items():
                    if not isinstance(b, str) or not b.isdigit() or int(b) not in (8, 16):
                        raise _fail(where, f"{section}.{key}: keys are the access widths \"8\" and \"16\", not {b!r}")
                    _number(where, f"{section}.{key}.{b}", lanes, int, 1, 32)
                    if 32 % lanes:
                        raise _fail(where, f"{section}.{key}.{b} = {lanes} must divide the 32 lanes of a warp")
                    out[int(b)] = lanes
                if set(out) != {8, 16}:
                    raise _fail(where, f"{section}.{key} needs both \"8\" and \"16\"")
                vals[key] = out
            elif kinds is list:
                if not isinstance(v, list) or len(v) > 64:
                    raise _fail(where, f"{section}.{key} must be a list of access kinds (at most 64)")
                vals[key] = tuple(_text(where, f"{section}.{key}[{i}]", k, _KIND, 32) for i, k in enumerate(v))
            else:
                vals[key] = _number(where, f"{section}.{key}", v, kinds, lo, hi)
    for a, b in (("line_bytes", "sector_bytes"),):
        if vals[a] % vals[b]:
            raise _fail(where, f"rules.{a} ({vals[a]}) must be a multiple of rules.{b} ({vals[b]})")
    if vals["shared_per_block_bytes"] > vals["shared_per_sm_bytes"]:
        raise _fail(where, "rules.shared_per_block_bytes must be at most rules.shared_per_sm_bytes")
    notes: dict[str, dict] = {}
    for section in ("measured", "unmeasured"):
        t = _table(where, section, doc.get(section, {}))
        if len(t) > 200:
            raise _fail(where, f"[{section}] has more than 200 entries")
        for k, why in t.items():
            head = k.split(".")[0]
            rest = k.split(".")[1:]
            ok = (head in ("rules", "spec") and (not rest or len(rest) == 1 and rest[0] in
                                                 (_RULES if head == "rules" else _SPEC))) or \
                 (k in ("calibration", "target", "compute_capability", "match"))
            if not ok:
                raise _fail(where, f"[{section}] names {k!r}, which is no value of a description")
            _text(where, f"{section}.{k}", why, limit=500)
        notes[section] = dict(t)
    return GpuDescription(slug or re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-"), name, family, match, cc,
                          target, features, cal, measured=notes["measured"], unmeasured=notes["unmeasured"],
                          path=path, **vals)


def read(path: Path) -> GpuDescription:
    """One description file, checked (``GpuDescriptionError`` naming the file)."""
    path = Path(path)
    try:
        if not path.is_file():
            raise _fail(str(path), "not a regular file")
        data = path.read_bytes()[:MAX_DESCRIPTION_BYTES + 1]
    except OSError as err:
        raise _fail(str(path), f"cannot be read ({err.strerror or err})") from None
    if len(data) > MAX_DESCRIPTION_BYTES:
        raise _fail(str(path), f"is larger than {MAX_DESCRIPTION_BYTES // 1024} KiB: not a GPU description")
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise _fail(str(path), "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as err:
        raise _fail(str(path), f"is not valid TOML ({err})") from None
    return parse(doc, str(path), path.stem)


@lru_cache(maxsize=None)
def descriptions() -> tuple[GpuDescription, ...]:
    """Every shipped description (assets/gpus/*.toml), the reference first."""
    out = [read(p) for p in sorted(gpus_dir().glob("*.toml"))]
    out.sort(key=lambda d: (not d.is_reference, d.slug))
    return tuple(out)


@lru_cache(maxsize=None)
def described_kinds() -> frozenset[str]:
    """Every access kind some shipped description lists. A kind none lists (one registered after
    the descriptions were written) is taken to exist on every GPU until a description says which
    have it (``GpuDescription.lacks``)."""
    return frozenset(k for d in descriptions() for k in d.kinds)


def reference() -> GpuDescription:
    """The H100's description: the GPU every shipped figure was measured on."""
    return read(gpus_dir() / f"{REFERENCE_SLUG}.toml")


def by_slug(slug: str) -> GpuDescription | None:
    return next((d for d in descriptions() if d.slug == slug), None)


ENV = "WARPVIZ_GPU"     # a description's slug (assets/gpus/<slug>.toml): the GPU warpviz works for


@lru_cache(maxsize=None)
def active() -> GpuDescription:
    """The GPU warpviz compiles for and analyses by default: the description named by
    ``$WARPVIZ_GPU`` (its slug), else the reference (the H100's). A name that no description
    has is an error naming the variable and the choices."""
    import os

    want = os.environ.get(ENV, "").strip()
    if not want:
        return reference()
    d = by_slug(want)
    if d is None:
        raise GpuDescriptionError(f"${ENV} = {want[:60]!r} names no GPU description; choose one of "
                                  f"{', '.join(x.slug for x in descriptions())}, or unset it; to add one, {HOW_TO_ADD}")
    return d


@dataclass(frozen=True)
class Match:
    """What ``for_device`` found: the description to use, and the caveat when it is not the
    running GPU's own (None when it is)."""

    description: GpuDescription
    exact: bool
    caveat: str | None = None


def for_device(name: str | None, compute_capability: str | None = None) -> Match:
    """The description of a running GPU: the first whose ``match`` prefix its name starts
    with; else the reference with a caveat (the same SM when the compute capability is the
    reference's, else nothing known)."""
    nm = (name or "").strip()
    for d in descriptions():
        if nm and any(nm.lower().startswith(m.lower()) for m in d.match):
            return Match(d, True)
    ref = reference()
    if compute_capability and compute_capability == ref.compute_capability:
        why = (f"no description for {nm or 'this GPU'} (compute capability {compute_capability}, the same SM as "
               f"the {ref.name}): its rules are the {ref.name}'s, its figures the {ref.name}'s until it is "
               f"calibrated")
    else:
        why = (f"no description for {nm or 'this GPU'}"
               f"{f' (compute capability {compute_capability})' if compute_capability else ''}: these figures are "
               f"the {ref.name}'s")
    return Match(ref, False, f"{why}; to add one, {HOW_TO_ADD}")


def _log2(where: str, key: str, v: int) -> int:
    if v <= 0 or v & (v - 1):
        raise _fail(where, f"{key} = {v} must be a power of two")
    return v.bit_length() - 1


# -- the rules the model counts with --------------------------------------------------
# The reference description's rules, read once: the counting kernels (viz.kernels_numba,
# compiled by numba) and every module that sizes a sector, a line or a bank read these
# names, never a literal. Every shipped description has the same rules (32 banks of 4
# bytes, 32-byte sectors, 128-byte lines, half- and quarter-warp phases); a description
# whose rules differ is read but not modelled (``modelled``), and ``analyze`` refuses it.
_REF = reference()
WARP = _REF.warp_size                  # lanes of a warp
BANKS = _REF.banks                     # shared-memory banks
BANK_BYTES = _REF.bank_bytes           # bytes a bank delivers a wavefront (one word)
SECTOR_BYTES = _REF.sector_bytes       # the unit L1 and L2 move
LINE_BYTES = _REF.line_bytes           # a cache line (a global request's wavefront)
BANK_ROW_BYTES = BANKS * BANK_BYTES    # one wavefront over every bank: the bank-class modulus
PHASE_8 = _REF.phase_lanes[8]          # lanes of a shared phase of 8-byte accesses
PHASE_16 = _REF.phase_lanes[16]        # ... of 16-byte accesses
WORD_SHIFT = _log2(_REF.path, "rules.bank_bytes", BANK_BYTES)
BANK_MASK = BANKS - 1
SECTOR_SHIFT = _log2(_REF.path, "rules.sector_bytes", SECTOR_BYTES)
LINE_SHIFT = _log2(_REF.path, "rules.line_bytes", LINE_BYTES)
_log2(_REF.path, "rules.banks", BANKS)


def modelled(d: GpuDescription) -> bool:
    """Whether the model's counting rules (the reference's, compiled in) are this GPU's."""
    return (d.warp_size, d.banks, d.bank_bytes, d.sector_bytes, d.line_bytes, d.phase_lanes) == \
        (WARP, BANKS, BANK_BYTES, SECTOR_BYTES, LINE_BYTES, _REF.phase_lanes)


__all__ = ["active", "ENV", "WARP", "BANKS", "BANK_BYTES", "SECTOR_BYTES", "LINE_BYTES", "BANK_ROW_BYTES", "PHASE_8", "PHASE_16",
           "WORD_SHIFT", "BANK_MASK", "SECTOR_SHIFT", "LINE_SHIFT", "modelled", "GpuDescription", "GpuDescriptionError", "Match", "descriptions", "reference", "for_device", "read", "parse",
           "by_slug", "gpus_dir", "FORMAT", "HOW_TO_ADD", "REFERENCE_SLUG"]
