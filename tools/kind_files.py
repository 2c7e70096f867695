#!/usr/bin/env python3
"""Which files outside an access kind's own modules name the kind in their code: the files
adding (or removing) that kind touches. docs/ARCHITECTURE.md "A new access kind" states the
counts this prints.

    python tools/kind_files.py tma          # the TMA kinds: tma_load, tma_store, tma_copy
    python tools/kind_files.py wgmma
    python tools/kind_files.py MODULE[,MODULE...] WORD[,WORD...]   # any kind: its modules, its op strings

The files are those git tracks under viz/ (``git ls-files viz``). A file names the kind when
its code (comments and docstrings left out) imports or uses one of the kind's modules (a
name token equal to the module's name) or holds a string literal equal to one of the kind's
op strings or trace kinds (``"wgmma"``, ``"tma"``, ``"tma.load"``...): a branch on the kind.
Messages that merely mention the kind in a longer sentence are text, not a branch, and are
not counted. The kind's own modules are left out; ``viz/kinds/__init__.py`` (its line in
``REGISTERED``) is listed like any other file. Run it from the repository root.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tokenize
from pathlib import Path

KINDS = {
    "tma": (("tma_load", "tma_store", "tma_copy"), ("tma", "bulk", "tensormap", "tma.load", "tma.store")),
    "wgmma": (("wgmma",), ("wgmma", "wgmma.mma_async")),
}


def _code_tokens(text: str):
    """(type, string) of the tokens of ``text`` that are code: no comments, no docstrings."""
    toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    out = []
    for i, t in enumerate(toks):
        if t.type == tokenize.COMMENT:
            continue
        if t.type == tokenize.STRING:
            prev = next((p for p in reversed(toks[:i]) if p.type not in (tokenize.NL, tokenize.COMMENT)), None)
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            if (prev is None or prev.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)) and \
                    nxt is not None and nxt.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                continue            # a docstring (a string standing alone as a statement)
        out.append((t.type, t.string))
    return out


def _literal(s: str) -> str | None:
    try:
        v = eval(s, {"__builtins__": {}})       # a string token of warpviz's own tracked source
    except Exception:
        return None
    return v if isinstance(v, str) else None


def files_naming(modules: tuple[str, ...], words: tuple[str, ...], root: Path = Path(".")) -> list[str]:
    listed = subprocess.run(["git", "ls-files", "viz"], cwd=root, capture_output=True, text=True, check=True)
    own = {f"viz/kinds/{m}.py" for m in modules}
    out = []
    for name in listed.stdout.split():
        if not name.endswith(".py") or name in own:
            continue
        try:
            toks = _code_tokens((root / name).read_text(encoding="utf-8"))
        except (OSError, tokenize.TokenError, SyntaxError, UnicodeDecodeError):
            continue
        if any((t == tokenize.NAME and s in modules) or (t == tokenize.STRING and _literal(s) in words)
               for t, s in toks):
            out.append(name)
    return sorted(out)


def main(argv: list[str]) -> int:
    if len(argv) == 1 and argv[0] in KINDS:
        modules, words = KINDS[argv[0]]
    elif len(argv) == 2:
        modules, words = tuple(argv[0].split(",")), tuple(argv[1].split(","))
    else:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    files = files_naming(modules, words)
    for f in files:
        print(f)
    print(f"{len(files)} file(s) outside {', '.join(f'viz/kinds/{m}.py' for m in modules)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
