"""The paper's baseline and its variants: split D into one part per switch, schedule each alone.

:func:`split_schedule` splits D into s balanced parts (each 1/s of every line sum, most flows
whole: :func:`~ocsched.split.balanced_split`) on identical switches; :func:`capacity_split_schedule`
splits it by capacity on a heterogeneous fabric (:func:`capacity_shares`). Each switch then runs its
part's decomposition alone, every matching after the switch's delay.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ocsched._checks import check_choice
from ocsched.assign import timeline
from ocsched.decompose import Decomposition, decompose
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand
from ocsched.split import Order, balanced_split, split_flows, split_share
from ocsched.timing import time_to_serve

__all__ = ["capacity_shares", "capacity_split_schedule", "single_switch", "split_schedule"]

Switches = tuple[tuple[Configuration, ...], ...]
RngLike = np.random.Generator | int | None


def single_switch(dec: Decomposition, delta: float) -> tuple[Configuration, ...]:
    """All of a decomposition on one switch, largest weight first."""
    return timeline([[(l, float(w)) for l, w in enumerate(dec.weights)]], dec.perms, delta)[0]


def split_schedule(
    demand: Demand,
    *,
    switches: int,
    delta: float,
    rng: RngLike = None,
    method: Literal["spectra", "eclipse"] = "spectra",
    order: Order = "index",
) -> tuple[Switches, int]:
    """Schedule each switch alone on its own part of a balanced split (the paper's baseline).

    Parameters
    ----------
    demand : Demand
        The demand D.
    switches : int
        Number of switches s; D is split into s sub-matrices with
        :func:`~ocsched.split.balanced_split`, each carrying 1/s of every line sum.
    delta : float
        Reconfiguration delay.
    rng : Generator, int or None
        Randomises the split.
    method : {"spectra", "eclipse"}
        How each switch decomposes its sub-matrix (a key of
        :data:`~ocsched.decompose.DECOMPOSERS`). Every matching costs ``delta`` plus its weight.
    order : {"index", "random"}
        The split's cycle-search order (see :func:`~ocsched.split.split_share`).

    Returns
    -------
    configurations : tuple of tuple of Configuration
        Switch k serves sub-matrix k, its matchings largest first.
    splits : int
        Extra pieces the split made of flows (:func:`~ocsched.split.split_flows`).

    Raises
    ------
    InvalidInputError
        If ``method`` or ``order`` is unknown.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 2], [2, 0]])
    >>> confs, splits = split_schedule(d, switches=2, delta=0.5)
    >>> [[(c.start, c.duration) for c in sw] for sw in confs], splits
    ([[(0.5, 1.0)], [(0.5, 1.0)]], 2)
    """
    check_choice(method, "method", ("spectra", "eclipse"))
    parts = balanced_split(demand, switches, rng=rng, order=order)
    out = []
    for values in parts:
        on = values > 0
        sub = Demand(demand.n, demand.rows[on], demand.cols[on], values[on])
        out.append(single_switch(decompose(sub, method=method, delta=delta), delta))
    return tuple(out), split_flows(parts)


def capacity_shares(demand: Demand, fabric: Fabric) -> list[float]:
    """Return the share of D each switch gets so that all would finish together (baseline on a fabric).

    With R the largest line sum and Delta the most nonzeros in a line, a share f of D keeps switch
    b busy about ``f R / r_b + Delta delta_b``; equal finish times T give
    ``f_b = r_b (T - Delta delta_b) / R`` with ``T = (R + Delta sum r_b delta_b) / sum r_b``.
    Switches too slow to help (f_b <= 0) get nothing and the others are renormalised.

    >>> from ocsched.fabric import Switch
    >>> d = Demand.from_matrix([[0, 4], [4, 0]])
    >>> capacity_shares(d, Fabric((Switch(0.0), Switch(0.0, rate=3.0))))
    [0.25, 0.75]
    """
    r = np.array(fabric.rates)
    dl = np.array(fabric.deltas)
    big, deg = max(demand.max_line_sum, 1e-300), demand.max_degree
    t = (big + deg * float((r * dl).sum())) / float(r.sum())
    f = np.maximum(r * (t - deg * dl) / big, 0.0)
    if f.sum() <= 0:
        f = r.copy()
    return [float(x) for x in f / f.sum()]


def capacity_split_schedule(
    demand: Demand, fabric: Fabric, *, rng: RngLike = None, method: Literal["spectra", "eclipse"] = "spectra"
) -> tuple[Switches, int]:
    """The baseline on a heterogeneous fabric: split D by :func:`capacity_shares`, one switch per part.

    Each part is decomposed with ``method`` and run alone on its switch, durations divided by the
    switch's rate, each matching after that switch's delay.
    """
    shares = capacity_shares(demand, fabric)
    gen = np.random.default_rng(rng)
    parts = np.zeros((fabric.size, demand.nnz))
    values = demand.values.astype(np.float64)
    left = 1.0
    for b, f in enumerate(shares):
        if b == fabric.size - 1 or left <= 0:
            parts[b] = values
            break
        share = f / left
        on = values > 0
        if share <= 0 or not on.any():
            continue
        if share >= 1:
            parts[b] = values
            values = np.zeros_like(values)
            break
        sub = Demand(demand.n, demand.rows[on], demand.cols[on], values[on])
        y = np.zeros_like(values)
        y[on] = split_share(sub, share, rng=gen)
        parts[b] = y
        values = np.where(y == values, 0.0, np.maximum(values - y, 0.0))
        left -= f
    out: list[tuple[Configuration, ...]] = []
    for b, vals in enumerate(parts):
        on = vals > 0
        d, r = fabric.deltas[b], fabric.rates[b]
        if not on.any():
            out.append(())
            continue
        sub = Demand(demand.n, demand.rows[on], demand.cols[on], vals[on])
        dec = decompose(sub, method=method, delta=d)
        lengths = [(l, time_to_serve(float(w), r)) for l, w in enumerate(dec.weights)]
        out.append(timeline([lengths], dec.perms, d)[0])
    return tuple(out), split_flows(parts)
