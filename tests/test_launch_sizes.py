"""Launch files whose buffers are too large to fill: nothing is allocated before the sizes
are checked. A dry run (``warpviz bench --traces --dry-run``) allocates no buffer at all (it
checks the launch against the H100 it predicts for); a real run checks the buffers against
this machine's memory (``check_host_memory``) before it fills them, and against the GPU's
(``check_fits``). Each refusal is one paragraph naming the launch file and the ``[[arg]]``.

The dry runs below run in a child process whose address space is limited to 2 GiB: an 8 GiB
buffer, a 64 GiB sparse ``file:`` fill and a 4 GiB ``.npy`` would each end in a MemoryError
there if anything were allocated or read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from viz.trace import TraceError
from viz.trace.launch import check_host_memory, host_memory, load_launch

ROOT = Path(__file__).resolve().parents[1]
GiB = 1 << 30


def launch_file(folder: Path, name: str, count: int, fill: str) -> Path:
    for f in ("copy.cu", "common.cuh"):
        (folder / f).write_bytes((ROOT / "kernels" / f).read_bytes())
    p = folder / f"{name}.launch.toml"
    p.write_text(f'format = 2\nsource = "copy.cu"\nkernel = "copy_2d"\nblock = [32, 16, 1]\ngrid = [8, 4, 1]\n\n'
                 f'[[arg]]\ntype = "float*"\ncount = {count}\nfill = "{fill}"\n\n'
                 '[[arg]]\ntype = "float*"\ncount = 16384\nfill = "random"\n\n[[arg]]\ntype = "int"\nvalue = 256\n')
    return p


def sparse_npy(path: Path, elements: int) -> None:
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (elements,)})
        f.truncate(f.tell() + 4 * elements)


CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))     # 2 GiB of address space in all
from viz.gpu.tracebench import PlainBuild, dry_run, traced_launches
items = traced_launches(sys.argv[1:])
doc = dry_run(items, builds={t.name: PlainBuild(b"", {"entry": None}) for t in items})
print(json.dumps({n: {"error": e.get("error"), "bytes": (e.get("dry_run") or {}).get("buffer_bytes")}
                  for n, e in doc["traces"].items()}))
"""


def dry_run_child(*paths: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-c", CHILD, *map(str, paths)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_a_dry_run_allocates_no_buffer(tmp_path):
    """8 GiB of random floats, a 64 GiB sparse file: fill and a 4 GiB .npy (its header read,
    never its data) go through the dry run in 2 GiB of address space; 240 GiB is refused
    naming the file and the [[arg]]."""
    big = launch_file(tmp_path, "b8gib", 2 * GiB, "random")
    with open(tmp_path / "sparse.bin", "wb") as f:
        f.truncate(64 * GiB)                                   # sparse: no disk used
    sparse = launch_file(tmp_path, "sparse", 16 * GiB, "file:sparse.bin")
    sparse_npy(tmp_path / "big.npy", GiB)
    npy = launch_file(tmp_path, "bignpy", GiB, "npy:big.npy")
    huge = launch_file(tmp_path, "b240gib", 60 * GiB, "zero")
    got = dry_run_child(big, sparse, npy, huge)
    extra = 16384 * 4                                           # the second buffer (both are multiples of 256 bytes)
    assert got["b8gib"] == {"error": None, "bytes": 8 * GiB + extra}
    assert got["sparse"] == {"error": None, "bytes": 64 * GiB + extra}
    assert got["bignpy"] == {"error": None, "bytes": 4 * GiB + extra}
    err = got["b240gib"]["error"]
    assert got["b240gib"]["bytes"] is None and err.startswith(f"{huge} (arg 1.count): buffer [[arg]] 1 (float*, "
                                                               "count = 64,424,509,440) needs 240.00 GiB")
    assert "has 78.66 GiB (84,462,993,408 bytes) free; nothing was allocated. Fix: use smaller `count`s" in err


def test_the_cli_refuses_a_240_gib_dry_run_before_compiling(tmp_path):
    huge = launch_file(tmp_path, "b240gib", 60 * GiB, "zero")
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen", PATH="/nonexistent")   # no nvcc
    proc = subprocess.run([sys.executable, "-m", "viz.cli", "bench", "--traces", str(huge), "--dry-run"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"warpviz: {huge} (arg 1.count): buffer [[arg]] 1 (float*, count = 64,424,509,440) needs 240.00 GiB" \
        in proc.stderr and "(the GPU a dry run predicts for)" in proc.stderr


def test_a_real_run_checks_this_machines_memory_before_filling(tmp_path):
    launch = load_launch(launch_file(tmp_path, "b8gib", 2 * GiB, "random"))
    with pytest.raises(TraceError) as err:
        check_host_memory(launch, available=4 * GiB)            # half of it is 2 GiB < 8 GiB
    msg = str(err.value)
    assert msg.startswith(f"{launch.path} (arg 1.count): buffer [[arg]] 1 (float*, count = 2,147,483,648) needs "
                          "8.00 GiB (8,589,934,592 bytes) (all 2 buffers together:")
    assert "it has 4.00 GiB (4,294,967,296 bytes) available (warpviz takes at most half of it); nothing was " \
           "allocated. Fix: use smaller `count`s" in msg
    check_host_memory(launch, available=17 * GiB)               # fits in half of 17 GiB


def test_host_buffer_refuses_before_allocating(tmp_path, monkeypatch):
    from viz.trace import launch as launch_mod
    from viz.trace.record import host_buffer

    launch = load_launch(launch_file(tmp_path, "b8gib", 2 * GiB, "random"))
    monkeypatch.setattr(launch_mod, "host_memory", lambda: GiB)
    monkeypatch.setattr(np, "zeros", lambda *a, **k: pytest.fail("allocated before the check"))
    with pytest.raises(TraceError, match=r"\(arg 1\.count\).*1\.00 GiB \(1,073,741,824 bytes\) available"):
        host_buffer(launch)


def test_host_memory_sees_an_address_space_limit():
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); "
            "from viz.trace.launch import host_memory; print(host_memory())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout
    assert 0 < int(out) < 3 << 30
    assert host_memory() is None or host_memory() > 0
