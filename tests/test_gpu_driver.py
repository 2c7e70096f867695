"""The driver calls behind the GPU runs (``viz.gpu.driver``): named methods, and nobody
outside the runner reaching through a session to PyCUDA or to the session's private helpers.

The recording runs of ``viz.trace.record`` are driven here by a fake PyCUDA module that
keeps device memory in numpy arrays, so the calls they make (upload, launch, download of the
counter) run for real without a GPU; ``-m gpu`` tests in test_trace_recorder.py and
test_gpu_runner.py run them on the device."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from viz.gpu.driver import STATIC_SHARED_BYTES, Driver, KernelFault, Symbol

ROOT = Path(__file__).resolve().parents[1]


class _Error(Exception):
    pass


class _OutOfMemory(_Error):
    pass


class _Alloc:
    """A device allocation: its address and bytes (numpy)."""

    def __init__(self, mem, address, nbytes):
        self.mem, self.address, self.freed = mem, address, False
        mem.blocks[address] = np.zeros(nbytes, np.uint8)

    def __int__(self):
        return self.address

    def free(self):
        self.freed = True


class _Function:
    def __init__(self, module, name):
        self.module, self.name, self.prepared, self.attributes, self.calls = module, name, [], [], []

    def prepare(self, fmt):
        self.prepared.append(fmt)

    def set_attribute(self, attr, value):
        self.attributes.append((attr, value))

    def prepared_call(self, grid, block, *args, shared_size=0):
        self.calls.append(("prepared", grid, block, args, shared_size))

    def __call__(self, *args, block, grid, shared=0):
        self.calls.append(("call", grid, block, args, shared))
        self.module.on_launch(args)


class _Memory:
    """A fake pycuda.driver: device memory is a dict of numpy arrays by address."""

    Error = _Error
    MemoryError = _OutOfMemory
    function_attribute = SimpleNamespace(MAX_DYNAMIC_SHARED_SIZE_BYTES="max-dynamic-shared")

    def __init__(self, executed=7, limit=1 << 30):
        self.blocks: dict[int, np.ndarray] = {}
        self.next = 0x1000
        self.executed, self.limit, self.syncs, self.loaded = executed, limit, 0, 0
        self.Context = SimpleNamespace(synchronize=self._sync)

    def _sync(self):
        self.syncs += 1

    def mem_alloc(self, nbytes):
        if nbytes > self.limit:
            raise _OutOfMemory("out of memory")
        a = _Alloc(self, self.next, nbytes)
        self.next += -(-nbytes // 256) * 256 + 256
        return a

    def _at(self, address):
        for base, arr in self.blocks.items():
            if base <= address < base + arr.size:
                return arr, address - base
        raise _Error(f"bad address {address:#x}")

    def memcpy_htod(self, dst, host):
        arr, off = self._at(int(dst))
        b = np.ascontiguousarray(host).view(np.uint8).ravel()
        arr[off:off + b.size] = b

    def memcpy_dtoh(self, host, src):
        arr, off = self._at(int(src))
        view = host.view(np.uint8).reshape(-1)
        view[:] = arr[off:off + view.size]

    def module_from_buffer(self, cubin):
        self.loaded += 1
        return _Module(self)


class _Module:
    """A loaded instrumented kernel: its ``__device__`` control words, and a launch that
    counts ``executed`` warp executions into the counter the control words name."""

    def __init__(self, mem):
        self.mem = mem
        from viz.trace.ptx import BITMAP_SYMBOL, BITMAP_WORDS, CTL_SYMBOL

        self.ctl = CTL_SYMBOL
        self.globals = {name: mem.mem_alloc(nbytes) for name, nbytes in
                        ((CTL_SYMBOL, 64), (BITMAP_SYMBOL, 4 * BITMAP_WORDS), ("wv_ctab", 128))}

    def get_function(self, name):
        return _Function(self, name)

    def get_global(self, name):
        a = self.globals[name]
        return int(a), self.mem.blocks[int(a)].size

    def on_launch(self, _args):
        ctl = np.zeros(4, np.uint64)
        self.mem.memcpy_dtoh(ctl, self.globals[self.ctl])
        if not ctl[1]:
            return                            # the plain kernel: nothing counted
        counter = np.array([self.mem.executed], np.uint32)
        self.mem.memcpy_htod(int(ctl[1]), counter)


class _Session:
    """What ``viz.trace.record`` asks of a session: a driver and a guard, nothing else."""

    def __init__(self, mem):
        self.driver = Driver(mem)

    def guard(self, what, call):
        return self.driver.guard(what, call)


def _req(shared=0):
    return {"kernel": "k", "cubin": b"\x7fELF", "block": [32, 1, 1], "grid": [2, 1, 1], "shared": shared,
            "args": [{"type": "float*"}, {"type": "int", "value": 5}], "offsets": [0, -1],
            "buffer": np.arange(512, dtype=np.uint8), "blocks": None, "max_records": 3}


def test_a_kernel_is_loaded_once_prepared_once_and_allowed_its_shared_memory_once():
    mem = _Memory()
    drv = Driver(mem)
    k = drv.kernel(b"cubin", "f")
    assert drv.kernel(b"cubin", "f") is k and mem.loaded == 1
    assert drv.kernel(b"other", "f") is not k and mem.loaded == 2
    k.prepare("PQ").prepare("PQ")
    k.allow_shared(STATIC_SHARED_BYTES)           # within the static 48 KiB: no opt-in
    k.allow_shared(100_000)
    k.allow_shared(100_000)
    assert k._function.prepared == ["PQ"]
    assert k._function.attributes == [("max-dynamic-shared", 100_000)]
    assert k.symbol("wv_ctab") == Symbol(int(k._module.globals["wv_ctab"]), 128)


def test_a_failed_driver_call_is_a_kernel_fault_and_breaks_the_context():
    drv = Driver(_Memory())

    def fault():
        raise _Error("an illegal memory access was encountered")

    with pytest.raises(KernelFault, match="launch of k failed on the GPU: an illegal memory access"):
        drv.guard("launch of k", fault)
    assert drv.broken
    with pytest.raises(KernelFault, match="broken by an earlier fault"):
        drv.guard("anything", lambda: 1)


def test_an_allocation_too_large_names_its_size():
    drv = Driver(_Memory(limit=1 << 20))
    with pytest.raises(KernelFault, match="cannot allocate 64 MiB on the GPU"):
        drv.alloc(64 << 20)
    assert int(drv.alloc(10)) > 0


def test_the_recording_runs_count_then_record_through_the_named_driver_calls():
    from viz.trace.record import run_fault_check, run_plain, run_recording

    mem = _Memory(executed=7)
    s = _Session(mem)
    stages = []
    out = run_recording(s, _req(shared=64 * 1024), progress=stages.append)
    assert stages == ["record"]
    assert out["executed"] == 7 and out["executed_again"] == 7 and out["capacity"] == 3      # max_records
    assert out["header"].shape == (3, 8) and out["addr"].shape == (3, 32)
    fn = next(iter(s.driver._kernels.values()))._function
    assert [c[0] for c in fn.calls] == ["call", "call"]
    _kind, grid, block, args, shared = fn.calls[0]
    assert grid == (2, 1, 1) and block == (32, 1, 1) and shared == 64 * 1024
    assert args[1] == np.int32(5) and isinstance(args[1], np.int32)
    assert fn.attributes == [("max-dynamic-shared", 64 * 1024)]
    run_plain(s, _req())
    assert run_fault_check(s, _req()) is None        # the fake kernel writes no fault
    assert mem.syncs == 4 and not s.driver.broken


def test_the_recording_fails_as_a_kernel_fault_on_a_driver_error():
    from viz.trace.record import run_plain

    mem = _Memory()
    s = _Session(mem)
    mem.Context = SimpleNamespace(synchronize=lambda: (_ for _ in ()).throw(_Error("unspecified launch failure")))
    with pytest.raises(KernelFault, match="launch of k failed on the GPU: unspecified launch failure"):
        run_plain(s, _req())
    assert s.driver.broken


def _reaches(path: Path) -> list[str]:
    """``x.cuda`` / ``x._name`` attribute reads on a name other than ``self`` in ``path``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id != "self":
            if node.attr == "cuda" or (node.attr.startswith("_") and not node.attr.startswith("__")):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    return out


@pytest.mark.parametrize("module", ["viz/trace/record.py", "viz/gpu/calibrate.py", "viz/gpu/ncu_driver.py",
                                    "viz/gpu/trace_ncu_driver.py", "viz/gpu/bench.py", "viz/gpu/tracebench.py",
                                    "tools/gpu/retime.py"])
def test_no_run_reaches_through_a_session_to_pycuda_or_its_private_helpers(module):
    reached = [r for r in _reaches(ROOT / module) if ".cuda" in r or "session." in r or "s._" in r]
    assert reached == []


def test_only_the_runner_and_the_driver_hold_the_pycuda_module():
    holders = []
    for path in sorted((ROOT / "viz").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "import pycuda" in text or ".cuda." in text.replace("torch.cuda.", ""):
            holders.append(path.relative_to(ROOT).as_posix())
    assert holders == ["viz/gpu/driver.py", "viz/gpu/runner.py"]
