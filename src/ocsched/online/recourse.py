"""Recourse: how many circuits change between two consecutive schedules on the same switches.

Not the recourse *within* one schedule (cross-connects changed at each of its configuration
boundaries, what an OCS controller executes): that is :func:`ocsched.model.recourse.recourse`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ocsched.errors import InvalidInputError
from ocsched.model import Configuration, Schedule

__all__ = ["lit", "recourse", "recourse_counts"]

Switches = Sequence[Sequence[Configuration]]


def lit(switches: Switches, n: int) -> NDArray[np.bool_]:
    """Which circuits each switch sets up at some point: a flat mask over ``(switch, input, output)``.

    >>> import numpy as np
    >>> m = lit([[Configuration(0.1, 1.0, np.array([1, 0]))]], 2)
    >>> m.reshape(1, 2, 2).astype(int).tolist()
    [[[0, 1], [1, 0]]]
    """
    s = len(switches)
    out = np.zeros(s * n * n, dtype=bool)
    for b, confs in enumerate(switches):
        if not confs:
            continue
        perms = np.stack([np.asarray(c.perm, dtype=np.int64) for c in confs])
        if perms.shape[1] != n:
            raise InvalidInputError(f"schedules must have {n} ports to compare; got {perms.shape[1]}")
        i = np.broadcast_to(np.arange(n), perms.shape)
        on = perms >= 0
        out[b * n * n + i[on] * n + perms[on]] = True
    return out


def recourse_counts(
    before: Schedule | Switches, after: Schedule | Switches, *, ports: int | None = None
) -> tuple[int, int]:
    """Return ``(added, removed)``: circuits ``after`` sets up on a switch where ``before`` did not, and back.

    A switch missing from one of them counts as a switch with no circuits.
    """
    a = before.switches if isinstance(before, Schedule) else before
    b = after.switches if isinstance(after, Schedule) else after
    n = ports
    if n is None:
        n = (
            after.ports
            if isinstance(after, Schedule)
            else before.ports
            if isinstance(before, Schedule)
            else None
        )
    if n is None:
        raise InvalidInputError("give `ports` when neither argument is a Schedule")
    s = max(len(a), len(b))
    old = lit(tuple(a) + ((),) * (s - len(a)), n)
    new = lit(tuple(b) + ((),) * (s - len(b)), n)
    return int((new & ~old).sum()), int((old & ~new).sum())


def recourse(before: Schedule | Switches, after: Schedule | Switches, *, ports: int | None = None) -> int:
    """Return the recourse between two consecutive schedules: circuits added plus removed, per switch.

    Switch b's circuits are those any of its configurations sets up; a circuit of ``after`` that
    switch b never set up in ``before`` is added, one of ``before`` that b no longer sets up is
    removed. Re-using a plan on its switches costs 0; moving a configuration of c circuits to
    another switch costs up to 2c.

    Examples
    --------
    >>> import numpy as np
    >>> x = Schedule(ports=2, delta=0.1, switches=((Configuration(0.1, 1.0, np.array([1, 0])),),))
    >>> y = Schedule(ports=2, delta=0.1, switches=((Configuration(0.1, 1.0, np.array([1, -1])),),))
    >>> recourse(x, x), recourse(x, y)
    (0, 1)
    """
    added, removed = recourse_counts(before, after, ports=ports)
    return added + removed
