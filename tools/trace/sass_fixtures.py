"""Write the SASS fixtures of tests/test_trace_reconcile.py: for each source, its PTX (nvcc
-ptx, as `warpviz trace` compiles it) and `nvdisasm -gp -c` of the cubin ptxas makes of it
(each SASS instruction under the PTX line it came from), into tests/data/sass/NAME.ptx and
NAME.gp.sass. Needs nvcc, ptxas and nvdisasm (the CUDA toolkit, or the
nvidia-cuda-nvdisasm wheel's bin folder on the PATH); no GPU.

    python tools/trace/sass_fixtures.py [NAME ...]     (only these sources' fixtures)
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "tests" / "data" / "sass"
SOURCES = [ROOT / "kernels" / "trace" / n for n in ("sgemm_tile16.cu", "shared_fused.cu", "softmax_row.cu",
                                                   "generic_atomic.cu", "cpasync_double.cu")] + \
    [OUT / n for n in ("atomic_forms.cu", "two_kernels.cu", "tile8_copies.cu", "cg_wait.cu")]


def main(argv: list[str]) -> int:
    from viz.toolchain.compile import ARCH, find_tool
    from viz.trace.build import NVCC_FLAGS, assemble
    from viz.trace.reconcile import sass_with_ptx_lines

    if not (find_tool("nvcc") and find_tool("nvdisasm")):
        print("sass_fixtures: needs nvcc and nvdisasm on the PATH", file=sys.stderr)
        return 2
    for src in SOURCES:
        if argv and src.stem not in argv:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(src, Path(tmp) / src.name)       # a relative .file name in the PTX
            subprocess.run([find_tool("nvcc"), "-ptx", f"-arch={ARCH}", *NVCC_FLAGS, "-o", "k.ptx", src.name],
                           cwd=tmp, check=True)
            ptx = (Path(tmp) / "k.ptx").read_text().replace(f"{tmp}/", "")
        sass = sass_with_ptx_lines(assemble(ptx))
        sass = re.sub(r"\n\s*\n+", "\n", sass)
        (OUT / f"{src.stem}.ptx").write_text(ptx)
        (OUT / f"{src.stem}.gp.sass").write_text(sass)
        print(f"{src.stem}: {len(ptx.splitlines())} PTX lines, {len(sass.splitlines())} SASS lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
