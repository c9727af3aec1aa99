"""Request bodies to library objects: demands, fabrics, schedules, failures, iterations.

Every reader measures its field against the :class:`~ocsched.serve.limits.Limits` before it
builds anything, and raises :class:`RequestError` naming the field; the library's own checks
(:meth:`ocsched.model.Demand.from_matrix`, :meth:`ocsched.fabric.Fabric.from_dict`, the schedule
JSON reader) do the rest, and their :class:`~ocsched.errors.InvalidInputError` is reported under
the field being read.
"""

from __future__ import annotations

import base64
import binascii
import io
import numbers
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import scipy.sparse as sp

from ocsched._checks import check_choice, check_int, check_number
from ocsched.errors import InfeasibleError, InvalidInputError
from ocsched.fabric import MODELS, Fabric
from ocsched.io.demand import _array_header
from ocsched.iteration import Iteration
from ocsched.model import Demand, Schedule
from ocsched.model.failures import LinkFailure, SwitchFailure
from ocsched.serve.limits import Limits

T = TypeVar("T")


class RequestError(Exception):
    """A request the service refuses: the HTTP status, the field at fault and one clear line.

    >>> e = RequestError(422, "demand", "`demand` must be non-negative")
    >>> e.status, e.field
    (422, 'demand')
    """

    def __init__(self, status: int, field: str | None, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.field = field
        self.message = message

    def to_dict(self) -> dict[str, Any]:
        """The JSON error body."""
        return {"error": {"status": self.status, "field": self.field, "message": self.message}}


@contextmanager
def field(name: str) -> Iterator[None]:
    """Report the library's input errors raised inside as a 422 naming the field ``name``."""
    try:
        yield
    except RequestError:
        raise
    except InfeasibleError as exc:
        raise RequestError(422, name, f"infeasible: {exc}") from None
    except InvalidInputError as exc:
        raise RequestError(422, name, str(exc)) from None


def body_object(data: Any) -> Mapping[str, Any]:
    """The parsed body if it is a JSON object."""
    if not isinstance(data, Mapping):
        raise RequestError(400, None, f"the request body must be a JSON object; got {type(data).__name__}")
    return data


def only(body: Mapping[str, Any], keys: frozenset[str], where: str = "body") -> None:
    """Refuse an unknown key: a misspelt option would otherwise be ignored without a word."""
    extra = sorted(str(k) for k in body if k not in keys)
    if extra:
        raise RequestError(
            422, extra[0], f"unknown field {extra[0]!r} in the {where}; valid: {', '.join(sorted(keys))}"
        )


def required(body: Mapping[str, Any], key: str) -> Any:
    """``body[key]``, or a 422 saying it is missing."""
    if key not in body or body[key] is None:
        raise RequestError(422, key, f"`{key}` is missing")
    return body[key]


def get_int(body: Mapping[str, Any], key: str, default: int | None, *, minimum: int = 0) -> int | None:
    """An optional integer field."""
    value = body.get(key)
    if value is None:
        return default
    with field(key):
        return check_int(value, key, minimum=minimum)


def get_str(body: Mapping[str, Any], key: str, default: str) -> str:
    """An optional string field."""
    value = body.get(key, default)
    if not isinstance(value, str):
        raise RequestError(422, key, f"`{key}` must be a string; got {value!r}")
    return value


def time_budget(body: Mapping[str, Any], limits: Limits) -> float:
    """The request's ``time_budget_s``: at most the server's, which is also the default."""
    value = body.get("time_budget_s")
    if value is None:
        return limits.time_budget_s
    with field("time_budget_s"):
        budget = check_number(value, "time_budget_s", low=0.0, high=limits.time_budget_s)
    if budget <= 0:
        raise RequestError(422, "time_budget_s", f"`time_budget_s` must be > 0; got {value!r}")
    return budget


# --- demand --------------------------------------------------------------------------------------


def demand(raw: Any, limits: Limits, *, name: str = "demand") -> Demand:
    """Read a demand: nested lists, sparse triplets ``{n, src, dst, value}`` or ``{"npy": base64}``.

    Examples
    --------
    >>> demand([[0, 1], [2, 0]], Limits()).nnz
    2
    >>> demand({"n": 3, "src": [0, 2], "dst": [1, 0], "value": [1.5, 2]}, Limits()).values.tolist()
    [1.5, 2.0]
    """
    if isinstance(raw, list):
        return _dense(raw, limits, name)
    if isinstance(raw, Mapping):
        if "npy" in raw:
            only(raw, frozenset({"npy"}), name)
            return _npy(raw["npy"], limits, name)
        only(raw, frozenset({"n", "src", "dst", "value"}), name)
        return _triplets(raw, limits, name)
    raise RequestError(
        422,
        name,
        f"`{name}` must be rows, {{n, src, dst, value}} or {{npy: base64}}; got {type(raw).__name__}",
    )


def _dense(raw: list[Any], limits: Limits, name: str) -> Demand:
    if len(raw) > limits.max_ports:
        raise RequestError(
            422, name, f"`{name}` has {len(raw)} rows; this service takes at most {limits.max_ports} ports"
        )
    try:
        arr = np.array(raw)
    except (ValueError, TypeError):
        raise RequestError(
            422, name, f"`{name}` must be n rows of n numbers (rows of different lengths)"
        ) from None
    return _checked_array(arr, name)


def _checked_array(arr: np.ndarray[Any, Any], name: str) -> Demand:
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise RequestError(422, name, f"`{name}` must be a non-empty square matrix; got shape {arr.shape}")
    if arr.dtype.kind not in "iuf":
        raise RequestError(422, name, f"`{name}` must hold numbers only; got {arr.dtype} entries")
    with field(name):
        return Demand.from_matrix(arr, name=name)


def _npy(text: Any, limits: Limits, name: str) -> Demand:
    if not isinstance(text, str):
        raise RequestError(
            422, f"{name}.npy", f"`{name}.npy` must be a base64 string; got {type(text).__name__}"
        )
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise RequestError(422, f"{name}.npy", f"`{name}.npy` is not valid base64") from None
    fh = io.BytesIO(raw)
    where = f"{name}.npy"
    try:
        # The header is read first (as .npy files are): its claims are checked before anything is allocated.
        shape, _ = _array_header(fh, len(raw), f"`{where}`")
    except ValueError as exc:  # InvalidInputError included
        raise RequestError(422, where, f"`{where}` is not a .npy array: {exc}") from None
    if len(shape) != 2 or max(shape, default=0) > limits.max_ports:
        raise RequestError(
            422, where, f"`{where}` must be n x n with n <= {limits.max_ports}; got shape {shape}"
        )
    fh.seek(0)
    try:
        arr = np.load(fh, allow_pickle=False)
    except (ValueError, OSError, EOFError):
        raise RequestError(422, where, f"`{where}` is truncated or malformed") from None
    return _checked_array(arr, name)


def _triplets(raw: Mapping[str, Any], limits: Limits, name: str) -> Demand:
    n = raw.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= limits.max_ports:
        raise RequestError(
            422, f"{name}.n", f"`{name}.n` must be an integer in 1..{limits.max_ports}; got {n!r}"
        )
    cols = []
    for key, kinds in (("src", "iu"), ("dst", "iu"), ("value", "iuf")):
        v = raw.get(key)
        if not isinstance(v, list):
            raise RequestError(422, f"{name}.{key}", f"`{name}.{key}` must be a list; got {type(v).__name__}")
        try:
            a = np.array(v)
        except (ValueError, TypeError):
            a = np.array([None])
        if a.ndim != 1 or (a.size and a.dtype.kind not in kinds):
            what = "integers" if kinds == "iu" else "numbers"
            raise RequestError(422, f"{name}.{key}", f"`{name}.{key}` must be a flat list of {what}")
        cols.append(a)
    src, dst, val = cols
    if not len(src) == len(dst) == len(val):
        raise RequestError(
            422,
            name,
            f"`{name}` src, dst and value must have one length; got {len(src)}, {len(dst)}, {len(val)}",
        )
    for key, a in (("src", src), ("dst", dst)):
        bad = (a < 0) | (a >= n)
        if bad.any():
            k = int(np.argmax(bad))
            raise RequestError(422, f"{name}.{key}", f"`{name}.{key}[{k}]` = {a[k]} is outside 0..{n - 1}")
    m = sp.coo_array((val.astype(np.float64), (src.astype(np.int64), dst.astype(np.int64))), shape=(n, n))
    with field(name):
        return Demand.from_matrix(m, name=name)


# --- fabric --------------------------------------------------------------------------------------

FABRIC_KEYS = frozenset({"fabric", "switches", "delta", "reconfiguration"})


def fabric(body: Mapping[str, Any], limits: Limits) -> Fabric:
    """The fabric of a body: ``fabric`` (a fabric file's table as JSON) or ``switches`` and ``delta``.

    ``delta`` is one number (``switches`` identical switches) or a list, one per switch;
    ``reconfiguration`` (``all-stop`` or ``partial``) overrides the model.

    >>> fabric({"switches": 2, "delta": 0.1}, Limits()).deltas
    (0.1, 0.1)
    >>> fabric({"fabric": {"switches": [{"delta": 0.01, "count": 2}]}}, Limits()).size
    2
    """
    raw = body.get("fabric")
    if raw is not None:
        for key in ("switches", "delta"):
            if body.get(key) is not None:
                raise RequestError(
                    422, key, f"give either `fabric` or `switches`/`delta`, not both (`{key}`)"
                )
        with field("fabric"):
            fab = Fabric.from_dict(raw, name="fabric")
        if fab.size > limits.max_switches:
            raise RequestError(
                422,
                "fabric",
                f"`fabric` has {fab.size} switches; this service takes at most {limits.max_switches}",
            )
    else:
        delta = required(body, "delta")
        switches = body.get("switches")
        if switches is not None:
            with field("switches"):
                switches = check_int(switches, "switches", minimum=1)
            if switches > limits.max_switches:
                raise RequestError(
                    422,
                    "switches",
                    f"`switches` = {switches}; this service takes at most {limits.max_switches}",
                )
        if isinstance(delta, list):
            if len(delta) > limits.max_switches:
                raise RequestError(
                    422,
                    "delta",
                    f"`delta` lists {len(delta)} delays; at most {limits.max_switches} (one per switch)",
                )
            if switches is not None and switches != len(delta):
                raise RequestError(
                    422, "switches", f"`switches` = {switches} but `delta` lists {len(delta)} delays"
                )
            with field("delta"):
                fab = Fabric.from_deltas([check_number(d, f"delta[{k}]") for k, d in enumerate(delta)])
        else:
            if switches is None:
                raise RequestError(422, "switches", "`switches` is missing (needed with a single `delta`)")
            with field("delta"):
                fab = Fabric.uniform(switches, check_number(delta, "delta"))
    model = body.get("reconfiguration")
    if model is not None:
        with field("reconfiguration"):
            fab = fab.with_model(check_choice(model, "reconfiguration", MODELS))
    return fab


# --- schedules, failures, iterations --------------------------------------------------------------


def schedule(raw: Any, limits: Limits) -> Schedule:
    """A schedule in its JSON form (as ``/v1/schedule`` returns it), within the limits."""
    if not isinstance(raw, Mapping):
        raise RequestError(422, "schedule", f"`schedule` must be a schedule object; got {type(raw).__name__}")
    ports, sws = raw.get("ports"), raw.get("switches")
    if isinstance(ports, int) and ports > limits.max_ports:
        raise RequestError(422, "schedule", f"`schedule.ports` = {ports}; at most {limits.max_ports}")
    if isinstance(sws, list) and len(sws) > limits.max_switches:
        raise RequestError(
            422, "schedule", f"`schedule.switches` lists {len(sws)}; at most {limits.max_switches}"
        )
    with field("schedule"):
        return Schedule.from_dict(raw)


def failure(raw: Any) -> SwitchFailure | LinkFailure:
    """``{"switch", "at"}`` (a switch fails) or ``{"port", "switch", "at"}`` (a link fails)."""
    if not isinstance(raw, Mapping):
        raise RequestError(422, "failure", f"`failure` must be an object; got {type(raw).__name__}")
    only(raw, frozenset({"switch", "port", "at"}), "failure")
    with field("failure"):
        at = check_number(raw.get("at"), "failure.at")
        sw = check_int(raw.get("switch"), "failure.switch", minimum=0)
        if raw.get("port") is None:
            return SwitchFailure(sw, at)
        return LinkFailure(check_int(raw.get("port"), "failure.port", minimum=0), sw, at)


def iteration(raw: Any, limits: Limits) -> Iteration:
    """An iteration in the ``ocsched.sequence`` JSON form, within the limits."""
    if not isinstance(raw, Mapping):
        raise RequestError(422, "iteration", f"`iteration` must be an object; got {type(raw).__name__}")
    phases, ports = raw.get("phases"), raw.get("ports")
    if isinstance(phases, list):
        if len(phases) > limits.max_phases:
            raise RequestError(
                422, "iteration", f"`iteration.phases` lists {len(phases)}; at most {limits.max_phases}"
            )
        for k, p in enumerate(phases):
            d = p.get("demand") if isinstance(p, Mapping) else None
            n = len(d) if isinstance(d, list) else d.get("n", ports) if isinstance(d, Mapping) else None
            if isinstance(n, int) and n > limits.max_ports:
                raise RequestError(
                    422, "iteration", f"`iteration.phases[{k}]` has {n} ports; at most {limits.max_ports}"
                )
    if isinstance(ports, int) and ports > limits.max_ports:
        raise RequestError(422, "iteration", f"`iteration.ports` = {ports}; at most {limits.max_ports}")
    with field("iteration"):
        return Iteration.from_dict(raw)


def seed(body: Mapping[str, Any]) -> int:
    """The ``seed`` of randomised algorithms: 0 by default, so equal requests get equal replies."""
    value = get_int(body, "seed", 0)
    assert value is not None
    return value


def number(value: Any, name: str) -> float:
    """A finite JSON number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise RequestError(422, name, f"`{name}` must be a number; got {value!r}")
    with field(name):
        return check_number(value, name)


def call(fn: Callable[[], T], name: str) -> T:
    """Run ``fn``, reporting the library's input errors under ``name``."""
    with field(name):
        return fn()
