"""Cover what no piece holds: a permutation holding each left-out entry, on a switch allowing it.

For :func:`~ocsched.assign.links.around_links`: :func:`_cover` gives every target entry without
a piece one (or, with ``compress``, lists it for :func:`_matchings` to serve alone), and
:func:`_why` says in one line why no switch can light an entry's circuit.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ocsched._types import FloatArray, IntArray
from ocsched.assign._links_table import Variant, _Pieces, _Table
from ocsched.assign.on_fabric import _View
from ocsched.decompose._common import incidence
from ocsched.errors import InfeasibleError
from ocsched.model import Demand


def _cover(
    pieces: _Pieces,
    perms: IntArray,
    weights: FloatArray,
    targets: Demand,
    table: _Table,
    view: _View,
    blocked: NDArray[np.bool_],
    later: NDArray[np.bool_],
    est: FloatArray,
    vf: Variant,
    pressing: list[list[int]] | None = None,
) -> None:
    """Give every target entry no piece holds one: a permutation holding it, on a switch allowing it.

    With ``pressing``, an entry every switch allowing it carries only until a link fails is
    listed there instead, for the switch whose links for it fail last.
    """
    covered = np.zeros(targets.nnz, dtype=bool)
    for q in pieces.q:
        covered[table.entries(table.rows[q])] = True
    if covered.all():
        return
    inc = incidence(targets, perms).tocsr()  # entry x permutation
    for e in np.nonzero(~covered)[0].tolist():
        if covered[e]:
            continue
        i, j = int(targets.rows[e]), int(targets.cols[e])
        ok = ~blocked[:, i] & ~blocked[:, j]
        if not ok.any():
            raise InfeasibleError(_why(view, i, j, float(targets.values[e])))
        if pressing is not None and all(later[b, i] or later[b, j] for b in np.nonzero(ok)[0].tolist()):
            f = view.fail  # not None here
            assert f is not None
            b = max(np.nonzero(ok)[0].tolist(), key=lambda b: (min(f[b, i], f[b, j]) - est[b], -b))
            pressing[b].append(e)
            covered[e] = True
            continue
        holders = inc.indices[inc.indptr[e] : inc.indptr[e + 1]]
        if holders.size:
            l = int(holders[np.argmax(weights[holders])])
        else:  # no permutation holds it (the decomposition serves less): a circuit of its own
            row = np.full(perms.shape[1], -1, dtype=np.int64)
            row[i] = j
            l = -1
        best: tuple[int, float] | None = None
        best_b = -1
        for b in np.nonzero(ok)[0].tolist():
            late = bool(later[b, i] or later[b, j])
            # Prefer switches where the entry's links never fail, then the emptiest.
            key = (int(late), float(est[b]))
            if best is None or key < best:
                best, best_b = key, b
        late = bool(later[best_b, i] or later[best_b, j])
        if l >= 0:
            q = vf(l, best_b, late)
            w = float(weights[l])
        else:
            q = table.add(row)
            w = float(targets.values[e])
        if q < 0:  # cannot happen: the entry is allowed on best_b
            raise AssertionError("a covering variant holds no entry")
        pieces.add(q, best_b, l, w)
        est[best_b] += float(view.delta[best_b]) + w / float(view.rate[best_b])
        covered[table.entries(table.rows[q])] = True


def _matchings(targets: Demand, entries: list[int], n: int, delta: float) -> list[tuple[IntArray, float]]:
    """A few matchings that serve ``entries`` of ``targets`` (Spectra's decomposition of them alone)."""
    from ocsched.decompose import decompose

    if not entries:
        return []
    idx = np.array(sorted(entries), dtype=np.int64)
    sub = Demand(n, targets.rows[idx], targets.cols[idx], targets.values[idx])
    dec = decompose(sub, method="spectra", delta=delta)
    keys = sub.rows * n + sub.cols
    out = []
    for perm, w in zip(dec.perms, dec.weights, strict=True):
        row = np.full(n, -1, dtype=np.int64)
        (ins,) = np.nonzero(perm >= 0)
        hit = np.isin(ins * n + perm[ins], keys)  # only the entries themselves: no stuffing
        row[ins[hit]] = perm[ins[hit]]
        if w > 0 and hit.any():
            out.append((row, float(w)))
    return out


def _why(view: _View, i: int, j: int, value: float) -> str:
    """One line: why no switch can light circuit i -> j."""
    s = view.size
    reasons = []
    for b in range(s):
        if view.dead(b):
            reasons.append(f"switch {b} is down for good")
            continue
        f = view.fail  # not None here
        assert f is not None
        for p in (i, j):
            if f[b, p] <= view.start[b] + view.delta[b]:
                when = "" if f[b, p] <= view.start[b] else ", before its first reconfiguration ends"
                reasons.append(f"switch {b}: port {p}'s link fails at {float(f[b, p]):g}{when}")
                break
    return f"demand[{i}, {j}] = {value:g} but no switch can light {i}->{j} ({'; '.join(reasons)})"
