"""The cache folder (the platform's, XDG_CACHE_HOME, WARPVIZ_CACHE) and the compile cache's cap:
least recently used entries go first, and only the files warpviz wrote there."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from viz import cachedir
from viz.toolchain import compile as comp

ROOT = Path(__file__).resolve().parent.parent
KEY = "0123456789abcdef0123456789abcdef"


def key(i: int) -> str:
    return f"{i:032x}"


def entry(folder: Path, name: str, size: int, age: float) -> Path:
    p = folder / name
    p.write_bytes(b"x" * size)
    t = time.time() - age
    os.utime(p, (t, t))
    return p


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_CACHE_HOME is the Linux convention")
def test_the_cache_is_in_xdg_cache_home_and_warpviz_cache_moves_it(tmp_path, monkeypatch):
    monkeypatch.delenv("WARPVIZ_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cachedir.root() == tmp_path / "xdg" / "warpviz"
    assert comp.cache_dir() == tmp_path / "xdg" / "warpviz" / "cubin" and comp.cache_dir().is_dir()
    monkeypatch.setenv("WARPVIZ_CACHE", str(tmp_path / "mine"))
    assert cachedir.numba_dir() == tmp_path / "mine" / "numba"
    assert comp.cache_dir() == tmp_path / "mine" / "cubin"


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_CACHE_HOME is the Linux convention")
def test_numba_caches_in_the_platform_folder_unless_numba_cache_dir_is_set(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "WARPVIZ_CACHE")}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), PYTHONPATH=str(ROOT))
    probe = "import os, viz.kernels_numba; print(os.environ['NUMBA_CACHE_DIR'])"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == str(tmp_path / "xdg" / "warpviz" / "numba"), out.stderr
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "own")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == str(tmp_path / "own"), out.stderr


def test_trim_removes_the_least_recently_used_entries_and_nothing_else(tmp_path):
    old = entry(tmp_path, f"{key(1)}.cubin", 400, age=300)
    mid = entry(tmp_path, f"{key(2)}.usage.json", 400, age=200)
    new = entry(tmp_path, f"{key(3)}.trace.cubin", 400, age=100)
    sass = entry(tmp_path, f"{key(4)}.sass7-x.json", 100, age=50)
    # not warpviz's entries, older and bigger than all: left alone and not counted
    notes = entry(tmp_path, "notes.txt", 5000, age=1000)
    odd = entry(tmp_path, f"{key(5)}.tar", 5000, age=1000)
    short = entry(tmp_path, f"{KEY[:31]}.cubin", 5000, age=1000)
    folder = tmp_path / f"{key(6)}.cubin"
    folder.mkdir()
    outside = entry(tmp_path.parent, f"{tmp_path.name}-target", 5000, age=1000)
    link = tmp_path / f"{key(7)}.cubin"
    link.symlink_to(outside)
    same_key_as_new = entry(tmp_path, f"{key(3)}.trace.json", 10, age=400)   # one entry with `new`: used 100 s ago
    removed = cachedir.trim(tmp_path, limit=600)
    assert removed == [old, mid]
    assert {p.name for p in tmp_path.iterdir()} == {new.name, same_key_as_new.name, sass.name, notes.name, odd.name, short.name,
                                                    folder.name, link.name}
    assert outside.read_bytes() == b"x" * 5000
    assert cachedir.trim(tmp_path, limit=500) == [new, same_key_as_new] and sass.exists()
    assert cachedir.trim(tmp_path, limit=0) == [sass]
    assert cachedir.trim(tmp_path, limit=0) == [] and notes.exists() and folder.is_dir()


def test_the_cap_is_256_mib_unless_warpviz_cache_max_mb_says(monkeypatch):
    monkeypatch.delenv("WARPVIZ_CACHE_MAX_MB", raising=False)
    assert cachedir.max_bytes() == 256 * 2**20
    for text, want in (("64", 64 * 2**20), ("0", 0), (" 1 ", 2**20), ("-1", 256 * 2**20), ("abc", 256 * 2**20),
                       ("1e9", 256 * 2**20), ("9" * 5000, 256 * 2**20), ("1048577", 256 * 2**20)):
        monkeypatch.setenv("WARPVIZ_CACHE_MAX_MB", text)
        assert cachedir.max_bytes() == want, text


def test_compiling_keeps_the_cache_under_its_cap_and_a_hit_counts_as_use(tmp_path, monkeypatch):
    """compile_cubin with nvcc replaced by a stand-in that makes 400 KiB 'cubins': with a 1 MiB
    cap, the third source's write removes the entry used longest ago, which is not the one
    just read from the cache."""
    monkeypatch.setenv("WARPVIZ_CACHE", str(tmp_path))
    monkeypatch.setenv("WARPVIZ_CACHE_MAX_MB", "1")
    runs = []

    def fake_nvcc(source, arch, flags, timeout):
        runs.append(source)
        return b"\x7fELF" + b"\0" * (400 << 10), {"k": {"registers": 8}}

    monkeypatch.setattr(comp, "_nvcc", fake_nvcc)
    monkeypatch.setattr(comp, "require_nvcc", lambda: "nvcc")
    src = {n: f"// {n}\n" for n in "abc"}
    files = {}
    for age, n in ((200, "a"), (100, "b")):
        comp.compile_cubin(src[n])
        files[n] = [p for p in tmp_path.joinpath("cubin").iterdir() if p.name.startswith(comp._key(src[n], comp.ARCH,
                                                                                                 comp.NVCC_FLAGS))]
        for p in files[n]:
            os.utime(p, (time.time() - age,) * 2)
    assert len(files["a"]) == len(files["b"]) == 2                  # the cubin and ptxas' report
    assert comp.compile_cubin(src["a"])[:4] == b"\x7fELF" and runs == ["// a\n", "// b\n"]   # a hit: a is used now
    comp.compile_cubin(src["c"])
    assert [p.exists() for p in files["a"]] == [True, True]
    assert not any(p.exists() for p in files["b"])
    total = sum(p.stat().st_size for p in tmp_path.joinpath("cubin").iterdir())
    assert total <= 2**20
    comp.compile_cubin(src["b"])
    assert runs == ["// a\n", "// b\n", "// c\n", "// b\n"]
