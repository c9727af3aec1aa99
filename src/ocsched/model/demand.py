"""Demand matrices: the validated sparse :class:`Demand` and :func:`as_demand`."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched._lazy import issparse
from ocsched._types import FloatArray, IntArray
from ocsched.errors import InvalidInputError
from ocsched.units import bytes_per_second

log = logging.getLogger("ocsched.model")  # the package's logger, as before model became a package


def _frozen(a: NDArray[Any]) -> NDArray[Any]:
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Demand:
    """A validated n x n demand matrix, stored sparse (COO, row-major, strictly positive).

    Build one with :meth:`from_matrix` (or :func:`as_demand`), which checks the input; the
    constructor itself trusts its arguments.

    Attributes
    ----------
    n : int
        Number of ports.
    rows, cols : ndarray of int64
        Coordinates of the nonzero off-diagonal entries, sorted by row then column.
    values : ndarray of float64
        The entries, all > 0: time to send ``rows[k] -> cols[k]`` at one link's line rate.
    port_names : tuple of str or None
        Names of the ports (from a pandas DataFrame's labels or a graph's nodes), port k first
        is ``port_names[k]``; None when the ports are just numbered. Schedules built from the
        demand record them in ``meta["port_names"]``.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 2], [1, 0]])
    >>> d.n, d.nnz, d.max_degree, d.max_line_sum
    (2, 2, 1, 2.0)
    >>> import numpy as np
    >>> np.asarray(d).tolist()
    [[0.0, 2.0], [1.0, 0.0]]
    """

    n: int
    rows: IntArray
    cols: IntArray
    values: FloatArray
    port_names: tuple[str, ...] | None = None

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        """The dense matrix, so ``np.asarray(demand)`` works (a new array each time)."""
        if copy is False:
            raise ValueError("a Demand is stored sparse: its dense array is always a copy")
        out = self.to_dense()
        return out if dtype is None else out.astype(dtype, copy=False)

    @classmethod
    def from_matrix(cls, matrix: Any, *, name: str = "demand", weight: str = "weight") -> Demand:
        """Validate a square matrix and return it as a :class:`Demand`.

        ``matrix`` is dense (array_like), scipy-sparse, a pandas DataFrame (its index and columns
        name the ports: the columns are matched to the index, so both must hold the same labels)
        or a directed graph with the networkx interface (``nodes``, ``edges(data=weight)``; each
        edge's ``weight`` attribute is the demand, parallel edges add up; its nodes name the
        ports). Diagonal entries are local traffic that never crosses the fabric: they are
        dropped, with a logged warning.

        Raises
        ------
        InvalidInputError
            If the matrix is empty, not square, not numeric, or has a negative, NaN or infinite
            entry (the message names ``name`` and the first offending index); a DataFrame whose
            columns are not its index's labels; an undirected graph or an edge without ``weight``.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame([[0, 2], [1, 0]], index=["gpu0", "gpu1"], columns=["gpu0", "gpu1"])
        >>> Demand.from_matrix(df).port_names
        ('gpu0', 'gpu1')
        """
        if isinstance(matrix, Demand):
            return matrix
        if _is_frame(matrix):
            return _from_frame(cls, matrix, name)
        if _is_graph(matrix):
            return _from_graph(cls, matrix, name, weight)
        if not issparse(matrix):
            return cls._from_dense(cast(ArrayLike, matrix), name)
        coo = sp.coo_array(cast(Any, matrix), copy=True)  # copy: the caller's matrix stays as given
        _check_shape(coo.shape, name)
        _check_dtype(coo.dtype, name)
        coo.sum_duplicates()  # duplicate coordinates add up, as everywhere in scipy
        r, c, v = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
        order = np.lexsort((c, r))
        r, c = r[order], c[order]
        v = np.asarray(v[order], dtype=np.float64)
        bad = ~np.isfinite(v)
        if bad.any():
            k = int(np.argmax(bad))
            raise InvalidInputError(f"`{name}` must be finite; {name}[{r[k]}, {c[k]}] = {v[k]}")
        neg = v < 0
        if neg.any():
            k = int(np.argmax(neg))
            raise InvalidInputError(f"`{name}` must be non-negative; {name}[{r[k]}, {c[k]}] = {v[k]}")
        diag = r == c
        keep = (v > 0) & ~diag
        _warn_diagonal(v[diag], name)
        return cls(int(coo.shape[0]), _frozen(r[keep]), _frozen(c[keep]), _frozen(v[keep]))

    @classmethod
    def _from_dense(cls, matrix: ArrayLike, name: str) -> Demand:
        """:meth:`from_matrix` of a dense matrix: one pass to its nonzero entries, checks on those only."""
        try:
            arr = np.asarray(matrix)
        except (ValueError, TypeError) as exc:
            raise InvalidInputError(f"`{name}` must be a square numeric matrix; {exc}") from None
        _check_shape(arr.shape, name)
        _check_dtype(arr.dtype, name)
        n = int(arr.shape[0])
        flat = arr.ravel()
        idx = np.flatnonzero(flat).astype(np.int64, copy=False)  # row-major: the first bad entry first
        v = flat[idx].astype(np.float64, copy=False)  # a copy (fancy index); NaN, inf, < 0 are nonzero
        if not ((v > 0) & (v < np.inf)).all():  # one pass; the messages below find the entry
            for bad, what in ((~np.isfinite(v), "finite"), (v < 0, "non-negative")):
                if bad.any():
                    k = int(np.argmax(bad))
                    i, j = divmod(int(idx[k]), n)
                    raise InvalidInputError(f"`{name}` must be {what}; {name}[{i}, {j}] = {v[k]}")
        r, c = np.divmod(idx, n)
        diag = r == c
        if diag.any():
            _warn_diagonal(v[diag], name)
            keep = ~diag
            r, c, v = r[keep], c[keep], v[keep]
        return cls(n, _frozen(r), _frozen(c), _frozen(v))

    @property
    def nnz(self) -> int:
        """Number of nonzero flows."""
        return int(self.values.size)

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, n)``."""
        return (self.n, self.n)

    def to_dense(self) -> FloatArray:
        """Return the demand as a dense n x n array."""
        out = np.zeros((self.n, self.n))
        out[self.rows, self.cols] = self.values
        return out

    def to_sparse(self) -> sp.csr_array:
        """Return the demand as a scipy CSR array."""
        return sp.csr_array((self.values, (self.rows, self.cols)), shape=self.shape)

    def row_sums(self) -> FloatArray:
        """Total demand of each input port."""
        return np.bincount(self.rows, weights=self.values, minlength=self.n).astype(np.float64)

    def col_sums(self) -> FloatArray:
        """Total demand of each output port."""
        return np.bincount(self.cols, weights=self.values, minlength=self.n).astype(np.float64)

    def row_nnz(self) -> IntArray:
        """Number of flows of each input port."""
        return np.bincount(self.rows, minlength=self.n).astype(np.int64)

    def col_nnz(self) -> IntArray:
        """Number of flows of each output port."""
        return np.bincount(self.cols, minlength=self.n).astype(np.int64)

    @property
    def max_degree(self) -> int:
        """Delta: the most flows in any row or column (0 for an all-zero demand)."""
        if not self.nnz:
            return 0
        return int(max(self.row_nnz().max(), self.col_nnz().max()))

    @property
    def max_line_sum(self) -> float:
        """The largest row or column sum."""
        if not self.nnz:
            return 0.0
        return float(max(self.row_sums().max(), self.col_sums().max()))

    @classmethod
    def from_bytes(cls, matrix: Any, *, link_rate: str | float, name: str = "demand") -> Demand:
        """Return a demand of byte counts as time on one link of ``link_rate`` (the unit ocsched uses).

        ``matrix`` is anything :meth:`from_matrix` takes, in bytes; ``link_rate`` is a rate with
        a unit (``"400Gbps"``, ``"50GB/s"``) or a number of bytes per second
        (:func:`ocsched.units.bytes_per_second`). The entries become seconds: delays and
        makespans of its schedules are then in seconds too.

        Raises
        ------
        InvalidInputError
            For a bad matrix (as :meth:`from_matrix`) or a rate without a known unit or not > 0.

        Examples
        --------
        >>> d = Demand.from_bytes([[0, 5e9], [1e9, 0]], link_rate="400Gbps")
        >>> d.to_dense().tolist()
        [[0.0, 0.1], [0.02, 0.0]]
        """
        rate = bytes_per_second(link_rate, name="link_rate")
        dem = cls.from_matrix(matrix, name=name)
        return dataclasses.replace(dem, values=_frozen(dem.values / rate))

    def scaled(self, factor: float) -> Demand:
        """Return the demand multiplied by ``factor > 0``."""
        return dataclasses.replace(self, values=_frozen(self.values * float(factor)))


def as_demand(demand: Any, *, name: str = "demand") -> Demand:
    """Return ``demand`` as a validated :class:`Demand` (see :meth:`Demand.from_matrix`)."""
    return demand if isinstance(demand, Demand) else Demand.from_matrix(demand, name=name)


def _is_frame(obj: object) -> bool:
    """A pandas DataFrame, recognised without importing pandas."""
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "index") and hasattr(obj, "columns")


def _is_graph(obj: object) -> bool:
    """A graph with the networkx interface, recognised without importing networkx."""
    return all(hasattr(obj, a) for a in ("nodes", "edges", "is_directed", "adj"))


def _names(labels: list[Any]) -> tuple[str, ...] | None:
    """Labels as port names; None for the plain numbering 0..n-1 (no information to keep)."""
    if all(isinstance(x, int | np.integer) and not isinstance(x, bool) for x in labels) and [
        int(x) for x in labels
    ] == list(range(len(labels))):
        return None
    return tuple(str(x) for x in labels)


def _from_frame(cls: type[Demand], frame: Any, name: str) -> Demand:
    index, columns = list(frame.index), list(frame.columns)
    if len(index) != len(set(index)) or len(columns) != len(set(columns)):
        raise InvalidInputError(f"`{name}`: a DataFrame's index and columns must not repeat a label")
    if index != columns:
        if set(index) != set(columns):
            extra = sorted(map(str, set(columns) ^ set(index)))[:5]
            raise InvalidInputError(
                f"`{name}`: a DataFrame's columns must be the ports of its index (the same labels); "
                f"labels in only one of them: {', '.join(extra)}"
            )
        frame = frame[index]  # the columns in the index's order, as pandas aligns by label
    try:
        values = frame.to_numpy()
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"`{name}` must be a square numeric matrix; {exc}") from None
    dem = cls._from_dense(values, name)
    return dataclasses.replace(dem, port_names=_names(index))


def _from_graph(cls: type[Demand], graph: Any, name: str, weight: str) -> Demand:
    if not graph.is_directed():
        raise InvalidInputError(
            f"`{name}`: a graph demand must be directed (a networkx DiGraph): traffic i -> j is not j -> i"
        )
    nodes = list(graph.nodes)
    if not nodes:
        raise InvalidInputError(f"`{name}` must not be empty; got a graph without nodes")
    where = {v: k for k, v in enumerate(nodes)}
    rows, cols, vals = [], [], []
    for u, v, w in graph.edges(data=weight):
        if w is None:
            raise InvalidInputError(f"`{name}`: edge ({u!r}, {v!r}) has no {weight!r} attribute")
        rows.append(where[u])
        cols.append(where[v])
        vals.append(w)
    try:
        data = np.asarray(vals, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"`{name}`: edge {weight!r} attributes must be numbers; {exc}") from None
    n = len(nodes)
    coo = sp.coo_array(
        (data, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))), shape=(n, n)
    )
    dem = cls.from_matrix(coo, name=name)
    return dataclasses.replace(dem, port_names=_names(nodes))


def _warn_diagonal(diag: FloatArray, name: str) -> None:
    """Log the diagonal entries (local traffic) that are dropped."""
    if (diag > 0).any():
        log.warning(
            "%s: dropping %d diagonal entries (local traffic, total %.6g)",
            name,
            int((diag > 0).sum()),
            float(diag.sum()),
        )


def _check_shape(shape: tuple[int, ...], name: str) -> None:
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InvalidInputError(f"`{name}` must be a square n x n matrix; got shape {tuple(shape)}")
    if shape[0] == 0:
        raise InvalidInputError(f"`{name}` must not be empty; got shape {tuple(shape)}")


def _check_dtype(dtype: np.dtype[Any], name: str) -> None:
    if dtype.kind not in "biuf":  # bool, ints, floats; not complex, timedelta64/datetime64, objects
        raise InvalidInputError(f"`{name}` must hold real numbers; got dtype {dtype}")
