"""The one place hot loops are compiled: :class:`Kernel`, numba's ``njit`` only where it pays.

A kernel is a plain Python function on numpy arrays and scalars. Called from Python, a
:class:`Kernel` runs it **interpreted** while its work (an estimate from its arguments, by
default their total size) stays within the kernel's budget, and **compiled** (numba, cached on
disk) beyond: small inputs never wait for a compile. Both paths run the same source, so their
results are identical to the last bit (``tests/test_kernels.py`` checks it on random inputs).
Inside either path a kernel calls other kernels the same way: compiled code calls their compiled
versions, interpreted code their Python ones.

The compile itself happens once per machine (numba's cache; ``ocsched warmup`` fills it ahead,
see :func:`ocsched.warmup.warmup`). Its time is kept out of every run time: :func:`clock` is
:func:`time.perf_counter` less the seconds spent compiling or loading kernels, and the first
compile says so once on stderr (logger ``ocsched.kernels``).

The cache lives in a directory named by a hash of every kernel module's source (plus the numba
and Python versions): editing any kernel, even one another module's kernel calls, starts a fresh
cache, where numba alone would only notice an edit to the calling function's own file.
``NUMBA_CACHE_DIR`` chooses the parent directory (else ``__pycache__/numba`` beside this
package, or ``~/.cache/ocsched/numba`` if that is read-only); ``make clean`` clears it.
``NUMBA_DISABLE_JIT=1`` runs every kernel interpreted.

numba is a dependency, imported only at the first compiled call; without it every kernel runs
interpreted (and slowly on large inputs).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, overload

import numpy as np

__all__ = [
    "DEFAULT_BUDGET",
    "HAVE_NUMBA",
    "Kernel",
    "cache_dir",
    "clock",
    "compile_seconds",
    "compiled_only",
    "interpreted_only",
    "is_warm",
    "jit",
    "kernels",
    "mark_warm",
]

log = logging.getLogger("ocsched.kernels")

HAVE_NUMBA = importlib.util.find_spec("numba") is not None

#: Work (total size of the array arguments, unless a kernel says otherwise) up to which a kernel
#: runs interpreted: about 10-50 ms of Python on the kernels of this package.
DEFAULT_BUDGET = 20_000
#: What the first compile announces (measured by ``ocsched warmup`` on a 2-core machine: every
#: kernel compiles in 20-40 s CPU; one scheduler's kernels in 5-20 s).
_COMPILE_ESTIMATE_S = 20

_KERNELS: list[Kernel] = []
_local = threading.local()  # .interpreting: inside an interpreted kernel (its callees too)
_lock = threading.Lock()
# force: how many compiled_only() blocks are open (a count, so that threads may nest them).
_state: dict[str, Any] = {"compile_s": 0.0, "announced": False, "ready": False, "force": 0}


def _disabled() -> bool:
    return not HAVE_NUMBA or os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")


def _size(arg: Any) -> int:
    if isinstance(arg, np.ndarray):
        return int(arg.size)
    if isinstance(arg, tuple):
        return sum(_size(a) for a in arg)
    return 0


def default_work(*args: Any) -> int:
    """The default work of a call: the total size of its array arguments (in tuples too)."""
    return sum(_size(a) for a in args)


class Kernel:
    """A hot loop that runs interpreted on small calls and compiled (numba) on large ones.

    Parameters
    ----------
    func : callable
        The kernel's plain Python source (numba's nopython subset). It must live in a file:
        numba caches it by its module's path.
    work : callable, optional
        The call's work from its arguments (default: :func:`default_work`, their total size).
    budget : int, optional
        The work up to which a call runs interpreted (default :data:`DEFAULT_BUDGET`).

    Examples
    --------
    >>> import numpy as np
    >>> from ocsched._jit import Kernel
    >>> def total(a):
    ...     s = 0.0
    ...     for x in a:
    ...         s += x
    ...     return s
    >>> k = Kernel(total)
    >>> k(np.arange(4.0))  # small: interpreted, no compile
    6.0
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        work: Callable[..., int] | None = None,
        budget: int = DEFAULT_BUDGET,
    ) -> None:
        self.py_func = func
        self.work = work or default_work
        self.budget = budget
        self._dispatcher: Any = None
        self._known: bool | None = None  # compiled into the cache by some process
        functools.update_wrapper(self, func)
        _KERNELS.append(self)

    @property
    def dispatcher(self) -> Any:
        """The numba dispatcher of this kernel (created, not compiled, on first use)."""
        if self._dispatcher is None:
            _numba_ready()
            import numba

            self._dispatcher = numba.njit(cache=True, nogil=True)(self.py_func)
        return self._dispatcher

    def interpreted(self, *args: Any) -> Any:
        """Run the kernel interpreted, and every kernel it calls."""
        outer = getattr(_local, "interpreting", False)
        _local.interpreting = True
        try:
            out = self.py_func(*args)
        finally:
            _local.interpreting = outer
        # Returned as compiled code returns it: numpy scalars boxed as Python numbers.
        return out if outer else _boxed(out)

    def compiled(self, *args: Any) -> Any:
        """Run the kernel compiled (compiling it, or loading it from the cache, if needed)."""
        if _disabled():
            return self.interpreted(*args)
        with compiled_only():
            return self(*args)

    def uses_compiled(self, *args: Any) -> bool:
        """Whether a call with these arguments runs compiled.

        Compiled: beyond the budget, or (above a tenth of it) where the compiled kernel is
        loaded or cached already (``ocsched warmup``, an earlier run); interpreted otherwise,
        and always inside an interpreted kernel. Either way the result is the same.
        """
        if getattr(_local, "interpreting", False) or _disabled():
            return False
        if _state["force"] or (self._dispatcher is not None and self._dispatcher.signatures):
            return True
        work = self.work(*args)
        if work > self.budget:
            return True
        return 10 * work > self.budget and self._cached()

    def _marker(self) -> Path:
        return cache_dir() / "ready" / f"{self.py_func.__module__}.{self.py_func.__qualname__}"

    def _cached(self) -> bool:
        """Whether an earlier process compiled this kernel into the cache (read once)."""
        if self._known is None:
            self._known = self._marker().exists()
        return self._known

    def __call__(self, *args: Any) -> Any:
        if not self.uses_compiled(*args):
            return self.interpreted(*args)
        out = self.dispatcher(*args)
        if not self._known:
            self._known = True
            with contextlib.suppress(OSError):
                self._marker().parent.mkdir(parents=True, exist_ok=True)
                self._marker().touch()
        return out

    def __repr__(self) -> str:
        return f"Kernel({self.py_func.__module__}.{self.py_func.__qualname__})"


def _boxed(out: Any) -> Any:
    """``out`` with numpy scalars as Python numbers, as numba boxes a compiled kernel's result."""
    if isinstance(out, np.generic):
        return out.item()
    if isinstance(out, tuple):
        return tuple(_boxed(x) for x in out)
    return out


@overload
def jit(func: Callable[..., Any]) -> Kernel: ...
@overload
def jit(
    func: None = None, *, work: Callable[..., int] | None = None, budget: int = DEFAULT_BUDGET
) -> Callable[[Callable[..., Any]], Kernel]: ...
def jit(
    func: Callable[..., Any] | None = None,
    *,
    work: Callable[..., int] | None = None,
    budget: int = DEFAULT_BUDGET,
) -> Kernel | Callable[[Callable[..., Any]], Kernel]:
    """Make ``func`` a :class:`Kernel` (``@jit`` or ``@jit(work=..., budget=...)``)."""
    if func is None:
        return lambda f: Kernel(f, work=work, budget=budget)
    return Kernel(func, work=work, budget=budget)


def kernels() -> tuple[Kernel, ...]:
    """Every kernel of the modules imported so far."""
    return tuple(_KERNELS)


def mark_warm() -> None:
    """Record that :func:`ocsched.warmup.warmup` filled the cache (see :func:`is_warm`)."""
    if _disabled():
        return
    with contextlib.suppress(OSError):
        cache_dir().mkdir(parents=True, exist_ok=True)
        (cache_dir() / "warm").touch()


def is_warm() -> bool:
    """Whether ``ocsched warmup`` filled the cache for these kernel sources (numba available).

    The cache directory is named by the kernels' sources, so an edit makes this False again.
    """
    return not _disabled() and (cache_dir() / "warm").exists()


def clock() -> float:
    """:func:`time.perf_counter` less the seconds spent compiling or loading kernels so far.

    The difference of two readings is a run time without compiles (in this thread's process;
    a compile in another thread is left out too).
    """
    return time.perf_counter() - float(_state["compile_s"])


def compile_seconds() -> float:
    """Seconds this process has spent importing numba, compiling kernels or loading them from the cache."""
    return float(_state["compile_s"])


@contextlib.contextmanager
def compiled_only() -> Iterator[None]:
    """Within the block, every kernel called from Python runs compiled, whatever its work."""
    with _lock:
        _state["force"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["force"] -= 1


@contextlib.contextmanager
def interpreted_only() -> Iterator[None]:
    """Within the block (in this thread), every kernel runs interpreted, whatever its work."""
    before = getattr(_local, "interpreting", False)
    _local.interpreting = True
    try:
        yield
    finally:
        _local.interpreting = before


def _source_hash() -> str:
    """A hash of every kernel module's source, numba's installation and Python's version."""
    root = Path(__file__).parent
    h = hashlib.sha256(kernel_sources_hash(root, {p: p.read_bytes() for p in sorted(root.rglob("*.py"))}))
    spec = importlib.util.find_spec("numba")
    origin = Path(spec.origin) if spec is not None and spec.origin else None
    stamp = origin.stat().st_mtime_ns if origin is not None else 0
    h.update(f"{origin} {stamp} {sys.version}".encode())
    return h.hexdigest()[:16]


def kernel_sources_hash(root: Path, sources: dict[Path, bytes]) -> bytes:
    r"""The digest of the kernel modules under ``root`` and of the ocsched modules they import from.

    Kernel modules hold ``@jit`` or ``= jit(`` (a function defined elsewhere, compiled), or are
    ``_jit.py``. A compiled kernel keeps copies of what it calls, so an edit to a function it
    imports (``timing.busy``) must start a fresh cache as much as an edit to the kernel itself;
    an edit anywhere else keeps the cache.

    >>> from pathlib import Path
    >>> r = Path("/p")
    >>> k = {r / "k.py": b"from ocsched.t import f\n_f = jit(f)\n", r / "t.py": b"def f(): ..."}
    >>> kernel_sources_hash(r, {**k, r / "other.py": b"x = 1"}) == kernel_sources_hash(r, k)
    True
    >>> kernel_sources_hash(r, {**k, r / "t.py": b"def f(): return 1"}) == kernel_sources_hash(r, k)
    False
    """
    kernels = [
        p for p, text in sources.items() if b"@jit" in text or b"= jit(" in text or p.name == "_jit.py"
    ]
    used = set(kernels)
    for path in kernels:
        for mod in re.findall(rb"^from ocsched\.([\w.]+) import", sources[path], flags=re.M):
            base = root.joinpath(*mod.decode().split("."))
            used.update(p for p in (base.with_suffix(".py"), base / "__init__.py") if p in sources)
    h = hashlib.sha256()
    for path in sorted(used):
        h.update(str(path.relative_to(root)).encode() + b"\0" + sources[path])
    return h.digest()


@functools.cache
def cache_dir() -> Path:
    """Where the compiled kernels are cached (a directory per kernel source hash)."""
    base = os.environ.get("NUMBA_CACHE_DIR")
    if base:
        return Path(base) / f"ocsched-{_source_hash()}"
    here = Path(__file__).parent / "__pycache__" / "numba"
    try:
        here.mkdir(parents=True, exist_ok=True)
        probe = here / ".write-probe"
        probe.touch()
        probe.unlink()
    except OSError:
        here = Path.home() / ".cache" / "ocsched" / "numba"
    return here / _source_hash()


def _numba_ready() -> None:
    """Import numba once: point its cache at :func:`cache_dir`, time and announce compiles."""
    with _lock:
        if _state["ready"]:
            return
        t0 = time.perf_counter()  # importing numba is part of preparing kernels, not of a run
        import numba
        from numba.core import event
        from numba.extending import typeof_impl

        numba.config.CACHE_DIR = str(cache_dir())  # type: ignore[attr-defined]

        # Compiled code calling a Kernel calls its dispatcher.
        @typeof_impl.register(Kernel)
        def _typeof_kernel(val: Kernel, c: Any) -> Any:
            return numba.types.Dispatcher(val.dispatcher)

        class _Timer(event.Listener):
            """Seconds under numba's compiler lock (compiles and cache loads), outermost only."""

            depth = 0
            t0 = 0.0

            def on_start(self, ev: Any) -> None:
                if self.depth == 0:
                    self.t0 = time.perf_counter()
                self.depth += 1

            def on_end(self, ev: Any) -> None:
                self.depth -= 1
                if self.depth == 0:
                    _state["compile_s"] += time.perf_counter() - self.t0

        class _Announce(event.Listener):
            """Say once that kernels compile (a cache miss), before the first compile starts."""

            def on_start(self, ev: Any) -> None:
                if not _state["announced"]:
                    _state["announced"] = True
                    log.warning("compiling kernels, once, ~%d s", _COMPILE_ESTIMATE_S)

            def on_end(self, ev: Any) -> None:
                pass

        event.register("numba:compiler_lock", _Timer())  # type: ignore[no-untyped-call]
        event.register("numba:compile", _Announce())  # type: ignore[no-untyped-call]
        _state["ready"] = True
        _state["compile_s"] += time.perf_counter() - t0
