"""Run sweep batches on a Dask cluster: connect (or start a LocalCluster), wait for workers, collect.

Every failure of the cluster (a malformed or unreachable address, no worker within the wait, a
scheduler lost mid-sweep) is an :class:`~ocsched.errors.OcschedError` or
:class:`~ocsched.errors.InvalidInputError` of one line; the sweep keeps what was written.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Generator
from typing import Any

from ocsched._extras import missing_extra
from ocsched.errors import InvalidInputError, OcschedError
from ocsched.sweep.results import RunSpec

Task = Callable[[tuple[list[RunSpec], dict[str, str]]], list[dict[str, Any]]]

__all__ = ["dask_client", "dask_results", "distributed_module"]

log = logging.getLogger(__name__)

_RESUME = "finished batches are saved; rerun the same command to resume"
_ADDRESS = re.compile(r"^(?:(?:tcp|tls|ws|wss|ucx|inproc)://)?\[?[A-Za-z0-9_.:-]+\]?:\d{1,5}/?$")


def distributed_module() -> Any:
    try:
        import distributed
    except ImportError:
        raise OcschedError(missing_extra("clusters (--cluster)", "Dask distributed", "dask")) from None
    return distributed


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


@contextlib.contextmanager
def dask_client(cluster: str, workers: int, wait_s: float) -> Generator[Any, None, None]:
    """Connect to ``cluster`` (or start a LocalCluster for ``"local"``) and wait for a worker."""
    distributed = distributed_module()
    if cluster != "local" and not _ADDRESS.match(cluster):
        raise InvalidInputError(
            f"`--cluster` must be 'local' or a Dask scheduler address like tcp://host:8786; got {cluster!r}"
        )
    with contextlib.ExitStack() as stack:
        if cluster == "local":
            try:
                local = stack.enter_context(
                    distributed.LocalCluster(
                        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
                    )
                )
            except Exception as exc:
                raise OcschedError(f"could not start a local Dask cluster: {_first_line(exc)}") from None
            address = local.scheduler_address
        else:
            address = cluster
        try:
            client = stack.enter_context(distributed.Client(address, timeout=f"{wait_s}s"))
        except Exception as exc:
            raise OcschedError(
                f"cannot reach the Dask scheduler at {address} within {wait_s:g} s ({_first_line(exc)}); "
                "is `dask scheduler` running there?"
            ) from None
        if not client.nthreads():
            log.warning("waiting up to %g s for a Dask worker at %s", wait_s, address)
            try:
                client.wait_for_workers(1, timeout=wait_s)
            except Exception:
                raise OcschedError(
                    f"the Dask scheduler at {address} has no workers after {wait_s:g} s; "
                    f"start some with `dask worker {address}`"
                ) from None
        yield client


def dask_results(
    batches: list[list[RunSpec]], types: dict[str, str], client: Any, task: Task
) -> Generator[list[dict[str, Any]], None, None]:
    distributed = distributed_module()
    futures = client.map(task, [(b, types) for b in batches], pure=False)
    try:
        pending = set(futures)
        while pending:
            if client.status not in ("running", "connecting", "newly-created"):
                raise OcschedError(f"lost the Dask scheduler (client {client.status}); {_RESUME}")
            try:
                done, pending = distributed.wait(pending, timeout=5.0, return_when="FIRST_COMPLETED")
            except TimeoutError:
                continue
            except Exception as exc:
                raise OcschedError(f"lost the Dask scheduler ({_first_line(exc)}); {_RESUME}") from None
            for fut in done:
                try:
                    rows = fut.result(timeout=30)
                except Exception as exc:  # run_batch catches its own errors: this is the cluster's
                    raise OcschedError(f"the Dask cluster failed ({_first_line(exc)}); {_RESUME}") from None
                yield rows
    finally:
        with contextlib.suppress(Exception):
            client.cancel(futures)
