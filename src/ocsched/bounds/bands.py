"""Band bound: the total configuration time, counted band by band of the entries' sizes.

The line bounds of :mod:`ocsched.bounds.lines` charge every line its own sum, as if one line's
entries could fix the configuration lengths and all other lines fit under them. On a dense,
skewed matrix they cannot: the configurations are shared by all lines, and a configuration
holding a large entry of one line holds some entry of every other line too. Cutting the entry
sizes into bands and letting a *different* line dictate each band sums the lines' rank profiles
(the largest entries of one line, the middle ones of another, ...), which no single line shows.
"""

from __future__ import annotations

import numpy as np

from ocsched.bounds.lines import _lines
from ocsched.model import Demand

__all__ = ["band_bound"]


#: Lines the bound looks at (the heaviest by sum); any subset gives a valid bound.
BAND_LINES = 32
#: Band edges tried (quantiles of those lines' entries); any set of edges gives a valid bound.
BAND_EDGES = 32
#: Configuration counts K evaluated one by one; beyond them a closed-form tail bound.
BAND_COUNTS = 24


def band_bound(
    demand: Demand,
    *,
    switches: int,
    delta: float,
    lines: int = BAND_LINES,
    edges: int = BAND_EDGES,
    counts: int = BAND_COUNTS,
) -> float:
    """Return ``min over K >= Delta of (F(K) + delta max(K, s)) / s``, F(K) the band sum below.

    Parameters
    ----------
    demand : Demand
        The demand.
    switches : int
        Number of identical switches s.
    delta : float
        Reconfiguration delay.
    lines, edges, counts : int
        How many of the heaviest lines, band edges and configuration counts are examined. Each
        choice gives a valid bound; larger ones give a tighter bound, slower.

    Returns
    -------
    float
        The bound (0 for an all-zero demand).

    Notes
    -----
    **Bands.** Cut ``[0, inf)`` at ``0 = t_0 < t_1 < ... < t_m`` into bands
    ``b = [t_{b-1}, t_b)`` (and ``[t_m, inf)``) and let ``h_b(x) = min((x - t_{b-1})^+, t_b -
    t_{b-1})``, the part of x inside band b, so ``sum_b h_b(x) = x`` and each ``h_b`` is
    non-decreasing. For ``x, y >= 0``, ``h_b(x + y) <= h_b(x) + h_b(y) + pi_b`` with
    ``pi_b = min(t_{b-1}, t_b - t_{b-1})``: ``h_b(x + y)`` is at most the band's width, and when
    neither ``h_b(x)`` nor ``h_b(y)`` is clipped at the width,
    ``(x + y - t)^+ <= (x - t)^+ + (y - t)^+ + t``. By induction a sum of q pieces loses at most
    ``(q - 1) pi_b``.

    **One line, one band.** Take a schedule with K configurations of lengths ``w_c`` and a line L
    with ``k_L`` nonzeros ``d_e``. The configurations serving entry e form a set ``S_e``, the sets
    are disjoint (a matching holds one entry of L) and ``sum_{S_e} w_c >= d_e``. Hence
    ``sum_c h_b(w_c) >= sum_e sum_{S_e} h_b(w_c) >= sum_e h_b(d_e) - pi_b (sum_e |S_e| - k_L)
    >= H_{L,b} - pi_b (K - k_L)``, with ``H_{L,b} = sum_e h_b(d_e)``.

    **All bands.** ``sum_c w_c = sum_b sum_c h_b(w_c)``, and each band may take its own line:
    ``sum_c w_c >= F(K) = sum_b max_L (H_{L,b} - pi_b (K - k_L))``, for every choice of edges
    (found here by dynamic programming over a fixed set of candidate edges). With K = Delta and
    all lines full this is ``sum_t max_L d_{L,(t)}``, the t-th largest entries summed over the
    ranks; the one band ``[0, inf)`` gives the largest line sum.

    **Makespan.** Each configuration is preceded by delta on its switch, so the loads add up to
    ``F(K) + delta K <= s T``; with ``K < s`` configurations, on ``m <= K`` switches,
    ``T >= F(K) / K + delta >= (F(K) + delta s) / s``. A line with Delta nonzeros needs
    ``K >= Delta``. So ``s T >= min over K >= Delta of F(K) + delta max(K, s)``. F does not
    increase with K and never falls below the largest line sum r, so counts beyond the last one
    evaluated, ``K'``, are covered by ``r + delta max(K', s)``, and the search stops as soon as
    that is no smaller than the best value so far.

    The argument needs every configuration to be preceded by delta on its switch: the all-stop
    model. Under partial reconfiguration (kept circuits stay lit) it does not hold, and
    :func:`~ocsched.bounds.lower_bound` leaves it out there.

    Cost: O(lines edges^2) per K, at most ``counts`` values of K, plus O(nnz) to collect the
    lines.

    Examples
    --------
    No line sums to more than 5, but two configurations (Delta = 2) last at least 4 + 2.5 (row
    0's large entry, and row 1's entries, which cannot share a configuration); three last at
    least 5. So T >= min(6.5 + 2 delta, 5 + 3 delta) = 8 with delta = 1, the optimum (the line
    bounds say 7).

    >>> d = Demand.from_matrix([[0, 4, 1], [2.5, 0, 2.5], [2.5, 1, 0]])
    >>> round(band_bound(d, switches=1, delta=1.0), 9)
    8.0
    """
    if demand.nnz == 0:
        return 0.0
    s, d = switches, delta
    line, vals, sums, cnt = _lines(demand)
    big_delta = int(cnt.max())
    r = float(sums.max())

    def tail(k: int) -> float:
        return (r + d * max(k, s)) / s

    if d <= 0:
        return tail(big_delta)
    cand = np.argsort(-sums, kind="stable")[: max(1, lines)]
    pos = np.full(sums.size, -1, dtype=np.int64)
    pos[cand] = np.arange(cand.size)
    on = pos[line] >= 0
    ln, v = pos[line[on]], vals[on]
    t = np.unique(np.concatenate([[0.0], np.quantile(v, np.linspace(0.0, 1.0, max(2, edges)))]))
    g = t.size
    # c[l, i] = sum_e min(d_e, t_i) on candidate line l; the band [t_i, t_j) holds c[:, j] - c[:, i].
    c = np.zeros((cand.size, g))
    for i in range(1, g):
        c[:, i] = np.bincount(ln, weights=np.minimum(v, t[i]), minlength=cand.size)
    height = c[:, None, :] - c[:, :, None]  # [l, i, j]
    pi = np.minimum(t[:, None], t[None, :] - t[:, None])
    upper = np.triu(np.ones((g, g), dtype=bool), 1)
    k_l = cnt[cand].astype(np.float64)
    best = tail(big_delta + max(1, counts))
    for k in range(big_delta, big_delta + max(1, counts)):
        if tail(k) >= best:
            break
        band = np.where(upper, (height - (k - k_l)[:, None, None] * pi).max(axis=0), -np.inf)
        f = np.full(g, -np.inf)
        f[0] = 0.0
        for j in range(1, g):
            f[j] = float((f[:j] + band[:j, j]).max())
        # Mass above the last edge: none (it is the largest entry), so F(K) = f[-1].
        best = min(best, (max(float(f[-1]), r) + d * max(k, s)) / s)
    return float(best)
