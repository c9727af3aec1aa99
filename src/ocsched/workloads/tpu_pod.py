"""A TPU-v4-shaped pod: 64 cubes joined by 48 bidirectional OCSes, 2 ports per cube on each.

:func:`tpu_pod_fabric` is the fabric (delays in milliseconds, like the traffic) and
:func:`tpu_pod` the traffic of one phase between cubes, in milliseconds at one link's line rate:
data-parallel all-reduce rings along the pod's three torus dimensions, MoE dispatch + combine
across cubes, or a GPT pipeline with data parallelism across pipelines.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from numpy.typing import NDArray

from ocsched._checks import check_choice, check_int, check_number
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric, Switch
from ocsched.workloads.moe import moe
from ocsched.workloads.options import Option

__all__ = ["TRAFFIC", "tpu_pod", "tpu_pod_fabric"]

#: Traffic kinds of :func:`tpu_pod`.
TRAFFIC = ("allreduce", "moe", "gpt")


def tpu_pod_fabric(*, delta_ms: float = 1.0, switches: int = 48, ports_per_endpoint: int = 2) -> Fabric:
    """Return the pod's optical fabric: ``switches`` bidirectional OCSes, ``ports_per_endpoint`` per cube.

    Times are in milliseconds (the unit of :func:`tpu_pod`).

    >>> f = tpu_pod_fabric(delta_ms=10.0)
    >>> f.size, f.switches[0].bidirectional, f.switches[0].ports_per_endpoint, f.deltas[0]
    (48, True, 2, 10.0)
    """
    return Fabric((Switch(delta_ms, bidirectional=True, ports_per_endpoint=ports_per_endpoint),) * switches)


def tpu_pod(
    *,
    cubes: int = 64,
    traffic: str = "moe",
    phase_ms: float = 4.0,
    links: int = 96,
    gini: float = 0.25,
    pipeline: int = 4,
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.float64]:
    """Return one phase of traffic between the pod's cubes, in milliseconds at one link's line rate.

    Parameters
    ----------
    cubes : int
        Number of cubes n (a cube of 4 x 4 x 4 for the all-reduce rings' torus: n = 64 by default).
    traffic : {"allreduce", "moe", "gpt"}
        ``allreduce``: each cube sends ``1`` to its successor on three rings (the torus's x, y and
        z dimensions of a 4 x 4 x 4 grid; other n: rings of stride 1, 4 and 16 modulo n).
        ``moe``: one MoE layer's dispatch plus its combine (the dispatch transposed) between
        cubes, top-2 routing with Gini-calibrated expert skew (:func:`~ocsched.workloads.moe.moe`).
        ``gpt``: ``n / pipeline`` pipelines of ``pipeline`` stages (consecutive cubes):
        activations forward and gradients back between neighbouring stages (4 each way), and a
        data-parallel ring over the replicas of each stage (1).
    phase_ms : float
        The busiest cube's traffic spread over all its ``links`` links takes this long (the
        matrix is scaled so that its largest row or column sum is ``phase_ms * links``).
    links : int
        Links per cube (48 switches x 2 ports).
    gini : float
        MoE: Gini coefficient of expert popularity.
    pipeline : int
        GPT: pipeline stages per replica (must divide ``cubes``).
    rng : Generator, int or None
        Seed (MoE routing).

    Examples
    --------
    >>> d = tpu_pod(traffic="allreduce")
    >>> d.shape, float(d.sum(axis=1).max()), int((d > 0).sum(axis=1).max())
    ((64, 64), 384.0, 3)
    """
    n = check_int(cubes, "cubes", minimum=2)
    check_choice(traffic, "traffic", TRAFFIC)
    phase = check_number(phase_ms, "phase_ms", low=0.0, closed=False)
    per = check_int(links, "links", minimum=1)
    d = np.zeros((n, n))
    idx = np.arange(n)
    if traffic == "allreduce":
        for stride in (1, 4, 16):
            if n == 64:  # the torus: step along one dimension of the 4 x 4 x 4 grid, wrapping in it
                nxt = idx - (idx // stride % 4) * stride + ((idx // stride + 1) % 4) * stride
            else:
                nxt = (idx + stride) % n
            keep = nxt != idx
            d[idx[keep], nxt[keep]] += 1.0
    elif traffic == "moe":
        dispatch = moe(gpus=n, experts=2 * n, top_k=2, gini=gini, rng=rng)
        d = dispatch + dispatch.T
    else:
        p = check_int(pipeline, "pipeline", minimum=1)
        if n % p:
            raise InvalidInputError(f"`pipeline` must divide `cubes` ({n}); got {p}")
        stage = idx % p
        fwd = stage < p - 1
        d[idx[fwd], idx[fwd] + 1] += 4.0  # activations
        d[idx[fwd] + 1, idx[fwd]] += 4.0  # gradients
        if n // p > 1:
            d[idx, (idx + p) % n] += 1.0  # data-parallel ring over the replicas of each stage
    np.fill_diagonal(d, 0.0)
    top = max(float(d.sum(axis=0).max()), float(d.sum(axis=1).max()))
    return d * (phase * per / top) if top > 0 else d


#: The options of :func:`tpu_pod`.
TPU_POD_OPTIONS: Final = (
    Option("cubes", int, 64, "Number of cubes n (64: the 4 x 4 x 4 torus of the all-reduce rings)."),
    Option(
        "traffic",
        str,
        "moe",
        "The pattern: allreduce (three torus rings), moe (dispatch + combine), gpt (PP + DP).",
        choices=TRAFFIC,
    ),
    Option(
        "phase_ms", float, 4.0, "Time the busiest cube's traffic takes spread over all its links.", unit="ms"
    ),
    Option("links", int, 96, "Links per cube (48 switches x 2 ports)."),
    Option("gini", float, 0.25, "MoE: Gini coefficient of expert popularity."),
    Option("pipeline", int, 4, "GPT: pipeline stages per replica (must divide cubes)."),
)
