"""Hybrid fabrics: circuits plus an electrical packet switch (EPS), and the schedulers for them.

The model (:class:`~ocsched.fabric.Fabric` with ``eps_rate`` rho > 0 and ``eps_latency`` L):

- every port has, besides its OCS links, a link to a non-blocking packet switch of rate rho (in
  units of one OCS link's rate), in each direction;
- the demand is split D = C + R: the circuits serve C exactly as on the plain fabric
  (:meth:`~ocsched.fabric.Fabric.without_eps`), the EPS serves R from time 0 with no
  reconfiguration, each port sending and receiving at most rho per unit time;
- a non-blocking switch serves R by ``L + max line sum(R) / rho`` (send every entry at the
  constant rate ``R_ij / t``: each port's total stays within rho), and no sooner (the busiest
  port needs that long), so that is the EPS's time;
- the makespan is the later of the circuits' makespan and the EPS's time.

Assumed: circuit and EPS links of a port work at the same time and independently; an entry may
be split between them in any proportion; the EPS never fails and is not shared with traffic
outside the demand.

The schedulers return a :class:`HybridResult` (per switch its configurations, the splits, R).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ocsched.assign import place, place_on_fabric
from ocsched.decompose import decompose
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand, latest_end

__all__ = [
    "HybridResult",
    "circuits_only",
    "eps_only",
    "eps_time",
    "greedy_split",
    "mixnet_greedy",
    "proportional",
    "small_entry_trim",
    "solstice_hybrid",
    "spectra_hybrid",
]

Switches = tuple[tuple[Configuration, ...], ...]


@dataclass(frozen=True)
class HybridResult:
    """A hybrid schedule: the circuits' configurations per switch, their splits, and the EPS part R."""

    switches: Switches
    splits: int
    eps: Demand
    makespan: float


def eps_time(r: Demand, fabric: Fabric) -> float:
    """Return when the EPS has served ``r``: ``L + max line sum / rho`` (0 for an empty R).

    >>> eps_time(Demand.from_matrix([[0, 1], [2, 0]]), Fabric.uniform(1, 0.1).with_eps(0.5))
    4.0
    """
    if not r.nnz:
        return 0.0
    if not fabric.eps_rate > 0:
        return float("inf")
    return fabric.eps_latency + r.max_line_sum / fabric.eps_rate


def _sub(demand: Demand, values: NDArray[np.float64]) -> Demand:
    """The demand with entry values ``values`` (zeros dropped)."""
    keep = values > 0
    return Demand(demand.n, demand.rows[keep], demand.cols[keep], np.ascontiguousarray(values[keep]))


def _circuits(
    c: Demand, plain: Fabric, decomposer: str = "spectra", placement: str = "pack"
) -> tuple[Switches, int]:
    """Schedule ``c`` on the circuits alone, as the pipeline ``decomposer`` + ``placement`` does."""
    if not c.nnz:
        return ((),) * plain.size, 0
    if plain.is_uniform:
        delta = plain.deltas[0]
        dec = decompose(c, method=decomposer, delta=delta)
        return place(dec, switches=plain.size, delta=delta, method=placement)
    mean = float(np.average(plain.deltas, weights=plain.rates))
    dec = decompose(c, method=decomposer, delta=mean)
    return place_on_fabric(dec, plain, method=placement, demand=c)


def _finish(demand: Demand, r_values: NDArray[np.float64], fabric: Fabric, **how: str) -> HybridResult:
    """Schedule D - R on the circuits; the result with R on the EPS."""
    r_values = np.clip(r_values, 0.0, demand.values)
    c_values = demand.values - r_values
    r = _sub(demand, r_values)
    sw, splits = _circuits(_sub(demand, c_values), fabric.without_eps(), **how)
    return HybridResult(sw, splits, r, max(latest_end(sw), eps_time(r, fabric)))


def circuits_only(demand: Demand, fabric: Fabric) -> HybridResult:
    """spectra-pack on the circuits, nothing on the EPS."""
    return _finish(demand, np.zeros(demand.nnz), fabric)


def eps_only(demand: Demand, fabric: Fabric) -> HybridResult:
    """Everything on the EPS (its makespan ``L + max line sum / rho``)."""
    return HybridResult(((),) * fabric.size, 0, demand, eps_time(demand, fabric))


def _ascending_sums(line: NDArray[np.int64], values: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """Per entry, the sum of its line's entries up to it in ascending order (ties by position)."""
    order = np.lexsort((values, line))
    ln, v = line[order], values[order]
    csum = np.cumsum(v)
    start = np.searchsorted(ln, np.arange(n))
    before = np.where(start[ln] > 0, csum[np.maximum(start[ln] - 1, 0)], 0.0)
    out = np.empty(values.size)
    out[order] = csum - before
    return out


def greedy_split(
    demand: Demand, budget: float, *, sums: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
) -> NDArray[np.float64]:
    """Return R (per entry) within ``budget`` per line: small entries whole, then a share of the rest.

    An entry goes whole to the EPS when it is among the smallest entries of both its row and its
    column that fit the budget (so no line exceeds it); each line's remaining budget is then
    shared out over its other entries in proportion to their size, an entry taking the smaller of
    its row's and its column's offer. Following the hybrid bound
    (:func:`~ocsched.bounds.hybrid.hybrid_line_bound`): whole small entries save a configuration
    each, the shares shorten the rest.

    >>> d = Demand.from_matrix([[0, 1, 4], [4, 0, 1], [1, 4, 0]])
    >>> greedy_split(d, 2.0).round(3).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    n, rows, cols, v = demand.n, demand.rows, demand.cols, demand.values
    if sums is None:
        sums = (_ascending_sums(rows, v, n), _ascending_sums(cols, v, n))
    whole = (sums[0] <= budget) & (sums[1] <= budget)
    r = np.where(whole, v, 0.0)
    row_left = np.maximum(budget - np.bincount(rows, r, n), 0.0)
    col_left = np.maximum(budget - np.bincount(cols, r, n), 0.0)
    rest = np.where(whole, 0.0, v)
    row_rest, col_rest = np.bincount(rows, rest, n), np.bincount(cols, rest, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        fr = np.where(row_rest[rows] > 0, row_left[rows] / row_rest[rows], 0.0)
        fc = np.where(col_rest[cols] > 0, col_left[cols] / col_rest[cols], 0.0)
    share: NDArray[np.float64] = np.minimum(np.minimum(fr, fc), 1.0) * rest
    return r + share


def _line_estimate(demand: Demand, values: NDArray[np.float64], plain: Fabric) -> float:
    """The line and degree bounds of the entries ``values`` on ``plain``, per line
    ``max((max(k, s) delta + load) / s, ceil(k / s) delta)`` with k its entries (O(nnz), no search)."""
    keep = values > 0
    if not keep.any():
        return 0.0
    s, d = plain.size, max(plain.deltas)
    out = 0.0
    for line in (demand.rows[keep], demand.cols[keep]):
        k = np.bincount(line, minlength=demand.n).astype(np.float64)
        load = np.bincount(line, values[keep], demand.n)
        out = max(out, float(np.max(np.maximum((np.maximum(k, s) * d + load) / s, np.ceil(k / s) * d))))
    return out


def _proxy(demand: Demand, values: NDArray[np.float64], plain: Fabric, scale: float) -> float:
    """Estimated circuit makespan of the entries ``values``: their line estimate times ``scale``."""
    return scale * _line_estimate(demand, values, plain)


def _balance(
    demand: Demand, fabric: Fabric, scale: float, split: Callable[[float], NDArray[np.float64]], hi: float
) -> NDArray[np.float64]:
    """R of ``split(x)`` for the x in [0, hi] where estimated circuit time and EPS time meet."""
    plain = fabric.without_eps()
    lo = 0.0
    best, best_val = np.zeros(demand.nnz), _proxy(demand, demand.values, plain, scale)
    for _ in range(_STEPS):
        mid = 0.5 * (lo + hi)
        r = split(mid)
        e = eps_time(_sub(demand, r), fabric)
        c = _proxy(demand, demand.values - r, plain, scale)
        if max(e, c) < best_val:
            best, best_val = r, max(e, c)
        lo, hi = (mid, hi) if c > e else (lo, mid)
    return best


#: Bisection steps of each split's parameter (about 0.1 % of its range).
_STEPS = 10


def _scale(demand: Demand, fabric: Fabric, circuit_makespan: float) -> float:
    """How far spectra-pack's makespan is above the line estimate on this demand (>= 1)."""
    lb = _line_estimate(demand, demand.values, fabric.without_eps())
    return max(1.0, circuit_makespan / lb) if lb > 0 else 1.0


def small_entry_trim(demand: Demand, fabric: Fabric, *, scale: float = 1.0, **how: str) -> HybridResult:
    """Every entry up to a threshold on the EPS (Solstice's trim), the threshold balancing both parts.

    The threshold is bisected so that the EPS's time meets the circuits' estimated makespan
    (``scale`` times their lower bound); then the rest is scheduled (``how``: the decomposer
    and placement, spectra-pack by default).
    """
    return _finish(demand, _trim_split(demand, fabric, scale), fabric, **how)


def _trim_split(demand: Demand, fabric: Fabric, scale: float) -> NDArray[np.float64]:
    v = demand.values

    def split(theta: float) -> NDArray[np.float64]:
        return np.where(v <= theta, v, 0.0)

    return _balance(demand, fabric, scale, split, float(v.max(initial=0.0)))


def proportional(demand: Demand, fabric: Fabric, *, base: HybridResult | None = None) -> HybridResult:
    """The same share f of every entry on the EPS: spectra-pack's schedule of D, every configuration
    shortened by the factor 1 - f, f the best of a bisection on the makespan (``base``: that
    schedule, if already built). What the shortened circuits no longer serve goes to the EPS,
    entry by entry (at most ``f`` of it: the schedule may serve more than an entry)."""
    base = circuits_only(demand, fabric) if base is None else base
    if not demand.nnz:
        return base
    delta = np.array(fabric.without_eps().deltas)
    n, keys = demand.n, demand.rows * demand.n + demand.cols
    held = np.zeros(demand.nnz)
    work = np.array([sum(c.duration for c in sw) for sw in base.switches])
    count = np.array([len(sw) for sw in base.switches])
    for sw in base.switches:
        for c in sw:
            i, j = c.circuit_arrays()
            pos = np.minimum(np.searchsorted(keys, i * n + j), keys.size - 1)
            hit = keys[pos] == i * n + j
            np.add.at(held, pos[hit], c.duration)

    def times(f: float) -> tuple[float, NDArray[np.float64]]:
        r_values = np.maximum(demand.values - (1.0 - f) * held, 0.0)
        end = float(np.max(count * delta + (1.0 - f) * work))
        return end, r_values

    lo, hi, best_f, best_t = 0.0, 1.0, 0.0, base.makespan
    for _ in range(2 * _STEPS):
        mid = 0.5 * (lo + hi)
        end, r_values = times(mid)
        e = eps_time(_sub(demand, r_values), fabric)
        if max(end, e) < best_t:
            best_f, best_t = mid, max(end, e)
        lo, hi = (mid, hi) if end > e else (lo, mid)
    if best_f == 0.0:
        return base
    out = []
    for b, sw in enumerate(base.switches):
        t, confs = 0.0, []
        for c in sw:
            i, j = c.circuit_arrays()
            start = t + delta[b]
            confs.append(Configuration.sparse(start, (1.0 - best_f) * c.duration, i, j, ports=n))
            t = start + (1.0 - best_f) * c.duration
        out.append(tuple(confs))
    switches = tuple(out)
    # R from the configurations as built (their own rounding), so the circuits plus R serve D.
    served = np.zeros(demand.nnz)
    for sw in switches:
        for c in sw:
            i, j = c.circuit_arrays()
            pos = np.minimum(np.searchsorted(keys, i * n + j), keys.size - 1)
            hit = keys[pos] == i * n + j
            np.add.at(served, pos[hit], c.duration)
    r = _sub(demand, np.maximum(demand.values - served, 0.0))
    return HybridResult(switches, base.splits, r, max(latest_end(switches), eps_time(r, fabric)))


def _greedy(demand: Demand, fabric: Fabric, *, scale: float = 1.0) -> HybridResult:
    """:func:`greedy_split` with the per-line budget balancing both parts."""
    n, v = demand.n, demand.values
    sums = (_ascending_sums(demand.rows, v, n), _ascending_sums(demand.cols, v, n))
    split = _balance(demand, fabric, scale, lambda b: greedy_split(demand, b, sums=sums), demand.max_line_sum)
    return _finish(demand, split, fabric)


def refit(demand: Demand, res: HybridResult, fabric: Fabric) -> HybridResult:
    """Shorten configurations by LP, the traffic they no longer carry moved to the EPS.

    Variables: ``x_k in [0, d_k]`` cut from configuration k's duration ``d_k``, and the makespan
    T. Each switch's configurations, back to back, each after delta, end by T; each port's EPS
    line sum (R's, plus ``x_k`` for every configuration k holding a circuit of the port that
    serves demand) is at most ``rho (T - L)``. Feasible at ``x = 0`` (the schedule given); the
    result is kept only if shorter: configurations cut to nothing are dropped, the others
    rebuilt back to back, and R recomputed entry by entry as what the circuits no longer serve
    (at most R plus the cuts, so within the LP's line sums). Identical rate-1 all-stop circuits
    only (else ``res`` unchanged).
    """
    plain = fabric.without_eps()
    confs = [(b, c) for b, sw in enumerate(res.switches) for c in sw]
    if not plain.is_uniform or not confs or not demand.nnz:
        return res
    n, k_all = demand.n, len(confs)
    rho, lat, delta, s = fabric.eps_rate, fabric.eps_latency, plain.deltas[0], plain.size
    keys = demand.rows * n + demand.cols  # sorted: Demand is row-major
    dur = np.array([c.duration for _, c in confs])
    circ = []
    port_rows: list[NDArray[np.int64]] = []
    for _, c in confs:
        i, j = c.circuit_arrays()
        pos = np.minimum(np.searchsorted(keys, i * n + j), keys.size - 1)
        hit = keys[pos] == i * n + j
        circ.append((i, j, pos, hit))
        port_rows.append(np.concatenate([i[hit], n + j[hit]]))
    owner = np.repeat(np.arange(k_all), [p.size for p in port_rows])
    ports = np.concatenate([np.zeros(0, np.int64), *port_rows])
    sw_of = np.array([b for b, _ in confs])
    # Columns: x (K), T. Rows: s switches, n out-ports, n in-ports.
    parts = (
        (sw_of, np.arange(k_all), -np.ones(k_all)),
        (np.arange(s), np.full(s, k_all), -np.ones(s)),
        (s + ports, owner, np.ones(ports.size)),
        (s + np.arange(2 * n), np.full(2 * n, k_all), np.full(2 * n, -rho)),
    )
    a = sp.csr_array(
        (
            np.concatenate([p[2] for p in parts]),
            (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])),
        ),
        shape=(s + 2 * n, k_all + 1),
    )
    r_line = np.concatenate(
        [np.bincount(res.eps.rows, res.eps.values, n), np.bincount(res.eps.cols, res.eps.values, n)]
    )
    busy = np.bincount(sw_of, dur + delta, s)
    b_ub = np.concatenate([-busy, -rho * lat - r_line])
    cost = np.zeros(k_all + 1)
    cost[-1] = 1.0
    bounds = np.column_stack([np.zeros(k_all + 1), np.append(dur, np.inf)])
    from scipy.optimize import linprog  # loaded when a hybrid schedule is fitted

    sol = linprog(cost, A_ub=a, b_ub=b_ub, bounds=bounds, method="highs")  # type: ignore[call-overload]
    if sol.status != 0 or sol.x is None:
        return res
    new = dur - np.clip(sol.x[:k_all], 0.0, dur)
    new[new <= 1e-12 * dur] = 0.0  # cut to a rounding crumb: dropped, its traffic to the EPS
    served = np.zeros(demand.nnz)
    out: list[list[Configuration]] = [[] for _ in range(s)]
    ends = np.zeros(s)
    for k, (b, _) in enumerate(confs):
        if new[k] <= 0:
            continue
        i, j, pos, hit = circ[k]
        np.add.at(served, pos[hit], new[k])
        start = ends[b] + delta
        out[b].append(Configuration.sparse(start, float(new[k]), i, j, ports=n))
        ends[b] = start + new[k]
    r_values = np.maximum(demand.values - served, 0.0)
    r = _sub(demand, r_values)
    switches = tuple(tuple(x) for x in out)
    cand = HybridResult(switches, res.splits, r, max(latest_end(switches), eps_time(r, fabric)))
    return cand if cand.makespan < res.makespan else res


def _check(fabric: Fabric) -> None:
    if not fabric.eps_rate > 0:
        raise InvalidInputError(
            f"a hybrid scheduler needs a fabric with eps_rate > 0; got {fabric.eps_rate!r}"
        )


def spectra_hybrid(demand: Demand, fabric: Fabric) -> HybridResult:
    """spectra-hybrid: the best of several splits of D between the EPS and spectra-pack.

    Candidates, each scheduled in full: circuits only (spectra-pack), EPS only, the small-entry
    trim (:func:`small_entry_trim`), the proportional split (:func:`proportional`) and the
    bound-guided split (:func:`greedy_split`: whole small entries, then shares of the rest, within
    a per-line EPS budget). Each split's parameter is bisected against the circuits' estimated
    makespan (their lower bound, scaled by spectra-pack's ratio to it on D). A candidate whose
    circuit part's lower bound is already at or above the best makespan found is not scheduled (it
    cannot win). The shortest is returned: never worse than any of the candidates.
    """
    _check(fabric)
    if not demand.nnz:
        return eps_only(demand, fabric)
    pack = circuits_only(demand, fabric)
    candidates = (pack, eps_only(demand, fabric), proportional(demand, fabric, base=pack))
    scale = _scale(demand, fabric, pack.makespan)
    best = min((*candidates, _greedy(demand, fabric, scale=scale)), key=lambda x: x.makespan)
    trim = _trim_split(demand, fabric, scale)
    c_values = demand.values - trim
    # The trim's makespan is at least the EPS's time and its circuits' line estimate: skipped
    # when that cannot beat the best so far (it could not win).
    floor = max(eps_time(_sub(demand, trim), fabric), _line_estimate(demand, c_values, fabric.without_eps()))
    if floor < best.makespan:
        best = min((best, _finish(demand, trim, fabric)), key=lambda x: x.makespan)
    # One LP on the winner: its configurations shortened where the EPS has room.
    return refit(demand, best, fabric)


def solstice_hybrid(demand: Demand, fabric: Fabric) -> HybridResult:
    """solstice-hybrid: Solstice's trim of small entries to the EPS, then stuffing and slicing.

    The threshold balances the EPS's time against the circuits' lower bound; the circuits are
    scheduled as ``solstice`` does (QuickStuff + power-of-two slicing, Spectra's placement).
    """
    _check(fabric)
    if not demand.nnz:
        return eps_only(demand, fabric)
    return small_entry_trim(demand, fabric, decomposer="solstice", placement="equalize")


def mixnet_greedy(demand: Demand, fabric: Fabric) -> HybridResult:
    """mixnet-greedy: the largest symmetrised pairs on circuits (at most s per port), the rest on the EPS.

    After MixNet's regional OCS: the pairs {i, j} ranked by ``D_ij + D_ji``, each taken while both
    ports have fewer than s circuit partners (one circuit per switch); the entries of the taken
    pairs go on the circuits (spectra-pack), everything else on the EPS.
    """
    _check(fabric)
    n, s = demand.n, fabric.size
    a = np.minimum(demand.rows, demand.cols)
    b = np.maximum(demand.rows, demand.cols)
    key = a * n + b
    pairs, inv = np.unique(key, return_inverse=True)
    weight = np.bincount(inv, demand.values, pairs.size)
    degree = np.zeros(n, dtype=np.int64)
    taken = np.zeros(pairs.size, dtype=bool)
    for p in np.lexsort((pairs, -weight)).tolist():
        i, j = divmod(int(pairs[p]), n)
        if degree[i] < s and degree[j] < s:
            degree[i] += 1
            degree[j] += 1
            taken[p] = True
    return _finish(demand, np.where(taken[inv], 0.0, demand.values), fabric)
