"""The figures record: what the model counts for one access, typed.

One ``AccessFigures`` is what ``warpviz analyze --json`` writes as one entry of
``accesses``, and what the reasons (``viz.report``, ``viz.trace.analysis.explain_trace``),
the Figures panel, the Source panel and the benchmarks read:

* a scenario's ``[[access]]`` summed over its loop points and parts
  (``viz.engine.Analysis.per_access``);
* a trace's static memory instruction summed over its recorded executions
  (``viz.trace.analysis.TraceAnalysis.per_access``).

Every figure is an attribute with its type. A figure an access does not have is ``None``
(a global access has no ``wavefronts``, a scenario's access no ``executed``) and is left
out of the JSON: ``has(name)`` says whether the access has it, ``to_dict()`` gives the
JSON object, key for key and in the order ``analyze --json`` has always written it
(``json_keys``: the order in which the producer set them, which depends on the access's
space and kind, so it is kept rather than derived).

A kind's own figures that this record does not name yet (a new kind's ``Kind.figures`` or
``TraceForm.figures`` may add keys: ``viz/kinds/registry.py``) are kept in ``extra``, in
their place in the JSON, so adding a kind never needs this file.

The record is also a read-only ``Mapping`` of that JSON object (``rec["wavefronts"]``,
``"wavefronts" in rec``, ``{**rec}``), for a kind's callbacks written against the JSON and
for scripts; warpviz's own readers use the attributes.

The keys are documented for users in docs/scenario-format.md ("The JSON document") and
docs/trace-format.md ("What analyze prints for a trace"); tests/test_access_figures.py keeps
the fields and those tables equal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, eq=False, kw_only=True)
class AccessFigures(Mapping[str, Any]):
    """The figures of one scenario access or one traced static memory instruction (module doc)."""

    # --- both: what the access is and how much of it ran
    index: int
    """A scenario: the 0-based position of its ``[[access]]`` table; a trace: the static
    instruction's id in the header."""
    op: str
    """``"load"`` or ``"store"`` (a scenario's kind: its ``op`` as written, ``"cp.async"``)."""
    space: str
    """``"shared"`` or ``"global"`` (a trace: also ``"generic"``)."""
    access_bytes: int
    """The bytes one lane accesses in one instruction (its first part, for a whole struct)."""
    warp_instructions: int
    """Warp instructions with an active lane over the launch (a trace: as the ten metrics count them)."""
    active_lanes: int
    """Active lanes summed over those warp instructions."""
    bytes_requested: int
    """Bytes the active lanes ask for (active lanes x bytes; a wgmma: its shared bytes)."""

    # --- a scenario's access as written
    array: str | None = None
    """The array the access reads or writes."""
    at: str | None = None
    """Its index text as written (``tile[threadIdx.y][threadIdx.x]``)."""
    when: str | None = None
    """Its ``when`` condition as written, "" without one."""
    type: str | None = None
    """The array's element type name."""
    instructions_per_warp: int | None = None
    """Loop points x parts: the warp instructions one warp issues for it."""
    loop_points: int | None = None
    """The points of its loops (1 without a loop)."""
    part_bytes: list[int] | None = None
    """The size of each instruction of one element (``[8, 4]`` for a whole ``{double; float}``)."""
    element_bytes: int | None = None
    """The sum of ``part_bytes``."""

    # --- a traced instruction: where it is and how it ran
    number: int | None = None
    """Its number: its position (1..N) among the traced kernel's memory instructions."""
    kind: str | None = None
    """A scenario: the access kind (``"cp.async"``, ``"atomic"``, ``"tma.load"``, ``"wgmma"``...);
    a trace: the trace kind of its form (``"load"``, ``"cp.async"``, ``"ldmatrix"``...)."""
    source: str | None = None
    """A trace: ``file.cu:line``; a scenario's cp.async / TMA: its global side's index text."""
    file: str | None = None
    """The CUDA source file nvcc's line information names."""
    line: int | None = None
    """Its line in that file (0: no line information)."""
    ptx: str | None = None
    """The PTX instruction's text."""
    function: str | None = None
    """The PTX function it is in."""
    executed: int | None = None
    """Warp-level executions recorded."""
    counted_in_metrics: bool | None = None
    """Whether it enters the ten Nsight Compute metrics."""
    predicated_off_warps: int | None = None
    """Skip records counted as executions: warps with every lane off (ptxas predicated it)."""
    branched_around_warps: int | None = None
    """Skip records: warps whose lanes all branched around it."""
    never_true_shared_loads: int | None = None
    """cp.async: executions of the never-true ``@!PT LDS`` ptxas puts before its LDGSTS."""
    sass: dict[str, Any] | None = None
    """What the plain kernel's SASS does with it (``viz.trace.reconcile``): ``state``,
    ``certain``, ``sass``, ``width``, ``group``, ``first``, ``ptx_lines``, ``source_lines``,
    ``note`` (and ``first_number``); only where the trace has a SASS map."""
    ptx_width: int | None = None
    """The PTX's own width in bytes, beside ``sass`` (ptxas may fuse or split it)."""
    atomic_rule: str | None = None
    """A shared or generic atomic: ``"words"`` (ATOMS.POPC.INC) or ``"lanes"`` (served lane by lane)."""
    ldgsts_side: str | None = None
    """A cp.async's shared operand: ``"ca"`` (its LDGSTS wavefronts counted) or ``"cg"`` (none)."""

    # --- ldmatrix / stmatrix (a scenario's)
    matrix_op: str | None = None
    """The op as written (``"ldmatrix.x4"``); ``op`` is then ``"load"`` or ``"store"``."""
    matrices: int | None = None
    """Its number of 8x8 matrices."""
    trans: bool | None = None
    """Whether it transposes."""

    # --- shared memory
    wavefronts: int | None = None
    """Shared wavefronts."""
    phases: int | None = None
    """Phases with an active lane (the wavefronts with no bank conflict)."""
    bank_conflicts: int | None = None
    """``wavefronts - phases``."""
    wavefronts_per_instruction: float | None = None
    """Wavefronts per warp instruction (4 decimals)."""
    ideal_wavefronts_per_instruction: float | None = None
    """Phases per warp instruction (4 decimals)."""
    paired_instructions: int | None = None
    """Loads whose phases were halved because their lanes repeat addresses in pairs."""
    idle_phases: int | None = None
    """Phases of issued instructions in which no lane was active (they cost nothing)."""
    max_wavefronts_per_phase: int | None = None
    """The most wavefronts any one phase took (the worst n-way conflict)."""
    phases_by_size: list[dict[str, int]] | None = None
    """Per instruction size: ``access_bytes``, ``warp_instructions``, ``phases``, ``paired_instructions``."""

    # --- global memory
    requests: int | None = None
    """Global requests (one per warp instruction with an active lane)."""
    sectors: int | None = None
    """Distinct 32-byte sectors per instruction, summed."""
    lines: int | None = None
    """Distinct 128-byte lines per instruction, summed."""
    bytes_moved: int | None = None
    """``sectors x 32``."""
    bytes_used: int | None = None
    """Distinct bytes the active lanes ask for (a scenario's)."""
    sectors_per_request: float | None = None
    """Sectors per request (4 decimals)."""
    lines_per_request: float | None = None
    """Lines per request (4 decimals)."""
    sector_efficiency: float | None = None
    """Bytes requested (a trace: of the global lanes) / bytes moved."""

    # --- what a kind adds (viz.kinds)
    kind_metrics: dict[str, int] | None = None
    """A scenario kind's own counters, by Nsight Compute name."""
    options: dict[str, Any] | None = None
    """A scenario kind's options as written (``box``, ``swizzle``, ``aggregate``...)."""
    source_array: str | None = None
    """A scenario's cp.async / TMA: the global array of its other side."""
    box: list[int] | None = None
    """A scenario's TMA: its box (rows, columns)."""
    swizzle: str | None = None
    """A scenario's TMA: the tile's swizzle."""
    bytes_copied: int | None = None
    """A scenario's TMA: the bytes its boxes copy in bounds."""

    # --- the JSON object's shape
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Keys a kind added that this record does not name (module doc)."""
    json_keys: tuple[str, ...] = ()
    """The keys of the JSON object, in its order: the named figures the access has and ``extra``'s."""

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "AccessFigures":
        """The record of a JSON object as the producers build it (keys in their JSON order)."""
        named = _FIELD_NAMES
        return cls(**{k: v for k, v in d.items() if k in named},
                   extra={k: v for k, v in d.items() if k not in named}, json_keys=tuple(d))

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> "AccessFigures":
        """``d`` itself if it is a record, else the record of a JSON object (an entry of
        ``analyze --json``'s ``accesses``, as scripts and tests hold them)."""
        return d if isinstance(d, AccessFigures) else cls.from_dict(d)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object ``analyze --json`` writes for this access, key for key and in order."""
        return {k: self._value(k) for k in self.json_keys}

    def kind_figures(self, key: str) -> Any:
        """A kind's own figures under its own key (``"wgmma"``, ``"tma"``, ``"tma_control"``: what
        its module's ``figures`` hook adds), None where the access has none. The record names no
        kind's key, so a new kind adds its figures without touching this file."""
        return self.extra.get(key)

    def has(self, name: str) -> bool:
        """Whether the access has the figure ``name`` (whether the JSON holds that key)."""
        return name in self.json_keys

    def replace(self, **changes: Any) -> "AccessFigures":
        """A copy with ``changes`` (names of figures; one the record lacks goes after the others)."""
        named = {k: v for k, v in changes.items() if k in _FIELD_NAMES}
        extra = {**self.extra, **{k: v for k, v in changes.items() if k not in _FIELD_NAMES}}
        keys = self.json_keys + tuple(k for k in changes if k not in self.json_keys)
        return dataclasses.replace(self, **named, extra=extra, json_keys=keys)

    # --- the read-only Mapping of the JSON object
    def _value(self, key: str) -> Any:
        return getattr(self, key) if key in _FIELD_NAMES else self.extra[key]

    def __getitem__(self, key: str) -> Any:
        if key not in self.json_keys:
            raise KeyError(key)
        return self._value(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.json_keys)

    def __len__(self) -> int:
        return len(self.json_keys)

    def __contains__(self, key: object) -> bool:
        return key in self.json_keys

    def __repr__(self) -> str:
        return f"AccessFigures({self.to_dict()!r})"


def given(value: T | None, name: str = "figure") -> T:
    """``value``, a figure its reader knows the access has (its space or kind says so): typed
    without ``None``; a ValueError where the access lacks it after all (as ``rec[name]`` is a
    KeyError)."""
    if value is None:
        raise ValueError(f"the access has no {name}")
    return value


# the figures' names (every field but the JSON object's shape)
FIGURES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(AccessFigures) if f.name not in ("extra",
                                                                                                      "json_keys"))
_FIELD_NAMES = frozenset(FIGURES)

__all__ = ["AccessFigures", "FIGURES", "given"]
