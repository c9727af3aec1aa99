"""Decompose a demand into weighted b-matchings: the configurations of multi-port, bidirectional switches.

On a switch where every endpoint has k ports a configuration is a *b-matching*: directed, each
endpoint the input of at most k circuits and the output of at most k (a union of k
permutations); bidirectional, each endpoint an end of at most k circuits, a circuit {a, b}
serving ``D[a, b]`` and ``D[b, a]`` at once. A bidirectional schedule must therefore cover
``W = max(D, D^T)`` on the undirected graph of its support, each edge once.

The constructions here keep Spectra's spirit (few configurations, balanced weights) and reuse its
decomposition: a directed permutation, read as undirected circuits ``{i, P(i)}``, is a set of
paths and cycles, so each endpoint ends at most 2 of its circuits. Orienting every edge of W's
support so that each endpoint's in- and out-degrees differ by at most one (an Eulerian
orientation) gives a directed matrix of max degree ``ceil(Delta_W / 2)``, which Spectra splits
into that many permutations; grouping ``k / 2`` of them per configuration reaches the fewest
possible, ``ceil(Delta_W / k)`` (each configuration holds at most k partners of an endpoint).
The weights are then re-fitted by one LP (:func:`~ocsched.decompose.refit_weights`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ocsched._types import BoolArray, FloatArray, IntArray
from ocsched.decompose._common import refit_weights
from ocsched.decompose.spectra import spectra_decompose
from ocsched.model import Demand

__all__ = ["BMatchings", "bmatching_candidates", "bmatching_decompose", "circuit_incidence"]

Circuits = tuple[IntArray, IntArray]


@dataclass(frozen=True, eq=False)
class BMatchings:
    """Weighted circuit sets covering a demand on switches with several ports per endpoint.

    Attributes
    ----------
    circuits : tuple of (ndarray, ndarray)
        Per configuration, its circuits as ``(inputs, outputs)`` (an endpoint may repeat).
    weights : ndarray of float64
        How long each configuration must be held.
    method : str
        The construction that built it (``"oriented"``, ``"balanced"``, ``"grouped"``, ``"matchings"``).
    """

    circuits: tuple[Circuits, ...]
    weights: FloatArray
    method: str

    def __len__(self) -> int:
        return int(self.weights.size)


def circuit_incidence(demand: Demand, circuits: tuple[Circuits, ...], *, bidirectional: bool) -> sp.csr_array:
    """Entry-by-configuration matrix: how many circuits of configuration l serve demand entry e.

    A bidirectional circuit (i, j) serves entries (i, j) and (j, i).

    >>> d = Demand.from_matrix(np.array([[0.0, 1.0], [2.0, 0.0]]))
    >>> c = ((np.array([0]), np.array([1])),)
    >>> circuit_incidence(d, c, bidirectional=True).toarray().tolist()
    [[1.0], [1.0]]
    """
    n, m = demand.n, len(circuits)
    keys = demand.rows * n + demand.cols  # sorted: entries are row-major
    ents: list[IntArray] = [np.zeros(0, np.int64)]
    cols: list[IntArray] = [np.zeros(0, np.int64)]
    for l, (i, j) in enumerate(circuits):
        ks = [i * n + j] + ([j[i != j] * n + i[i != j]] if bidirectional else [])
        for k in ks:
            if not demand.nnz or not k.size:
                continue
            pos = np.minimum(np.searchsorted(keys, k), demand.nnz - 1)
            hit = keys[pos] == k
            ents.append(pos[hit])
            cols.append(np.full(int(hit.sum()), l, np.int64))
    e, c = np.concatenate(ents), np.concatenate(cols)
    return sp.csr_array((np.ones(e.size), (e, c)), shape=(demand.nnz, m))


def bmatching_decompose(demand: Demand, *, ports: int = 1, bidirectional: bool = False) -> BMatchings:
    """Decompose ``demand`` into b-matchings for switches with ``ports`` ports per endpoint.

    The first of :func:`bmatching_candidates`: Eulerian-oriented Spectra grouped by ``ports / 2``
    when bidirectional, Spectra's permutations grouped ``ports`` at a time when directed.

    Examples
    --------
    A bidirectional ring of 4 on 2 ports: one configuration holds all of it.

    >>> d = np.zeros((4, 4)); d[np.arange(4), (np.arange(4) + 1) % 4] = 1.0
    >>> bm = bmatching_decompose(Demand.from_matrix(d), ports=2, bidirectional=True)
    >>> len(bm), bm.weights.tolist()
    (1, [1.0])
    """
    return bmatching_candidates(demand, ports=ports, bidirectional=bidirectional)[0]


def bmatching_candidates(demand: Demand, *, ports: int = 1, bidirectional: bool = False) -> list[BMatchings]:
    """Return every construction of b-matchings covering ``demand`` (a scheduler keeps the best placed).

    Directed: ``"grouped"`` (Spectra's permutations by decreasing weight, ``ports`` per
    configuration, weights re-fitted) and ``"matchings"`` (Spectra's permutations one per
    configuration, its own weights). Bidirectional: ``"oriented"`` (W's support oriented along
    Euler tours, so in- and out-degrees differ by at most one), ``"balanced"`` (each edge, largest
    first, oriented towards the lighter ends), each decomposed by Spectra and grouped ``ports // 2``
    permutations per configuration (odd ``ports``: the permutations' paths and cycles split into
    matchings, grouped ``ports`` at a time), weights re-fitted; and with ``ports >= 2``
    ``"matchings"``: Spectra's permutations of W with its weights, which is the directed model's
    decomposition of ``max(D, D^T)`` (a permutation ends at most 2 circuits per endpoint).

    Notes
    -----
    Every construction covers every entry (``sum_l w_l A_l >= D`` for the incidence ``A`` of
    :func:`circuit_incidence`) with configurations that respect the port count: a union of g
    permutations has in- and out-degree <= g, read undirected degree <= 2g; a matching has
    degree 1.
    """
    if not demand.nnz:
        return [BMatchings((), np.zeros(0), "grouped")]
    if not bidirectional:
        dec = spectra_decompose(demand)
        perms = [_circuits_of(p) for p in dec.perms]
        out = []
        if ports > 1:
            out.append(_refit(demand, _group(perms, dec.weights, ports), False, "grouped"))
        out.append(BMatchings(tuple(perms), dec.weights.copy(), "matchings"))
        return out
    w_rows, w_cols, w_vals = _symmetric_edges(demand)
    out = []
    for method, orient in (("oriented", _euler_orientation), ("balanced", _balanced_orientation)):
        forward = orient(demand.n, w_rows, w_cols, w_vals)
        rows = np.where(forward, w_rows, w_cols)
        cols = np.where(forward, w_cols, w_rows)
        oriented = Demand(demand.n, *_sorted_entries(demand.n, rows, cols, w_vals))
        dec = spectra_decompose(oriented)
        perms = [_circuits_of(p) for p in dec.perms]
        if ports % 2 == 0:
            groups = _group(perms, dec.weights, ports // 2)
        else:
            pieces = [(m, w) for p, w in zip(perms, dec.weights.tolist(), strict=True) for m in _split(p)]
            groups = _group([m for m, _ in pieces], np.array([w for _, w in pieces]), ports)
        out.append(_refit(demand, groups, True, method))
    if ports >= 2:
        sym = Demand(demand.n, *_sorted_entries(demand.n, *_both(w_rows, w_cols, w_vals)))
        dec = spectra_decompose(sym)
        out.append(BMatchings(tuple(_circuits_of(p) for p in dec.perms), dec.weights.copy(), "matchings"))
    return out


def _circuits_of(perm: IntArray) -> Circuits:
    (i,) = np.nonzero(perm >= 0)
    return i.astype(np.int64), perm[i].astype(np.int64)


def _group(items: list[Circuits], weights: FloatArray, size: int) -> list[Circuits]:
    """Unions of ``size`` consecutive items by decreasing weight (similar weights share a configuration)."""
    order = np.argsort(-np.asarray(weights), kind="stable").tolist()
    out = []
    for g in range(0, len(order), size):
        chunk = [items[l] for l in order[g : g + size]]
        out.append((np.concatenate([c[0] for c in chunk]), np.concatenate([c[1] for c in chunk])))
    return out


def _refit(demand: Demand, groups: list[Circuits], bidirectional: bool, method: str) -> BMatchings:
    inc = circuit_incidence(demand, tuple(groups), bidirectional=bidirectional)
    dummy = np.full((len(groups), demand.n), -1, dtype=np.int64)  # refit reads only the count
    w = refit_weights(demand, dummy, inc=inc)
    keep = w > 0
    kept = tuple(g for g, k in zip(groups, keep.tolist(), strict=True) if k)
    return BMatchings(kept, w[keep], method)


def _symmetric_edges(demand: Demand) -> tuple[IntArray, IntArray, FloatArray]:
    """The undirected edges ``i < j`` of W = max(D, D^T) with their weights."""
    lo, hi = np.minimum(demand.rows, demand.cols), np.maximum(demand.rows, demand.cols)
    key = lo * demand.n + hi
    uniq, inv = np.unique(key, return_inverse=True)
    vals = np.zeros(uniq.size)
    np.maximum.at(vals, inv, demand.values)
    return uniq // demand.n, uniq % demand.n, vals


def _both(r: IntArray, c: IntArray, v: FloatArray) -> tuple[IntArray, IntArray, FloatArray]:
    return np.concatenate([r, c]), np.concatenate([c, r]), np.concatenate([v, v])


def _sorted_entries(n: int, r: IntArray, c: IntArray, v: FloatArray) -> tuple[IntArray, IntArray, FloatArray]:
    order = np.argsort(r * n + c, kind="stable")
    return r[order], c[order], v[order]


def _euler_orientation(n: int, u: IntArray, v: IntArray, w: FloatArray) -> BoolArray:
    """Orient each edge along Euler tours of the graph plus one vertex joined to every odd-degree vertex.

    Every vertex is entered as often as it is left on a closed tour, so once the added edges are
    removed its in- and out-degrees differ by at most one.
    """
    m = int(u.size)
    deg = np.bincount(np.concatenate([u, v]), minlength=n)
    odd = np.flatnonzero(deg % 2 == 1)
    eu = np.concatenate([u, odd]).tolist()
    ev = np.concatenate([v, np.full(odd.size, n, np.int64)]).tolist()
    adj: list[list[int]] = [[] for _ in range(n + 1)]
    for e, (a, b) in enumerate(zip(eu, ev, strict=True)):
        adj[a].append(e)
        adj[b].append(e)
    used = [False] * len(eu)
    ptr = [0] * (n + 1)
    forward = np.ones(m, dtype=bool)
    for root in range(n + 1):
        stack = [root]
        while stack:  # Hierholzer: walk unused edges, each in the direction it is first taken
            x = stack[-1]
            while ptr[x] < len(adj[x]) and used[adj[x][ptr[x]]]:
                ptr[x] += 1
            if ptr[x] == len(adj[x]):
                stack.pop()
                continue
            e = adj[x][ptr[x]]
            used[e] = True
            y = ev[e] if eu[e] == x else eu[e]
            if e < m:
                forward[e] = eu[e] == x
            stack.append(y)
    return forward


def _balanced_orientation(n: int, u: IntArray, v: IntArray, w: FloatArray) -> BoolArray:
    """Orient each edge, largest first, to keep the larger of tail out-load and head in-load least."""
    out_load, in_load = np.zeros(n), np.zeros(n)
    forward = np.ones(u.size, dtype=bool)
    for e in np.argsort(-w, kind="stable").tolist():
        a, b, x = int(u[e]), int(v[e]), float(w[e])
        if max(out_load[b], in_load[a]) < max(out_load[a], in_load[b]):
            forward[e] = False
            a, b = b, a
        out_load[a] += x
        in_load[b] += x
    return forward


def _split(circuits: Circuits) -> list[Circuits]:
    """Split a permutation's undirected circuits (paths and cycles) into at most 3 matchings."""
    ins, outs = circuits
    nxt = dict(zip(ins.tolist(), outs.tolist(), strict=True))
    has_in = set(outs.tolist())
    label: dict[int, int] = {}
    heads = [i for i in ins.tolist() if i not in has_in]
    for start in heads + ins.tolist():  # paths from their heads first, then the cycles
        if start in label:
            continue
        x, k, walk = start, 0, []
        while x in nxt and x not in label:
            label[x] = k % 2
            walk.append(x)
            x, k = nxt[x], k + 1
        if x == start and len(walk) % 2 == 1:
            label[walk[-1]] = 2  # an odd cycle: its closing edge needs a third matching
    parts = []
    lab = np.array([label[i] for i in ins.tolist()], dtype=np.int64)
    for k in range(3):
        sel = lab == k
        if sel.any():
            parts.append((ins[sel], outs[sel]))
    return parts
