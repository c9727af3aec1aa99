"""The first run: no heavy import for light work, one compile message, no compile in run times."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ocsched import _jit

HEAVY = ("numba", "scipy.optimize", "scipy.sparse._base", "pyarrow", "dask", "matplotlib", "pandas")
#: ocsched's own heavy parts, which a bound on a 3 x 3 does not need: the scheduler registry
#: (every scheduler module), the exporters and the trace importers.
HEAVY_OWN = ("ocsched.schedulers", "ocsched.io.exports", "ocsched.io.traces")


def _loaded_after(code: str, tmp_path: Path, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    script = code + f"\nimport json, sys\nprint(json.dumps([m for m in {heavy!r} if m in sys.modules]))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    loaded: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def test_import_loads_no_heavy_module(tmp_path: Path) -> None:
    assert _loaded_after("import ocsched", tmp_path) == []


def _run_cli(*argvs: list[str]) -> str:
    return textwrap.dedent(
        f"""
        import contextlib, io, sys
        from ocsched.cli import main
        for argv in {list(argvs)!r}:
            sys.argv = ["ocsched", *argv]
            with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
                main()
            assert out.getvalue(), argv
        """
    )


def test_help_and_bound_load_no_heavy_module(tmp_path: Path) -> None:
    np.save(tmp_path / "d.npy", np.array([[0, 1, 2], [2, 0, 1], [1, 2, 0]], float))
    bound = ["bound", "d.npy", "-s", "2", "-d", "0.1"]
    assert _loaded_after(_run_cli(["--help"], bound), tmp_path) == []
    # Alone, a bound loads none of ocsched's heavy parts either.
    assert _loaded_after(_run_cli(bound), tmp_path, HEAVY + HEAVY_OWN) == []


def test_command_map_matches_the_app() -> None:
    from ocsched.cli import COMMANDS, app

    registered = {c.name: c.callback.__module__.rsplit(".", 1)[-1] for c in app.registered_commands}
    assert registered == COMMANDS


KERNELS = """
import sys
from ocsched import _jit

def _a(x):
    return x + 1.0

def _b(x):
    return a(x) * 2.0

a = _jit.Kernel(_a)
b = _jit.Kernel(_b)
if __name__ == "__main__":
    c0 = _jit.clock()
    with _jit.compiled_only():
        assert b(1.0) == 4.0 and a(1.0) == 2.0
    print(_jit.clock() - c0, _jit.compile_seconds())
"""


@pytest.mark.skipif(not _jit.HAVE_NUMBA, reason="numba not installed")
def test_compile_said_once_and_kept_out_of_run_time(tmp_path: Path) -> None:
    (tmp_path / "kern.py").write_text(KERNELS)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_DISABLE_JIT": "0"}
    out = subprocess.run(
        [sys.executable, "kern.py"], capture_output=True, text=True, check=True, cwd=tmp_path, env=env
    )
    assert out.stderr.count("compiling kernels, once") == 1, out.stderr
    run, compile_s = map(float, out.stdout.split())
    # Two additions run in microseconds, the compile that preceded them takes a good part of a
    # second: a clock that counted the compile would read at least compile_s.
    assert compile_s > 0.0
    assert 0.0 <= run < compile_s
    # The second process loads from the cache: nothing to say.
    again = subprocess.run(
        [sys.executable, "kern.py"], capture_output=True, text=True, check=True, cwd=tmp_path, env=env
    )
    assert "compiling" not in again.stderr


def test_public_functions_are_not_their_submodules() -> None:
    # ocsched.reschedule names a function and a module: importing the modules later (lazily) must
    # not put them in the functions' place. The validator's module is ocsched.validation, so that
    # no module named ocsched.validate hides the function.
    import importlib
    import importlib.util

    import ocsched

    importlib.import_module("ocsched.validation")
    importlib.import_module("ocsched.sequence.validate")
    importlib.import_module("ocsched.reschedule")
    assert importlib.util.find_spec("ocsched.validate") is None
    assert callable(ocsched.validate) and ocsched.validate.__name__ == "validate_any"
    assert callable(ocsched.reschedule) and ocsched.reschedule.__name__ == "reschedule"


@pytest.mark.slow
def test_warmup_command_runs_every_kernel_path(tmp_path: Path) -> None:
    # With numba off the warm-up runs the same calls interpreted and compiles nothing.
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    code = "import sys; from ocsched.cli import main; sys.argv = ['ocsched', 'warmup']; main()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("0 entry kernels") and "disabled" in out.stdout, out.stdout
    assert int(out.stdout.split("of ")[1].split(")")[0]) >= 20  # every kernel module imported


@pytest.mark.skipif(not _jit.HAVE_NUMBA, reason="numba not installed")
def test_warm_marker_follows_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `ocsched warmup` leaves a marker in the cache directory of these kernel sources; the
    # service loads every kernel onto its compiled path only then (see ocsched.serve.app.warm_up).
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)

    def use(folder: Path) -> None:  # cache_dir() is memoized: forget it with each change
        monkeypatch.setenv("NUMBA_CACHE_DIR", str(folder))
        _jit.cache_dir.cache_clear()

    try:
        use(tmp_path)
        assert not _jit.is_warm()
        _jit.mark_warm()
        assert _jit.is_warm() and (_jit.cache_dir() / "warm").is_file()
        use(tmp_path / "elsewhere")  # another cache: not warm
        assert not _jit.is_warm()
        monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")  # no compiled path at all: never warm
        use(tmp_path)
        assert not _jit.is_warm()
    finally:
        monkeypatch.undo()
        _jit.cache_dir.cache_clear()  # the other tests' cache again
