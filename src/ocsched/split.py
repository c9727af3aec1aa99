"""Split a demand into s sub-matrices with exactly equal line sums, keeping most flows whole.

This is the splitting step of the paper's *baseline*: each of the s switches then schedules its
own sub-matrix alone. A sub-matrix is given by its values at the demand's nonzeros (its support
lies inside the demand's), so a split of an n x n demand with ``nnz`` flows is a ``(parts, nnz)``
array whose columns add up to ``demand.values``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ocsched._checks import check_choice, check_switches
from ocsched._jit import jit
from ocsched._types import FloatArray, IntArray
from ocsched.errors import InvalidInputError
from ocsched.model import Demand

__all__ = ["balanced_split", "split_flows", "split_share"]


#: Relative slack under which an entry counts as tight (0 or whole): avoids slivers of 1e-17
#: that would each cost a whole configuration downstream.
_TIGHT = 1e-12

Order = Literal["index", "random"]
_ORDERS = ("index", "random")


def split_share(
    demand: Demand, share: float, *, rng: np.random.Generator | int | None = None, order: Order = "index"
) -> FloatArray:
    """Return Y with ``0 <= Y <= D``, line sums exactly ``share`` times D's, and few split flows.

    Parameters
    ----------
    demand : Demand
        The matrix D to split.
    share : float
        The fraction ``0 < share < 1`` of every line sum that Y must carry.
    rng : Generator, int or None
        Picks the direction of each cycle (and, with ``order="random"``, the search order).
    order : {"index", "random"}
        Order in which the cycle search visits ports and flows: by index (the default, which
        reproduces the paper's baseline numbers best, see the README) or shuffled by ``rng``.

    Returns
    -------
    ndarray of float64, shape (nnz,)
        Y's values at ``demand``'s nonzeros. Flow e is *split* when ``0 < Y[e] < D[e]``.

    Raises
    ------
    InvalidInputError
        If ``share`` is not a number strictly between 0 and 1.

    Notes
    -----
    Start from ``Y = share * D``: every flow is *loose* (``0 < Y < D``). While the bipartite graph
    of loose flows (rows and columns as nodes) has a cycle, add ``+eta`` and ``-eta``
    alternately around it, which keeps every line sum; eta is the largest step keeping
    ``0 <= Y <= D`` on the cycle, so at least one flow on it becomes tight (0 or whole) and
    leaves the graph. The direction of the alternation is random.

    Cycles are found by one depth-first walk that is never restarted: it extends a path along
    loose flows; reaching a node already on the path closes a cycle, which is cancelled, and the
    path is cut back before its first flow that became tight. A node whose only loose flow left
    is the one it was reached by is a dead end: that flow lies on no cycle, so it is final (it
    stays split) and the walk backs up. Each step extends the path, finalises a flow or makes
    one tight, so the walk costs O(nnz * n). It runs compiled (numba); the cycles' directions
    come from ``nnz + 1`` uniform draws taken up front (the numbers one draw per cycle would give).

    Invariant: the final loose flows form a forest (a test checks it), so at most ``2n - 1``
    flows are split.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 0, 1, 3], [0, 0, 3, 1], [0, 0, 0, 0], [0, 0, 0, 0]])
    >>> y = split_share(d, 0.5, rng=0)
    >>> sorted(y.tolist()) in ([0.0, 0.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0])
    True
    """
    if isinstance(share, bool) or not isinstance(share, int | float | np.floating) or not 0 < share < 1:
        raise InvalidInputError(f"`share` must be a number strictly between 0 and 1; got {share!r}")
    check_choice(order, "order", _ORDERS)
    gen = np.random.default_rng(rng)
    y = demand.values * float(share)
    _cancel_cycles(demand, y, gen, order)
    return y


@jit
def _walk(
    n: int,
    us: IntArray,
    vs: IntArray,
    x: FloatArray,
    y: FloatArray,
    adj_ptr: IntArray,
    adj: IntArray,
    starts: IntArray,
    coins: FloatArray,
    tight_rel: float,
) -> int:
    """The cycle-cancelling walk of :func:`split_share` on arrays; returns the coins used."""
    m = x.size
    dead = np.zeros(m, dtype=np.bool_)  # tight or final: out of the graph for good
    head = adj_ptr[:-1].copy()  # first possibly-alive slot of each node's list
    pos = np.full(2 * n, -1, dtype=np.int64)
    path = np.empty(2 * n + 1, dtype=np.int64)
    edges = np.empty(2 * n + 1, dtype=np.int64)
    cyc = np.empty(2 * n + 2, dtype=np.int64)
    sign = np.empty(2 * n + 2)
    used = 0
    for start in starts:
        k = head[start]
        while k < adj_ptr[start + 1] and dead[adj[k]]:
            k += 1
        head[start] = k
        if k == adj_ptr[start + 1]:
            continue
        npath = 1
        nedge = 0
        path[0] = start
        pos[start] = 0
        while npath > 0:
            a = path[npath - 1]
            came = edges[nedge - 1] if nedge > 0 else -1
            k = head[a]
            while k < adj_ptr[a + 1] and dead[adj[k]]:
                k += 1
            head[a] = k
            nxt = -1
            while k < adj_ptr[a + 1]:
                f = adj[k]
                if not dead[f] and f != came:
                    nxt = f
                    break
                k += 1
            if nxt < 0:
                # Dead end: every other flow at a is tight or final, so `came` is on no cycle.
                pos[a] = -1
                npath -= 1
                if nedge > 0:
                    nedge -= 1
                    dead[edges[nedge]] = True
                continue
            b = us[nxt] + vs[nxt] - a
            if pos[b] < 0:
                pos[b] = npath
                path[npath] = b
                npath += 1
                edges[nedge] = nxt
                nedge += 1
                continue
            p0 = pos[b]
            c = 0
            for t in range(p0, nedge):
                cyc[c] = edges[t]
                c += 1
            cyc[c] = nxt
            c += 1
            flip = coins[used] < 0.5
            used += 1
            kmin = 0
            best = np.inf
            for t in range(c):
                sg = 1.0 if t % 2 == 0 else -1.0
                if flip:
                    sg = -sg
                sign[t] = sg
                f = cyc[t]
                room = x[f] - y[f] if sg > 0 else y[f]
                if room < best:
                    best = room
                    kmin = t
            for t in range(c):
                f = cyc[t]
                xf = x[f]
                yc = y[f] + sign[t] * best
                if t == kmin:  # the limiting flow lands exactly on its bound
                    yc = xf if sign[t] > 0 else 0.0
                if yc <= tight_rel * xf:
                    yc = 0.0
                    dead[f] = True
                elif xf - yc <= tight_rel * xf:
                    yc = xf
                    dead[f] = True
                y[f] = yc
            cut = -1
            for t in range(p0, nedge):
                if dead[edges[t]]:
                    cut = t
                    break
            if cut >= 0:
                for t in range(cut + 1, npath):
                    pos[path[t]] = -1
                npath = cut + 1
                nedge = cut
    return used


def _cancel_cycles(demand: Demand, y: FloatArray, gen: np.random.Generator, order: Order) -> None:
    n, x = demand.n, demand.values
    us = demand.rows
    vs = demand.cols + n  # column j is node n + j
    shuffle = order == "random"
    scan = gen.permutation(x.size) if shuffle else np.arange(x.size)
    # Each node's flows in scanning order (CSR over the 2n nodes).
    node = np.concatenate([us[scan], vs[scan]])
    flow = np.concatenate([scan, scan])
    by_node = np.argsort(node, kind="stable")
    adj = flow[by_node].astype(np.int64)
    adj_ptr = np.zeros(2 * n + 1, dtype=np.int64)
    np.cumsum(np.bincount(node, minlength=2 * n), out=adj_ptr[1:])
    starts = gen.permutation(2 * n) if shuffle else np.arange(2 * n)
    # One coin per cancelled cycle (the direction); each cancellation makes a flow tight.
    coins = gen.random(x.size + 1)
    _walk(n, us, vs, x, y, adj_ptr, adj, starts.astype(np.int64), coins, _TIGHT)


def balanced_split(
    demand: Demand, parts: int, *, rng: np.random.Generator | int | None = None, order: Order = "index"
) -> FloatArray:
    """Split D into ``parts`` sub-matrices, each with exactly ``1/parts`` of every line sum of D.

    Parameters
    ----------
    demand : Demand
        The matrix D.
    parts : int
        Number of sub-matrices s >= 1.
    rng : Generator, int or None
        Randomises :func:`split_share`.
    order : {"index", "random"}
        Passed to :func:`split_share`.

    Returns
    -------
    ndarray of float64, shape (parts, nnz)
        Row k holds sub-matrix k's values at ``demand``'s nonzeros; every entry lies in
        ``[0, D]`` and the rows add up to ``demand.values``.

    Raises
    ------
    InvalidInputError
        If ``parts`` is not an integer >= 1 or ``order`` is unknown.

    Notes
    -----
    Recursive: with ``a = parts // 2``, split off a share ``a / parts`` with :func:`split_share`,
    then split that part into ``a`` and the rest into ``parts - a``. For a power of two this is
    the paper's repeated halving; for any other s every sub-matrix still gets exactly 1/s of
    each line sum, and each of the ``parts - 1`` splits adds at most ``2n - 1`` split flows.
    Float residue is pushed into the last sub-matrix, on its own support only, so the parts add
    up to D to within rounding and no sliver entries appear.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 2, 2], [2, 0, 2], [2, 2, 0]])
    >>> sub = balanced_split(d, 2, rng=1)
    >>> sub.sum(axis=0).tolist()
    [2.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    """
    s = check_switches(parts, name="parts")
    check_choice(order, "order", _ORDERS)
    gen = np.random.default_rng(rng)
    out = np.zeros((s, demand.nnz))
    _split_into(demand, demand.values, s, gen, order, out, 0)
    if s > 1:
        last = out[-1]
        rest = out[:-1].sum(axis=0)
        on = last > 0
        last[on] = np.maximum(demand.values[on] - rest[on], 0.0)
    return out


def _split_into(
    demand: Demand,
    values: FloatArray,
    parts: int,
    gen: np.random.Generator,
    order: Order,
    out: FloatArray,
    first: int,
) -> None:
    if parts == 1:
        out[first] = values
        return
    a = parts // 2
    on = values > 0
    sub = Demand(demand.n, demand.rows[on], demand.cols[on], values[on])
    y = np.zeros_like(values)
    y[on] = split_share(sub, a / parts, rng=gen, order=order)
    rest = np.where(y == values, 0.0, values - y)
    _split_into(demand, y, a, gen, order, out, first)
    _split_into(demand, rest, parts - a, gen, order, out, first + a)


def split_flows(parts: FloatArray) -> int:
    """Return the extra pieces a split creates: sum over flows of (sub-matrices holding it - 1).

    >>> split_flows(np.array([[1.0, 0.0, 0.5], [1.0, 2.0, 0.5]]))
    2
    """
    held = (np.asarray(parts) > 0).sum(axis=0)
    return int(np.maximum(held - 1, 0).sum())
