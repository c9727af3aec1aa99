"""One matching held on one switch: :class:`Configuration` (dense or sparse circuits)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np

from ocsched._types import IntArray
from ocsched.model.demand import _frozen

_set = object.__setattr__


class Configuration:
    """One matching held on one switch from ``start`` for ``duration``.

    Its reconfiguration delay lies just before ``start`` (see :mod:`ocsched.timing` for the exact
    rule of each reconfiguration model).

    Attributes
    ----------
    start : float
        When the circuits begin carrying traffic.
    duration : float
        How long they are held (>= 0).
    perm : ndarray of int64
        ``perm[i] = j`` connects input port i to output port j; ``-1`` leaves port i idle.

    Notes
    -----
    A configuration built with :meth:`sparse` (as the schedule reader does) stores only its
    circuits; ``perm`` is then built on each access, so memory stays proportional to the circuits
    however many ports the schedule has. Instances are immutable.
    """

    __slots__ = ("_ins", "_outs", "_perm", "_ports", "duration", "start")

    start: float
    duration: float
    _perm: IntArray | None
    _ins: IntArray | None
    _outs: IntArray | None
    _ports: int | None

    def __init__(self, start: float, duration: float, perm: IntArray) -> None:
        # Schedules hold thousands of these: only the slots a dense configuration reads are set
        # (``_ins``, ``_outs`` and ``_ports`` are read only when ``_perm`` is None, see sparse()).
        _set(self, "start", start)
        _set(self, "duration", duration)
        _set(self, "_perm", perm)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Configuration is immutable; cannot set {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle (and ``copy.deepcopy``) through the constructors: the instance refuses setattr."""
        if self._perm is not None:
            return (_dense, (self.start, self.duration, self._perm))
        return (_sparse, (self.start, self.duration, self._ins, self._outs, self._ports))

    def __repr__(self) -> str:
        return f"Configuration(start={self.start!r}, duration={self.duration!r}, circuits={self.circuits!r})"

    @classmethod
    def sparse(
        cls, start: float, duration: float, inputs: IntArray, outputs: IntArray, *, ports: int
    ) -> Configuration:
        """Build a configuration from its circuits ``inputs[k] -> outputs[k]`` without a ports-long array.

        The caller guarantees distinct inputs in ``0..ports-1``.

        >>> c = Configuration.sparse(0.1, 0.5, np.array([1, 0]), np.array([0, 1]), ports=10**6)
        >>> c.circuits, c.ports
        ([(0, 1), (1, 0)], 1000000)
        """
        ins = np.asarray(inputs, dtype=np.int64)
        order = np.argsort(ins, kind="stable")
        c = cls(float(start), float(duration), cast(IntArray, None))
        object.__setattr__(c, "_ins", _frozen(ins[order]))
        object.__setattr__(c, "_outs", _frozen(np.asarray(outputs, dtype=np.int64)[order]))
        object.__setattr__(c, "_ports", int(ports))
        return c

    @property
    def perm(self) -> IntArray:
        """``perm[i] = j`` for each circuit, -1 for an idle input (built on access for sparse ones).

        Raises ValueError for a configuration with several circuits per input (a switch with
        several ports per endpoint), which no permutation can hold.
        """
        if self._perm is not None:
            return self._perm
        ins = cast(IntArray, self._ins)
        if ins.size > 1 and bool((ins[1:] == ins[:-1]).any()):  # sorted: a repeat is adjacent
            raise ValueError(
                "this configuration holds several circuits per input (a multi-port switch); "
                "read it with circuit_arrays() or circuits"
            )
        perm = np.full(int(cast(int, self._ports)), -1, dtype=np.int64)
        perm[cast(IntArray, self._ins)] = cast(IntArray, self._outs)
        return _frozen(perm)

    @property
    def ports(self) -> int:
        """Number of ports of the permutation."""
        return int(cast(int, self._ports)) if self._perm is None else int(np.shape(self._perm)[0])

    def circuit_arrays(self) -> tuple[IntArray, IntArray]:
        """Return ``(inputs, outputs)`` of the circuits, by input port, without a ports-long array.

        Entries of a dense ``perm`` below -1 are returned as outputs too (the validator reports them).
        """
        if self._perm is None:
            return cast(IntArray, self._ins), cast(IntArray, self._outs)
        perm = np.asarray(self._perm)
        (i,) = np.nonzero(perm != -1)
        return i.astype(np.int64), perm[i].astype(np.int64)

    @classmethod
    def from_circuits(
        cls, start: float, duration: float, circuits: Iterable[Sequence[int]], *, ports: int
    ) -> Configuration:
        """Build a configuration from ``(i, j)`` pairs.

        >>> Configuration.from_circuits(0.1, 0.5, [(0, 1), (1, 0)], ports=3).perm.tolist()
        [1, 0, -1]
        """
        perm = np.full(ports, -1, dtype=np.int64)
        for i, j in circuits:
            perm[int(i)] = int(j)
        return cls(float(start), float(duration), _frozen(perm))

    def at(self, start: float, duration: float | None = None) -> Configuration:
        """The same circuits (dense or sparse, as here) from ``start``, for ``duration`` (default: its own).

        >>> c = Configuration.from_circuits(0.1, 0.5, [(0, 1)], ports=2).at(2.0)
        >>> c.start, c.duration, c.circuits
        (2.0, 0.5, [(0, 1)])
        """
        length = self.duration if duration is None else duration
        if self._perm is not None:
            return Configuration(start, length, self._perm)
        c = Configuration(start, length, cast(IntArray, None))
        for name in ("_ins", "_outs", "_ports"):
            object.__setattr__(c, name, getattr(self, name))
        return c

    def circuit_key(self) -> bytes:
        """The circuits as bytes, equal for equal circuit sets whether dense or sparse.

        >>> a = Configuration.from_circuits(0.0, 1.0, [(0, 1), (1, 0)], ports=3)
        >>> b = Configuration.sparse(5.0, 2.0, np.array([1, 0]), np.array([0, 1]), ports=3)
        >>> a.circuit_key() == b.circuit_key()
        True
        """
        i, j = self.circuit_arrays()
        keep = j >= 0
        code = i[keep] * (self.ports + 1) + j[keep]  # (input, output) in one sortable integer
        if self._perm is None and code.size > 1 and bool((code[1:] < code[:-1]).any()):
            code = np.sort(code)  # several circuits per input, stored in the given order
        return self.ports.to_bytes(8, "little") + np.ascontiguousarray(code, dtype=np.int64).tobytes()

    def same_circuits(self, other: Configuration) -> bool:
        """True if both hold the same circuits on the same ports (whatever their times).

        >>> a = Configuration.from_circuits(0.0, 1.0, [(0, 1)], ports=2)
        >>> a.same_circuits(a.at(3.0)), a.same_circuits(Configuration.from_circuits(0, 1, [(1, 0)], ports=2))
        (True, False)
        """
        if self._perm is not None and other._perm is not None:  # dense: the common case, no copies
            return bool(np.array_equal(self._perm, other._perm))
        return self.circuit_key() == other.circuit_key()

    @property
    def end(self) -> float:
        """``start + duration``."""
        return self.start + self.duration

    @property
    def circuits(self) -> list[tuple[int, int]]:
        """The circuits as ``(input, output)`` pairs, by input port."""
        i, j = self.circuit_arrays()
        keep = j >= 0
        return list(zip(i[keep].tolist(), j[keep].tolist(), strict=True))

    def same_as(self, other: Configuration) -> bool:
        """Exact equality of start, duration and circuits."""
        a, b = self.circuit_arrays(), other.circuit_arrays()
        return (
            self.start == other.start
            and self.duration == other.duration
            and self.ports == other.ports
            and np.array_equal(a[0], b[0])
            and np.array_equal(a[1], b[1])
        )


def _dense(start: float, duration: float, perm: IntArray) -> Configuration:
    """Rebuild a dense configuration, its permutation read-only (see :meth:`Configuration.__reduce__`)."""
    return Configuration(start, duration, _frozen(np.array(perm, dtype=np.int64)))


def _sparse(start: float, duration: float, ins: IntArray, outs: IntArray, ports: int) -> Configuration:
    """Rebuild a sparse configuration (the pickle constructor of :meth:`Configuration.__reduce__`)."""
    return Configuration.sparse(start, duration, ins, outs, ports=ports)
