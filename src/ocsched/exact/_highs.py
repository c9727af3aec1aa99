"""How the exact MILPs talk to HiGHS (through :func:`scipy.optimize.milp`): options, status, bounds."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: The MILP is scaled so that the incumbent makespan is this large: HiGHS's absolute tolerances
#: (gap 1e-6, feasibility 1e-7) then become small relative ones.
_SCALE_TO = 100.0

_STATUS = {0: "optimal", 1: "time_limit", 2: "infeasible", 3: "unbounded", 4: "error"}


def _gap(upper: float, lower: float) -> float:
    return max(0.0, (upper - lower) / upper) if upper > 0 else 0.0


def _milp_options(time_limit: float | None, node_limit: int | None = None) -> Any:
    """HiGHS options: a node limit (work, deterministic), and a time limit only if one is given."""
    opts: dict[str, Any] = {"mip_rel_gap": 1e-9, "presolve": True}
    if node_limit is not None:
        opts["node_limit"] = node_limit
    if time_limit is not None and math.isfinite(time_limit):
        opts["time_limit"] = time_limit
    return opts


def _status(res: Any) -> str:
    """The solve's status; HiGHS's code for a reached node limit (16) is unknown to scipy."""
    status = _STATUS.get(int(res.status), "error")
    if status == "error" and "Status 16" in str(res.message):
        return "node_limit"
    return status


def _dual(res: Any, floor: float) -> float:
    bound = getattr(res, "mip_dual_bound", None)
    if res.status == 0 and res.fun is not None:
        bound = res.fun if bound is None or not np.isfinite(bound) else bound
    if bound is None or not np.isfinite(bound):
        return floor
    return max(float(bound), floor)
