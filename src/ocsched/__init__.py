"""ocsched: schedule AI-training traffic over parallel optical circuit switches.

>>> import ocsched
>>> sched = ocsched.schedule([[0, 1], [1, 0]], switches=2, delta=0.1)
>>> ocsched.validate(sched, [[0, 1], [1, 0]]).ok
True
"""

from __future__ import annotations

from ocsched._version import __version__
from ocsched.bounds import lower_bound
from ocsched.errors import InfeasibleError, InvalidInputError, InvalidScheduleError, OcschedError
from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown
from ocsched.iteration import Iteration, IterationSchedule, Phase
from ocsched.model import Configuration, Demand, Schedule
from ocsched.online import plan
from ocsched.reschedule import LinkFailure, SwitchFailure, reschedule
from ocsched.schedulers import SCHEDULERS, algorithms, schedule
from ocsched.sequence import schedule_iteration
from ocsched.sequence.validate import validate_any as validate
from ocsched.validate import ValidationReport

__all__ = [
    "SCHEDULERS",
    "Configuration",
    "Demand",
    "Fabric",
    "InfeasibleError",
    "InvalidInputError",
    "InvalidScheduleError",
    "Iteration",
    "IterationSchedule",
    "LinkDown",
    "LinkFailure",
    "OcschedError",
    "Phase",
    "Schedule",
    "Switch",
    "SwitchDown",
    "SwitchFailure",
    "ValidationReport",
    "__version__",
    "algorithms",
    "lower_bound",
    "plan",
    "reschedule",
    "schedule",
    "schedule_iteration",
    "validate",
]
