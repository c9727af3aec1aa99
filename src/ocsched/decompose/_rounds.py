"""Spectra's Delta matching rounds on the demand's support, one warm-started assignment solver.

Each round is a maximum-weight matching with gain ``residual + penalty * (critical endpoints)``
on uncovered entries (``residual`` on covered ones), solved by the compiled assignment solver of
:mod:`ocsched.decompose._assignment` (a min-cost perfect matching on an augmented bipartite graph:
a port may stay idle at no cost). The driver, :func:`~ocsched.decompose._rounds_driver.run_rounds`
(one kernel, its steps in :mod:`~ocsched.decompose._rounds_steps`):

- keeps the dual prices from round to round (costs only rise, except on lines that just became
  critical, whose dual moves with them), frees only the ports whose matched entry changed, and
  re-matches them with auction steps (Jonker-Volgenant's augmenting row reduction) and Dijkstra
  shortest augmenting paths, so every round is solved exactly (but see the last point);
- works on the live entries only: an entry already covered on a critical line can never be
  chosen again (a critical line must take an uncovered entry) and is dropped, amortised;
- on dense input solves each round on a candidate graph (each row's 16 entries of least
  reduced cost, with their columns and costs kept beside them, copied into contiguous arrays so
  that the solver's scans stay in cache) and prices out every other live entry through per-line
  lower bounds that stay valid as prices fall, re-scanning a line only when its dual passes its
  bound;
- keeps each row's live entries in order of cost while that order lasts (on dense input every
  line is critical from the first round, so costs never change after it): a re-scan then reads
  the row in that order and stops at the first entry that cannot beat its current 16th best
  even at the highest column price, typically after a few dozen entries instead of the whole row;
- once every line is critical (from the first round on dense input), solves each round as a
  perfect matching without the dummies: every line keeps taking one uncovered entry, so the
  live graph stays regular and has one. Where the candidate graph has none (MoE: every row's
  best entries in the same few hot columns), the round prices every row and finishes on the
  live graph. On MoE the dummies were two thirds of the nodes the shortest paths settled. Such
  a round's only dead candidates are its matched entries: they leave the lists at its end, and
  no pass over the whole demand's arrays is left in a round;
- from 512 ports on (``_APPROX_AT``), stops those perfect rounds on the candidate graph at an
  eps-optimal matching: Bertsekas' auction (each bid lowers a price by eps more than the gap
  to the bidder's second choice) with no shortest augmenting path, pricing the entries left
  out with the same eps slack. Every round is still a perfect matching of live entries (so the
  decomposition is as valid and still has Delta permutations), within n * eps of the exact
  round's gain, eps = 3 x the mean entry / n. The permutations' weights barely notice: on
  dense input (line sums 1, s = 16, delta = 0.04, 8 seeds x 2 placements) the makespans differ
  from the exact rounds' by at most 5e-5 at n = 512 and 640, either sign (2e-4 at n = 256-300,
  which the exact rounds still do fast), while dense n = 512 / 1024 / 2048 take 0.55x / 0.5x /
  0.47x the time. Where the auction runs out of room (its free list, ``_MAX_PRICING`` passes)
  the rounds start over exactly; the first exact round after eps-optimal ones lowers the row
  duals to feasibility, as shortest augmenting paths need.

Measured (CPU s in these rounds, old and new code interleaved on a 2-core machine shared with
other jobs): dense uniform random n=512 / 1024 / 2048 from 0.69 / 4.4 / 36 s before the
contiguous candidate graph, the rows kept in order of cost and the pruned augmenting paths of
:mod:`~ocsched.decompose._assignment`, to 0.61 / 3.3 / 18 s after; the perfect rounds then took
``schedule()`` on dense n=1024 and MoE n=256 to 0.72x and 0.43x of that (same makespans).
Where the time of the exact rounds goes (wall clock around each part of a round, instrumented copy,
2026-12-01, dense n=1024): shortest augmenting paths 40% (about 15 a round, each settling about
390 nodes), auction steps 23% (about 5n a round: the free list's capacity; a larger list and
budget were measured not to help), pricing 19% (about 290 row re-scans a round: a row's dual
climbs past its bound every three or four rounds; bounds that move with the highest price were
tried and cut that by 3% only), the start of a round 6%, collecting the permutation 5%, the
rest 7%.

Memory is O(nnz + n): no n x n array.
"""

from __future__ import annotations

import logging

import numpy as np

from ocsched._jit import HAVE_NUMBA
from ocsched._types import FloatArray, IntArray
from ocsched.decompose._rounds_driver import run_rounds as _run_rounds

__all__ = ["HAVE_NUMBA", "spectra_rounds"]

log = logging.getLogger(__name__)


#: Entries per row in the candidate graph on dense input (more only where pricing asks).
_CANDIDATES = 16
#: Live entries per row (on average) above which a round is solved on the candidate graph
#: (measured in one process: 32 beats 64 by 4% on dense n=512 and 9% on MoE n=256).
_DENSE_AT = 32
#: Pricing passes per round before the round is finished on the whole live graph.
_MAX_PRICING = 32
#: Capacity of the free list per port: <= 2 free nodes, plus the auction steps it bounds.
_FREE_CAP = 6
#: Ports from which perfect rounds on dense input stop at an eps-optimal matching ...
_APPROX_AT = 512
#: ... with eps this many times the mean demand entry over n (a row's two best entries lie
#: about mean / n apart: a larger eps buys more pricing passes than it saves in auction steps;
#: measured: 2-4 best, 1 and 6 slower, 16 gives up) ...
_EPS_SHARE = 3.0
#: ... and this many candidates a row (measured on dense n=1024: 16 / 20 / 24 / 32 take
#: 1.75 / 1.62 / 1.59 / 1.68 s; the exact rounds are fastest with 16) ...
_APPROX_CANDIDATES = 24
#: ... and this capacity of the free list per port (every step of an eps-optimal round is one).
_APPROX_FREE_CAP = 32
#: Ports from which dense input with many equal entries has its ties broken ...
_TIE_BREAK_AT = 256
#: ... by scaling each entry by 1 + this x a fixed pseudo-random number in [0, 1).
_TIE_BREAK = 1e-7


def approx_eps(values: FloatArray, n: int) -> float:
    """The eps of eps-optimal rounds on entries ``values`` of an n x n demand."""
    return _EPS_SHARE * float(values.mean()) / n


def spectra_rounds(
    n: int, rows: IntArray, cols: IntArray, values: FloatArray, big_delta: int
) -> tuple[IntArray, IntArray, FloatArray]:
    """Run Spectra's Delta max-residual matching rounds on the support.

    Returns the entries of each round's permutation (``ent[ptr[l]:ptr[l+1]]``, indices into the
    demand's entries, row-major order assumed) and the round weights (of the values the rounds
    saw: see below; the caller refits them on the demand).

    From ``_TIE_BREAK_AT`` ports on, dense input (more than ``_DENSE_AT`` entries a row) with
    fewer distinct values than half its entries (integer counts, a uniform all-to-all) is
    matched on entries scaled by ``1 + 1e-7 u`` with ``u`` a fixed pseudo-random number per
    entry: each round is then optimal for the true entries to within 1e-7 of their sum, and the
    solver no longer searches among equal alternatives (measured at n = 512: entries in {1, 2,
    3} 9.3 s -> 0.9 s, all equal 5.3 s -> 0.6 s, the same total weight). Where a row holds
    more equal entries per distinct value than ``_APPROX_CANDIDATES`` (its candidates would all
    tie), the rounds stay exact: eps-optimal ones took 10 s on the entries in {1, 2, 3}.
    """
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    distinct = 1 + int(np.count_nonzero(np.diff(np.sort(values))))
    if n >= _TIE_BREAK_AT and values.size > _DENSE_AT * n and 2 * distinct < values.size:
        noise = np.random.default_rng(0).random(values.size)
        values = values * (1.0 + _TIE_BREAK * noise)
    # Larger than any matching's total residual, so covering critical lines always wins.
    # (The n largest entries, summed in ascending order.)
    penalty = 2.0 * float(np.sort(np.partition(values, max(values.size - n, 0))[-n:]).sum())
    ent = np.empty(big_delta * n, dtype=np.int64)
    ptr = np.zeros(big_delta + 1, dtype=np.int64)
    weights = np.zeros(big_delta)
    # Writeable copies: numba compiles (and caches) one signature, not one per read-only flag.
    arrays = (indptr, np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))
    values = np.array(values, dtype=np.float64)

    def run(cand_k: int, eps: float, free_cap: int) -> int:
        left: int = _run_rounds(
            n, big_delta, *arrays, values, penalty, cand_k, _DENSE_AT, ent, ptr, weights,
            eps, free_cap, _MAX_PRICING,
        )  # fmt: skip
        return left

    left = -1
    if n >= _APPROX_AT and _EPS_SHARE > 0.0 and values.size <= _APPROX_CANDIDATES * distinct * n:
        left = run(_APPROX_CANDIDATES, approx_eps(values, n), _APPROX_FREE_CAP)
        if left < 0:
            log.debug("eps-optimal rounds gave up: exact rounds from the start")
    if left < 0:  # exact rounds: small or tied input, or the eps-optimal auction ran out of room
        left = run(_CANDIDATES, 0.0, _FREE_CAP)
    if left:
        raise AssertionError(f"spectra rounds left {left} demand entries uncovered")
    return ent[: ptr[-1]], ptr, weights
