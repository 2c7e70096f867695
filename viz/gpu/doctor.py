"""``warpviz gpu-check``: what the GPU extra needs, checked before anything is built.

The ``gpu`` extra is PyCUDA, which pip builds from source (4-9 minutes) against the CUDA
toolkit. The build fails late, after minutes, where a piece is missing; this check says in
a second which pieces are there: the Python headers, a C++ compiler, ``nvcc`` and the
toolkit's folder (``CUDA_ROOT``), the headers PyCUDA compiles against (``cuda.h`` and
``curand.h``: toolkits installed from pip wheels or trimmed images often lack cuRAND's), the
cuRAND and driver libraries it links, and then, for running, PyCUDA itself and Nsight
Compute's ``ncu``. Nothing is imported from PyCUDA and no GPU is touched: it reads files,
``PATH`` and the environment. Where only cuRAND is missing it prints the commands that build
PyCUDA without it (``configure.py --no-cuda-enable-curand``: warpviz never uses cuRAND).
Exit 0 when PyCUDA is installed or can be built, 1 when something is missing (each missing
piece says how to get it).
docs/guide/install.md ("The GPU extra") gives the routes.
"""

from __future__ import annotations

import ctypes.util
import glob
import importlib.metadata
import importlib.util
import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from ..toolchain.compile import find_nvcc, find_tool


DEFAULT_ROOTS = ("/usr/local/cuda",)     # where toolkits install themselves when nothing says otherwise


@dataclass
class Check:
    name: str
    ok: bool
    found: str          # what was found (a path, a version), or what is missing
    fix: str = ""       # how to get it, when missing
    needed: bool = True  # False: only for some commands (ncu), never fails the check
    curand: bool = False  # cuRAND's: PyCUDA can be built without it (warpviz does not use cuRAND)


def cuda_roots() -> list[Path]:
    """Where the toolkit may be: CUDA_ROOT, CUDA_HOME, CUDA_PATH, nvcc's folder, /usr/local/cuda."""
    cands = [os.environ.get(k) for k in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")]
    nvcc = find_nvcc()
    if nvcc:
        cands.append(str(Path(nvcc).resolve().parent.parent))
    cands += DEFAULT_ROOTS
    out: list[Path] = []
    for c in cands:
        if c and Path(c) not in out:
            out.append(Path(c))
    return out


def include_dirs(root: Path) -> list[Path]:
    """A toolkit's include folders, and those a C/C++ compiler is told about (CPATH, CPLUS_INCLUDE_PATH)."""
    dirs = [root / "include", *(Path(p) for p in sorted(glob.glob(str(root / "targets" / "*" / "include"))))]
    for var in ("CPATH", "CPLUS_INCLUDE_PATH"):
        dirs += [Path(p) for p in os.environ.get(var, "").split(os.pathsep) if p]
    return dirs


def toolkit_root(header: Path | None) -> Path | None:
    """The toolkit a header is in: ROOT/include/x.h or ROOT/targets/ARCH/include/x.h."""
    if header is None:
        return None
    parts = header.parts
    return Path(*parts[:parts.index("targets")]) if "targets" in parts else header.parent.parent


def find_header(name: str, roots: list[Path]) -> Path | None:
    for root in roots:
        for d in include_dirs(root):
            if (d / name).is_file():
                return d / name
    return None


def find_library(stem: str, roots: list[Path]) -> str | None:
    """``lib<stem>.so`` where the linker looks: the toolkit's lib64 (and its stubs, for
    libcuda), LIBRARY_PATH, then the system's (ldconfig)."""
    dirs = []
    for root in roots:
        dirs += [root / "lib64", root / "lib", root / "lib64" / "stubs", root / "lib" / "stubs",
                 *(Path(p) for p in sorted(glob.glob(str(root / "targets" / "*" / "lib"))))]
    dirs += [Path(p) for p in os.environ.get("LIBRARY_PATH", "").split(os.pathsep) if p]
    for d in dirs:
        if (d / f"lib{stem}.so").exists():
            return str(d / f"lib{stem}.so")
    return ctypes.util.find_library(stem)


def checks() -> list[Check]:
    found: list[Check] = []
    # Python's headers: PyCUDA's C++ extension includes Python.h
    inc = Path(sysconfig.get_paths()["include"])
    found.append(Check("Python headers", (inc / "Python.h").is_file(), str(inc / "Python.h"),
                       "install your Python's development files (Debian/Ubuntu: python3-dev; Fedora: python3-devel)"))
    # a C++ compiler
    cxx = os.environ.get("CXX") or next((c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)
    cxx_path = shutil.which(cxx) if cxx else None
    found.append(Check("C++ compiler", bool(cxx_path), cxx_path or "none of c++, g++, clang++ on PATH",
                       "install one (Debian/Ubuntu: build-essential; Fedora: gcc-c++)"))
    nvcc = find_nvcc()
    found.append(Check("nvcc (CUDA compiler)", bool(nvcc), nvcc or "not on PATH, nor in CUDA_ROOT/bin",
                       "install the CUDA toolkit and put its bin/ on PATH"))
    roots = cuda_roots()
    cuda_h = find_header("cuda.h", roots)
    root = toolkit_root(cuda_h)
    # PyCUDA's build takes CUDA_ROOT, else the folder above the `nvcc` on PATH (wrong where that
    # nvcc is a wrapper script in /usr/local/bin or a pip wheel's entry point)
    env_root = os.environ.get("CUDA_ROOT")
    on_path = shutil.which("nvcc")
    effective = Path(env_root) if env_root else (Path(on_path).parent.parent if on_path else None)
    root_ok = effective is not None and find_header("cuda.h", [effective]) is not None
    found.append(Check("CUDA_ROOT (where PyCUDA's build looks)", root_ok,
                       f"{effective} ({'CUDA_ROOT' if env_root else 'from nvcc on PATH'})" if effective else "unknown",
                       f"export CUDA_ROOT={root or '/usr/local/cuda'} (the folder whose include/ has cuda.h)"))
    found.append(Check("cuda.h (driver API header)", cuda_h is not None, str(cuda_h or "not found"),
                       "install the toolkit's headers (the CUDA toolkit; pip: nvidia-cuda-runtime)"))
    curand_h = find_header("curand.h", roots)
    found.append(Check("curand.h (cuRAND header)", curand_h is not None,
                       str(curand_h or "not found in the toolkit's include folders, CPATH or CPLUS_INCLUDE_PATH"),
                       "PyCUDA compiles its cuRAND wrapper unless told not to: install cuRAND's development files "
                       "(NVIDIA's apt/dnf repository: libcurand-dev-<version> / libcurand-devel-<version>), or "
                       "build PyCUDA without cuRAND (below)", curand=True))
    curand_lib = find_library("curand", roots)
    found.append(Check("libcurand.so (cuRAND library)", bool(curand_lib), curand_lib or "not found",
                       "it comes with cuRAND's development files (as curand.h); LIBRARY_PATH=DIR adds a folder "
                       "that has libcurand.so", curand=True))
    cuda_lib = find_library("cuda", roots)
    found.append(Check("libcuda.so (the driver, or the toolkit's stub)", bool(cuda_lib), cuda_lib or "not found",
                       "install the NVIDIA driver (it has libcuda); to build on a machine without one, the "
                       "toolkit's lib64/stubs/libcuda.so serves the linker"))
    try:
        version = importlib.metadata.version("pycuda")
    except importlib.metadata.PackageNotFoundError:
        version = None
    if version is None and importlib.util.find_spec("pycuda") is not None:
        version = "(version unknown)"
    found.append(Check("PyCUDA", version is not None, f"installed, {version}" if version else "not installed",
                       "pip install 'warpviz[gpu]' once the lines above are ok", needed=False))
    ncu = find_tool("ncu")
    found.append(Check("ncu (Nsight Compute: validate, bench's counters)", bool(ncu), ncu or "not found",
                       "install Nsight Compute and put ncu on PATH (timing works without it)", needed=False))
    return found


def can_build(found: list[Check], curand: bool = True) -> bool:
    """Everything PyCUDA's build needs is there (``curand=False``: leaving cuRAND out)."""
    return all(c.ok for c in found if c.needed and (curand or not c.curand))


def _root(found: list[Check]) -> str:
    header = next((Path(c.found) for c in found if c.name.startswith("cuda.h") and c.ok), None)
    return os.environ.get("CUDA_ROOT") or str(toolkit_root(header) or "/usr/local/cuda")


def without_curand(root: str) -> str:
    """The commands that build PyCUDA from its sdist with cuRAND left out (warpviz never uses it)."""
    return "\n".join([
        "    pip install numpy setuptools wheel             # the build uses this environment's (no isolation)",
        "    pip download --no-deps --no-binary pycuda pycuda  # PyCUDA's source (pycuda-VERSION.tar.gz)",
        "    tar xzf pycuda-*.tar.gz && cd pycuda-*/",
        f"    python configure.py --cuda-root={root} --no-cuda-enable-curand",
        "    pip install --no-build-isolation .              # builds with that siteconf.py (minutes)",
        "    pip install 'warpviz[gpu]'                       # PyCUDA is there now: nothing more is built",
    ])


def report(found: list[Check]) -> str:
    lines = []
    width = max(len(c.name) for c in found)
    for c in found:
        mark = "ok" if c.ok else ("missing" if c.needed else "absent")
        lines.append(f"{mark:8} {c.name:{width}}  {c.found}")
        if not c.ok and c.fix:
            lines.append(f"{'':8} {'':{width}}  -> {c.fix}")
    pycuda = next(c for c in found if c.name == "PyCUDA")
    if pycuda.ok:
        lines.append("PyCUDA is installed: `warpviz validate transpose-tile` tries the GPU.")
    elif can_build(found):
        lines.append("Everything PyCUDA's build needs is here: pip install 'warpviz[gpu]' (it compiles for a few "
                     "minutes).")
    elif can_build(found, curand=False):
        lines.append("This toolkit has no cuRAND, so pip install 'warpviz[gpu]' would fail after minutes of "
                     "compiling. warpviz does not use cuRAND: build PyCUDA without it, then install the extra:")
        lines.append(without_curand(_root(found)))
    else:
        lines.append("PyCUDA cannot be built here yet: pip install 'warpviz[gpu]' would fail after minutes of "
                     "compiling. Fix the lines marked missing first.")
    return "\n".join(lines)


def cmd_gpu_check(args=None) -> int:
    found = checks()
    print(report(found))
    pycuda = next(c for c in found if c.name == "PyCUDA")
    return 0 if pycuda.ok or can_build(found, curand=False) else 1


def main() -> int:
    return cmd_gpu_check()


if __name__ == "__main__":
    sys.exit(main())
