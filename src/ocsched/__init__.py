"""ocsched: schedule AI-training traffic over parallel optical circuit switches.

>>> import ocsched
>>> sched = ocsched.schedule([[0, 1], [1, 0]], switches=2, delta=0.1)
>>> ocsched.validate(sched, [[0, 1], [1, 0]]).ok
True
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from ocsched._lazy import lazy_attributes, lazy_modules
from ocsched._version import __version__

lazy_modules("scipy", "scipy.sparse")

if TYPE_CHECKING:
    from ocsched.bounds import lower_bound
    from ocsched.errors import InfeasibleError, InvalidInputError, InvalidScheduleError, OcschedError
    from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown
    from ocsched.iteration import Iteration, IterationSchedule, Phase
    from ocsched.model import Configuration, Demand, Schedule
    from ocsched.online.plan import plan
    from ocsched.reschedule import LinkFailure, SwitchFailure, reschedule
    from ocsched.schedulers import SCHEDULERS, algorithms, schedule
    from ocsched.sequence import schedule_iteration
    from ocsched.sequence.validate import validate_any as validate
    from ocsched.validation import ValidationReport

# Each public name and the module it comes from: imported on first use (PEP 562), so that
# `import ocsched` and a light command (`ocsched bound`) load no scheduler, scipy or numba.
_LAZY = {
    "lower_bound": ("ocsched.bounds", "lower_bound"),
    "InfeasibleError": ("ocsched.errors", "InfeasibleError"),
    "InvalidInputError": ("ocsched.errors", "InvalidInputError"),
    "InvalidScheduleError": ("ocsched.errors", "InvalidScheduleError"),
    "OcschedError": ("ocsched.errors", "OcschedError"),
    "Fabric": ("ocsched.fabric", "Fabric"),
    "LinkDown": ("ocsched.fabric", "LinkDown"),
    "Switch": ("ocsched.fabric", "Switch"),
    "SwitchDown": ("ocsched.fabric", "SwitchDown"),
    "Iteration": ("ocsched.iteration", "Iteration"),
    "IterationSchedule": ("ocsched.iteration", "IterationSchedule"),
    "Phase": ("ocsched.iteration", "Phase"),
    "Configuration": ("ocsched.model", "Configuration"),
    "Demand": ("ocsched.model", "Demand"),
    "Schedule": ("ocsched.model", "Schedule"),
    "plan": ("ocsched.online", "plan"),
    "LinkFailure": ("ocsched.reschedule", "LinkFailure"),
    "SwitchFailure": ("ocsched.reschedule", "SwitchFailure"),
    "SCHEDULERS": ("ocsched.schedulers", "SCHEDULERS"),
    "algorithms": ("ocsched.schedulers", "algorithms"),
    "schedule": ("ocsched.schedulers", "schedule"),
    "schedule_iteration": ("ocsched.sequence", "schedule_iteration"),
    "ValidationReport": ("ocsched.validation", "ValidationReport"),
}


__getattr__ = lazy_attributes(__name__, _LAZY)


def _shadowing(name: str, module: str, attr: str) -> property:
    """A package attribute that names a function, never the submodule of the same name.

    The import system binds a submodule to its package's attribute when it is first imported,
    which with lazy imports may happen at any time: the setter ignores that binding.
    """

    def get(self: types.ModuleType) -> Any:
        return getattr(importlib.import_module(module), attr)

    def ignore(self: types.ModuleType, value: Any) -> None:
        pass

    return property(get, ignore)


class _Package(types.ModuleType):
    """The package's type: ``ocsched.validate`` and ``ocsched.reschedule`` are the functions."""

    validate = _shadowing("validate", "ocsched.sequence.validate", "validate_any")
    reschedule = _shadowing("reschedule", "ocsched.reschedule", "reschedule")


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "validate", "reschedule"})


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
