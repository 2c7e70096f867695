"""Rewrite docs/GPU.md's generated tables from a results file (default: the shipped one).

    python tools/gpu/update_gpu_md.py [FILE]

After a new measurement or calibration: recompute the predictions of the shipped file
(``python -m viz.gpu.bottleneck merge assets/measurements/h100.json --out
assets/measurements/h100.json [--calibration FILE]``), then run this, then fix any quote
that tests/test_quotes.py names.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START = "## Tables of the shipped file"


def main(argv: list[str]) -> int:
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "gpu" / "report_md.py"), *argv], capture_output=True,
                         text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    path = ROOT / "docs" / "GPU.md"
    text = path.read_text(encoding="utf-8")
    a = text.index(START)
    start = text.index("Measured: ", a)
    # up to the next section (a horizontal rule and "## ...", or the traces' section)
    end = text.index("\n## ", start)
    seg = text[start:end].rstrip()
    if seg.endswith("---"):
        end = start + len(seg) - 3
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text[:start] + out.strip() + "\n\n" + text[end:], encoding="utf-8")
    os.replace(tmp, path)
    print(f"{path}: generated tables rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
