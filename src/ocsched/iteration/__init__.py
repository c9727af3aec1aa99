"""A training iteration: a sequence of demand phases separated by compute gaps, and its schedule.

The model (barrier semantics). Phase k's traffic may start at its *release*
``R_k = C_{k-1} + g_k``, where ``C_{k-1}`` is the end of phase k-1's last configuration
(``C_0 = 0``) and ``g_k`` its ``gap_before`` (compute); ``C_k = max(R_k, end of phase k's last
configuration)``. Each switch runs its configurations in order, and each is preceded by the
reconfiguration delay (:mod:`ocsched.timing`), with one exception: a configuration identical to the
one the switch already holds pays no delay (it *persists*, across phases too). A switch may
reconfigure whenever it is idle, during a gap or while other switches still finish the previous
phase, so a gap ``>= delta`` hides that switch's delay for the first configuration of the next
phase. The objective is the iteration time ``C_K``; the *exposed communication* is
``C_K - sum_k g_k``.

File formats (JSON): an iteration is ``{"format": "ocsched.sequence", "version": 1, "phases":
[{"name", "gap_before", "demand"}]}`` with each demand a list of n lists of n numbers, or sparse
``{"src": [...], "dst": [...], "value": [...]}`` (n from the top-level ``"ports"`` or the largest
port + 1); an iteration schedule is ``{"format": "ocsched.iteration-schedule", "version": 1, ...}``
with one timeline per switch, each configuration tagged with its phase, or version 2 on any other
fabric than identical all-stop switches that never fail, its fabric written as a version-2
schedule writes it (see :meth:`IterationSchedule.to_dict`).

On a fabric each switch pays its own delay, serves at its rate, carries nothing during its down
windows and uses no failed link; persistence is the iteration model's addition to the fabric's
rule (:mod:`ocsched.sequence.rules`).

Modules: :mod:`~ocsched.iteration.phases` (:class:`Phase`, :class:`Iteration`, the delay rule
with persistence), :mod:`~ocsched.iteration.schedule` (:class:`IterationSchedule`) and
:mod:`~ocsched.iteration._json` (the format names and the phase reader).
"""

from ocsched.iteration._json import ITERATION_FORMAT, ITERATION_SCHEDULE_FORMAT, ITERATION_VERSION
from ocsched.iteration.phases import Iteration, Phase, persists, start_after
from ocsched.iteration.schedule import IterationSchedule

__all__ = [
    "ITERATION_FORMAT",
    "ITERATION_SCHEDULE_FORMAT",
    "ITERATION_VERSION",
    "Iteration",
    "IterationSchedule",
    "Phase",
    "persists",
    "start_after",
]
