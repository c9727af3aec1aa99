"""Demand matrices: the validated sparse :class:`Demand` and :func:`as_demand`."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched._lazy import issparse
from ocsched.errors import InvalidInputError

log = logging.getLogger("ocsched.model")  # the package's logger, as before model became a package

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


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

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 2], [1, 0]])
    >>> d.n, d.nnz, d.max_degree, d.max_line_sum
    (2, 2, 1, 2.0)
    """

    n: int
    rows: IntArray
    cols: IntArray
    values: FloatArray

    @classmethod
    def from_matrix(cls, matrix: ArrayLike | sp.sparray | sp.spmatrix, *, name: str = "demand") -> Demand:
        """Validate a dense or scipy-sparse square matrix and return it as a :class:`Demand`.

        Diagonal entries are local traffic that never crosses the fabric: they are dropped, with
        a logged warning.

        Raises
        ------
        InvalidInputError
            If the matrix is empty, not square, not numeric, or has a negative, NaN or infinite
            entry; the message names ``name`` and the first offending index.
        """
        if isinstance(matrix, Demand):
            return matrix
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

    def scaled(self, factor: float) -> Demand:
        """Return the demand multiplied by ``factor > 0``."""
        return Demand(self.n, self.rows, self.cols, _frozen(self.values * float(factor)))


def as_demand(demand: ArrayLike | sp.sparray | sp.spmatrix | Demand, *, name: str = "demand") -> Demand:
    """Return ``demand`` as a validated :class:`Demand` (see :meth:`Demand.from_matrix`)."""
    return demand if isinstance(demand, Demand) else Demand.from_matrix(demand, name=name)


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
