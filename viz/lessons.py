"""Lessons: scenarios in the order a lecture shows them, for the app's next / previous
scenario keys (Ctrl+Right / Ctrl+Left, also in presentation mode).

A lesson is a small TOML file (``assets/lessons/*.toml`` ship with warpviz; your own go in
the user data folder's ``lessons``)::

    title = "Coalescing and bank conflicts"
    title_zh = "合并访问与存储体冲突"            # optional
    scenarios = [
        "coalesced",                              # a built-in's name, or a file
        "stride-2",                               # (relative to the lesson file),
        "transpose_pad",                          # or a shipped trace's name
        { scenario = "transpose-tile", instruction = 9 },   # opened at instruction 9 (from 1)
    ]

or, where the steps have words for the class, one ``[[step]]`` table a stop::

    title = "Global coalescing"
    [[step]]
    scenario = "stride-32"
    instruction = 1
    say = "Each lane reads its own sector: sectors: {sectors} for {bytes} bytes."
    say_zh = "每个线程读取自己的扇区：{bytes} 字节需要的扇区：{sectors} 个。"

A stop without ``instruction`` opens at the scenario's ``focus`` (docs/scenario-format.md),
else at its first instruction. ``say`` / ``say_zh`` is what the app shows (the status bar)
when the stop opens; a count it quotes is a ``{name}`` filled from the model's figures of
the warp instruction on screen (``PLACEHOLDERS``), never typed in, so it cannot disagree
with the picture.

Where the scenario on screen is in no lesson, the keys follow the library's order as shown
(its tag filter and search applied), so filtering by a tag makes an ad-hoc lesson.

This module imports no Qt. Every problem of a lesson file is a ``ScenarioError`` naming the
file, the field and the fix.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from . import assets
from .i18n import tr
from .scenario import ScenarioError, localized

MAX_BYTES = 256 * 1024            # a lesson is a list of names; anything bigger is not one
MAX_STOPS = 500
MAX_SAY = 2000                    # characters of a step's words
# what a step's words may quote, each from the per-warp figures of the instruction on screen
PLACEHOLDERS = {
    "wavefronts": "the warp instruction's wavefronts (shared)",
    "phases": "its phases: the wavefronts it needs without a bank conflict",
    "conflicts": "its bank conflicts: wavefronts beyond the phases",
    "ways": "the worst phase's wavefronts (an n-way conflict)",
    "sectors": "the 32-byte sectors it touches (global)",
    "lines": "the 128-byte lines it touches (global)",
    "lanes": "its active lanes",
    "bytes": "the bytes its active lanes ask for",
    "efficiency": "its sector efficiency in percent (bytes asked / bytes moved)",
    "instruction": "its number (the Instruction box)",
}
_FIELD = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class Stop:
    """One scenario of a lesson, and the instruction to open it at (0-based; None: the first)."""

    path: Path
    instruction: int | None = None
    say: str = ""                     # the words of this step (the interface language's), placeholders unfilled


@dataclass(frozen=True)
class Lesson:
    path: Path
    title: str
    stops: tuple[Stop, ...]

    @property
    def name(self) -> str:
        return self.path.stem

    def index(self, path: Path | None) -> int | None:
        """Where ``path`` is in the lesson (its first stop), or None."""
        if path is None:
            return None
        here = _key(path)
        return next((k for k, s in enumerate(self.stops) if _key(s.path) == here), None)


def _key(path: Path) -> Path:
    try:
        return Path(path).resolve()
    except OSError:
        return Path(path)


def lessons_dir() -> Path:
    return assets.root() / "lessons"


def load_lesson(path: Path | str) -> Lesson:
    """Read and check a lesson file (``ScenarioError`` for anything wrong in it)."""
    path = Path(path)
    src = str(path)
    from .fileio import ReadRefused, read_text_limited

    try:
        raw = tomllib.loads(read_text_limited(path, MAX_BYTES, "lesson"))     # bounded; a FIFO is refused
    except ReadRefused as err:
        if err.kind in ("large", "grew"):
            raise ScenarioError(src, "", tr("is larger than {n} KiB: not a lesson", n=MAX_BYTES // 1024),
                                tr("a lesson lists scenario names (see docs/guide/lesson-plan.md)")) from None
        raise ScenarioError(src, "", tr("cannot be read ({err})", err=err.problem),
                            tr("check the file's permissions and that it is UTF-8 text")) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ScenarioError(src, "", tr("cannot be read ({err})", err=err),
                            tr("check the file's permissions and that it is UTF-8 text")) from None
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(src, "TOML syntax", str(err), tr("fix the TOML syntax on that line (strings need "
                                                             "quotes, tables [name], arrays [1, 2])")) from None
    title = raw.get("title", path.stem)
    title_zh = raw.get("title_zh", "")
    if not isinstance(title, str) or not isinstance(title_zh, str):
        raise ScenarioError(src, "title", tr("must be text"), tr('write it in quotes: title = "My lesson"'))
    items = raw.get("scenarios")
    if "step" in raw:                   # [[step]] tables: a stop's words need more than one line
        if items is not None:
            raise ScenarioError(src, "step", tr("a lesson has either `scenarios` or [[step]] tables, not both"),
                                tr("move the scenarios into [[step]] tables (scenario = \"NAME\")"))
        items = raw["step"]
    if not isinstance(items, list) or not items:
        raise ScenarioError(src, "scenarios", tr("is missing or not a list of scenarios"),
                            tr('list them in order: scenarios = ["coalesced", "stride-2"]'))
    if len(items) > MAX_STOPS:
        raise ScenarioError(src, "scenarios", tr("has {n} entries (at most {max})", n=len(items), max=MAX_STOPS),
                            tr("split it into several lessons"))
    stops = []
    for k, item in enumerate(items):
        where = f"scenarios[{k}]"
        instruction = None
        say = ""
        if isinstance(item, dict):
            name, instruction = item.get("scenario"), item.get("instruction")
            unknown = sorted(set(item) - {"scenario", "instruction", "say", "say_zh"})
            if unknown:
                raise ScenarioError(src, where, tr("unknown key {k!r}", k=str(unknown[0])[:40]),
                                    tr("an entry has `scenario` and optionally `instruction`, `say` and `say_zh`"))
            say = localized(_say(src, where, item, "say"), _say(src, where, item, "say_zh"))
            if instruction is not None and (isinstance(instruction, bool) or not isinstance(instruction, int)
                                            or not 1 <= instruction <= 1_000_000):
                raise ScenarioError(src, where, tr("instruction must be a whole number from 1"),
                                    tr("count instructions from 1, as the picture's header does"))
        else:
            name = item
        if not isinstance(name, str) or not name.strip() or len(name) > 1000:
            raise ScenarioError(src, where, tr("is not a scenario name"),
                                tr('give a built-in name ("coalesced") or a file relative to the lesson'))
        stops.append(Stop(_stop_path(src, where, path.parent, name.strip()),
                          None if instruction is None else instruction - 1, say))
    return Lesson(path, localized(title, title_zh) or path.stem, tuple(stops))


def _say(src: str, where: str, item: dict, key: str) -> str:
    """A step's words (``say`` / ``say_zh``): text of at most MAX_SAY characters whose
    ``{name}`` fields are all PLACEHOLDERS."""
    text = item.get(key, "")
    if not isinstance(text, str) or len(text) > MAX_SAY:
        raise ScenarioError(src, f"{where}.{key}", tr("must be text of at most {n} characters", n=MAX_SAY),
                            tr('write it in quotes: say = "Each lane reads its own sector."'))
    for m in _FIELD.finditer(text):
        if m.group(1) not in PLACEHOLDERS:
            raise ScenarioError(src, f"{where}.{key}", tr("{{{name}}} is not a figure a step can quote",
                                                          name=m.group(1)[:40]),
                                tr("use one of {names}", names=", ".join("{" + k + "}" for k in PLACEHOLDERS)))
    if "{" in _FIELD.sub("", text) or "}" in _FIELD.sub("", text):
        raise ScenarioError(src, f"{where}.{key}", tr("has a brace that opens or closes no {name}", name="{name}"),
                            tr("write figures as {example}; leave out other braces", example="{sectors}"))
    return text


def figures(detail) -> dict[str, int | str]:
    """The PLACEHOLDERS' values for one warp instruction (a ``viz.warp.WarpDetail``)."""
    d = detail
    shared = d.space == "shared"
    per_phase = [d.wavefront_phase.count(p) for p in set(d.wavefront_phase)]     # as viz.frames.conflict_ways
    return {"wavefronts": d.wavefronts, "phases": d.active_phases, "conflicts": d.conflicts,
            "ways": max(per_phase, default=0) if shared else 0, "sectors": len(d.sectors),
            "lines": len(d.lines), "lanes": d.active_lanes, "bytes": d.bytes_requested,
            "efficiency": f"{d.sector_efficiency * 100:.1f}".rstrip("0").rstrip("."),   # as the Figures: 12.5
            "instruction": d.instruction.number + 1}


def fill(say: str, detail) -> str:
    """A step's words with its ``{name}`` fields filled from ``detail``'s figures ("" without words)."""
    if not say:
        return ""
    if detail is None:                  # nothing on screen to quote (the scenario has an error)
        return _FIELD.sub("?", say)
    values = figures(detail)
    return _FIELD.sub(lambda m: (f"{values[m.group(1)]:,}" if isinstance(values[m.group(1)], int) else
                                 values[m.group(1)]) if m.group(1) in values else m.group(0), say)


def _stop_path(src: str, where: str, folder: Path, name: str) -> Path:
    if name.endswith((".toml", ".wvtrace")) or "/" in name or "\\" in name:
        p = Path(name)
        p = p if p.is_absolute() else folder / p
        if p.is_file():
            return p
        raise ScenarioError(src, where, tr("{name}: no such file", name=name),
                            tr("give a path relative to the lesson file, or a built-in name"))
    p = assets.scenario_dir() / f"{name}.toml"
    if p.is_file():
        return p
    trace = assets.named_trace(name)              # a shipped trace by its name (warpviz list --traces)
    if trace is not None:
        return trace
    raise ScenarioError(src, where, tr("{name} is not a built-in scenario", name=name),
                        tr("`warpviz list` shows the built-ins; a file of yours needs its .toml"))


def lessons(user_dir: Path | None = None) -> tuple[list[Lesson], list[ScenarioError]]:
    """The shipped lessons, then the user's (``user_dir``), by file name; and the problems of
    the files that could not be read (skipped)."""
    out, problems = [], []
    for folder in (lessons_dir(), user_dir):
        if folder is None or not Path(folder).is_dir():
            continue
        for p in sorted(Path(folder).glob("*.toml"))[:200]:
            try:
                out.append(load_lesson(p))
            except ScenarioError as err:
                problems.append(err)
    return out, problems


def neighbour(current: Path | None, delta: int, lesson_list: list[Lesson], library: list[Path],
              prefer: Lesson | None = None) -> tuple[Stop, Lesson | None] | None:
    """The scenario ``delta`` steps (+1 next, -1 previous) from ``current``: in the lesson it
    belongs to (``prefer`` first, else the first that lists it), else in the library's order
    as shown. None at either end, or when nothing is open and nothing is listed."""
    for lesson in ([prefer] if prefer is not None else []) + list(lesson_list):
        k = lesson.index(current)
        if k is not None:
            j = k + delta
            return (lesson.stops[j], lesson) if 0 <= j < len(lesson.stops) else None
    keys = [_key(p) for p in library]
    here = _key(current) if current is not None else None
    if here in keys:
        j = keys.index(here) + delta
    else:
        j = 0 if delta > 0 else len(library) - 1
    return (Stop(library[j]), None) if 0 <= j < len(library) else None


__all__ = ["Lesson", "Stop", "lessons", "load_lesson", "lessons_dir", "neighbour", "fill", "figures", "PLACEHOLDERS"]
