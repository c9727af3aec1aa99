"""The compiled loops of :meth:`ocsched.online.Plan.fit`: the duration re-fit and the re-balance."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ocsched._jit import jit
from ocsched._types import FloatArray, IntArray


@jit
def refit(
    actual: FloatArray, cover0: FloatArray, order: IntArray, ptr: IntArray, idx: IntArray, work: FloatArray
) -> FloatArray:  # pragma: no cover
    """New work of each group (a permutation and its pieces): the need its circuits leave, in ``order``.

    ``cover`` holds, per entry, the work already given to the groups before plus the predicted
    work of the groups still to come; a group gets the largest ``actual - cover`` over its
    circuits once its own prediction is taken out.
    """
    cover = cover0.copy()
    out = np.zeros(work.size)
    for g in order:
        w = work[g]
        need = 0.0
        for p in range(ptr[g], ptr[g + 1]):
            e = idx[p]
            v = actual[e] - (cover[e] - w)
            if v > need:
                need = v
        for p in range(ptr[g], ptr[g + 1]):
            cover[idx[p]] += need - w
        out[g] = need
    return out


@jit
def rebalance(
    work: FloatArray,
    switch: IntArray,
    group: IntArray,
    cost: FloatArray,
    deltas: FloatArray,
    rates: FloatArray,
    s: int,
    passes: int,
    spare: int,
) -> tuple[FloatArray, IntArray, IntArray]:  # pragma: no cover
    """Lower the latest switch's load: shift work between pieces of one group, move, swap or split pieces.

    ``work[k]`` is piece k's work on ``switch[k]`` (zero: dropped); ``cost[k]`` the makespan a
    move of piece k must gain (the recourse weight times twice its circuits: off one switch,
    onto another). Up to ``spare`` new pieces may be split off. Returns the pieces' work,
    switch and source piece (whose permutation each has). Deterministic.
    """
    m0 = work.size
    m = m0 + spare
    w = np.zeros(m)
    w[:m0] = work
    sw = np.zeros(m, dtype=np.int64)
    sw[:m0] = switch
    grp = np.full(m, -1, dtype=np.int64)
    grp[:m0] = group
    src = np.arange(m)
    cst = np.zeros(m)
    cst[:m0] = cost
    used = m0
    load = np.zeros(s)
    for k in range(m):
        if w[k] > 0:
            load[sw[k]] += deltas[sw[k]] + w[k] / rates[sw[k]]
    for _ in range(passes):
        a = int(np.argmax(load))
        lo = int(np.argmin(load))
        la = load[a]
        if lo == a:
            break
        best_gain = 0.0
        kind = -1
        bk = -1
        bl = -1
        bb = -1
        amount = 0.0
        for k in range(m):
            if sw[k] != a or w[k] <= 0:
                continue
            # 1) a sibling piece of the same group on a lower switch takes some work: no circuit changes.
            for l in range(m):
                if l == k or grp[l] != grp[k] or sw[l] == a or w[l] <= 0:
                    continue
                b = sw[l]
                # Equalise a and b: a loses x / r_a, b gains x / r_b.
                x = (la - load[b]) / (1.0 / rates[a] + 1.0 / rates[b])
                if x > w[k]:
                    x = w[k]
                new_a = la - x / rates[a] - (deltas[a] if x >= w[k] else 0.0)
                new_b = load[b] + x / rates[b]
                # Emptying the piece takes its circuits off switch a: half a move.
                gain = la - max(new_a, new_b) - (0.5 * cst[k] if x >= w[k] else 0.0)
                if gain > best_gain:
                    best_gain, kind, bk, bl, bb, amount = gain, 0, k, l, b, x
            # 2) the whole piece moves to the least-loaded switch.
            for b in range(lo, lo + 1):
                new_a = la - deltas[a] - w[k] / rates[a]
                new_b = load[b] + deltas[b] + w[k] / rates[b]
                gain = la - max(new_a, new_b) - cst[k]
                if gain > best_gain:
                    best_gain, kind, bk, bl, bb, amount = gain, 1, k, -1, b, 0.0
            # 3) a swap with a piece on the least-loaded switch.
            for l in range(m):
                if sw[l] != lo or w[l] <= 0:
                    continue
                b = sw[l]
                new_a = la - w[k] / rates[a] + w[l] / rates[a]
                new_b = load[b] - w[l] / rates[b] + w[k] / rates[b]
                gain = la - max(new_a, new_b) - cst[k] - cst[l]
                if gain > best_gain:
                    best_gain, kind, bk, bl, bb, amount = gain, 2, k, l, b, 0.0
            # 4) part of the piece moves to a new piece on another switch (pays that switch's delay).
            if used < m:
                for b in range(lo, lo + 1):
                    x = (la - load[b] - deltas[b]) / (1.0 / rates[a] + 1.0 / rates[b])
                    if x <= 0:
                        continue
                    if x > w[k]:
                        x = w[k]
                    new_a = la - x / rates[a]
                    new_b = load[b] + deltas[b] + x / rates[b]
                    # The new piece sets its circuits up on switch b: half a move.
                    gain = la - max(new_a, new_b) - 0.5 * cst[k]
                    if gain > best_gain:
                        best_gain, kind, bk, bl, bb, amount = gain, 3, k, -1, b, x
        if kind < 0 or best_gain <= 1e-12 * la:
            break
        if kind == 0:
            full = amount >= w[bk]
            load[a] -= amount / rates[a] + (deltas[a] if full else 0.0)
            load[bb] += amount / rates[bb]
            w[bl] += amount
            w[bk] = 0.0 if full else w[bk] - amount
        elif kind == 1:
            load[a] -= deltas[a] + w[bk] / rates[a]
            load[bb] += deltas[bb] + w[bk] / rates[bb]
            sw[bk] = bb
        elif kind == 2:
            load[a] += (w[bl] - w[bk]) / rates[a]
            load[bb] += (w[bk] - w[bl]) / rates[bb]
            sw[bk] = bb
            sw[bl] = a
        else:
            load[a] -= amount / rates[a]
            load[bb] += deltas[bb] + amount / rates[bb]
            w[bk] -= amount
            w[used] = amount
            sw[used] = bb
            grp[used] = grp[bk]
            src[used] = src[bk]
            cst[used] = cst[bk]
            used += 1
    return w[:used], sw[:used], src[:used]


@jit
def scan(
    actual: FloatArray, predicted: FloatArray, cover: FloatArray, n: int
) -> tuple[float, float, bool, FloatArray]:  # pragma: no cover
    """One pass over the off-diagonal entries: ``|actual - predicted|_1`` (NaN at the first
    negative or non-finite entry), ``|predicted|_1``, whether an entry the plan does not cover
    has demand, and per line (rows then columns): the actual sum, the residual
    ``max(actual - cover, 0)`` sum and its nonzero count."""
    diff = 0.0
    total = 0.0
    uncovered = False
    lines = np.zeros((3, 2 * n))
    for i in range(n):
        for j in range(n):
            if i == j:
                continue  # local traffic: never crosses the fabric
            e = i * n + j
            a = actual[e]
            if not (a >= 0.0 and a < np.inf):
                return np.nan, 0.0, False, lines  # negative, NaN or inf: the caller reports it
            p = predicted[e]
            diff += abs(a - p)
            total += abs(p)
            if a > 0:
                lines[0, i] += a
                lines[0, n + j] += a
                c = cover[e]
                if c <= 0:
                    uncovered = True
                if a > c:
                    lines[1, i] += a - c
                    lines[1, n + j] += a - c
                    lines[2, i] += 1.0
                    lines[2, n + j] += 1.0
    return diff, total, uncovered, lines


@jit
def lit_changes(  # pragma: no cover
    before: IntArray,
    perms: IntArray,
    switch: IntArray,
    work: FloatArray,
    n: int,
    seen: NDArray[np.int32],
    held: NDArray[np.int32],
    tick: int,
) -> tuple[IntArray, int, int]:
    """The circuits the pieces with work set up, as keys ``switch * n * n + i * n + j`` (each once),
    and ``(added, removed)`` against the unique keys ``before``.

    ``seen`` and ``held`` are scratch marks over all keys, never cleared: an entry equal to
    ``tick`` is marked in this call (the caller passes a new tick each time), so the cost is
    O(circuits), not O(s n^2).
    """
    for q in range(before.size):
        held[before[q]] = tick
    total = 0
    for k in range(work.size):
        if work[k] > 0:
            total += n
    out = np.empty(total, dtype=np.int64)
    lit = 0
    added = 0
    for k in range(work.size):
        if work[k] <= 0:
            continue
        base = switch[k] * n * n
        for i in range(n):
            j = perms[k, i]
            if j >= 0:
                e = base + i * n + j
                if seen[e] != tick:
                    seen[e] = tick
                    out[lit] = e
                    lit += 1
                    if held[e] != tick:
                        added += 1
    return out[:lit], added, before.size - (lit - added)


@jit
def starts_of(switch: IntArray, dur: FloatArray, deltas: FloatArray) -> FloatArray:  # pragma: no cover
    """Back-to-back starts of pieces sorted by switch: each after its switch's delay, from 0.

    Sequential sums, as a validator adds ``start + duration + delta``: no rounding below zero.
    """
    out = np.empty(dur.size)
    t = 0.0
    for q in range(dur.size):
        if q == 0 or switch[q] != switch[q - 1]:
            t = 0.0
        t += deltas[switch[q]]
        out[q] = t
        t += dur[q]
    return out
