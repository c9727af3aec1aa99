"""The traffic of one collective: who sends how many bytes to whom, under a named algorithm.

Group ranks are ``0..G-1`` (their order in the process group); the caller maps them to global
ranks. Every function returns ``(src, dst, bytes)`` triplets with ``src != dst``; a pair may
repeat (the caller adds them up). The formulas, for B bytes per rank (``chunk`` = one rank's
share):

========================  ===========================================================================
all-reduce, ring          each rank sends ``2 (G-1)/G * B`` to its successor ``(i + 1) mod G``
all-reduce, direct        reduce-scatter then all-gather, both direct: ``2 B / G`` to every other rank
all-reduce, tree          binary tree rooted at rank 0 (children of i: 2i+1, 2i+2): ``B`` up each
                          edge (reduce), ``B`` down each edge (broadcast)
all-reduce, h-d           Rabenseifner: step s = 1..log2 G, partners ``i xor G/2^s`` exchange
                          ``B / 2^s`` in the halving and again in the doubling (G a power of two)
all-gather, ring          ``(G-1) * chunk`` to the successor (``chunk`` = the input, B/G of the output)
all-gather, direct        ``chunk`` to every other rank
all-gather, tree          up each edge the child's subtree (``|sub| * chunk``), down the rest
                          (``(G - |sub|) * chunk``)
all-gather, h-d           recursive doubling: step s = 0..log2 G - 1, partner ``i xor 2^s``, ``2^s * chunk``
reduce-scatter, ring      ``(G-1)/G * B`` to the successor (B = the input, G chunks)
reduce-scatter, direct    ``B / G`` to every other rank
reduce-scatter, tree      ``B`` up each edge (reduce), down each edge the child's subtree's chunks
reduce-scatter, h-d       recursive halving: step s = 1..log2 G, partner ``i xor G/2^s``, ``B / 2^s``
broadcast, ring           a chain from the root: ``B`` from each rank to the next
broadcast, direct         ``B`` from the root to every other rank
broadcast, tree           binary tree rooted at the root: ``B`` down each edge
broadcast, h-d            binomial tree: at step s, relative ranks ``r < 2^s`` send ``B`` to ``r + 2^s``
reduce                    the transpose of broadcast (same algorithm, data flows to the root)
gather, scatter           direct to / from the root (``chunk`` per rank), whatever the algorithm
all-to-all(v)             exact from the splits, whatever the algorithm
========================  ===========================================================================

In the tree and binomial algorithms group ranks are relabelled so that the root is 0
(relative rank ``(i - root) mod G``). Halving-doubling needs G a power of two, except for
broadcast and reduce (binomial trees work for any G): other sizes are refused.
"""

from __future__ import annotations

from fractions import Fraction

from ocsched.errors import InvalidInputError

__all__ = ["ALGORITHMS", "collective_traffic"]

#: The algorithms ``--collective-algorithm`` accepts.
ALGORITHMS = ("ring", "direct", "tree", "halving-doubling")

Triplets = list[tuple[int, int, Fraction]]


def _tree_edges(g: int) -> list[tuple[int, int]]:
    """(parent, child) edges of the binary tree on relative ranks 0..g-1."""
    return [((c - 1) // 2, c) for c in range(1, g)]


def _subtree_sizes(g: int) -> list[int]:
    size = [1] * g
    for c in range(g - 1, 0, -1):
        size[(c - 1) // 2] += size[c]
    return size


def _log2(g: int, what: str, where: str) -> int:
    if g & (g - 1):
        raise InvalidInputError(
            f"{where}: {what} under halving-doubling needs a group of a power-of-two size; got {g} ranks "
            "(use --collective-algorithm ring, direct or tree)"
        )
    return g.bit_length() - 1


def collective_traffic(
    kind: str, g: int, size: Fraction, *, algorithm: str, root: int = 0, where: str = ""
) -> Triplets:
    """Return the ``(src, dst, bytes)`` triplets of one collective on group ranks ``0..g-1``.

    ``size`` is B (all-reduce, reduce-scatter, broadcast, reduce: the buffer per rank) or the
    chunk per rank (all-gather, gather, scatter). Bytes are exact fractions.

    Examples
    --------
    >>> [(s, d, float(b)) for s, d, b in collective_traffic("all_reduce", 4, Fraction(8), algorithm="ring")]
    [(0, 1, 12.0), (1, 2, 12.0), (2, 3, 12.0), (3, 0, 12.0)]
    >>> trip = collective_traffic("broadcast", 3, Fraction(5), algorithm="tree", root=1)
    >>> sorted((s, d, float(b)) for s, d, b in trip)
    [(1, 0, 5.0), (1, 2, 5.0)]
    """
    if g <= 1:
        return []
    if algorithm not in ALGORITHMS:
        raise InvalidInputError(
            f"`collective_algorithm` must be one of {', '.join(ALGORITHMS)}; got {algorithm!r}"
        )
    out: Triplets = []
    rel = [(i + root) % g for i in range(g)]  # relative rank -> group rank

    if kind == "all_reduce":
        if algorithm == "ring":
            out = [(i, (i + 1) % g, Fraction(2 * (g - 1), g) * size) for i in range(g)]
        elif algorithm == "direct":
            out = [(i, j, Fraction(2, g) * size) for i in range(g) for j in range(g) if i != j]
        elif algorithm == "tree":
            for p, c in _tree_edges(g):
                out += [(c, p, size), (p, c, size)]
        else:
            for s in range(1, _log2(g, "all-reduce", where) + 1):
                d = g >> s
                out += [(i, i ^ d, 2 * size / (1 << s)) for i in range(g)]
    elif kind == "all_gather":
        if algorithm == "ring":
            out = [(i, (i + 1) % g, (g - 1) * size) for i in range(g)]
        elif algorithm == "direct":
            out = [(i, j, size) for i in range(g) for j in range(g) if i != j]
        elif algorithm == "tree":
            sub = _subtree_sizes(g)
            for p, c in _tree_edges(g):
                out += [(c, p, sub[c] * size), (p, c, (g - sub[c]) * size)]
        else:
            for s in range(_log2(g, "all-gather", where)):
                out += [(i, i ^ (1 << s), (1 << s) * size) for i in range(g)]
    elif kind == "reduce_scatter":
        if algorithm == "ring":
            out = [(i, (i + 1) % g, Fraction(g - 1, g) * size) for i in range(g)]
        elif algorithm == "direct":
            out = [(i, j, size / g) for i in range(g) for j in range(g) if i != j]
        elif algorithm == "tree":
            sub = _subtree_sizes(g)
            for p, c in _tree_edges(g):
                out += [(c, p, size), (p, c, sub[c] * size / g)]
        else:
            for s in range(1, _log2(g, "reduce-scatter", where) + 1):
                out += [(i, i ^ (g >> s), size / (1 << s)) for i in range(g)]
    elif kind in ("broadcast", "reduce"):
        edges: list[tuple[int, int]]
        if algorithm == "ring":
            edges = [(k, k + 1) for k in range(g - 1)]
        elif algorithm == "direct":
            edges = [(0, k) for k in range(1, g)]
        elif algorithm == "tree":
            edges = _tree_edges(g)
        else:
            edges = []
            step = 1
            while step < g:
                edges += [(r, r + step) for r in range(step) if r + step < g]
                step <<= 1
        pairs = [(rel[a], rel[b]) for a, b in edges]
        out = [(a, b, size) if kind == "broadcast" else (b, a, size) for a, b in pairs]
    elif kind == "gather":
        out = [(i, root, size) for i in range(g) if i != root]
    elif kind == "scatter":
        out = [(root, i, size) for i in range(g) if i != root]
    else:
        raise InvalidInputError(f"{where}: no traffic formula for collective {kind!r}")
    return out
