"""``ocsched warmup``: compile every kernel into the cache once (set-up, cluster workers)."""

from __future__ import annotations

import typer

from ocsched.cli._app import app, cli_errors

__all__ = ["warmup_cmd"]


@app.command("warmup")
@cli_errors
def warmup_cmd() -> None:
    """Compile every numba kernel once into the on-disk cache (for clusters and Dask workers).

    Small inputs never need the compiled kernels; a large first run would otherwise compile
    the ones it uses (seconds). Run once per machine or image; `make setup` does.

    Example: ocsched warmup
    """
    from ocsched.warmup import warmup

    rep = warmup()
    where = f" in {rep.cache}" if rep.cache is not None else " (numba missing or disabled)"
    typer.echo(f"{rep.compiled} of {rep.kernels} kernels compiled or loaded in {rep.seconds:.1f} s{where}")
