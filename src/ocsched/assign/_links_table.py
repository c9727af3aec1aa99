"""The pieces :func:`~ocsched.assign.links.around_links` works on: its table of variants, its pieces.

A *variant* of permutation l is l without the circuits one switch cannot carry; :class:`_Table`
stores each distinct row once and knows which target entries a row holds. :class:`_Pieces` is
the LP's list of pieces (variant row, switch, permutation it comes from, a length).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ocsched._types import FloatArray, IntArray
from ocsched.model import Demand

#: ``variant(l, b, keep_late)``: the row of permutation l's variant switch b can carry, or -1.
Variant = Callable[[int, int, bool], int]


class _Table:
    """The permutations' variants, each row stored once, and which target entries each row holds."""

    def __init__(self, perms: IntArray, targets: Demand) -> None:
        self.n = perms.shape[1]
        self.rows: list[IntArray] = []
        self.index: dict[bytes, int] = {}
        self.keys = targets.rows * self.n + targets.cols  # sorted (row-major)

    def add(self, row: IntArray) -> int:
        key = row.tobytes()
        q = self.index.get(key)
        if q is None:
            q = self.index[key] = len(self.rows)
            self.rows.append(row)
        return q

    def entries(self, row: IntArray) -> IntArray:
        """Indices of the target entries ``row`` holds."""
        (ins,) = np.nonzero(row >= 0)
        if not ins.size or not self.keys.size:
            return np.zeros(0, dtype=np.int64)
        k = ins * self.n + row[ins]
        pos = np.minimum(np.searchsorted(self.keys, k), self.keys.size - 1)
        return np.asarray(pos[self.keys[pos] == k], dtype=np.int64)

    def is_target(self, row: IntArray) -> NDArray[np.bool_]:
        """Per input port: its circuit in ``row`` is a target entry (False where idle)."""
        out = np.zeros(row.size, dtype=bool)
        (ins,) = np.nonzero(row >= 0)
        if ins.size and self.keys.size:
            k = ins * self.n + row[ins]
            pos = np.minimum(np.searchsorted(self.keys, k), self.keys.size - 1)
            out[ins] = self.keys[pos] == k
        return out

    def array(self) -> IntArray:
        return np.array(self.rows, dtype=np.int64).reshape(len(self.rows), self.n)


class _Pieces:
    """The LP's pieces: variant row, switch, permutation it comes from, a length to start from."""

    def __init__(self) -> None:
        self.q: list[int] = []
        self.b: list[int] = []
        self.l: list[int] = []
        self.x: list[float] = []

    def add(self, q: int, b: int, l: int, x: float) -> None:
        self.q.append(q)
        self.b.append(b)
        self.l.append(l)
        self.x.append(x)

    def has(self, q: int, b: int) -> bool:
        return any(qq == q and bb == b for qq, bb in zip(self.q, self.b, strict=True))

    def subset(self, keep: NDArray[np.bool_], x: FloatArray | None = None) -> _Pieces:
        out = _Pieces()
        xs = self.x if x is None else x.tolist()
        for k in np.nonzero(keep)[0].tolist():
            out.add(self.q[k], self.b[k], self.l[k], float(xs[k]))
        return out

    def __len__(self) -> int:
        return len(self.q)
