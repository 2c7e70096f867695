"""Numbers and paths typed by the user (command-line arguments, API arguments), checked
before anything is allocated or looped over.

Python refuses to convert a string of more than 4,300 digits to an ``int`` (and takes
quadratic time below that); ``float`` turns any long number into ``inf``. Every whole
number warpviz takes from the user fits in 19 digits (a signed 64-bit value), so a longer
digit string is refused by its length, before ``int()`` sees it, with the argument's name
and its range: ``--block 99999999999999999999…(5,000 digits): out of range; use 0..1023``.

``bounded_int`` and ``bounded_float`` are ``argparse`` types (the message becomes
argparse's: exit status 2, the usage line, no traceback); ``to_int`` / ``to_float`` raise
``ValueError`` with the same message for the hand parsers (``viz.export.parse_size``,
``parse_range``, ``parse_frames``, ``--blocks``); ``range_parts`` reads the index lists of
``export`` and ``trace --blocks``; ``check_out_path`` refuses a path the
file system cannot hold (a name over 255 bytes, a path over 4,096) before it is used.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Iterator

MAX_DIGITS = 19                  # a whole number warpviz takes fits in a signed 64-bit value
MAX_NUMBER_CHARS = 64            # a decimal number's text (1.5e3, 0.25, ...)
MAX_INDEX = 2**63 - 1            # any whole number's bound when no narrower one is given
MAX_BLOCK_INDEX = (2**31 - 1) * 65535 * 65535 - 1   # a linear block index: CUDA's largest grid
MAX_WARP_INDEX = 31              # a warp in a block: 1,024 threads at most
MAX_INSTRUCTION = 10_000_000     # a warp instruction's number (a scenario has at most 100,000 per thread)
MIN_SCALE, MAX_SCALE = 0.25, 8.0  # a theme's type scale (presentations use 1.3 to 2; the app's 1.35)
NAME_MAX = 255                   # bytes in one file or folder name (Linux, macOS; Windows: 255 UTF-16 units)
PATH_MAX = 4096                  # bytes in a whole path (Linux)

_INT = re.compile(r"[+-]?[0-9]+")


def shown(text: str, n: int = 24) -> str:
    """``text`` for a message: a long one cut, with its length."""
    text = str(text)
    if len(text) <= n:
        return text
    digits = sum(c.isdigit() for c in text)
    what = f"{digits:,} digits" if digits > len(text) // 2 else f"{len(text):,} characters"
    return f"{text[:n]}…({what})"


def shown_value(v) -> str:
    """Any value for a message, safely: a whole number too long to print (Python refuses
    4,300 digits) by its size, a long text cut."""
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 256:
        return f"a whole number of about {int(v.bit_length() * 0.30103) + 1:,} digits"
    if isinstance(v, (str, bytes)):
        return shown(repr(v), 40)
    try:
        return shown(repr(v), 40)
    except Exception:  # noqa: BLE001 - a value whose repr fails still gets a message
        return f"a {type(v).__name__}"


def span(lo, hi) -> str:
    """``lo..hi`` as a message says it (``0..1023``, ``1..10,000,000``, ``0.25..4``)."""
    def one(v) -> str:
        if isinstance(v, float):
            return f"{v:g}"
        return f"{v:,}" if abs(v) >= 100_000 else str(v)
    return f"{one(lo)}..{one(hi)}"


def out_of_range(name: str, text, lo, hi) -> str:
    return f"{name} {shown(text)}: out of range; use {span(lo, hi)}"


def to_int(text: str, name: str, lo: int = -MAX_INDEX, hi: int = MAX_INDEX) -> int:
    """``text`` as a whole number in ``lo..hi``; ValueError naming ``name`` and the range
    (a digit string too long for any range is refused before ``int()``)."""
    t = str(text).strip()
    if not _INT.fullmatch(t):
        raise ValueError(f"{name} {shown(t)!r}: not a whole number; use {span(lo, hi)}")
    if len(t.lstrip("+-").lstrip("0")) > MAX_DIGITS:       # before int(): 4,300 digits raise, fewer take long
        raise ValueError(out_of_range(name, t, lo, hi))
    v = int(t)
    if not lo <= v <= hi:
        raise ValueError(out_of_range(name, t, lo, hi))
    return v


def to_float(text, name: str, lo: float, hi: float) -> float:
    """``text`` (or a number) as a finite float in ``lo..hi``; ValueError naming ``name``."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if isinstance(text, int) and abs(text) > 2**1023:
            raise ValueError(f"{name} {shown_value(text)}: out of range; use {span(lo, hi)}")
        v = float(text)
        t = repr(text) if isinstance(text, float) else str(v)
    else:
        t = str(text)
        if len(t) > MAX_NUMBER_CHARS:
            raise ValueError(out_of_range(name, t.strip(), lo, hi))
        try:
            v = float(t)
        except ValueError:
            raise ValueError(f"{name} {shown(t)!r}: not a number; use {span(lo, hi)}") from None
    if not math.isfinite(v) or not lo <= v <= hi:
        raise ValueError(out_of_range(name, t.strip(), lo, hi))
    return v


def _argparse_type(convert, lo, hi, name: str, what: str):
    """``convert(text, name, lo, hi)`` as an ``argparse`` type named ``what`` (argparse's
    message on a bad value: exit status 2, the usage line, no traceback)."""
    def parse(text: str):
        try:
            return convert(text, name, lo, hi)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    parse.__name__ = what
    return parse


def bounded_int(lo: int, hi: int, name: str):
    """An ``argparse`` type: a whole number in ``lo..hi`` (``name`` is the option, for the message)."""
    return _argparse_type(to_int, lo, hi, name, f"whole number in {lo}..{hi}")


def bounded_float(lo: float, hi: float, name: str):
    """An ``argparse`` type: a finite number in ``lo..hi``."""
    return _argparse_type(to_float, lo, hi, name, f"number in {lo:g}..{hi:g}")


def check_out_path(path, name: str = "--out") -> None:
    """ValueError when ``path`` cannot be a file name on this system: a component over
    NAME_MAX bytes, the whole over PATH_MAX bytes, or a NUL character."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    head = f"{name} {shown(text, 60)!r}" if name else repr(shown(text, 60))
    if "\0" in text:
        raise ValueError(f"{head}: a file name cannot hold a NUL character")
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) > PATH_MAX:
        raise ValueError(f"{head}: the path is {len(raw):,} bytes long, over the {PATH_MAX:,} the file system "
                         "takes; choose a shorter path")
    for part in re.split(r"[/\\]", text):
        b = len(part.encode("utf-8", "surrogateescape"))
        if b > NAME_MAX:
            raise ValueError(f"{head}: the name {shown(part, 40)!r} is {b:,} bytes long, over the {NAME_MAX} a "
                             "file or folder name may have; choose a shorter name")


def check_out_file(path, name: str = "--out") -> None:
    """``check_out_path``, and ValueError when ``path`` is an existing folder or its folder
    does not exist: what a command that writes one file checks before it works (minutes of
    measurement are never lost to an --out that cannot be written)."""
    import os.path

    check_out_path(path, name)
    text = os.fspath(path)
    try:
        if os.path.isdir(text):
            raise ValueError(f"{name} {shown(text, 60)}: is a folder; give a file name (e.g. {name} "
                             f"{os.path.join(shown(text, 60), 'NAME.json')})")
        parent = os.path.dirname(os.path.abspath(text))
        if not os.path.isdir(parent):
            raise ValueError(f"{name} {shown(text, 60)}: the folder {shown(parent, 60)} does not exist; "
                             "create it or choose another")
    except OSError as err:          # a path the system refuses to look at
        raise ValueError(f"{name} {shown(text, 60)}: {err.strerror or err}") from None



ROW_NAMES = ("lane", "thread", "index", "addr")   # the lane rows by name (PaintOptions.rows, --rows)
DROP_ORDER = ("addr", "thread")                    # what a picture short of room leaves out first


def parse_rows(spec: str) -> tuple[str, frozenset[str] | None]:
    """``PaintOptions.rows`` / ``--rows``: "auto" (every row that fits; the picture says which
    it left out), "all" (every row, folded as deep as it takes), or a comma list of
    ROW_NAMES (the lane row is always kept). ValueError names a wrong word."""
    spec = (spec or "auto").strip().lower()
    if spec in ("auto", "all"):
        return spec, None
    names = {w.strip() for w in spec.split(",") if w.strip()}
    bad = sorted(names - set(ROW_NAMES))
    if bad or not names:
        raise ValueError(f"lane rows {shown(spec)}: use auto, all, or a comma list of {', '.join(ROW_NAMES)}"
                         + (f" (not {shown(', '.join(bad))})" if bad else ""))
    return "some", frozenset(names | {"lane"})


class RangeTextError(ValueError):
    """Why ``range_parts`` refused a text: ``problem`` is "parts" (``count`` parts, over the
    limit), "form" (``part`` is not a number or a range) or "digits" (``part`` holds a number
    longer than MAX_DIGITS). Each caller words it for its own field."""

    def __init__(self, problem: str, part: str = "", count: int = 0):
        super().__init__(problem)
        self.problem, self.part, self.count = problem, part, count


def range_parts(text: str, max_parts: int, separators: str = "-", spaced: bool = False) -> Iterator[tuple[int, int, str]]:
    """The one parser of typed index lists (``export``'s ``--block``/``--warp``/``--instruction``,
    ``trace --blocks``): comma-separated numbers and ranges ``A-B`` as ``(A, B, part)``, as
    written (neither ordered nor bounded: the caller checks them against its range). At most
    ``max_parts`` parts, checked before any is read; a number's length is checked before
    ``int()`` sees it; a part is read when the caller asks for it, so the caller's own checks
    of one part come before the reading of the next. ``separators``: the characters that may
    join a range's ends; ``spaced``: spaces allowed around the numbers and the separator (else
    only around a part)."""
    parts = text.split(",")
    if len(parts) > max_parts:
        raise RangeTextError("parts", count=len(parts))
    sep = "[" + re.escape(separators) + "]"
    form = re.compile(rf"\s*(\d+)\s*(?:{sep}\s*(\d+)\s*)?" if spaced else rf"(\d+)(?:{sep}(\d+))?")
    return _range_pairs(parts, form, spaced)


def _range_pairs(parts: list[str], form: re.Pattern, spaced: bool) -> Iterator[tuple[int, int, str]]:
    for part in parts:
        part = part if spaced else part.strip()
        m = form.fullmatch(part)
        if not m:
            raise RangeTextError("form", part)
        if max(len(g.lstrip("0")) for g in m.groups() if g) > MAX_DIGITS:     # 5,000 digits: before int()
            raise RangeTextError("digits", part)
        a = int(m.group(1))
        yield a, (int(m.group(2)) if m.group(2) else a), part


__all__ = ["MAX_DIGITS", "MAX_INDEX", "MAX_BLOCK_INDEX", "MAX_WARP_INDEX", "MAX_INSTRUCTION", "span", "shown_value", "MIN_SCALE", "MAX_SCALE", "NAME_MAX", "PATH_MAX", "to_int", "to_float", "bounded_int", "bounded_float",
           "check_out_path", "check_out_file", "shown", "out_of_range", "ROW_NAMES", "DROP_ORDER", "parse_rows",
           "RangeTextError", "range_parts"]
