"""Lower bounds on the makespan: no valid schedule can finish earlier.

Every bound is a named function with its proof in the docstring; :func:`lower_bound` returns the
maximum of all of them. One module per family of arguments:

- :mod:`ocsched.bounds.lines`: one row or column at a time (line, degree, refined).
- :mod:`ocsched.bounds.fabric`: per-switch delay and rate, down windows, failed links (the entry
  bound in :mod:`ocsched.bounds.fabric_entry`, a port's available time in
  :mod:`ocsched.bounds.availability`).
- :mod:`ocsched.bounds.ports`: several ports per endpoint, bidirectional circuits.
- :mod:`ocsched.bounds.packing`: how one line's entries pack onto the switches (opt-in, ``strong=True``).
- :mod:`ocsched.bounds.bands`: the configurations' total length, band by band of entry sizes
  (``strong=True``).
- :mod:`ocsched.bounds.slots`: a weighted count of one line's entries against the places its switch
  groups offer (``strong=True``).
"""

from __future__ import annotations

import math

import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched._checks import check_bool, check_delta, check_switches
from ocsched.bounds.bands import band_bound
from ocsched.bounds.fabric import fabric_entry_bound, fabric_line_bound
from ocsched.bounds.hybrid import hybrid_bound
from ocsched.bounds.lines import degree_bound, line_bound, refined_bound
from ocsched.bounds.packing import line_packing_bound, packing_bound
from ocsched.bounds.ports import ports_bound
from ocsched.bounds.slots import line_slot_bound, slot_bound
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.model import Demand, as_demand

__all__ = [
    "band_bound",
    "degree_bound",
    "fabric_entry_bound",
    "fabric_line_bound",
    "line_bound",
    "line_packing_bound",
    "line_slot_bound",
    "lower_bound",
    "packing_bound",
    "ports_bound",
    "refined_bound",
    "slot_bound",
]


def lower_bound(
    demand: ArrayLike | sp.sparray | sp.spmatrix | Demand,
    *,
    switches: int | None = None,
    delta: float | None = None,
    fabric: Fabric | None = None,
    strong: bool = False,
) -> float:
    """Return a makespan that no valid schedule can beat.

    :func:`refined_bound`, which is at least :func:`line_bound` and :func:`degree_bound` (its
    search starts at their maximum; they are kept as cross-checks). Each docstring holds its
    proof. The value is the bound's exact threshold rounded to the nearest float, so a schedule
    that reaches it has exactly that makespan (``Schedule.gap == 0.0``; see
    :mod:`ocsched.bounds._exact`).

    Parameters
    ----------
    demand : array_like, sparse matrix or Demand
        n x n non-negative demand.
    switches : int
        Number of parallel switches s >= 1.
    delta : float
        Reconfiguration delay >= 0.
    fabric : Fabric, optional
        Instead of ``switches`` and ``delta``: any fabric (with a packet switch:
        :func:`~ocsched.bounds.hybrid.hybrid_bound`). On identical rate-1 switches without
        failures (either model: the line arguments hold port by port, see
        :func:`fabric_line_bound`) the bounds above apply; otherwise the maximum of
        :func:`fabric_line_bound` and :func:`fabric_entry_bound`, and, when the fabric is that
        of identical rate-1 switches with failures, of the bounds above for the same switches
        without the failures: down windows and failed links only add constraints (a schedule
        valid with them is valid without, and under the partial model serves at least as much
        there, kept circuits no longer broken by a window), so no schedule beats those either.
    strong : bool
        Also take (identical switches only) :func:`packing_bound`, the packing of each line's
        entries with splits paid in delay; :func:`band_bound`, the configurations' total length
        counted band by band of entry sizes (all-stop model only); and :func:`slot_bound`, a
        weighted count of one line's entries against what groups of switches can hold. Much
        tighter when delta is large against the entries (packing: up to 17% higher on the
        paper's grid; bands and slots: up to 2% and 4% on dense skewed MoE matrices), but it
        costs nearly as much as scheduling with ``spectra-pack`` (about 2 ms against 3 ms at
        n = 100), so :func:`schedule` does not call it.

    Returns
    -------
    float
        The bound (0 for an all-zero demand).

    Examples
    --------
    >>> round(lower_bound([[0, 1], [1, 0]], switches=2, delta=0.1), 9)
    0.6
    """
    dem = as_demand(demand)
    if fabric is not None and isinstance(fabric, Fabric) and fabric.eps_rate > 0:
        fabric.check_ports(dem.n)
        return hybrid_bound(dem, fabric)  # a packet switch: the circuits' bounds no longer hold
    # The band bound counts whole configurations, each preceded by delta on its switch: true in
    # the all-stop model only (under "partial", kept circuits stay lit through a reconfiguration).
    all_stop = fabric is None or not fabric.reconfiguration.keeps_circuits
    if fabric is not None:
        if switches is not None or delta is not None:
            raise InvalidInputError("give either `fabric` or `switches` and `delta`, not both")
        if not isinstance(fabric, Fabric):
            raise InvalidInputError(f"`fabric` must be an ocsched.Fabric; got {type(fabric).__name__}")
        fabric.check_ports(dem.n)
        if not all(x.is_plain for x in fabric.switches):  # b-matchings: their own line arguments
            return ports_bound(dem, fabric)
        if not fabric.with_model("all-stop").is_uniform:
            best = max(fabric_line_bound(dem, fabric), fabric_entry_bound(dem, fabric))
            intact = Fabric(fabric.switches, model=fabric.model)
            if best < math.inf and intact.with_model("all-stop").is_uniform:
                best = max(best, lower_bound(dem, fabric=intact, strong=strong))
            return best
        switches, delta = fabric.size, fabric.deltas[0]
    if switches is None or delta is None:
        raise InvalidInputError("give `switches` and `delta` (or a `fabric`)")
    s = check_switches(switches)
    d = check_delta(delta)
    if check_bool(strong, "strong"):
        best = max(
            packing_bound(dem, switches=s, delta=d),  # at least refined_bound
            band_bound(dem, switches=s, delta=d) if all_stop else 0.0,
        )
        return slot_bound(dem, switches=s, delta=d, start=best)
    # refined_bound starts its search at the largest of the line and degree bounds, so it is at
    # least both (tests check that each holds on its own).
    return refined_bound(dem, switches=s, delta=d)
