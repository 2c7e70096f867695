"""The one exception family of warpviz (no Qt, no imports beyond the standard library).

Every error warpviz raises on purpose, for a bad file, a bad argument or a missing tool, is a
``WarpvizError``: ``except viz.errors.WarpvizError`` catches all of them and nothing else.
Each subclass keeps the built-in base it always had (``ScenarioError`` is still a
``ValueError``, ``GpuUnavailable`` a ``RuntimeError``), so older ``except`` clauses keep working.
The message (``str(err)``) is the one paragraph the command line prints.
"""

from __future__ import annotations


class WarpvizError(Exception):
    """Base of every error warpviz raises on purpose."""


__all__ = ["WarpvizError"]


# ---------------------------------------------------------------------------- text for a terminal
#
# A trace, a scenario, a calibration or results file is anyone's: its title, file names, PTX,
# source lines and a compiler's message quoting them reach the terminal when a command prints
# them. A terminal obeys escape sequences (OSC 52 sets the clipboard, OSC 0 the window title,
# CSI 2J clears the screen), and bidirectional overrides reorder what the eye reads. So every
# text a file gave is passed through ``safe_text`` before it is printed: each such character
# is written as its Python escape (``\x1b``, ``\u202e``), and a field is cut to a length a
# reader can take in, saying how much was cut.

MAX_FIELD = 300             # characters of one file-derived field (a title, a file name, a PTX line)
MAX_LINE = 8000             # characters of one printed line (a safety net: fields are cut first)

# Characters a terminal or a reader's eye must not be handed raw: the C0 controls, DEL and the
# C1 controls (ESC, BEL, CSI 0x9b...), the Unicode format characters (category Cf: the
# bidirectional embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069, the marks
# U+200E/U+200F/U+061C, zero-width characters, the byte-order mark, interlinear annotation and
# tag characters, the soft hyphen), the line and paragraph separators U+2028/U+2029, and lone
# surrogates (undecodable bytes). Listed by range so that the check is one regular expression.
_UNSAFE_RANGES = (
    "\x00-\x08", "\x0a-\x1f", "\x7f-\x9f", "\xad", "\u0600-\u0605", "\u061c", "\u06dd", "\u070f",
    "\u0890-\u0891", "\u08e2", "\u180e", "\u200b-\u200f", "\u2028-\u202e", "\u2060-\u2064", "\u2066-\u206f",
    "\ufeff", "\ufff9-\ufffb", "\ud800-\udfff", "\U000110bd", "\U000110cd", "\U00013430-\U0001343f",
    "\U0001bca0-\U0001bca3", "\U0001d173-\U0001d17a", "\U000e0001", "\U000e0020-\U000e007f",
)
_UNSAFE = None


def _unsafe():
    global _UNSAFE
    if _UNSAFE is None:
        import re

        _UNSAFE = re.compile("[" + "".join(_UNSAFE_RANGES) + "]")
    return _UNSAFE


def _escape(m) -> str:
    c = m.group(0)
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def escape_controls(text: str, newlines: bool = True) -> str:
    """``text`` with every character that could steer a terminal or reorder what is read
    (see ``_UNSAFE_RANGES``) written as its escape (``\\x1b``, ``\\u202e``); a tab is kept, and
    a newline too unless ``newlines`` is False (a one-line field then stays one line)."""
    text = str(text)
    if newlines:
        parts = text.split("\n")
        return "\n".join(_unsafe().sub(_escape, p) for p in parts)
    return _unsafe().sub(_escape, text)


def cut(text: str, limit: int = MAX_FIELD) -> str:
    """``text`` cut to ``limit`` characters, with ``...[N characters cut]`` saying how many went."""
    text = str(text)
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}...[{len(text) - limit:,} characters cut]"


def safe_text(text, limit: int | None = MAX_FIELD, newlines: bool = False) -> str:
    """A file-derived field made safe to print on a terminal: cut to ``limit`` characters
    (None: not cut) and then every control, bidirectional or invisible format character
    escaped (newlines too unless ``newlines``). The one function every command's output of a
    title, a file name, a PTX or source line, a device name or a compiler message goes through."""
    text = "" if text is None else str(text)
    if limit is not None and len(text) > limit:
        text = cut(text, limit)
    return escape_controls(text, newlines)


class SafeStream:
    """A text stream that writes through ``escape_controls`` (newlines and tabs kept) and cuts
    any line longer than ``line_limit`` characters, saying how much it cut. ``viz.cli.main``
    puts it in front of ``sys.stdout`` and ``sys.stderr`` while a command runs, so that no
    command's output, error paragraphs included, can hand a terminal an escape sequence,
    whatever file the text came from. Everything else (``fileno``, ``encoding``, ``isatty``)
    is the wrapped stream's."""

    def __init__(self, stream, line_limit: int | None = MAX_LINE):
        self._stream = stream
        self.wrapped = stream   # for warpviz's own control sequences only (export's progress line)
        self._limit = line_limit
        self._col = 0           # characters of the current line written
        self._dropped = 0       # characters of the current line cut

    def write(self, s: str) -> int:
        s = str(s)
        out = []
        parts = s.split("\n")
        for k, part in enumerate(parts):
            if k:
                out.append(self._end_line() + "\n")
            if self._limit is not None:
                room = max(0, self._limit - self._col)
                if len(part) > room:
                    self._dropped += len(part) - room
                    part = part[:room]
            part = escape_controls(part, newlines=False)
            self._col += len(part)
            out.append(part)
        self._stream.write("".join(out))
        return len(s)

    def _end_line(self) -> str:
        tail = f"...[{self._dropped:,} characters cut]" if self._dropped else ""
        self._col = self._dropped = 0
        return tail

    def flush(self) -> None:
        if self._dropped:       # the line goes on being cut: its column is kept
            self._stream.write(f"...[{self._dropped:,} characters cut]")
            self._dropped = 0
        self._stream.flush()

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._stream, name)


__all__ += ["MAX_FIELD", "MAX_LINE", "escape_controls", "cut", "safe_text", "SafeStream"]
