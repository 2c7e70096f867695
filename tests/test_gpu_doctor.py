"""`warpviz gpu-check` (viz.gpu.doctor): what PyCUDA's build needs, read from a made-up toolkit in
tmp_path (no GPU, no real CUDA needed): the full toolkit, one without cuRAND (the route that
leaves it out), one without cuda.h, and an nvcc wrapper that hides where the toolkit is."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from viz.cli import main
from viz.gpu import doctor


def toolkit(tmp_path: Path, curand: bool = True, cuda_h: bool = True) -> Path:
    root = tmp_path / "cuda-13.0"
    for d in ("bin", "include", "lib64", "targets/x86_64-linux/include"):
        (root / d).mkdir(parents=True)
    nvcc = root / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\nexit 0\n")
    nvcc.chmod(0o755)
    if cuda_h:
        (root / "targets" / "x86_64-linux" / "include" / "cuda.h").write_text("/* */\n")
    (root / "lib64" / "libcuda.so").write_bytes(b"")
    if curand:
        (root / "include" / "curand.h").write_text("/* */\n")
        (root / "lib64" / "libcurand.so").write_bytes(b"")
    return root


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """This process sees only the made-up toolkit, a made-up C++ compiler and Python headers."""
    for var in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH", "CPATH", "CPLUS_INCLUDE_PATH", "LIBRARY_PATH"):
        monkeypatch.delenv(var, raising=False)
    cxx = tmp_path / "tools" / "c++"
    cxx.parent.mkdir()
    cxx.write_text("#!/bin/sh\n")
    cxx.chmod(0o755)
    monkeypatch.setenv("CXX", str(cxx))
    inc = tmp_path / "py" / "include"
    inc.mkdir(parents=True)
    (inc / "Python.h").write_text("/* */\n")
    monkeypatch.setattr(doctor.sysconfig, "get_paths", lambda: {"include": str(inc)})
    monkeypatch.setattr(doctor.ctypes.util, "find_library", lambda name: None)    # not the system's
    monkeypatch.setattr("viz.toolchain.compile.find_nvcc", lambda: doctor.shutil.which("nvcc"))
    monkeypatch.setattr(doctor, "find_nvcc", lambda: doctor.shutil.which("nvcc"))
    monkeypatch.setattr(doctor, "find_tool", lambda name: None)
    monkeypatch.setattr(doctor, "DEFAULT_ROOTS", ())                               # not this machine's
    return tmp_path


def lines(capsys) -> dict[str, str]:
    out = capsys.readouterr().out
    return {line[9:].split("  ")[0].strip(): line[:8].strip() for line in out.splitlines()
            if line[:8].strip() in ("ok", "missing", "absent")} | {"": out}


@pytest.mark.skipif(sys.platform == "win32", reason="shell scripts stand in for the tools")
def test_a_full_toolkit_can_build_pycuda(machine, monkeypatch, capsys):
    root = toolkit(machine)
    monkeypatch.setenv("PATH", f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert main(["gpu-check"]) == 0
    seen = lines(capsys)
    for name in ("Python headers", "C++ compiler", "nvcc (CUDA compiler)", "CUDA_ROOT (where PyCUDA's build looks)",
                 "cuda.h (driver API header)", "curand.h (cuRAND header)", "libcurand.so (cuRAND library)",
                 "libcuda.so (the driver, or the toolkit's stub)"):
        assert seen[name] == "ok", (name, seen[""])
    assert seen["PyCUDA"] in ("ok", "absent")
    assert "Everything PyCUDA's build needs is here: pip install 'warpviz[gpu]'" in seen[""] or \
        "PyCUDA is installed" in seen[""]


@pytest.mark.skipif(sys.platform == "win32", reason="shell scripts stand in for the tools")
def test_without_curand_it_gives_the_route_that_leaves_curand_out(machine, monkeypatch, capsys):
    pytest.importorskip("numpy")
    root = toolkit(machine, curand=False)
    monkeypatch.setenv("PATH", f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(doctor.importlib.metadata, "version", _no_pycuda)
    monkeypatch.setattr(doctor.importlib.util, "find_spec", lambda name: None)
    assert main(["gpu-check"]) == 0
    seen = lines(capsys)
    assert seen["curand.h (cuRAND header)"] == "missing" and seen["libcurand.so (cuRAND library)"] == "missing"
    assert seen["cuda.h (driver API header)"] == "ok"
    assert "This toolkit has no cuRAND" in seen[""]
    assert f"python configure.py --cuda-root={root} --no-cuda-enable-curand" in seen[""]
    assert "pip install --no-build-isolation ." in seen[""]


def _no_pycuda(name):
    raise doctor.importlib.metadata.PackageNotFoundError(name)


@pytest.mark.skipif(sys.platform == "win32", reason="shell scripts stand in for the tools")
def test_without_cuda_h_it_cannot_build_and_exits_1(machine, monkeypatch, capsys):
    root = toolkit(machine, cuda_h=False)
    monkeypatch.setenv("PATH", f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(doctor.importlib.metadata, "version", _no_pycuda)
    monkeypatch.setattr(doctor.importlib.util, "find_spec", lambda name: None)
    assert main(["gpu-check"]) == 1
    seen = lines(capsys)
    assert seen["cuda.h (driver API header)"] == "missing"
    assert "PyCUDA cannot be built here yet" in seen[""]


@pytest.mark.skipif(sys.platform == "win32", reason="shell scripts stand in for the tools")
def test_an_nvcc_wrapper_elsewhere_asks_for_cuda_root(machine, monkeypatch, capsys):
    """nvcc on PATH is a script in another bin/ (as /usr/local/bin/nvcc): PyCUDA's build would look
    in that bin's parent, so CUDA_ROOT must name the toolkit, which was found through CUDA_HOME."""
    root = toolkit(machine)
    wrap = machine / "usr-local" / "bin"
    wrap.mkdir(parents=True)
    (wrap / "nvcc").write_text(f"#!/bin/sh\nexec {root}/bin/nvcc \"$@\"\n")
    (wrap / "nvcc").chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrap}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CUDA_HOME", str(root))
    main(["gpu-check"])
    out = capsys.readouterr().out
    assert re.search(r"^missing +CUDA_ROOT", out, re.M) and f"-> export CUDA_ROOT={root} " in out
    monkeypatch.setenv("CUDA_ROOT", str(root))
    main(["gpu-check"])
    assert re.search(rf"^ok +CUDA_ROOT \(where PyCUDA's build looks\) +{re.escape(str(root))} \(CUDA_ROOT\)$",
                     capsys.readouterr().out, re.M)
