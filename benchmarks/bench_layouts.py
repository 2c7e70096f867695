"""Layout parsing, layout maps and the Python API's pictures: best of a few runs each.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_layouts.py
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from viz import api  # noqa: E402
from viz.export import ensure_qt, export_layout_map  # noqa: E402
from viz.layout_text import check, layout_map, parse_layout  # noqa: E402


def best(fn, n=5) -> float:
    out = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out * 1000


def main() -> None:
    ensure_qt()
    tmp = Path(tempfile.mkdtemp(prefix="warpviz-bench-"))
    m = layout_map("Sw<3,3,3> o (8,64):(64,1)")
    rows = [
        ("parse + check Sw<3,3,3> o (128,64):(64,1) (8192 elements)",
         best(lambda: check(parse_layout("Sw<3,3,3> o (128,64):(64,1)"), (128, 64), 2))),
        ("layout_map 8x64 (model)", best(lambda: layout_map("Sw<3,3,3> o (8,64):(64,1)"))),
        ("export map 8x64, natural size, PNG", best(lambda: export_layout_map(m, tmp / "m.png"), 3)),
        ("export map 8x64, natural size, SVG", best(lambda: export_layout_map(m, tmp / "m.svg"), 3)),
        ("export map 8x64, 1920x1080 PNG", best(lambda: export_layout_map(m, tmp / "s.png", size=(1920, 1080)), 3)),
        ("api frame 1280x720 PNG (load + analyse + draw)",
         best(lambda: api.scenario("cute-sw128-tile").frame(17).png(), 3)),
        ("api animation, 1 instruction (6 pictures), 1280x720 MP4",
         best(lambda: api.scenario("cute-sw128-tile").animation(17).mp4(), 1)),
    ]
    for name, ms in rows:
        print(f"| {name} | {ms:.1f} ms |")
    print(f"files: m.png {os.path.getsize(tmp / 'm.png'):,} B, m.svg {os.path.getsize(tmp / 'm.svg'):,} B")


if __name__ == "__main__":
    main()
