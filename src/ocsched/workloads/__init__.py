"""Traffic generators: one module per family, all reachable by name through :func:`generate`.

Every generator is a function ``f(*, rng, **options) -> ndarray`` listed in :data:`WORKLOADS`
with its natural unit: ``"time"`` (already time at one link's line rate) or ``"bytes"``.
:func:`generate` seeds it (``rng=``), converts bytes to seconds with ``link_gbps`` and normalises on
request (``normalize=True``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched._checks import check_number
from ocsched.workloads import _common
from ocsched.workloads._common import _UNSET, block_diagonal, call_generator, normalize, options_of, renamed
from ocsched.workloads.coflow import coflow
from ocsched.workloads.gpt import gpt, gpt32
from ocsched.workloads.iteration import (
    ITERATION_WORKLOADS,
    generate_iteration,
    iteration_workloads,
)
from ocsched.workloads.moe import moe, moe8
from ocsched.workloads.standard import standard
from ocsched.workloads.tpu_pod import tpu_pod

__all__ = [
    "ITERATION_WORKLOADS",
    "WORKLOADS",
    "Workload",
    "block_diagonal",
    "generate",
    "generate_iteration",
    "iteration_workloads",
    "normalize",
    "workloads",
]

Generator = Callable[..., NDArray[np.float64]]


@dataclass(frozen=True)
class Workload:
    """A registered traffic generator.

    Attributes
    ----------
    name : str
        Registry key, used by the CLI and sweeps.
    func : callable
        ``func(*, rng, **options) -> ndarray`` returning an n x n matrix.
    unit : {"time", "bytes"}
        What the returned entries measure.
    description : str
        One line for listings.
    """

    name: str
    func: Generator
    unit: str
    description: str

    def options(self) -> dict[str, Any]:
        """The generator's options and their defaults (``rng`` excluded)."""
        return options_of(self.func)


WORKLOADS: dict[str, Workload] = {
    "coflow": Workload(
        "coflow", coflow, "bytes", "Facebook coflow-benchmark trace: one coflow or a time window"
    ),
    "gpt": Workload(
        "gpt", gpt, "bytes", "GPT training under TP x PP x DP, Megatron-style volumes per iteration"
    ),
    "gpt32": Workload(
        "gpt32", gpt32, "time", "The Spectra paper's 32-GPU GPT instance (TP=2, DP=4, PP=4); copies"
    ),
    "moe": Workload(
        "moe", moe, "bytes", "MoE expert-parallel all-to-all: top-k routing, Gini-calibrated skew"
    ),
    "moe8": Workload("moe8", moe8, "time", "The Spectra paper's 8-GPU MoE all-to-all instance; copies"),
    "tpu-pod": Workload(
        "tpu-pod",
        tpu_pod,
        "time",
        "TPU-v4-shaped pod of 64 cubes (ms): all-reduce torus rings, MoE dispatch+combine, GPT PP+DP",
    ),
    "standard": Workload(
        "standard",
        standard,
        "time",
        "Solstice/Eclipse skewed benchmark: few large, many small flows per port",
    ),
}


def workloads() -> dict[str, str]:
    """Return ``{name: one-line description}`` of every registered workload."""
    return {k: w.description for k, w in sorted(WORKLOADS.items())}


def generate(
    name: str,
    *,
    rng: int | np.random.Generator | None = _UNSET,
    link_gbps: float | None = None,
    normalize: bool = _UNSET,
    seed: int | np.random.Generator | None = _UNSET,
    normalized: bool = _UNSET,
    **options: Any,
) -> NDArray[np.float64]:
    """Generate the workload ``name`` with ``options``.

    Parameters
    ----------
    name : str
        A key of :data:`WORKLOADS` (see :func:`workloads`).
    rng : int, Generator or None
        Seed for the generator's randomness (``seed=`` is its deprecated spelling).
    link_gbps : float, optional
        For byte-valued workloads: convert bytes to seconds on one link of this rate.
    normalize : bool
        Divide by the largest line sum (applied last; ``normalized=`` is its deprecated spelling).
    **options
        The generator's own options.

    Examples
    --------
    >>> d = generate("standard", n=8, flows=4, rng=1, normalize=True)
    >>> d.shape, round(float(max(d.sum(0).max(), d.sum(1).max())), 9)
    ((8, 8), 1.0)
    """
    rng = renamed(rng, seed, "rng", "seed", None)
    scale = renamed(normalize, normalized, "normalize", "normalized", False)
    matrix = np.asarray(call_generator(WORKLOADS, name, rng, options), dtype=np.float64)
    w = WORKLOADS[name]
    if link_gbps is not None:
        check_number(link_gbps, "link_gbps", low=0.0, closed=False)
        if w.unit == "bytes":
            matrix = matrix * 8.0 / (float(link_gbps) * 1e9)
    if scale:
        matrix = _common.normalize(matrix)
    return matrix
