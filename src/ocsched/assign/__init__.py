"""Place weighted permutations on s parallel switches: greedy LPT, equalization, packing, timeline.

An *assignment* is, per switch, a list of pieces ``(l, length)``: permutation l held for
``length``. A switch's load is :func:`ocsched.timing.busy` of its pieces.

Every placement method is an entry of :data:`PLACEMENTS`, reached through :func:`place`:

============  =====================================================================================
``greedy``    Spectra's step 2: largest first onto the least-loaded switch
``equalize``  ``greedy`` then Spectra's step 3: split pieces until the loads are within delta
``pack``      ``equalize``, then bisection on the makespan with best-fit packing if that ends earlier
============  =====================================================================================

:func:`place_on_fabric` does the same on any fabric. The package holds one idea per module:
:mod:`~ocsched.assign.uniform` (the methods on identical switches), :mod:`~ocsched.assign.on_fabric`
(their per-switch delay, rate, window and failed-link versions) and :mod:`~ocsched.assign.layout`
(assignments laid out in time, circuit-by-circuit timelines under the partial model).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ocsched._checks import check_choice
from ocsched.assign.layout import _share, bff_timeline, order_for_partial, timeline_on
from ocsched.assign.on_fabric import _eligible, _equalize_on, _greedy_on, _pack_on, _View
from ocsched.assign.uniform import (
    Assignment,
    equalize,
    fill,
    greedy,
    loads,
    pack,
    spectra_placement,
    timeline,
)
from ocsched.decompose import Decomposition
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand

__all__ = [
    "PLACEMENTS",
    "Assignment",
    "Placement",
    "bff_timeline",
    "equalize",
    "fill",
    "greedy",
    "loads",
    "order_for_partial",
    "pack",
    "place",
    "place_on_fabric",
    "spectra_placement",
    "timeline",
    "timeline_on",
]


@dataclass(frozen=True)
class Placement:
    """A registered placement method.

    ``func(weights, switches, delta)`` returns ``(assignment, splits)``: the pieces on each
    switch, and how many pieces there are beyond one per permutation.
    """

    func: Callable[[NDArray[np.float64], int, float], tuple[Assignment, int]]
    description: str


def _greedy(weights: NDArray[np.float64], switches: int, delta: float) -> tuple[Assignment, int]:
    return greedy(weights, switches, delta), 0


def _equalize(weights: NDArray[np.float64], switches: int, delta: float) -> tuple[Assignment, int]:
    return spectra_placement(weights, switches, delta)  # equalize(greedy(...)), compiled


PLACEMENTS: dict[str, Placement] = {
    "greedy": Placement(_greedy, "largest first onto the least-loaded switch (Spectra's step 2)"),
    "equalize": Placement(_equalize, "greedy, then split pieces until loads are within delta (steps 2-3)"),
    "pack": Placement(pack, "equalize, or bisection on the makespan with best-fit packing if shorter"),
}


def place(
    dec: Decomposition, *, switches: int, delta: float, method: str = "equalize"
) -> tuple[tuple[tuple[Configuration, ...], ...], int]:
    """Place a decomposition on ``switches`` switches and lay out each switch's timeline.

    Parameters
    ----------
    dec : Decomposition
        Weighted permutations.
    switches, delta
        The fabric: number of switches and reconfiguration delay.
    method : str
        A key of :data:`PLACEMENTS`.

    Returns
    -------
    configurations : tuple of tuple of Configuration
        Per switch, its configurations in time order (:func:`timeline`).
    splits : int
        Pieces beyond one per permutation.

    Examples
    --------
    >>> dec = Decomposition(np.array([[1, 0], [-1, -1]]), np.array([3.0, 0.0]))
    >>> confs, splits = place(dec, switches=2, delta=0.5)
    >>> [[(c.start, c.duration) for c in sw] for sw in confs], splits
    ([[(0.5, 1.75)], [(0.5, 1.25)]], 1)
    """
    check_choice(method, "method", PLACEMENTS)
    assignment, splits = PLACEMENTS[method].func(dec.weights, switches, delta)
    return timeline(assignment, dec.perms, delta), splits


def place_on_fabric(
    dec: Decomposition,
    fabric: Fabric,
    *,
    method: str = "equalize",
    t0: float = 0.0,
    demand: Demand | None = None,
) -> tuple[tuple[tuple[Configuration, ...], ...], int]:
    """Place a decomposition on any fabric and lay out each switch (see :func:`timeline_on`).

    Greedy places each permutation, largest first, where it finishes earliest given each switch's
    delay, rate and down windows, only on switches whose links its circuits can use (permutations
    no switch can carry whole are cut around failed links first); equalize and pack generalise
    :func:`equalize` and :func:`pack` with each switch's delay and rate. On identical switches
    without failures the assignment is exactly :func:`place`'s (so only the layout differs under
    the partial model). Scheduling starts at ``t0`` (every switch dark from then on). Under the
    partial model, ``demand`` (the demand ``dec`` covers) lets each circuit hold only its share
    of its permutation's time (see :func:`timeline_on`).

    Raises
    ------
    InfeasibleError
        If some circuit has a failed link on every switch, or every switch is down for good.

    Examples
    --------
    >>> from ocsched.fabric import Switch
    >>> dec = Decomposition(np.array([[1, 0], [-1, -1]]), np.array([3.0, 0.0]))
    >>> fab = Fabric((Switch(0.5), Switch(0.5, rate=2.0)))
    >>> confs, splits = place_on_fabric(dec, fab, method="greedy")
    >>> [[(c.start, c.duration) for c in sw] for sw in confs]
    [[], [(0.5, 1.5)]]
    """
    check_choice(method, "method", PLACEMENTS)
    keep = dec.weights > 0
    dec = Decomposition(dec.perms[keep], dec.weights[keep])
    live = _identical_live(fabric, t0)
    if live:
        # Identical switches from t0 on (some possibly down for good): the uniform methods, compiled
        # where it matters, on the live switches; rescheduling after a switch failure lands here.
        d = fabric.deltas[live[0]]
        sub, splits = PLACEMENTS[method].func(dec.weights, len(live), d)
        if fabric.model == "all-stop":  # each live switch: its pieces largest first from t0
            laid = timeline(sub, dec.perms, d, t0=t0)
            confs: list[tuple[Configuration, ...]] = [() for _ in range(fabric.size)]
            for k, b in enumerate(live):
                confs[b] = laid[k]
            return tuple(confs), splits
        assignment: Assignment = [[] for _ in range(fabric.size)]
        for k, b in enumerate(live):
            assignment[b] = sub[k]
        share = _share(dec, demand, fabric)
        return timeline_on(assignment, dec.perms, fabric, t0=t0, share=share), splits
    perms, weights, elig = _eligible(dec, fabric, t0)
    view = _View.of(fabric, t0)
    assignment = _greedy_on(weights, elig, view)
    if method != "greedy":
        assignment, _ = _equalize_on(assignment, elig, view)
    if method == "pack":
        assignment = _pack_on(weights, elig, view, assignment)
    splits = sum(len(sw) for sw in assignment) - int(weights.size)
    share = _share(Decomposition(perms, weights), demand, fabric)
    return timeline_on(assignment, perms, fabric, t0=t0, share=share), splits


def _identical_live(fabric: Fabric, t0: float) -> list[int]:
    """The switches usable from ``t0`` if they are identical (rate 1) and the rest are down for good.

    Empty when any link has failed, a switch has a down window it comes back from, or the live
    switches differ in delay or rate: :func:`place_on_fabric` then takes the general path.
    """
    if fabric.failed_links:
        return []
    dead = set()
    for w in fabric.down:
        if w.end <= t0:
            continue  # over before scheduling starts
        if w.start > t0 or w.end != np.inf:
            return []  # a switch that comes back, or goes down later
        dead.add(w.switch)
    live = [b for b in range(fabric.size) if b not in dead]
    if len({fabric.deltas[b] for b in live}) > 1 or any(fabric.rates[b] != 1.0 for b in live):
        return []
    return live
