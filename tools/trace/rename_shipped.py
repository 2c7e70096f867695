"""Ship a recording under another name: copy TRACE.wvtrace to assets/traces/NEW.wvtrace with
its launch file and PTX renamed (header ``name``, ``launch_file_name``, ``source_name``, the
``sources`` key, each instruction's and event's ``file``, and the ``ptx = ...`` line of the
carried launch file text). Nothing else of the trace changes (its arrays are saved again as
they were read). Used once for the H200 recording of tests/data/wgmma's Triton GEMM, shipped
as triton_wgmma_matmul (its launch file and PTX copied to kernels/format2/ under that name).

    python tools/trace/rename_shipped.py TRACE.wvtrace NEW
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def renamed(header: dict, new: str) -> dict:
    old_launch, old_src = header["launch_file_name"], header["source_name"]
    new_src = new + Path(old_src).suffix
    h = dict(header, name=new, launch_file_name=f"{new}.launch.toml", source_name=new_src)
    h["sources"] = {(new_src if k == old_src else k): v for k, v in header["sources"].items()}
    for key in ("instructions", "events"):
        h[key] = [dict(i, file=new_src) if i.get("file") == old_src else i for i in header.get(key) or []]
    h["launch_file"] = header["launch_file"].replace(f'ptx = "{old_src}"', f'ptx = "{new_src}"')
    assert old_launch.endswith(".launch.toml") and h["launch_file"] != header["launch_file"]
    return h


def main(argv: list[str]) -> int:
    from dataclasses import replace

    from viz.trace import tracefile

    src, new = Path(argv[0]), argv[1]
    t = tracefile.load(src)
    out = ROOT / "assets" / "traces" / f"{new}.wvtrace"
    tracefile.save(replace(t, header=renamed(t.header, new)), out)
    print(f"{out}: {src.name} as {new}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
