"""What an access kind is, and which kinds there are: ONE table that every layer reads.

A kind says everything about itself in its own module (``viz/kinds/<kind>.py``) and is
listed once in ``viz/kinds/__init__.py`` (``REGISTERED``). Nothing else in warpviz compares
op strings of its own: the parser (``viz.scenario``), the engine, the reasons
(``viz.report``), the per-warp detail (``viz.warp``), the PTX instrumenter
(``viz.trace.ptx.classify``), the SASS reconciliation (``viz.trace.reconcile``), the trace
analysis (``viz.trace.analysis``), CUDA generation (``viz.gpu.codegen``), random checks
(``viz.gpu.randomkinds``), the cost model (``viz.gpu.costmodel``) and the app ask here.

Two things live in this table:

* ``Kind``: a scenario access kind (``op = "cp.async"`` in a scenario file, format 3), with
  how it parses, counts, draws, explains itself, generates CUDA, makes random scenarios and
  what the cost model charges for it.
* ``TraceForm``: a PTX memory instruction form that the trace recorder instruments, the
  *trace kind* it becomes (``MemInstr.kind``: "load", "cp.async", ...), its SASS opcodes for
  the reconciliation, how its records are counted and which Nsight Compute counters it
  feeds. A kind module usually registers one ``Kind`` and the ``TraceForm``s of the same
  instructions (plain loads have forms but no ``Kind``: they are the model's own).

Plus ``Unrecorded``: PTX forms that touch memory but that no registered form records yet.
The parser finds them, the recorder counts their executions per warp (as it counts
``cp.async.commit_group``: events, ids from ``EVENT_BASE``) and the trace says it is not
complete (``complete: false``, ``unrecorded`` in its header). A new kind that records one of
them simply registers a ``TraceForm`` that matches first: the forms are tried before the
unrecorded patterns.

How to add a kind (the whole list of files): its module ``viz/kinds/<kind>.py`` and one line
in ``REGISTERED`` of ``viz/kinds/__init__.py``; plus ``assets/translations/zh_CN.toml`` when it
brings new captions. Nothing in ``viz/kinds/`` imports the parser, the engine, ``viz.trace``,
``viz.gpu`` or Qt; a kind module may hold PTX and SASS text patterns and CUDA text. The
callables take warpviz's own objects; those that need numba import it when called.

**Kinds that carry operands or expand into many accesses** (TMA boxes, bulk copies, wgmma):
a trace record is a 32-byte header and 32 lanes x 8-byte slots. A ``TraceForm`` whose
``slots`` is "operands" has the recorder store, in those slots, the values its
``record_code`` puts there (tensor-map address, coordinates, mbarrier, 64-bit matrix
descriptors ...) instead of each lane's address. Its ``expand`` turns one record into the
accesses it really makes (``Expanded``: any number of shared byte ranges and global
addresses, e.g. a TMA box's sectors and the swizzled shared rows it writes, or a wgmma's
core matrices over the banks), and ``count`` (when set) counts the record itself, returning
its counters by Nsight Compute name (``counters``), so a kind can feed its own counters
(``..._op_tma_ld``, ``..._op_gmma``) without the analysis knowing their names.

Wired today: ``record_code(ins)`` (``ins.address`` is then the instruction's whole operand
text) runs after the recorder's prologue and must leave each lane's 8-byte slot in ``%wvd0``;
it may read ``%wvr4`` (the lane), ``%wvr0`` (active mask), ``%wvr1`` (predicate mask),
``%wvr6`` (linear block), ``%wvr7`` (warp) and use ``%wvr8``-``%wvr15``, ``%wvd1``-``%wvd7``,
``%wvp1``-``%wvp3``, ``%wvp5``-``%wvp7`` as scratch (``.b32``, ``.b64``, ``.pred``), never
``%wvp0`` or ``%wvp4``; the lanes' shared and global masks are 0. ``count(trace, ins, rows)``
(``rows``: the record indices of one static instruction, ``trace.addresses(rows)`` their
slots) returns ``{Nsight Compute name: value}``; names of the ten go into the ten, others
beside them (``other_metrics``, and ``trace --validate`` asks Nsight Compute for the names in
``counters``). ``expand`` is declared, not yet called.

Every other thing such a kind does is a hook of its ``TraceForm`` or ``Kind`` (the block of
fields after ``summary``, and ``phase_caption`` ... ``arch_specific``): how its PTX is read
(``read``) and recorded (``block``, ``recorder_sass``, ``payload``), how its records count
(``stats``) and show (``line_sectors``, ``explain``, ``text``, ``drawn``), how the SASS
reconciliation matches it (``sass_width``, ``sass_match``, ``owns_line``, ``sass_note``,
``fuses``, ``builds``), its picture (``phase_caption``, ``request_caption``, ``picture_map``,
``matrix_map``: a map whose ``view`` names its painter module in ``viz.render``), the target it
compiles for (``arch_specific``) and its replay under another shared layout (``replay``). The
trace side, the reconciliation, the painter, export, the command line and the toolchain call
them and name no kind (docs/ARCHITECTURE.md "A new access kind"; tests/test_kinds_toy.py
registers a kind through this module alone).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping


def _never(access) -> bool:
    return False


@dataclass(frozen=True)
class Kind:
    """One scenario access kind (``op`` of a scenario's access table, format 3).

    The callables take warpviz's own objects (an ``Access``, a scenario, a figures record ``d``
    of ``Analysis.per_access``, ``viz.access_figures.AccessFigures``: read its attributes);
    those that need numba import it when called."""

    op: str                                    # what a scenario writes: op = "cp.async"
    keys: frozenset[str]                       # the keys its access table may have
    example: str                               # one access of the kind, for error messages
    parse: Callable                            # (builder, k, raw table) -> Access (viz.kinds.build)
    count: Callable                            # (scenario, instr, access, ctx) -> InstrStats (viz.engine)
    metrics: tuple[str, ...] = ()              # its Nsight Compute counters, beside the ten
    metric_labels: Mapping[str, str] = field(default_factory=dict)   # how the Figures panel names them
    figures: Callable | None = None            # (access, rows, d): its own figures into d (the record's dict)
    shared_rule: Callable | None = None        # (d) -> the shared rule its reasons name (viz.report)
    reasons: Callable | None = None            # (d) -> every (figure, value, why) row, instead of a load's
    extra_reasons: Callable | None = None      # (d) -> rows after a load's shared rows
    per_lane: Callable = _never                # draw hint: (access) -> shared words served lane by lane
    through_banks: bool = True                 # draw hint: False where the shared side skips the banks' path
    active_lanes: Callable | None = None       # draw hint: (access, mask, threads) -> the lanes that issue it
    # --- captions (English; their Chinese in assets/translations/zh_CN.toml)
    name: str = ""                             # caption of one instruction ("TMA copy"); "" = op
    writes: bool = True                        # its frame shows a write (the shared side is written)
    sass_opcodes: tuple[str, ...] = ()         # the SASS opcodes it compiles to (viz.toolchain.sass's memory kind = op)
    # --- CUDA generation (viz.gpu.codegen); pure text, no toolchain
    codegen: Callable | None = None            # (access, array, scenario, rename, k) -> CUDA lines; k: its index among its op's
    codegen_whole: bool = False                # its lines are complete (no label comment, no `when` wrapped around them)
    # --- random scenarios (viz.gpu.randomkinds, `validate --random N --kinds OP`)
    random_text: Callable | None = None        # (random.Random) -> a scenario file's text using the kind
    # --- the cost model (viz.gpu.costmodel)
    copy_engine: bool = False                  # its global side bypasses the LSU (cp.async, TMA): read once from DRAM
    copy_in_l2: bool = True                    # copy_engine: its sectors count in the L2 term (False: TMA, not the LSU's path)
    copy_per_replica: bool = True              # copy_engine: False where replicas share one copy (one tensor map per launch)
    engine_seconds: Callable | None = None     # (access, scenario, count) -> seconds its copy engine spends on
                                               # count of its warp instructions (the cost model's TMA term)
    # --- its picture and toolchain needs (hooks: the generic code calls them and never names the kind)
    phase_caption: str = ""                    # the frame's caption of one phase (English; Chinese in zh_CN.toml)
    request_caption: Callable | None = None    # (WarpDetail, count(n, noun) -> text) -> the request frame's caption
    picture_map: Callable | None = None        # (WarpDetail) -> a map drawn instead of the lanes' addresses, or None;
                                               # the map's ``view`` names its painter module in viz.render
    matrix_map: Callable | None = None         # (scenario, instruction, block, warp) -> the map `warpviz matrix` draws
    arch_specific: tuple[str, ...] = ()        # PTX text that, in generated CUDA, needs the arch-specific target
                                               # (sm_90a: wgmma.mma_async)


@dataclass(frozen=True)
class Expanded:
    """What one record of a form that expands (``TraceForm.expand``) really touched: shared
    byte addresses (each with its byte count) and global byte addresses (each with its byte
    count), in the order the hardware serves them, plus any counters of the form's own."""

    shared: tuple[tuple[int, int], ...] = ()   # (shared offset, bytes)
    global_: tuple[tuple[int, int], ...] = ()  # (global address, bytes)
    counters: Mapping[str, int] = field(default_factory=dict)


@dataclass
class RecordStats:
    """What a form that counts its records itself (``TraceForm.stats``) says of one static
    instruction of a trace: the figures the analysis keeps (``executed``, ``warp_instructions``,
    ``active_lanes``, ``sectors``, ``lines``, ``per_record``: wavefronts + sectors of each of its
    records, in the order of the rows it was given), its own counters by Nsight Compute name
    (``own``), the entries it adds to ``analyze --json``'s per-access dict (``figures``) and the
    kind's own object (``detail``, for its other hooks)."""

    executed: int = 0
    warp_instructions: int = 0
    active_lanes: int = 0
    sectors: int = 0
    lines: int = 0
    per_record: object = None
    own: Mapping[str, int] = field(default_factory=dict)
    figures: Mapping[str, object] = field(default_factory=dict)
    detail: object = None


@dataclass(frozen=True)
class TraceForm:
    """One PTX memory instruction form that a trace records, and the trace kind it becomes.

    ``heads``: the opcode's first word(s) (``ld``, ``ldu``); ``accept(parts)`` (the opcode split
    at dots, head first) says whether this form takes the instruction; the state space is
    read from the parts (``global``, ``shared``, else ``generic``) unless ``space`` fixes it.
    ``roles``: the memory operands recorded, each (direction, space or "" for the matched
    one, which ``[..]`` of the operands): cp.async has two. ``sass``: the SASS opcodes (no
    modifiers) that the reconciliation may match with it, each to its space.
    ``instruction_counter``: its Nsight Compute instruction counter per space, outside the
    ten (ldmatrix: ``smsp__inst_executed_op_ldsm.sum``); ``request_counters``: (requests,
    sectors) per space where it has its own (global atomics). ``counts_shared`` /
    ``counts_global``: its lanes enter the ten metrics' shared / global figures (counted by
    the engine's rules) — unless ``count`` counts the record itself.
    ``wavefront_counters``: (wavefronts, conflicts) per space where they are its own (shared
    atomics); ``predicated_off_counts``: a warp with every lane predicated off counts in its
    instruction counter (LDGSTS); ``ten_spaces``: the spaces of its records that enter the ten.
    ``count_shared`` / ``count_global``: its own rule for the lanes of one record on the banks /
    sectors (atomics), else the engine's load / store rules.
    ``lanes``: (opcode) -> how many lanes give an address (ldmatrix.x1: 8), None = 32.
    ``detail_op``: the scenario op its per-warp drawing uses (``viz.trace.detail``).
    ``slots``: "addresses" (each lane's byte address) or "operands" (``record_code`` fills
    the 32 x 8-byte slots); ``expand`` / ``count`` / ``counters``: see the module doc."""

    kind: str                                  # the trace kind: MemInstr.kind, a trace's instruction "kind"
    heads: tuple[str, ...]
    name: str = ""                             # its caption ("atomic operation"; Chinese in zh_CN.toml); "" = as written
    accept: Callable[[list[str]], bool] = lambda parts: True
    space: str = ""                            # fixed space ("" = from the opcode's parts)
    roles: tuple[tuple[str, str, int], ...] = (("load", "", 0),)
    width: Callable | None = None              # (parts, operands text) -> bytes per lane; None: type x vector
    sass: Mapping[str, str] = field(default_factory=dict)    # SASS opcode -> space
    sass_class: str = ""                       # the class name the reconciliation compares ("" = kind)
    instruction_counter: Mapping[str, str] = field(default_factory=dict)   # space -> counter
    request_counters: Mapping[str, tuple[str, str]] = field(default_factory=dict)   # space -> (requests, sectors)
    wavefront_counters: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # space -> (wavefronts, conflicts)
    predicated_off_counts: bool = False        # a warp whose lanes are all predicated off still counts (LDGSTS)
    ten_spaces: tuple[str, ...] = ("global", "shared", "generic")   # spaces of its records that enter the ten metrics
    counts_shared: bool = True
    counts_global: bool = True
    lanes: Callable[[str], int] | None = None
    count_shared: Callable | None = None       # (ins, addr, shared lanes) -> (wavefronts, phases, active): its own bank rule
    count_global: Callable | None = None       # (addr, global lanes) -> sectors per record: its own sector rule
    detail_op: str = ""                        # "" = "load"/"store" by direction
    detail_options: Callable | None = None     # (instruction dict) -> the drawn access's options (atomics' "result")
    # --- the cost model's replay of a trace (viz.gpu.tracemodel)
    global_write: bool = False                 # its global records write (atomics) even though their direction is "load"
    latency: str = ""                          # a "load" record's wait: "load" (by its space and level), "shared",
                                               # "atomic" (shared, else L2), "" (none: asynchronous or no result)
    shared_pipe: bool = False                  # always through the shared pipe, whatever the space says (ldmatrix)
    sass_kind: Mapping[str, str] = field(default_factory=dict)   # space -> viz.toolchain.sass memory kind
    skip_spaces: tuple[str, ...] = ()          # spaces of its records that get skip records where a warp's lanes all
                                               # branch around them (ptxas may predicate the branch: LDS/STS, LDGSTS)
    mask_code: Callable | None = None          # (MemInstr, opcode, operands, bits_of) -> PTX lines clearing from the
                                               # lane masks (%wvr2 shared, %wvr3 global) lanes that touch nothing
    post_parse: Callable | None = None         # (PTX lines, the parser's MemInstrs, function start lines) -> MemInstrs:
                                               # its own reading of the PTX around them (a global atom unused: RED)
    slots: str = "addresses"
    record_code: Callable | None = None        # (MemInstr) -> PTX lines filling %wvd0 per lane (slots = "operands")
    expand: Callable | None = None             # (instruction dict, header row, slots) -> Expanded
    count: Callable | None = None              # (trace, instruction dict, rows) -> {counter: value}
    counters: Mapping[str, str] = field(default_factory=dict)   # its counters outside the ten -> label (English;
                                                                # the app's table, Chinese in zh_CN.toml)
    # what analyze, its JSON and the Figures panel show of a kind that counts its records itself
    figures: Callable | None = None            # (instruction dict, its counters) -> entries for its figures record
    reasons: Callable | None = None            # (figures record) -> (figure, value, why) rows after the first
    summary: Callable | None = None            # (figures record) -> analyze's line of its figures
    # --- hooks of kinds that read their own PTX, record their own way and count their records themselves
    # (TMA and bulk copies, the TMA unit's control instructions, wgmma): the generic code calls these and
    # never names the kind (docs/ARCHITECTURE.md "A new access kind")
    read: Callable | None = None               # (opcode, operands) -> (direction, space, width, address text) of
                                               # its one MemInstr; ValueError: a PTX error naming the line
    block: Callable | None = None              # (MemInstr, widths, symbols, prologue, address_code, reg_bits,
                                               # ctl symbol, record bytes) -> its own recording block (PTX lines);
                                               # ValueError: a PTX error. Its global side is not bounds-checked
    recorder_sass: Callable | None = None      # (MemInstr) -> {SASS opcode: n} its recording block adds
    payload: bool = False                      # its records are payload records (flags 2: one per issuing lane,
                                               # shared mask = that lane, operands in the trace's `payload` row)
    stats: Callable | None = None              # (trace, instruction dict, rows) -> RecordStats: it counts its
                                               # records itself (rows: every record of the instruction)
    line_sectors: Callable | None = None       # (per-access dict) -> sectors it adds to its source line's row
    explain: Callable | None = None            # (per-access dict) -> its (figure, value, why) rows after the
                                               # warp-instruction and SASS rows, instead of the lanes' ones
    text: Callable | None = None               # (per-access dict) -> analyze's lines of it, instead of the generic one
    drawn: Callable | None = None              # (instruction dict, payload row) -> shared byte addresses of the
                                               # lanes the picture draws for one payload record (16 bytes each)
    # the SASS reconciliation (viz.trace.reconcile)
    sass_width: int = 0                        # bytes "a lane" of its SASS opcodes (0: read off the opcode)
    sass_match: Callable | None = None         # (its SASS accesses, PTX rows, PTX lines, SASS text) ->
                                               # ({PTX id: [SASS]}, unmatched): matched by its own rule, not by line
    owns_line: bool = False                    # every SASS memory instruction of its PTX line is its own
    sass_note: Callable | None = None          # (its SASS accesses) -> (accesses, note) of a matched instruction, or
                                               # None for the generic rule
    fuses: bool = True                         # ptxas may fuse it with neighbours into a wider SASS access
    builds: tuple = ()                         # (header key, PTX line pattern, note(SASS accesses) -> text): SASS
                                               # memory instructions of lines it matches come from no memory
                                               # instruction (a tensor map built on the device): explained under
                                               # that key of the header's sass_map
    older_unrecorded: Mapping[str, str] = field(default_factory=dict)   # mnemonic -> why: what traces made
                                               # before this form recorded it say of its lines
    matrix_map: Callable | None = None         # (trace, instruction index, block, warp, number) -> the map
                                               # `warpviz matrix` draws (its ``view``: a viz.render module)
    replay: Callable | None = None             # (trace, instruction dict, rows, remap) -> replayed figures (the
                                               # replay of its shared side under another layout, viz.trace.replay)

    def space_of(self, parts: list[str]) -> str:
        if self.space:
            return self.space
        spaces = [p.split("::")[0] for p in parts[1:]]
        return "global" if "global" in spaces else "shared" if "shared" in spaces else "generic"


@dataclass(frozen=True)
class Unrecorded:
    """PTX that touches memory and that no registered ``TraceForm`` records: ``pattern``
    (a regular expression on the opcode, anchored at its start) and why it is not recorded
    (English, shown in a trace's ``unrecorded`` list)."""

    pattern: str
    why: str

    def matches(self, opcode: str) -> bool:
        return re.match(self.pattern, opcode) is not None


_KINDS: dict[str, Kind] = {}
_FORMS: list[TraceForm] = []
_UNRECORDED: list[Unrecorded] = []


def register(kind: Kind) -> Kind:
    """Add ``kind`` (its op must be new)."""
    if kind.op in _KINDS:
        raise ValueError(f"access kind {kind.op!r} is registered twice")
    _KINDS[kind.op] = kind
    return kind


def register_form(form: TraceForm) -> TraceForm:
    """Add a PTX form the trace records (tried in the order registered; the first that
    accepts an instruction takes it)."""
    _FORMS.append(form)
    return form


def register_unrecorded(u: Unrecorded) -> Unrecorded:
    _UNRECORDED.append(u)
    return u


def kind_of(op) -> Kind | None:
    """The kind whose op is ``op``, or None (a load, a store, a matrix op, or anything else a
    file may hold there, a non-string included)."""
    return _KINDS.get(op) if isinstance(op, str) else None


def kinds() -> tuple[Kind, ...]:
    """Every kind, in the order registered."""
    return tuple(_KINDS.values())


def forms() -> tuple[TraceForm, ...]:
    return tuple(_FORMS)


def form_of(opcode: str) -> tuple[TraceForm, str] | None:
    """(form, space) of the registered form that records the PTX opcode, or None."""
    parts = opcode.split(".")
    for f in _FORMS:
        if parts[0] in f.heads and f.accept(parts):
            return f, f.space_of(parts)
    return None


def trace_kind(kind: str) -> TraceForm | None:
    """The first form whose trace kind is ``kind`` (a trace instruction's "kind")."""
    return next((f for f in _FORMS if f.kind == kind), None)


def trace_kinds() -> tuple[str, ...]:
    """Every trace kind, in the order registered (a trace file's allowed "kind" values)."""
    out: list[str] = []
    for f in _FORMS:
        if f.kind not in out:
            out.append(f.kind)
    return tuple(out)


def unrecorded_of(opcode: str) -> Unrecorded | None:
    """The ``Unrecorded`` entry of a PTX opcode no form takes, or None (not memory, or recorded)."""
    if form_of(opcode) is not None:
        return None
    return next((u for u in _UNRECORDED if u.matches(opcode)), None)


def counter_labels() -> dict[str, str]:
    """Every trace form's counter -> its label (the app's table of counters outside the ten)."""
    return {m: label for f in _FORMS for m, label in f.counters.items()}


def payload_kinds() -> tuple[str, ...]:
    """The trace kinds whose records are payload records (flags 2)."""
    return tuple(dict.fromkeys(f.kind for f in _FORMS if f.payload))


def sass_classes() -> dict[str, tuple[str, str]]:
    """SASS opcode -> (space, class) of every registered form (``viz.trace.reconcile``)."""
    out: dict[str, tuple[str, str]] = {}
    for f in _FORMS:
        for op, sp in f.sass.items():
            out.setdefault(op, (sp, f.sass_class or f.kind))
    return out


__all__ = ["Kind", "TraceForm", "RecordStats", "Expanded", "Unrecorded", "register", "register_form", "register_unrecorded",
           "kind_of", "kinds", "forms", "form_of", "trace_kind", "trace_kinds", "unrecorded_of", "sass_classes", "counter_labels",
           "payload_kinds"]
