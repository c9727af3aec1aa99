"""How long to hold configurations that are already lit so that they serve a demand.

:func:`hold_lengths` is one LP: the switches keep their circuits (no reconfiguration, no delay)
and the question is only for how long. ``spectra-seq`` holds the configurations the switches end
a phase with into the next phase (:mod:`ocsched.sequence.on_fabric`), and ``reschedule`` on
bidirectional or multi-port switches holds the surviving switches' last configurations to serve
what a failure left (:mod:`ocsched.reschedule`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ocsched._types import FloatArray
from ocsched.decompose._common import cover_by_latest
from ocsched.decompose.bmatching import circuit_incidence
from ocsched.fabric import Switch
from ocsched.model import Configuration, Demand

__all__ = ["hold_lengths"]


def hold_lengths(
    demand: Demand,
    confs: Sequence[Configuration],
    switches: Sequence[Switch],
    starts: FloatArray,
    *,
    before: float = float("inf"),
) -> FloatArray | None:
    """Return how long to hold each configuration from its start so that together they serve ``demand``.

    Configuration ``confs[b]`` runs on a switch like ``switches[b]`` (its rate, and both
    directions of each circuit if bidirectional) from ``starts[b]``. The lengths ``t_b``
    minimise the latest end: min T subject to every entry served (``sum_b circuits_b(e) *
    rate_b * t_b >= D_e``) and ``starts[b] + t_b <= T``: one LP in the served amounts
    ``rate_b * t_b`` (:func:`~ocsched.decompose._common.cover_by_latest`). None when some entry
    has no circuit among them, the LP fails, or no hold can end before ``before``: that is
    checked first, without the LP (an entry served by all its circuits at once from the
    earliest start, ``min(starts) + D_e / sum_b circuits_b(e) * rate_b``, bounds every hold's end).

    >>> d = Demand.from_matrix([[0, 2], [1, 0]])
    >>> c = Configuration.from_circuits(0.0, 1.0, [(0, 1), (1, 0)], ports=2)
    >>> hold_lengths(d, [c, c], [Switch(0.1), Switch(0.1)], np.array([0.0, 1.0])).tolist()
    [1.5, 0.5]
    """
    m = len(confs)
    if m == 0 or demand.nnz == 0:
        return None
    # Fewer circuits (both ways on bidirectional switches) than entries: some entry has none.
    lit = sum(
        c.circuit_arrays()[0].size * (1 + sw.bidirectional) for c, sw in zip(confs, switches, strict=True)
    )
    if lit < demand.nnz:
        return None
    cols = []
    for c, sw in zip(confs, switches, strict=True):
        ins, outs = c.circuit_arrays()
        keep = outs >= 0
        cols.append(circuit_incidence(demand, ((ins[keep], outs[keep]),), bidirectional=sw.bidirectional))
    inc = sp.csr_array(sp.hstack(cols))  # circuits per entry: at least 1 where one serves it
    if (np.diff(inc.indptr) == 0).any():
        return None
    rate = np.array([sw.rate for sw in switches], dtype=np.float64)
    first = float(np.min(starts))
    if first + float(np.max(demand.values / (inc @ rate))) >= before:
        return None
    # Variables: what each hold serves per circuit (rate_b * t_b); t_b = that / rate_b ends by T.
    offsets = np.asarray(starts, dtype=np.float64) - first
    served = cover_by_latest(inc, demand.values, sp.csr_array(sp.diags_array(1.0 / rate)), offsets)
    return None if served is None else np.asarray(served / rate, dtype=np.float64)
