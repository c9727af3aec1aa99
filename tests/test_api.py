"""The public API stays small and explicit."""

from __future__ import annotations

import subprocess
import sys

import ocsched


def test_public_names() -> None:
    assert sorted(ocsched.__all__) == sorted(
        [
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
            "SCHEDULERS",
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
            "schedule_iteration",
            "schedule",
            "validate",
        ]
    )
    for name in ocsched.__all__:
        assert hasattr(ocsched, name)


def test_invalid_input_is_a_value_error() -> None:
    assert issubclass(ocsched.InvalidInputError, ValueError)
    assert issubclass(ocsched.InvalidInputError, ocsched.OcschedError)


def test_importing_the_cli_stays_light() -> None:
    # Heavy libraries load inside the functions that need them, so `ocsched --help` is quick.
    code = (
        "import sys, ocsched.cli; "
        "heavy = [m for m in ('matplotlib', 'dask', 'distributed', 'pyarrow', 'highspy', 'scipy.optimize') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
