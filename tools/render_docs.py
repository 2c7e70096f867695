"""Render the README's frame pictures into docs/ with the export path (the app's painter).

    .venv/bin/python tools/render_docs.py

Each picture is exactly what `warpviz export NAME --out docs/FILE.png ...` writes; the
commands are printed so they can be pasted into the README.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from viz.export_cli import cmd_export  # noqa: E402
from viz.cli import _parser  # noqa: E402

PICTURES = [
    # file, arguments after `warpviz export`
    ("frame-transpose-plain.png", ["transpose-tile", "-i", "9", "--frames", "5"]),
    ("frame-transpose-pad.png", ["transpose-tile", "--set", "PAD=1", "-i", "9", "--frames", "3"]),
    ("frame-offset-by-one.png", ["offset-by-one", "-i", "1", "--frames", "4"]),
    ("frame-compare.png", ["transpose-tile", "-i", "9", "--frames", "6", "--compare-set", "PAD=1"]),
    ("frame-float4-phases.png", ["float4-tile", "-i", "5", "--frames", "7", "--theme", "colorblind"]),
]


def main() -> int:
    docs = ROOT / "docs"
    docs.mkdir(exist_ok=True)
    for name, argv in PICTURES:
        full = ["export", *argv, "--out", str(docs / name), "--quiet"]
        print("warpviz " + " ".join(a if " " not in a else repr(a) for a in full[:-1]).replace(str(ROOT) + "/", ""))
        rc = cmd_export(_parser().parse_args(full))
        if rc:
            return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
