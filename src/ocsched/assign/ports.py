"""Place b-matchings (configurations of multi-port or bidirectional switches) on identical switches.

The placement sees only the configurations' weights, so :data:`~ocsched.assign.PLACEMENTS` (greedy,
equalize, pack) applies unchanged; each switch then runs its pieces largest first, as
:func:`~ocsched.assign.timeline` does for permutations, with the circuits of the b-matchings.
"""

from __future__ import annotations

import itertools
import math
from operator import itemgetter

import numpy as np

from ocsched._checks import check_choice
from ocsched.assign.uniform import pack, spectra_placement
from ocsched.bounds.ports import ports_bound
from ocsched.decompose.bmatching import BMatchings, bmatching_candidates
from ocsched.fabric import Fabric, Switch
from ocsched.model import Configuration, Demand
from ocsched.timing import lay_out, partial_starts

__all__ = ["place_bmatchings", "schedule_on_ports"]

_METHODS = ("equalize", "pack")


def place_bmatchings(
    bm: BMatchings, *, switches: int, delta: float, ports: int, method: str = "pack"
) -> tuple[tuple[tuple[Configuration, ...], ...], int]:
    """Place weighted b-matchings on ``switches`` identical switches of delay ``delta``.

    Parameters
    ----------
    bm : BMatchings
        The configurations and how long each must be held.
    switches, delta
        The fabric: number of switches and reconfiguration delay.
    ports : int
        Number of endpoints n (the configurations' width).
    method : {"pack", "equalize"}
        :func:`~ocsched.assign.pack` or Spectra's greedy + equalization.

    Returns
    -------
    configurations : tuple of tuple of Configuration
        Per switch, its configurations in time order.
    splits : int
        Pieces beyond one per configuration.

    Examples
    --------
    >>> from ocsched.decompose.bmatching import BMatchings
    >>> bm = BMatchings(((np.array([0, 0]), np.array([1, 2])),), np.array([2.0]), "grouped")
    >>> confs, splits = place_bmatchings(bm, switches=2, delta=0.5, ports=3)
    >>> [[(c.start, c.duration, c.circuits) for c in sw] for sw in confs], splits
    ([[(0.5, 1.0, [(0, 1), (0, 2)])], [(0.5, 1.0, [(0, 1), (0, 2)])]], 1)
    """
    check_choice(method, "method", _METHODS)
    w = np.asarray(bm.weights, dtype=np.float64)
    assignment, splits = (pack if method == "pack" else spectra_placement)(w, switches, delta)
    out = []
    for sw in assignment:
        if len(sw) > 1:
            sw = sorted(sw, key=itemgetter(1), reverse=True)  # stable, as timeline() does
        pieces = [p for p in sw if p[1] > 0]
        lengths = [x for _, x in pieces]
        starts = lay_out(lengths, delta)
        out.append(
            tuple(
                Configuration.sparse(t, x, *bm.circuits[l], ports=ports)
                for t, x, (l, _) in zip(starts, lengths, pieces, strict=True)
            )
        )
    return tuple(out), splits


def schedule_on_ports(
    demand: Demand, fabric: Fabric, *, method: str = "pack"
) -> tuple[tuple[tuple[Configuration, ...], ...], int, str]:
    """Schedule ``demand`` on identical all-stop switches with k ports per endpoint, directed or not.

    Every construction of :func:`~ocsched.decompose.bmatching.bmatching_candidates` is placed by
    :func:`place_bmatchings`; the schedule that ends first is returned (the first on a tie) with
    its splits and the construction's name. On a bidirectional fabric with k >= 2 the candidates
    include the directed model's (Spectra's permutations of ``max(D, D^T)``, placed the same
    way), so the result never ends later than that. Under the partial model every switch starts
    each configuration as early as the rule allows (:func:`_partial`), and with k >= 2 the
    port layers of :func:`_layered` are a candidate too.

    >>> from ocsched.fabric import Switch
    >>> d = np.zeros((4, 4)); d[np.arange(4), (np.arange(4) + 1) % 4] = 1.0
    >>> fab = Fabric((Switch(0.1, bidirectional=True, ports_per_endpoint=2),) * 2)
    >>> confs, splits, how = schedule_on_ports(Demand.from_matrix(d), fab)
    >>> max(c.end for sw in confs for c in sw), how
    (0.6, 'oriented')
    """
    sw = fabric.switches[0]
    best: tuple[tuple[tuple[Configuration, ...], ...], int, str] | None = None
    end = math.inf
    for bm in bmatching_candidates(demand, ports=sw.ports_per_endpoint, bidirectional=sw.bidirectional):
        confs, splits = place_bmatchings(
            bm, switches=fabric.size, delta=sw.delta, ports=demand.n, method=method
        )
        if fabric.reconfiguration.keeps_circuits:
            confs = _partial(confs, sw)
        t = max((c.end for s in confs for c in s), default=0.0)
        if best is None or t < end:
            best, end = (confs, splits, bm.method), t
    assert best is not None  # bmatching_candidates returns at least one construction
    # Layers cost a second schedule on k s switches: not where the bound proves nothing shorter.
    if (
        fabric.reconfiguration.keeps_circuits
        and sw.ports_per_endpoint > 1
        and demand.nnz
        and end > ports_bound(demand, fabric)
    ):
        layered = _layered(demand, fabric, method)
        if layered is not None and max(c.end for s in layered[0] for c in s) < end:
            return layered
    return best


def _layered(
    demand: Demand, fabric: Fabric, method: str
) -> tuple[tuple[tuple[Configuration, ...], ...], int, str] | None:
    """Under the partial model, each of the k ports of every endpoint as a switch of its own.

    The demand is scheduled on ``k s`` one-port switches (all-stop, as :func:`schedule_on_ports`
    does), and each group of k of them becomes one k-port switch: its configurations are the
    circuits lit at once, cut at every start and end of the group. Each one-port switch is a
    layer of ports that reconfigures while the others stay lit, which the partial rule allows (a
    new circuit takes its layer's ports, dark for delta); the partial bound is the all-stop bound
    of those ``k s`` switches. None where the cut times lose any circuit's credit to rounding.
    """
    sw = fabric.switches[0]
    k = sw.ports_per_endpoint
    one = Fabric((Switch(sw.delta, sw.rate, bidirectional=sw.bidirectional),) * (k * fabric.size))
    layers, splits, how = schedule_on_ports(demand, one, method=method)
    out = []
    for b in range(fabric.size):
        group = [c for layer in layers[b * k : (b + 1) * k] for c in layer]
        merged = _merge(group, demand.n)
        if merged is None:
            return None
        out.append(merged)
    return tuple(out), splits, f"{how} in port layers"


def _merge(confs: list[Configuration], n: int) -> tuple[Configuration, ...] | None:
    """The circuits of ``confs`` (one switch's layers) lit at once, cut at every start and end.

    None if the cut durations add up to less than some configuration's own duration by more than
    1e-12 of it (float rounding of the absolute times).
    """
    cuts = sorted({c.start for c in confs} | {c.end for c in confs})
    got = [0.0] * len(confs)
    out: list[Configuration] = []
    for a, z in itertools.pairwise(cuts):
        lit = [m for m, c in enumerate(confs) if c.start <= a and c.end >= z]
        if not lit:
            continue
        piece = Configuration.sparse(
            a,
            z - a,
            np.concatenate([confs[m].circuit_arrays()[0] for m in lit]),
            np.concatenate([confs[m].circuit_arrays()[1] for m in lit]),
            ports=n,
        )
        out.append(piece)
        for m in lit:  # lit through consecutive pieces (kept, no gap): credited their sum
            got[m] += piece.duration
    if any(g < c.duration * (1 - 1e-12) for g, c in zip(got, confs, strict=True)):
        return None
    return tuple(out)


def _partial(
    confs: tuple[tuple[Configuration, ...], ...], switch: Switch
) -> tuple[tuple[Configuration, ...], ...]:
    """Each switch's configurations, in their order, at the partial model's earliest starts.

    :func:`~ocsched.timing.partial_starts` with the switch's ports: never later than all-stop
    (a port's last use ends by the previous configuration's end), so the end only moves earlier.
    """
    out = []
    for sw in confs:
        starts = partial_starts(
            [c.circuit_arrays() for c in sw],
            [c.duration for c in sw],
            switch.delta,
            ports_per_endpoint=switch.ports_per_endpoint,
            bidirectional=switch.bidirectional,
        )
        out.append(tuple(c.at(t) for c, t in zip(sw, starts, strict=True)))
    return tuple(out)
