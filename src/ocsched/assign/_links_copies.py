"""Copies onto switches with room: variants of the bottleneck switches' permutations.

For :func:`~ocsched.assign.links.around_links`, a few rounds after the LP: :func:`_copies` adds,
on each switch ending before the makespan, copies of other switches' pieces (as the variants it
can carry), so the next LP can move work onto them.
"""

from __future__ import annotations

import numpy as np

from ocsched.assign._links_lp import _assignment
from ocsched.assign._links_table import Variant, _Pieces, _Table
from ocsched.assign.on_fabric import _View
from ocsched.decompose._common import incidence
from ocsched.model import Demand


def _copies(pieces: _Pieces, view: _View, vf: Variant, table: _Table, targets: Demand) -> _Pieces | None:
    """``pieces`` plus, on each switch with room, variants of the other switches' permutations.

    A copy of piece k on switch b could take over what k serves beyond the entries only k
    serves that b cannot carry: its *offload*. The switches ending earliest take the copies
    with the largest offloads, while their delays and offloads fit in the time they end before
    the makespan, so the LP can move that work there. None if none is added.
    """
    a = _assignment(pieces, view, view.size)
    fin = np.array([view.finish(b, sw) for b, sw in enumerate(a)])
    t = float(fin.max())
    slack = t - fin
    room = np.array([not view.dead(b) and slack[b] > view.delta[b] for b in range(view.size)])
    if not room.any():
        return None
    q_perms = table.array()
    pq = np.array(pieces.q, dtype=np.int64)
    inc = incidence(targets, q_perms)[:, pq].tocsc()
    x = np.array(pieces.x)
    cover = inc @ x
    donors = [k for k in range(len(pieces)) if not room[pieces.b[k]] and pieces.l[k] >= 0 and x[k] > 0]
    out = pieces.subset(np.ones(len(pieces), bool))
    used: set[int] = set()
    added = 0
    for b in np.argsort(fin, kind="stable").tolist():
        if not room[b]:
            continue
        d, r = float(view.delta[b]), float(view.rate[b])
        offers = []
        for k in donors:
            if k in used:
                continue
            q = vf(pieces.l[k], b, False)
            if q < 0 or out.has(q, b):
                continue
            mine = set(table.entries(table.rows[q]).tolist())
            col = inc.indices[inc.indptr[k] : inc.indptr[k + 1]]
            if not any(e in mine for e in col.tolist()):
                continue
            # What k must still serve alone: the entries the copy cannot hold, less the others' part.
            stay = [float(targets.values[e] - (cover[e] - x[k])) for e in col.tolist() if e not in mine]
            offload = float(x[k]) - max(stay, default=0.0)
            if offload > 0:
                offers.append((-offload, k, q))
        budget = float(slack[b])
        for neg, k, q in sorted(offers):
            cost = d + (-neg) / r
            if cost > budget:
                continue
            out.add(q, b, pieces.l[k], 0.0)
            used.add(k)
            budget -= cost
            added += 1
    return out if added else None
