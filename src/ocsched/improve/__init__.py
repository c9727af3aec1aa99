"""Improve a placed schedule: better permutations, balanced placement, LP re-fit, piece removal.

:func:`improve_schedule` starts from ``spectra-pack`` (Spectra's permutations, placed by
bisection with splits) and tries a few candidates beside it:

- *permutations*: Spectra's, and the largest-first grouped ones of
  :func:`ocsched.decompose._grouped.grouped_decompose` (entries of similar size share a
  permutation, so the permutations' total length is close to its floor with Delta of them,
  ``sum_t max_L d_{L,(t)}``; on dense skewed matrices such as ``generate("moe", gpus=64)``
  Spectra's rounds stay about 2% above it);
- *placement*: ``pack`` (best fit with splits), and :func:`balance_whole`, every permutation
  whole with the switch loads evened out by local search (where delta is large, pack's split
  pieces cost more delay than they even out).

Each candidate's *piece structure* (which permutation sits on which switch) is then the
variables of one LP:

    minimise T  s.t.  sum over pieces p holding entry e of x_p >= d_e   (every entry served)
                      sum over pieces p on switch b of (delta + x_p) <= T   (every load)

The LP is free to serve an entry from several permutations and to shift length between the
pieces of one permutation, which the per-permutation weights of Spectra cannot. A piece the LP
leaves empty is dropped, saving its delay. Then, from the best candidate, up to ``max_steps``
of the smallest pieces are tried for removal one by one (local search: a piece is removed when
the LP without it still ends earlier). Every candidate is repaired to exact coverage and only
kept when its makespan is smaller, so the result is never worse than ``spectra-pack``.

:func:`improve_on_fabric` does the same on any fabric (per-switch delay and rate, failed links,
down windows, either model), with the LP of :mod:`ocsched.improve.structure`, where each
configuration also keeps its phase between down windows and ends by its ports' link failures.
Both are limited by counts of work only (piece removals), never by the clock.

The scheduler ``spectra-opt`` is this, plus a short MILP on tiny supports
(:func:`ocsched.exact.near_optimal`).
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from ocsched._types import FloatArray, IntArray
from ocsched.assign import PLACEMENTS, Assignment, loads, place_on_fabric, timeline
from ocsched.decompose import decompose
from ocsched.decompose._common import cover_by_latest, incidence
from ocsched.decompose._grouped import grouped_decompose
from ocsched.errors import InfeasibleError
from ocsched.fabric import Fabric
from ocsched.improve.structure import (
    Piece,
    check_valid,
    makespan,
    pieces_of,
    refit,
    switch_times,
    to_switches,
)
from ocsched.model import Configuration, Demand, latest_end
from ocsched.timing import busy

__all__ = ["DEFAULT_STEPS", "balance_whole", "improve_on_fabric", "improve_schedule", "refit_pieces"]

log = logging.getLogger(__name__)

Switches = tuple[tuple[Configuration, ...], ...]

#: Default number of piece removals tried by :func:`improve_schedule` (each one LP): the search's
#: only limit, a count of work, so the result never depends on the machine or its load. Four of
#: them improved none of 150 random instances (n = 3-8) nor any cell of the paper grid or the
#: fresh instances of ``benchmarks/near_optimal.py``, so one is kept.
DEFAULT_STEPS = 1
#: Exponents of the grouped decompositions tried (see :func:`grouped_decompose`).
GROUPED_POWERS = (8.0,)
#: Largest ``Delta * n^2`` for the grouped decompositions (one dense n x n assignment per round):
#: about 0.7 s at n = 192 dense; n = 256 dense (17e6) would take 3 s.
GROUPED_MAX_WORK = 8_000_000


def _pieces(assignment: Assignment) -> tuple[IntArray, IntArray]:
    """(permutation, switch) of every distinct piece; two pieces of one permutation on a switch merge."""
    seen = sorted({(l, b) for b, sw in enumerate(assignment) for l, x in sw if x > 0})
    perm = np.array([l for l, _ in seen], dtype=np.int64)
    sw = np.array([b for _, b in seen], dtype=np.int64)
    return perm, sw


def refit_pieces(
    demand: Demand, perms: IntArray, piece_perm: IntArray, piece_switch: IntArray, switches: int, delta: float
) -> FloatArray | None:
    """Return the LP-optimal lengths of fixed pieces (None if the LP fails or cannot cover the demand).

    Piece p holds permutation ``piece_perm[p]`` on switch ``piece_switch[p]``; the LP is the one in
    the module docstring. The lengths returned are repaired to cover every entry exactly (the
    solver's feasibility tolerance is added to a piece serving the entry).

    >>> d = Demand.from_matrix([[0, 2], [1, 0]])
    >>> refit_pieces(d, np.array([[1, 0]]), np.array([0, 0]), np.array([0, 1]), 2, 0.5).tolist()
    [1.0, 1.0]
    """
    np_ = piece_perm.size
    if np_ == 0:
        return None
    inc = incidence(demand, perms)[:, piece_perm].tocsr()  # entry x piece
    if (np.asarray(inc.sum(axis=1)).ravel() == 0).any():
        return None
    on_sw = sp.csr_array((np.ones(np_), (piece_switch, np.arange(np_))), shape=(switches, np_))
    counts = np.bincount(piece_switch, minlength=switches).astype(np.float64)
    return cover_by_latest(inc, demand.values, on_sw, delta * counts)


def balance_whole(
    weights: FloatArray, switches: int, delta: float, *, max_moves: int | None = None
) -> Assignment:
    """Place every weight whole (no split) so that the switch loads are as even as local search finds.

    Longest first onto the least-loaded switch (LPT), then steepest descent on the sum of the
    squared loads with three moves: one weight to another switch, two weights swapped between
    switches, and (when neither helps) two weights of one switch swapped for one of another,
    which changes how many configurations the switches hold.

    Parameters
    ----------
    weights : ndarray of float
        The permutations' lengths (zero ones are left out).
    switches : int
        Number of identical switches s.
    delta : float
        Reconfiguration delay (each weight costs ``busy(w, 1, delta)`` on its switch).
    max_moves : int, optional
        Most improving moves (default ``4 m + 16`` for m weights).

    Returns
    -------
    list of list of (int, float)
        The assignment (see :mod:`ocsched.assign`), one piece per positive weight.

    Notes
    -----
    Deterministic: ties go to the first candidate in index order. Each step costs
    O(m^2 + m s); a two-for-one step O(m p) more, p the pairs on one switch. The sum of squares
    falls strictly at every move, so the search ends. Where delta is large against the
    weights, the number of configurations per switch decides the makespan, and LPT followed by
    moves and swaps alone cannot change it without first making a switch worse.

    Examples
    --------
    LPT ends at 7 (3 + 2 + 2 against 3 + 2); no move or swap of one weight helps, but two
    weights of 2 for one of 3 does:

    >>> a = balance_whole(np.array([3.0, 3.0, 2.0, 2.0, 2.0]), 2, 0.0)
    >>> sorted(sum(x for _, x in sw) for sw in a)
    [6.0, 6.0]
    """
    w = np.asarray(weights, dtype=np.float64)
    idx = np.nonzero(w > 0)[0]
    x = busy(w[idx], 1, delta)
    m, s = x.size, switches
    out: Assignment = [[] for _ in range(s)]
    if m == 0:
        return out
    of = np.zeros(m, dtype=np.int64)
    load = np.zeros(s)
    for l in np.argsort(-x, kind="stable").tolist():
        b = int(np.argmin(load))
        of[l] = b
        load[b] += x[l]
    cap = 4 * m + 16 if max_moves is None else max_moves
    eye = np.eye(m, dtype=bool)
    for _ in range(cap):
        la = load[of]
        # Change of sum(load^2) when amount t leaves a switch at load p for one at load q:
        # (p - t)^2 + (q + t)^2 - p^2 - q^2 = 2 t (q - p) + 2 t^2.
        move = 2 * x[:, None] * (load[None, :] - la[:, None]) + 2 * x[:, None] ** 2
        move[np.arange(m), of] = np.inf
        t = x[:, None] - x[None, :]
        swap = 2 * t * (la[None, :] - la[:, None]) + 2 * t**2
        swap[(of[:, None] == of[None, :]) | eye] = np.inf
        i_mv, i_sw = int(np.argmin(move)), int(np.argmin(swap))
        best = min(float(move.flat[i_mv]), float(swap.flat[i_sw]))
        tol = 1e-12 * float(load.max()) ** 2
        if best < -tol:
            if float(move.flat[i_mv]) <= float(swap.flat[i_sw]):
                l, b = divmod(i_mv, s)
                load[of[l]] -= x[l]
                load[b] += x[l]
                of[l] = b
            else:
                l, k = divmod(i_sw, m)
                a, b = int(of[l]), int(of[k])
                load[a] += x[k] - x[l]
                load[b] += x[l] - x[k]
                of[l], of[k] = b, a
            continue
        # Two of one switch for one of another: the only move that changes the counts evenly.
        iu, ju = np.triu_indices(m, 1)
        same = of[iu] == of[ju]
        p1, p2 = iu[same], ju[same]
        if p1.size == 0:
            break
        t2 = (x[p1] + x[p2])[:, None] - x[None, :]
        pa = load[of[p1]][:, None]
        two = 2 * t2 * (la[None, :] - pa) + 2 * t2**2
        two[of[p1][:, None] == of[None, :]] = np.inf
        i2 = int(np.argmin(two))
        if float(two.flat[i2]) >= -tol:
            break
        q, k = divmod(i2, m)
        l1, l2 = int(p1[q]), int(p2[q])
        a, b = int(of[l1]), int(of[k])
        load[a] -= float(t2.flat[i2])
        load[b] += float(t2.flat[i2])
        of[l1] = of[l2] = b
        of[k] = a
    for l, b in zip(idx.tolist(), of.tolist(), strict=True):
        out[b].append((l, float(w[l])))
    return out


def _assignment(piece_perm: IntArray, piece_switch: IntArray, x: FloatArray, switches: int) -> Assignment:
    out: Assignment = [[] for _ in range(switches)]
    for l, b, v in zip(piece_perm.tolist(), piece_switch.tolist(), x.tolist(), strict=True):
        if v > 0:
            out[b].append((l, v))
    return out


def improve_schedule(
    demand: Demand,
    *,
    switches: int,
    delta: float,
    max_steps: int = DEFAULT_STEPS,
) -> tuple[Switches, int]:
    """Return a schedule no longer than ``spectra-pack``'s: the best candidate, re-fit, pieces removed.

    Parameters
    ----------
    demand : Demand
        The demand.
    switches : int
        Number of identical switches s.
    delta : float
        Reconfiguration delay.
    max_steps : int
        Piece removals tried (each one LP). There is no time limit: the result depends on the
        input alone, never on the machine's speed or load.

    Returns
    -------
    configurations : tuple of tuple of Configuration
        Per switch, its configurations in time order.
    splits : int
        Pieces beyond one per permutation used.

    Notes
    -----
    Deterministic: no randomness, and candidates are tried in a fixed order (smallest piece
    first, ties by permutation then switch). Each step solves one LP with ``nnz`` covering rows
    and one column per piece (HiGHS), so a step costs about one Spectra weight re-fit. The
    grouped permutations (when ``Delta n^2 <=`` :data:`GROUPED_MAX_WORK`) cost Delta dense n x n
    assignments; they are placed whole only, and that placement needs no LP (each entry lies on
    one permutation, whose length is its largest entry).

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    >>> confs, splits = improve_schedule(d, switches=2, delta=0.5)
    >>> max(c.end for sw in confs for c in sw)
    2.75
    """
    s, d = switches, delta
    dec = decompose(demand, method="spectra", delta=d)
    start, _ = PLACEMENTS["pack"].func(dec.weights, s, d)  # exactly spectra-pack's placement
    start_t = float(loads(start, d).max(initial=0.0))
    best_a, best_t, best_p = start, start_t, dec.perms

    steps = 0

    def spent() -> bool:
        return steps >= max_steps

    # Candidates: Spectra's permutations and the grouped ones (largest entries together, see
    # ocsched.decompose._grouped), each placed by pack and whole with balanced loads (where
    # delta is large, pack's split pieces cost more than they even out). Pieces are re-fit by
    # the LP where that can change them; the local search continues from the best candidate.
    decs = [dec]
    if dec.weights.size and demand.max_degree * demand.n**2 <= GROUPED_MAX_WORK:
        decs += [grouped_decompose(demand, power=p) for p in GROUPED_POWERS]
    seed: tuple[float, IntArray, IntArray, FloatArray, IntArray] | None = None
    for k, dk in enumerate(decs):
        if not dk.weights.size:
            continue
        # Grouped permutations are only placed whole: pack's split pieces would need an LP each
        # and never won on the benchmarks.
        placed = [start] if k == 0 else []
        placed.append(balance_whole(dk.weights, s, d))
        for a in placed:
            t = float(loads(a, d).max(initial=0.0))
            if a is not start and t >= start_t:
                # Not even better than pack before its re-fit: one LP saved.
                continue
            if t < best_t:
                best_a, best_t, best_p = a, t, dk.perms
            perm, sw = _pieces(a)
            if k > 0 and perm.size == np.unique(perm).size:
                # One piece per permutation, one permutation per entry: the LP has nothing to move.
                x: FloatArray | None = dk.weights[perm]
            else:
                x = refit_pieces(demand, dk.perms, perm, sw, s, d)
            if x is None:
                continue
            keep = x > 0
            perm, sw, x = perm[keep], sw[keep], x[keep]
            cand = _assignment(perm, sw, x, s)
            t = float(loads(cand, d).max(initial=0.0))
            if t < best_t:
                best_a, best_t, best_p = cand, t, dk.perms
            if seed is None or t < seed[0]:
                seed = (t, perm, sw, x, dk.perms)
    if seed is not None:
        _, perm, sw, x, perms = seed
        # Local search: remove the smallest pieces while that helps.
        tried: set[tuple[int, int]] = set()
        while not spent():
            order = [p for p in np.lexsort((sw, perm, x)).tolist() if (int(perm[p]), int(sw[p])) not in tried]
            improved = False
            for p in order:
                if spent():
                    break
                tried.add((int(perm[p]), int(sw[p])))
                steps += 1
                keep = np.arange(perm.size) != p
                x2 = refit_pieces(demand, perms, perm[keep], sw[keep], s, d)
                if x2 is None:
                    continue
                cand = _assignment(perm[keep], sw[keep], x2, s)
                t = float(loads(cand, d).max(initial=0.0))
                if t < best_t * (1 - 1e-12):
                    best_a, best_t, best_p = cand, t, perms
                    on = x2 > 0
                    perm, sw, x = perm[keep][on], sw[keep][on], x2[on]
                    improved = True
                    break
            if not improved:
                break
    pieces = sum(len(b) for b in best_a)
    return timeline(best_a, best_p, d), pieces - len({l for b in best_a for l, _ in b})


def _key(p: Piece) -> tuple[int, int, bytes, bytes]:
    return (p.switch, p.phase, p.ins.tobytes(), p.outs.tobytes())


def _splits(switches: Switches) -> int:
    """Configurations beyond one per distinct set of circuits."""
    seen = {tuple(c.circuits) for sw in switches for c in sw}
    return sum(len(sw) for sw in switches) - len(seen)


def improve_on_fabric(
    demand: Demand, fabric: Fabric, *, start: Switches, max_steps: int = DEFAULT_STEPS
) -> tuple[Switches, int]:
    """Return a schedule on ``fabric`` no longer than ``start``: candidates re-fit by LP, pieces removed.

    The fabric counterpart of :func:`improve_schedule`, for per-switch delays and rates, failed
    links (from 0 or later), down windows and either model.

    Parameters
    ----------
    demand : Demand
        The demand.
    fabric : Fabric
        Any fabric.
    start : tuple of tuple of Configuration
        A valid schedule of ``demand`` on ``fabric`` (``spectra-pack``'s); the result is never longer.
    max_steps : int
        Piece removals tried (each one LP); no time limit.

    Returns
    -------
    configurations : tuple of tuple of Configuration
        Per switch, its configurations in time order.
    splits : int
        Configurations beyond one per distinct set of circuits.

    Notes
    -----
    Candidates: ``start`` (under the partial model: Spectra's permutations packed on the fabric's
    all-stop twin instead, since the re-fit is all-stop), Spectra's permutations placed greedily,
    and the grouped permutations placed greedily and packed (``place_on_fabric``). Each
    candidate's structure (which matching runs on which switch, in which phase between down
    windows) is re-fit by one LP (:func:`ocsched.improve.structure.refit`: every entry served,
    every configuration by its deadline, i.e. its phase's end and its ports' link failures,
    minimise the makespan); pieces the LP leaves empty are dropped; then the smallest pieces are
    tried for removal as in :func:`improve_schedule`. Re-fits are all-stop schedules, valid under
    the partial model too; a partial ``start`` is kept when it is shorter. Deterministic.
    """
    best, best_t = start, latest_end(start)
    af = fabric.with_model("all-stop")
    times = switch_times(af)
    mean = float(np.average(fabric.deltas, weights=fabric.rates))
    dec = decompose(demand, method="spectra", delta=mean)
    decs = [("spectra", dec)]
    if dec.weights.size and demand.max_degree * demand.n**2 <= GROUPED_MAX_WORK:
        decs += [("grouped", grouped_decompose(demand, power=p)) for p in GROUPED_POWERS]
    cands: list[Switches] = [start] if not fabric.reconfiguration.keeps_circuits else []
    for name, dk in decs:
        if not dk.weights.size:
            continue
        for method in ("pack", "greedy"):
            if name == "spectra" and method == "pack" and not fabric.reconfiguration.keeps_circuits:
                continue  # that is `start`
            try:
                cands.append(place_on_fabric(dk, af, method=method, demand=demand)[0])
            except InfeasibleError:
                continue
    seed = None
    for cand in cands:
        if not check_valid(cand, demand, af):
            log.debug("improve_on_fabric: a candidate is not all-stop valid; skipped")
            continue
        if latest_end(cand) < best_t:
            best, best_t = cand, latest_end(cand)
        pieces, x0 = pieces_of(cand, demand, times)
        x = refit(demand, pieces, x0, times)
        if x is None:
            continue
        on = x > 0
        pieces, x = [p for p, k in zip(pieces, on, strict=True) if k], x[on]
        t = makespan(pieces, x, times)
        if t < best_t:
            sw = to_switches(pieces, x, times, demand.n)
            if check_valid(sw, demand, af):
                best, best_t = sw, t
        if seed is None or t < seed[0]:
            seed = (t, pieces, x)
    if seed is not None:
        _, pieces, x = seed
        steps = 0
        tried: set[tuple[int, int, bytes, bytes]] = set()
        while steps < max_steps:
            # Smallest first, ties by switch then position: deterministic.
            on_sw = np.array([p.switch for p in pieces], dtype=np.int64)
            order = np.lexsort((np.arange(x.size), on_sw, x)).tolist()
            order = [k for k in order if _key(pieces[k]) not in tried]
            improved = False
            for k in order:
                if steps >= max_steps:
                    break
                tried.add(_key(pieces[k]))
                steps += 1
                rest = [p for j, p in enumerate(pieces) if j != k]
                x2 = refit(demand, rest, np.delete(x, k), times)
                if x2 is None:
                    continue
                on = x2 > 0
                rest, x2 = [p for p, q in zip(rest, on, strict=True) if q], x2[on]
                t = makespan(rest, x2, times)
                if t < best_t * (1 - 1e-12):
                    sw = to_switches(rest, x2, times, demand.n)
                    if check_valid(sw, demand, af):
                        best, best_t = sw, t
                        pieces, x = rest, x2
                        improved = True
                        break
            if not improved:
                break
    return best, _splits(best)
