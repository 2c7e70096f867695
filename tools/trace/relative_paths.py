"""Rewrite shipped traces whose instructions name their source by a path of the machine that
recorded them (``/work/main/.trace-carry/kernels/copy.cu``) to the name the trace carries
the source under (``copy.cu``, a key of the header's ``sources``), as ``warpviz trace`` now
writes it. Nothing else of a trace changes (its arrays are saved again as they were read).

    python tools/trace/relative_paths.py [TRACE.wvtrace ...]   (default: assets/traces/*)
"""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def relative(header: dict) -> int:
    """Make each instruction's absolute ``file`` the carried source's name; how many changed."""
    sources = header.get("sources") or {}
    n = 0
    for ins in header.get("instructions", []):
        f = ins.get("file")
        if isinstance(f, str) and f.startswith("/"):
            name = PurePosixPath(f).name
            if name in sources:
                ins["file"] = name
                n += 1
    return n


def main(argv: list[str]) -> int:
    from viz.trace import tracefile

    paths = [Path(p) for p in argv] or sorted((ROOT / "assets" / "traces").glob("*.wvtrace"))
    for p in paths:
        t = tracefile.load(p)
        n = relative(t.header)
        if n:
            tracefile.save(t, p)
            print(f"{p.name}: {n} instruction paths made relative")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
