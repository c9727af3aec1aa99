"""The rules on a fabric, written out, and the tolerance every check of them compares times with.

The block below states the rules (what is lit, what is credited, when a configuration may
start under each reconfiguration model, down windows and failed links); :data:`RTOL` and
:func:`slack` are the scale-free tolerance of those comparisons.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ocsched._types import FloatArray, IntArray

__all__ = ["RTOL", "FloatArray", "IntArray", "SwitchConfs", "slack", "time_to_serve"]

# ---------------------------------------------------------------------------------------------------
# Fabrics: per-switch delay and rate, down windows, failed links, the partial model.
#
# A switch has a delay delta, a rate c, down windows [a, z) and, for each port p, the time f_p at
# which p's link to it fails (inf if it never does; the link carries both p's input and p's
# output). Its configurations k = 0, 1, ... are listed in time order: configuration k holds the
# matching C_k from s_k for w_k >= 0, until e_k = s_k + w_k.
#
# Lit       A circuit (i, j) of C_k is lit during [s_k, e_k). Under the partial model it is also
#           lit during the gap [e_{k-1}, s_k) -- it is *kept* -- when all of these hold:
#           (i, j) is in C_{k-1}; no down window meets the gap (none has a < s_k and z > e_{k-1});
#           both links are still up when the gap ends (s_k <= f_i and s_k <= f_j). Nothing else is
#           ever lit. A configuration of length 0 lights its circuits for no time of its own: it
#           can only pass a circuit on, kept, from its predecessor to its successor.
# Credit    A circuit served on a switch of rate c counts c times the part of its lit time during
#           which the switch is up (outside every down window) and both its links work (before
#           f_i and f_j). (A valid schedule never lights a circuit outside that, so there the
#           credit is its lit time.)
# Rules     Every configuration, of any length (0 included), obeys all of these, where a window
#           *ended by* s_k is one with a < s_k and z <= s_k:
#  all-stop s_k >= delta + max(0, e_0, ..., e_{k-1}, the end z of every window ended by s_k):
#           the whole switch is dark for delta before every configuration, and after every down
#           window.
#  partial  s_k >= e_{k-1}. Every circuit (i, j) of C_k that is not kept is *new*, and
#           s_k >= delta + max(0, e_m for every earlier configuration m using input i or output j
#           in any circuit, the end z of every window ended by s_k): both its ports were dark on
#           the switch for delta before it lit (every port starts dark at 0, and after a window).
#  k ports  On a switch with k ports per endpoint (directed: k inputs and k outputs per endpoint;
#           bidirectional: k ports, either end of a circuit takes one, and (i, j) is the circuit
#           (j, i)), C_k may hold a circuit several times and it is kept as many times as C_{k-1}
#           holds it (partial). The partial rule then reads per physical port: the circuits can be
#           given ports so that a kept circuit keeps its ports and each end of a new circuit takes
#           a port, holding no kept circuit, that no configuration has lit since
#           s_k - delta (nor a window ended by s_k ended after it). Ports of an endpoint are
#           interchangeable, so giving each new circuit the ports dark longest decides it
#           (ocsched.timing.pools); with k = 1 on a directed switch it is the rule above.
#  both     No configuration meets a down window (e_k <= a or s_k >= z; a configuration of
#           length 0 may sit at either end of one, not inside), and every configuration ends by
#           f_p for each port p it uses (e_k <= f_p), so nothing is ever lit on a failed link.
# Tolerance Each comparison x <= y of the Rules allows 8 ulps of the larger of |x|, |y| (``y``
#           may be an infinite failure time), plus ``rtol * delta`` where delta is compared; no
#           absolute floor, so the rules hold at every magnitude. A window ending within that
#           tolerance after s_k counts as ended by s_k (rounding cannot let a configuration leave
#           a window without its delay). The Lit and Credit definitions are exact: a tolerance
#           never adds credit.
#
# Every all-stop-valid schedule is partial-valid and serves at least as much there.
# ---------------------------------------------------------------------------------------------------

#: Relative tolerance of the fabric checks (times compared against delta and the durations involved).
RTOL = 1e-9

SwitchConfs = Sequence[tuple[float, float, NDArray[np.int64], NDArray[np.int64]]]


def slack(delta: float, *times: float, rtol: float = RTOL) -> float:
    """Return the tolerance for comparing times: ``rtol * delta`` plus a few ulps of the times.

    Scale-free: there is no absolute floor, so a delay far below the times (or times far below 1)
    is still enforced down to floating-point resolution.

    >>> slack(0.0, 1.0) == 8 * float(np.spacing(1.0))
    True
    """
    finite = [abs(t) for t in times if np.isfinite(t)]
    return rtol * delta + 8.0 * float(np.spacing(max(finite, default=0.0)))


def time_to_serve(amount: float, rate: float) -> float:
    """Return ``amount / rate``: how long a switch of ``rate`` takes to serve ``amount``.

    Where that is below the normal range (subnormal or 0, of an amount that is not 0), it is
    rounded up until ``rate * time >= amount``: a subnormal amount would otherwise get no time,
    or lose most of itself, at a rate above 1. Normal times are the plain quotient (within one
    ulp: the validator's relative tolerance covers it).

    >>> time_to_serve(3.0, 2.0), time_to_serve(5e-324, 2.0) > 0
    (1.5, True)
    """
    t = amount / rate
    if t < _TINY and amount > 0:
        while rate * t < amount:
            t = float(np.nextafter(t, np.inf))
    return t


#: The smallest normal float: below it a quotient loses relative precision.
_TINY = float(np.finfo(np.float64).tiny)


def _ulps(*times: FloatArray) -> FloatArray:
    """8 ulps of the largest finite magnitude among ``times``, elementwise (see :func:`slack`)."""
    top = np.zeros(np.broadcast(*times).shape)
    for t in times:
        a = np.abs(t)
        top = np.maximum(top, np.where(np.isfinite(a), a, 0.0))
    return 8.0 * np.spacing(top)
