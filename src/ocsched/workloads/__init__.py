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

from ocsched._checks import check_choice, check_number
from ocsched.workloads import _common
from ocsched.workloads._common import _UNSET, block_diagonal, call_generator, normalize, renamed
from ocsched.workloads.coflow import COFLOW_OPTIONS, coflow
from ocsched.workloads.gpt import GPT32_OPTIONS, GPT_OPTIONS, gpt, gpt32
from ocsched.workloads.iteration import (
    ITERATION_WORKLOADS,
    generate_iteration,
    iteration_workloads,
)
from ocsched.workloads.moe import MOE8_OPTIONS, MOE_OPTIONS, moe, moe8
from ocsched.workloads.options import Option
from ocsched.workloads.standard import STANDARD_OPTIONS, standard
from ocsched.workloads.tpu_pod import TPU_POD_OPTIONS, tpu_pod

__all__ = [
    "ITERATION_WORKLOADS",
    "WORKLOADS",
    "Option",
    "Workload",
    "block_diagonal",
    "generate",
    "generate_iteration",
    "iteration_workloads",
    "normalize",
    "workload_options",
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
    options : tuple of Option
        Its options (:mod:`ocsched.workloads.options`), as the command line and sweeps take them.
    """

    name: str
    func: Generator
    unit: str
    description: str
    options: tuple[Option, ...]

    def defaults(self) -> dict[str, Any]:
        """``{option: default}``."""
        return {o.name: o.default for o in self.options}


WORKLOADS: dict[str, Workload] = {
    "coflow": Workload(
        "coflow",
        coflow,
        "bytes",
        "Facebook coflow-benchmark trace: one coflow or a time window",
        COFLOW_OPTIONS,
    ),
    "gpt": Workload(
        "gpt",
        gpt,
        "bytes",
        "GPT training under TP x PP x DP, Megatron-style volumes per iteration",
        GPT_OPTIONS,
    ),
    "gpt32": Workload(
        "gpt32",
        gpt32,
        "time",
        "The Spectra paper's 32-GPU GPT instance (TP=2, DP=4, PP=4); copies",
        GPT32_OPTIONS,
    ),
    "moe": Workload(
        "moe",
        moe,
        "bytes",
        "MoE expert-parallel all-to-all: top-k routing, Gini-calibrated skew",
        MOE_OPTIONS,
    ),
    "moe8": Workload(
        "moe8", moe8, "time", "The Spectra paper's 8-GPU MoE all-to-all instance; copies", MOE8_OPTIONS
    ),
    "tpu-pod": Workload(
        "tpu-pod",
        tpu_pod,
        "time",
        "TPU-v4-shaped pod of 64 cubes (ms): all-reduce torus rings, MoE dispatch+combine, GPT PP+DP",
        TPU_POD_OPTIONS,
    ),
    "standard": Workload(
        "standard",
        standard,
        "time",
        "Solstice/Eclipse skewed benchmark: few large, many small flows per port",
        STANDARD_OPTIONS,
    ),
}


def workload_options(name: str) -> tuple[Option, ...]:
    """The declared options of workload or iteration workload ``name``.

    Raises
    ------
    InvalidInputError
        For an unknown name (the message lists the valid ones).

    >>> [o.flag for o in workload_options("gpt32")]
    ['--copies']
    """
    entry = WORKLOADS.get(name) or ITERATION_WORKLOADS.get(name)
    if entry is None:
        check_choice(name, "workload", sorted([*WORKLOADS, *ITERATION_WORKLOADS]))
    assert entry is not None
    return entry.options


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
