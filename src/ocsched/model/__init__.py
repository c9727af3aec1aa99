"""The data model: demand matrices, configurations, what a scheduler returns, schedules and their JSON form.

One time unit is used throughout: a demand entry is the time to send that flow over one OCS link
at line rate, and the reconfiguration delay ``delta`` and every duration are in the same unit.
"""

from __future__ import annotations

from ocsched._limits import MAX_PORTS as MAX_PORTS
from ocsched._types import FloatArray as FloatArray
from ocsched._types import IntArray as IntArray
from ocsched.model.configuration import Configuration
from ocsched.model.demand import Demand, as_demand
from ocsched.model.result import Result, Switches, latest_end
from ocsched.model.schedule import Schedule
from ocsched.model.schedule_json import SCHEDULE_FORMAT, SCHEDULE_VERSION, STATUSES
from ocsched.model.schedule_json import SCHEDULE_VERSION_FABRIC as SCHEDULE_VERSION_FABRIC

__all__ = [
    "SCHEDULE_FORMAT",
    "SCHEDULE_VERSION",
    "STATUSES",
    "Configuration",
    "Demand",
    "Result",
    "Schedule",
    "Switches",
    "as_demand",
    "latest_end",
]
