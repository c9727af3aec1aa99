"""Adversarial fuzzing of validate(): the schedulers' schedules, broken on purpose.

Every registered scheduler schedules a small random demand on a random small fabric (delays and
rates, down windows, links failing at random times, both reconfiguration models); the schedule
must validate, and so must the whole instance scaled by any power of ten. Then one mutation
breaks it (or tries to): a start moved earlier by a little more than the tolerance, a
configuration lengthened into a down window, a circuit moved onto a failed link, an output used
twice, a duration shortened until an entry is under-served, zero-length configurations, NaN and
infinite times, a fabric that lies, a claimed bound above the makespan -- at magnitudes from
1e-12 to 1e12. The straightforward exact reference of ``tests/model_reference.py`` judges the
mutant: ``validate`` must reject it where the reference finds a rule broken by clearly more than
the tolerance, and accept it where every rule holds to within a fraction of the tolerance.

The default run tries a few dozen examples on the fast schedulers; ``make slow`` many more, on
every registered scheduler.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from model_reference import RTOL, reference
from ocsched import schedule
from ocsched.errors import InfeasibleError
from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown
from ocsched.model import Configuration, Schedule
from ocsched.schedulers import SCHEDULERS, fabric_features
from ocsched.validation import validate
from strategies import demands

FAST = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
#: Schedulers that solve a MILP (a second or more each): only in the slow run.
HEAVY = ("spectra-opt", "exact")
#: Demand kinds with traffic to schedule (a zero demand leaves nothing to break but the claims).
KINDS = ("dense", "sparse", "skewed", "perm_sum", "single", "ties", "wide_range")

MUTATIONS = (
    "early",
    "edge",
    "into-window",
    "window-start",
    "onto-failed-link",
    "duplicate-output",
    "duplicate-input",
    "shorten",
    "zero-pile",
    "zero-length",
    "zero-bridge",
    "not-finite",
    "negative-duration",
    "delay",
    "squeeze",
    "swap",
    "lie",
    "claims",
    "fabric-port",
    "drop-circuit",
)


@st.composite
def fabrics(draw: st.DrawFn, n: int, top: float) -> Fabric:
    """Up to 4 switches: mixed delays and rates, windows and links failing at random times, either
    model. Switch 0 never fails, so every demand stays servable."""
    s = draw(st.integers(1, 4))
    unit = top or 1.0
    deltas = [draw(st.sampled_from([0.0, 1e-3, 0.05, 0.5, 2.0])) * unit for _ in range(s)]
    rates = [draw(st.sampled_from([0.5, 1.0, 1.0, 2.0])) for _ in range(s)]
    times = st.sampled_from([0.0, 0.05, 0.3, 1.0, 2.5]) | st.floats(0.0, 5.0)
    down, links = [], []
    for _ in range(draw(st.integers(0, 3)) if s > 1 else 0):
        b = draw(st.integers(1, s - 1))
        a = draw(times) * unit
        length = draw(st.sampled_from([0.01, 0.2, 1.0, math.inf]))
        down.append(SwitchDown(b, a, a + length * unit if math.isfinite(length) else math.inf))
    for _ in range(draw(st.integers(0, 3)) if s > 1 else 0):
        links.append(LinkDown(draw(st.integers(0, n - 1)), draw(st.integers(1, s - 1)), draw(times) * unit))
    model = draw(st.sampled_from(["all-stop", "partial"]))
    return Fabric(
        tuple(Switch(d, r) for d, r in zip(deltas, rates, strict=True)), tuple(down), tuple(links), model
    )


def _scaled(sched: Schedule, f: float) -> Schedule:
    """The schedule with every time (and its fabric's) multiplied by ``f``."""
    fab = sched.fabric
    if fab is not None:
        fab = Fabric(
            tuple(Switch(x.delta * f, x.rate) for x in fab.switches),
            tuple(SwitchDown(d.switch, d.start * f, d.end * f) for d in fab.down),
            tuple(LinkDown(x.port, x.switch, x.start * f) for x in fab.failed_links),
            fab.model,
        )
    switches = tuple(
        tuple(
            Configuration.sparse(c.start * f, c.duration * f, *c.circuit_arrays(), ports=sched.ports)
            for c in sw
        )
        for sw in sched.switches
    )
    return dataclasses.replace(
        sched,
        delta=sched.delta * f,
        switches=switches,
        fabric=fab,
        lower_bound=None if sched.lower_bound is None else sched.lower_bound * f,
        dual_bound=None if sched.dual_bound is None else sched.dual_bound * f,
    )


def _conf(
    c: Configuration,
    *,
    start: float | None = None,
    duration: float | None = None,
    ins: Any = None,
    outs: Any = None,
    ports: int,
) -> Configuration:
    i, j = c.circuit_arrays()
    return Configuration.sparse(
        c.start if start is None else start,
        c.duration if duration is None else duration,
        np.asarray(i if ins is None else ins, np.int64),
        np.asarray(j if outs is None else outs, np.int64),
        ports=ports,
    )


def _with(sched: Schedule, b: int, confs: list[Configuration]) -> Schedule:
    sw = list(sched.switches)
    sw[b] = tuple(confs)
    return dataclasses.replace(sched, switches=tuple(sw))


def _unit(sched: Schedule, b: int) -> float:
    """The timing tolerance on switch b: rtol * delta + 8 ulps of its latest time."""
    fab = sched.on_fabric()
    times = [abs(t) for c in sched.switches[b] for t in (c.start, c.end)]
    return RTOL * fab.switches[b].delta + 8 * math.ulp(max(times, default=0.0))


def _mutate(draw: st.DrawFn, sched: Schedule, d: np.ndarray) -> tuple[str, Schedule, Fabric | None]:
    """One adversarial change; returns its name, the mutant and the real fabric to check against."""
    n = sched.ports
    fab = sched.on_fabric()
    busy = [b for b, sw in enumerate(sched.switches) if sw]
    kinds = [m for m in MUTATIONS if busy or m in ("claims", "fabric-port")]
    if not fab.down:
        kinds = [m for m in kinds if m not in ("into-window", "window-start")]
    if not fab.failed_links:
        kinds = [m for m in kinds if m != "onto-failed-link"]
    kind = draw(st.sampled_from(kinds))
    factor = draw(st.sampled_from([1.5, 5.0, 20.0, 1e3, 1e6, 1e9]))
    if kind in ("claims",):
        span = sched.makespan
        which = draw(st.sampled_from(["lower_bound", "dual_bound", "meta", "delta"]))
        if which == "meta":
            return (
                kind,
                dataclasses.replace(sched, meta={**sched.meta, "switches": len(sched.switches) + 1}),
                None,
            )
        if which == "delta" and sched.fabric is not None:
            return kind, dataclasses.replace(sched, delta=sched.delta * 0.5 if sched.delta else 1.0), None
        value = span * (1 + factor * RTOL) + factor * 8 * math.ulp(span)
        return kind, dataclasses.replace(sched, **{which if which != "delta" else "lower_bound": value}), None
    if kind == "fabric-port":
        extra = LinkDown(n + draw(st.integers(0, 3)), draw(st.integers(0, fab.size - 1)), 0.0)
        new_fab = fab.with_failures(failed_links=[extra])
        return kind, dataclasses.replace(sched, fabric=new_fab, delta=max(new_fab.deltas)), None
    if kind in ("into-window", "window-start"):
        busy = [b for b in busy if fab.windows(b)] or busy
    if kind == "onto-failed-link":
        busy = [b for b in busy if fab.failed_ports(b)] or busy
    b = draw(st.sampled_from(busy))
    confs = list(sched.switches[b])
    k = draw(st.integers(0, len(confs) - 1))
    c = confs[k]
    unit = _unit(sched, b)
    delta_b = fab.switches[b].delta
    if kind == "early":
        confs[k] = _conf(c, start=c.start - factor * unit, ports=n)
    elif kind == "edge":
        # Start exactly factor tolerances before the earliest start the previous end allows.
        prev = max((x.end for x in confs[:k]), default=0.0)
        confs[k] = _conf(
            c, start=prev + (0.0 if fab.model == "partial" and k else delta_b) - factor * unit, ports=n
        )
    elif kind in ("into-window", "window-start"):
        wins = fab.windows(b)
        if not wins:
            return kind, sched, None
        a, z = draw(st.sampled_from(wins))
        if kind == "into-window":
            confs[k] = _conf(c, duration=max(a + factor * unit - c.start, 0.0), ports=n)
        elif math.isfinite(z):
            confs[k] = _conf(c, start=z - factor * unit, ports=n)
    elif kind == "onto-failed-link":
        links = [x for x in fab.failed_links if x.switch == b]
        if not links:
            return kind, sched, None
        p = draw(st.sampled_from(links)).port
        i, j = c.circuit_arrays()
        if i.size and p not in i.tolist():
            i = i.copy()
            i[draw(st.integers(0, i.size - 1))] = p
        elif j.size and p not in j.tolist():
            j = j.copy()
            j[draw(st.integers(0, j.size - 1))] = p
        confs[k] = _conf(c, ins=i, outs=j, ports=n)
    elif kind in ("duplicate-output", "duplicate-input"):
        i, j = (x.copy() for x in c.circuit_arrays())
        if i.size < 2:
            return kind, sched, None
        if kind == "duplicate-output":
            j[1] = j[0]
        else:
            i[1] = i[0]
        confs[k] = _conf(c, ins=i, outs=j, ports=n)
    elif kind == "shorten":
        rate = fab.switches[b].rate
        line = max(d.sum(axis=0).max(), d.sum(axis=1).max())
        cut = (
            draw(st.sampled_from([0.5, 1.0])) * c.duration
            + factor * (RTOL * line + 8 * math.ulp(sched.makespan)) / rate
        )
        confs[k] = _conf(c, duration=max(c.duration - cut, 0.0), ports=n)
    elif kind == "zero-pile":
        # Shortened a little, and followed by many zero-length copies of itself: they serve
        # nothing (unless kept lit between them), so they must not widen the tolerance either
        # (most visibly when the switch runs late, where 8 ulps of the times exceed the line's 1e-9).
        late = draw(st.sampled_from([0.0, 1e6, 1e9])) * max(sched.makespan, delta_b)
        confs = [_conf(x, start=x.start + late, ports=n) for x in confs]
        c = confs[k]
        line = max(d.sum(axis=0).max(), d.sum(axis=1).max())
        cut = factor * RTOL * line / fab.switches[b].rate
        confs[k] = _conf(c, duration=max(c.duration - cut, 0.0), ports=n)
        t0 = max(x.end for x in confs)
        confs += [_conf(c, start=t0 + m * delta_b, duration=0.0, ports=n) for m in range(1, 201)]
    elif kind == "drop-circuit":
        i, j = c.circuit_arrays()
        if not i.size:
            return kind, sched, None
        t = draw(st.integers(0, i.size - 1))
        confs[k] = _conf(c, ins=np.delete(i, t), outs=np.delete(j, t), ports=n)
    elif kind == "zero-length":
        where = draw(st.sampled_from(["set", "insert"]))
        if where == "set":
            confs[k] = _conf(c, duration=0.0, ports=n)
        else:
            at = draw(st.sampled_from([c.start, c.end, c.start + c.duration / 2, c.end + delta_b / 2]))
            i, j = c.circuit_arrays()
            confs.insert(
                k + 1 if at >= c.end else k,
                _conf(c, start=at, duration=0.0, ins=i[::-1].copy(), outs=j.copy(), ports=n),
            )
    elif kind == "zero-bridge":
        # Two zero-length configurations holding one circuit far apart: credited only if it may
        # stay lit between them (not across a down window or past its link's failure).
        i, j = c.circuit_arrays()
        if not i.size:
            return kind, sched, None
        t = draw(st.integers(0, i.size - 1))
        span = draw(st.sampled_from([1.0, 10.0, 1e3])) * max(sched.makespan, delta_b, 1e-300)
        start = confs[-1].end + delta_b
        links = [x for x in fab.failed_links if x.switch == b]
        p = draw(st.sampled_from([int(i[t]), *[x.port for x in links]]))
        ins, outs = np.array([p]), np.array([int(j[t]) if p != j[t] else int(i[t])])
        if ins[0] == outs[0]:
            return kind, sched, None
        zero = [Configuration.sparse(start + off, 0.0, ins, outs, ports=n) for off in (0.0, span)]
        confs.extend(zero)
        d = d.copy()
        d[ins[0], outs[0]] += span * fab.switches[b].rate  # what the bridge would serve if it were kept
        mutant = _with(sched, b, confs)
        # ... and a down window or a link failure in the middle of the bridge, or neither.
        cut = draw(st.sampled_from(["none", "window", "link"]))
        mid = start + span * draw(st.sampled_from([0.01, 0.5, 0.99]))
        if cut == "window":
            new_fab = fab.with_failures(down=[SwitchDown(b, mid, mid + span * 1e-3)])
        elif cut == "link":
            new_fab = fab.with_failures(
                failed_links=[LinkDown(int(draw(st.sampled_from([ins[0], outs[0]]))), b, mid)]
            )
        else:
            new_fab = fab
        mutant = dataclasses.replace(mutant, fabric=new_fab, delta=max(new_fab.deltas))
        return kind, mutant, d  # type: ignore[return-value]
    elif kind == "delay":
        # Everything later by a multiple of the makespan: still valid unless it runs into a window
        # or past a failure; the tolerances grow with the times, never beyond a few ulps of them.
        late = draw(st.sampled_from([0.5, 1e3, 1e6, 1e9])) * max(sched.makespan, delta_b)
        switches = tuple(tuple(_conf(x, start=x.start + late, ports=n) for x in sw) for sw in sched.switches)
        return kind, dataclasses.replace(sched, switches=switches), None
    elif kind == "negative-duration":
        confs[k] = _conf(c, duration=-factor * unit, ports=n)
    elif kind == "squeeze":
        # Every time of one switch pulled towards 0 by a relative factor * 1e-12: starts move
        # earlier (delays shrink) and durations shorten, by far less than any entry.
        g = 1 - factor * 1e-12
        confs = [_conf(x, start=x.start * g, duration=x.duration * g, ports=n) for x in confs]
    elif kind == "not-finite":
        bad = draw(st.sampled_from([math.nan, math.inf, -math.inf]))
        field_ = draw(st.sampled_from(["start", "duration"]))
        confs[k] = _conf(c, **{field_: bad}, ports=n)
    elif kind == "swap":
        if len(confs) < 2:
            return kind, sched, None
        t = draw(st.integers(0, len(confs) - 1))
        confs[k], confs[t] = confs[t], confs[k]
    elif kind == "lie":
        # The schedule claims a more lenient fabric than the real one.
        lies = draw(st.sampled_from(["delta", "rate", "model", "window", "link"]))
        sw = list(fab.switches)
        down, links, model = list(fab.down), list(fab.failed_links), fab.model
        if lies == "delta" and sw[b].delta > 0:
            sw[b] = Switch(sw[b].delta / (1 + factor * 1e-3), sw[b].rate)
        elif lies == "rate":
            sw[b] = Switch(sw[b].delta, sw[b].rate * (1 + factor * 1e-6))
        elif lies == "model":
            model = "partial"
        elif lies == "window" and down:
            down.pop(draw(st.integers(0, len(down) - 1)))
        elif lies == "link" and links:
            links.pop(draw(st.integers(0, len(links) - 1)))
        claimed = Fabric(tuple(sw), tuple(down), tuple(links), model)
        return kind, dataclasses.replace(sched, fabric=claimed, delta=max(claimed.deltas)), fab
    return kind, _with(sched, b, confs), None


def _judge(sched: Schedule, d: np.ndarray, real: Fabric | None, what: str) -> None:
    ref = reference(sched, d, fabric=real)
    rep = validate(sched, d, fabric=real)
    note(f"{what}: reference worst {ref.worst()}, defects {ref.defects}, ambiguous {ref.ambiguous}")
    note(f"validate: {[str(v) for v in rep.violations[:6]]}")
    event(
        f"{what.split()[-1]}: "
        + (
            "ambiguous"
            if ref.ambiguous
            else "broken"
            if ref.broken()
            else "sound"
            if ref.sound()
            else "in the band"
        )
    )
    if ref.ambiguous:
        return
    if ref.broken():
        assert not rep.ok, (
            f"{what}: validate accepted a schedule the reference rejects: {ref.worst()} {ref.defects}"
        )
    if ref.sound():
        assert rep.ok, f"{what}: validate rejected a schedule the reference accepts: {rep.violations[:4]}"


def _fuzz(data: st.DataObject, names: tuple[str, ...]) -> None:
    d = data.draw(demands(max_n=4, kinds=KINDS), label="demand")
    n = d.shape[0]
    fab = data.draw(fabrics(n, float(d.max(initial=0.0))), label="fabric")
    usable = [
        a
        for a in names
        if fabric_features(fab) <= SCHEDULERS[a].supports
        and SCHEDULERS[a].requires <= fabric_features(fab)
        and (SCHEDULERS[a].max_ports is None or n <= SCHEDULERS[a].max_ports)
    ]
    if not usable:
        return
    algorithm = data.draw(st.sampled_from(usable), label="algorithm")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = schedule(d, fabric=fab, algorithm=algorithm, rng=0)
    except InfeasibleError:
        return  # a scheduler that gives up says so; the validator is what is under test here
    # The recorded lower bound is the bounds' own business (their property test: bound <= every
    # makespan); the claims mutation below checks that validate reports one above the makespan.
    sched = dataclasses.replace(sched, lower_bound=None)
    rep = validate(sched, d)
    assert rep.ok, f"{algorithm} on {fab}: {rep.violations[:4]}"
    ref = reference(sched, d)
    assert not ref.broken(), (
        f"{algorithm}: the reference rejects a valid schedule: {ref.worst()} {ref.defects}"
    )
    e = data.draw(st.integers(-12, 12), label="power of ten")
    big, dd = _scaled(sched, 10.0**e), d * 10.0**e
    scaled = validate(big, dd)
    assert scaled.ok, f"{algorithm} scaled by 1e{e}: {scaled.violations[:4]}"
    kind, mutant, real = data.draw(
        st.deferred(lambda: st.composite(lambda dr: _mutate(dr, big, dd))()), label="mutation"
    )
    if isinstance(real, np.ndarray):  # the mutation changed the demand too
        dd, real = real, None
    _judge(mutant, dd, real, f"{algorithm} 1e{e} {kind}")


@FAST
@given(st.data())
def test_validate_rejects_broken_schedules(data: st.DataObject) -> None:
    _fuzz(data, tuple(a for a in SCHEDULERS if a not in HEAVY))


@pytest.mark.slow
@SLOW
@given(st.data())
def test_validate_rejects_broken_schedules_long(data: st.DataObject) -> None:
    _fuzz(data, tuple(SCHEDULERS))


# ---------------------------------------------------------------------------------------------
# Random timelines: configurations no scheduler would build, judged by the reference
# ---------------------------------------------------------------------------------------------


@st.composite
def timelines(draw: st.DrawFn) -> tuple[Schedule, np.ndarray]:
    """A schedule of 1-2 switches with configurations laid out near the rule's edges (kept circuits,
    zero lengths, windows and failures in the gaps), and a demand close to what it serves."""
    n = draw(st.integers(2, 4))
    s = draw(st.integers(1, 2))
    model = draw(st.sampled_from(["all-stop", "partial"]))
    deltas = [draw(st.sampled_from([0.0, 0.25, 1.0])) for _ in range(s)]
    rates = [draw(st.sampled_from([0.5, 1.0, 2.0])) for _ in range(s)]
    tiny = draw(st.sampled_from([1e-15, 1e-12, 1e-9, 1e-6]))
    switches, down, links = [], [], []
    for b in range(s):
        delta = deltas[b]
        confs: list[Configuration] = []
        t = delta * draw(st.sampled_from([1.0, 1.0, 1 - tiny, 2.0]))
        prev: list[tuple[int, int]] = []
        for _ in range(draw(st.integers(1, 6))):
            perm = draw(st.permutations(range(n)))
            circuits = [(i, perm[i]) for i in range(n) if i != perm[i] and draw(st.booleans())]
            if prev and draw(st.booleans()):
                circuits = sorted(
                    set(prev)
                    | {
                        x
                        for x in circuits
                        if x[0] not in {i for i, _ in prev} and x[1] not in {j for _, j in prev}
                    }
                )
            w = draw(st.sampled_from([0.0, 0.5, 1.0, tiny]))
            confs.append(
                c := Configuration.sparse(
                    t,
                    w,
                    np.array([i for i, _ in circuits], np.int64),
                    np.array([j for _, j in circuits], np.int64),
                    ports=n,
                )
            )
            if draw(st.integers(0, 4)) == 0:  # a window in the gap after this configuration
                a = c.end + draw(st.sampled_from([0.0, 0.1, tiny]))
                # (never shorter than 1e-9: scaling by a power of ten must not close it)
                down.append(SwitchDown(b, a, a + draw(st.sampled_from([0.1, max(tiny, 1e-9), 1.0]))))
            if circuits and draw(st.integers(0, 4)) == 0:  # a link failing near here
                p = draw(st.sampled_from([x for ij in circuits for x in ij]))
                links.append(
                    LinkDown(p, b, max(c.end + draw(st.sampled_from([0.0, 0.2, -tiny, tiny, 1.0])), 0.0))
                )
            gap = draw(st.sampled_from([0.0, delta, delta * (1 - tiny), delta + 0.3, 0.3, tiny]))
            t = c.end + gap
            prev = circuits
        switches.append(tuple(confs))
    fab = Fabric(
        tuple(Switch(dl, r) for dl, r in zip(deltas, rates, strict=True)), tuple(down), tuple(links), model
    )
    sched = Schedule(ports=n, delta=max(deltas), switches=tuple(switches), algorithm="random", fabric=fab)
    served = reference(sched, np.zeros((n, n))).served
    d = np.zeros((n, n))
    factor = draw(st.sampled_from([1.0, 1 - tiny, 1 + tiny, 0.5]))
    for (i, j), amount in served.items():
        if i != j:
            d[i, j] = float(amount) * factor
    return sched, d


def _agree(sched: Schedule, d: np.ndarray, e: int) -> None:
    f = 10.0**e
    _judge(_scaled(sched, f), d * f, None, f"random timeline 1e{e}")


@FAST
@given(timelines(), st.integers(-12, 12))
def test_validate_agrees_with_the_reference_on_random_timelines(
    case: tuple[Schedule, np.ndarray], e: int
) -> None:
    _agree(*case, e)


@pytest.mark.slow
@SLOW
@given(timelines(), st.integers(-12, 12))
def test_validate_agrees_with_the_reference_on_random_timelines_long(
    case: tuple[Schedule, np.ndarray], e: int
) -> None:
    _agree(*case, e)
