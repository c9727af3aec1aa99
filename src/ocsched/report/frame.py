"""A schedule as a pandas DataFrame: one row per circuit and configuration (``Schedule.to_frame``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ocsched._extras import missing_extra
from ocsched.errors import OcschedError
from ocsched.io import circuit_table
from ocsched.iteration import IterationSchedule
from ocsched.model import Schedule

__all__ = ["schedule_frame"]


def schedule_frame(schedule: Schedule | IterationSchedule) -> Any:
    """Return ``schedule`` as a :class:`pandas.DataFrame`, one row per circuit of each configuration.

    Columns: ``switch``, ``configuration`` (its index on its switch, from 0), ``start``,
    ``duration``, ``end``, ``src``, ``dst``, ``served`` (the demand the circuit carries, as
    :func:`ocsched.io.circuit_table` counts it), then ``phase`` for an iteration schedule, and
    ``src_name``, ``dst_name`` when the schedule names its ports. Rows follow the schedule: by
    switch, then configuration, then input port. A configuration with no circuit has no row.

    Raises
    ------
    OcschedError
        If pandas is not installed (the message says how to install it).

    Examples
    --------
    >>> from ocsched import schedule
    >>> df = schedule_frame(schedule([[0, 1], [1, 0]], switches=1, delta=0.1))
    >>> df[["switch", "configuration", "src", "dst", "start", "duration"]].to_dict("records")
    [{'switch': 0, 'configuration': 0, 'src': 0, 'dst': 1, 'start': 0.1, 'duration': 1.0}, \
{'switch': 0, 'configuration': 0, 'src': 1, 'dst': 0, 'start': 0.1, 'duration': 1.0}]
    """
    try:
        import pandas as pd  # type: ignore[import-untyped]
    except ImportError:
        raise OcschedError(missing_extra("Schedule.to_frame needs pandas", "pandas")) from None
    table = circuit_table(schedule)
    confs = [(k, c) for sw in schedule.switches for k, c in enumerate(sw)]
    counts = [len(c.circuits) for _, c in confs]
    columns: dict[str, Any] = {
        "switch": table["switch"],
        "configuration": np.repeat(np.asarray([k for k, _ in confs], dtype=np.int64), counts),
        "start": table["start"],
        "duration": np.repeat(np.asarray([c.duration for _, c in confs], dtype=np.float64), counts),
        "end": table["end"],
    }
    for key in ("src", "dst", "served", "phase", "src_name", "dst_name"):
        if key in table:
            columns[key] = table[key]
    return pd.DataFrame(columns)
