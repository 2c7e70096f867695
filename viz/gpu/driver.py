"""The CUDA driver calls warpviz makes, each a named, typed method (PyCUDA behind them).

``runner.Session`` owns one ``Driver`` (``session.driver``); the code that runs kernels on
it (the runner itself, ``viz.trace.record``'s recording runs, ``viz.gpu.calibrate``'s
microbenchmarks, ``viz.gpu.ncu_driver``) calls these methods instead of reaching through
the session to PyCUDA's module or the session's private helpers. Import-linter can then see
who talks to the GPU (``viz.gpu.driver``), and a test can hand any of them a fake driver
with the same methods.

PyCUDA is never imported here: ``Driver`` is given the ``pycuda.driver`` module by the
session that initialised it, so this module imports on a machine without CUDA.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, TypeVar

import numpy as np

from ..errors import WarpvizError

T = TypeVar("T")

STATIC_SHARED_BYTES = 48 * 1024     # dynamic shared memory above this needs the function's opt-in


class KernelFault(WarpvizError, RuntimeError):
    """A launch failed on the GPU (misaligned or out-of-bounds address, too long, ...)."""


DeviceBuffer = Any          # PyCUDA's DeviceAllocation: int(buf) is its address, buf.free() frees it
Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class Symbol:
    """A ``__device__`` global of a loaded module: its address and size."""

    address: int
    nbytes: int


class Kernel:
    """One function of a loaded cubin."""

    def __init__(self, driver: "Driver", function: Any, module: Any, name: str):
        self._driver = driver
        self._function = function
        self._module = module          # kept alive as long as the function
        self._format: str | None = None
        self._shared = 0
        self.name = name

    def prepare(self, arg_format: str) -> "Kernel":
        """Fix the argument layout (struct codes, ``runner.ARG_FORMATS``) for ``launch``."""
        if self._format != arg_format:
            self._function.prepare(arg_format)
            self._format = arg_format
        return self

    def allow_shared(self, nbytes: int) -> None:
        """Let a launch use ``nbytes`` of dynamic shared memory (the opt-in above 48 KiB)."""
        if nbytes > STATIC_SHARED_BYTES and nbytes != self._shared:
            self._function.set_attribute(self._driver.cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes)
            self._shared = nbytes

    def launch(self, grid: Dim3, block: Dim3, *args, shared: int = 0) -> None:
        """Queue one launch with the prepared argument layout (``prepare``)."""
        self._function.prepared_call(grid, block, *args, shared_size=shared)

    def call(self, args: list, grid: Dim3, block: Dim3, shared: int = 0) -> None:
        """Queue one launch whose arguments carry their own types (numpy scalars)."""
        self._function(*args, block=tuple(block), grid=tuple(grid), shared=shared)

    def symbol(self, name: str) -> Symbol:
        """The module's ``__device__`` global ``name``."""
        address, nbytes = self._module.get_global(name)
        return Symbol(int(address), int(nbytes))


class Driver:
    """The CUDA driver of one context (made current by ``runner.Session``)."""

    def __init__(self, cuda: Any):
        self.cuda = cuda            # pycuda.driver: only this class and runner.Session use it
        self._kernels: dict[tuple[str, str], Kernel] = {}
        self.broken = False

    @property
    def error(self) -> type[Exception]:
        """The exception class of a failed driver call."""
        return self.cuda.Error

    # -- code -------------------------------------------------------------

    def kernel(self, cubin: bytes, name: str, loader: Any = None) -> Kernel:
        """Function ``name`` of ``cubin``, loaded once per cubin, name and loader. ``loader``:
        ``loader(cubin, name, error)`` gives a function of one's own (called with the launch's
        arguments, ``set_attribute``, ``get_global``) in place of PyCUDA's: a launch with
        tensor-map or struct parameters goes through ``cuLaunchKernel``'s ``kernelParams``
        (``viz.trace.tensormaps.DriverFunction``)."""
        import hashlib

        key = (hashlib.sha256(cubin).hexdigest(), name, loader is not None)
        k = self._kernels.get(key)
        if k is None:
            if loader is not None:
                fn = loader(cubin, name, self.cuda.Error)
                k = Kernel(self, fn, fn, name)
            else:
                module = self.cuda.module_from_buffer(cubin)
                k = Kernel(self, module.get_function(name), module, name)
            self._kernels[key] = k
        return k

    def forget_kernels(self) -> None:
        self._kernels.clear()

    # -- memory -----------------------------------------------------------

    def alloc(self, nbytes: int) -> DeviceBuffer:
        """``nbytes`` (rounded up to 256, at least 256) of device memory; KernelFault when it
        does not fit."""
        try:
            return self.cuda.mem_alloc(max(256, -(-nbytes // 256) * 256))
        except self.cuda.MemoryError as err:
            raise KernelFault(f"cannot allocate {nbytes / 2**20:.0f} MiB on the GPU: {err}") from None

    def alloc_exact(self, nbytes: int) -> DeviceBuffer:
        """Exactly ``nbytes`` of device memory (a driver error, not KernelFault, when it does
        not fit: callers run it inside ``guard``)."""
        return self.cuda.mem_alloc(nbytes)

    def upload(self, dst: DeviceBuffer | int, host: np.ndarray) -> None:
        """Copy ``host`` to device memory at ``dst`` (synchronous)."""
        self.cuda.memcpy_htod(dst, host)

    def download(self, host: np.ndarray, src: DeviceBuffer | int) -> None:
        """Copy device memory at ``src`` into ``host`` (synchronous)."""
        self.cuda.memcpy_dtoh(host, src)

    def copy_async(self, dst: DeviceBuffer | int, src: DeviceBuffer | int, nbytes: int) -> None:
        """Queue a device-to-device copy of ``nbytes`` (cudaMemcpyAsync)."""
        self.cuda.memcpy_dtod_async(dst, src, nbytes)

    def free_bytes(self) -> int:
        """Device memory free now."""
        free, _total = self.cuda.mem_get_info()
        return int(free)

    # -- order and time -----------------------------------------------------

    def synchronize(self) -> None:
        """Wait until everything queued has run (a fault surfaces here)."""
        self.cuda.Context.synchronize()

    def event(self) -> Any:
        """A CUDA event (``record()``, ``query()``, ``synchronize()``, ``time_till(other)`` in ms)."""
        return self.cuda.Event()

    # -- faults -----------------------------------------------------------

    def guard(self, what: str, call: Callable[[], T]) -> T:
        """Run ``call``; turn a CUDA failure into KernelFault. After a fault (an illegal
        address, say) CUDA refuses all further work in this process, so the driver is
        marked broken; ``ProcessSession`` then starts a fresh process."""
        if self.broken:
            raise KernelFault("the GPU context is broken by an earlier fault; start a new session")
        try:
            return call()
        except self.cuda.Error as err:
            message = f"{what} failed on the GPU: {err}"
        self.broken = True
        raise KernelFault(message)


__all__ = ["Driver", "Kernel", "Symbol", "KernelFault", "DeviceBuffer", "STATIC_SHARED_BYTES"]
