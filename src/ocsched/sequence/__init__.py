"""Schedule a training iteration (a sequence of phases with compute gaps) on parallel OCSes.

Every iteration scheduler is an entry of :data:`ITERATION_SCHEDULERS`, reached through
:func:`schedule_iteration`; each schedules the phases one at a time with a single-matrix
scheduler (``base=``, a key of :data:`ocsched.schedulers.SCHEDULERS`):

===============  =================================================================================
``independent``  each phase's ``base`` schedule on its own, concatenated, paying every delay (the
                 downstream practice: add the per-phase makespans up)
``spectra-seq``  the same per-phase schedules, then reconfiguration hidden in gaps and idle time,
                 persistence (a switch ends phase k with the permutation it starts phase k+1 with),
                 and a joint re-placement, per phase never later than ``independent``
===============  =================================================================================

The model (barriers, hidden delays, persistence) is in :mod:`ocsched.iteration`;
:func:`iteration_lower_bound` bounds the iteration time and :func:`validate_iteration` checks a
schedule against it.

Both run on any fabric the base supports: on identical all-stop switches that never fail as
above, on any other through :mod:`~ocsched.sequence.on_fabric` (each phase's base schedule from
its release; windows and failures are absolute times).

Modules: :mod:`~ocsched.sequence.independent`, :mod:`~ocsched.sequence.seq` (spectra-seq's walk
through the phases), :mod:`~ocsched.sequence.placement` and :mod:`~ocsched.sequence.layout` (its
per-phase placement and layout), :mod:`~ocsched.sequence.carry` (the carry run's
decomposition), :mod:`~ocsched.sequence.on_fabric` (both schedulers on other fabrics),
:mod:`~ocsched.sequence.bounds` and :mod:`~ocsched.sequence.fabric_bound`,
:mod:`~ocsched.sequence.rules` (the rule on one switch with persistence),
:mod:`~ocsched.sequence.validate`, :mod:`~ocsched.sequence.rows` (flat metrics) and
:mod:`~ocsched.sequence._common` (shared types and the cached base schedules).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ocsched._checks import check_choice
from ocsched._jit import clock
from ocsched._version import __version__
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.iteration import Iteration, IterationSchedule
from ocsched.model import Configuration
from ocsched.online import plan
from ocsched.schedulers import SCHEDULERS, as_fabric, fabric_features, scheduler_name, supporting
from ocsched.sequence._common import FITTED, RngLike, Tagged, demand_key
from ocsched.sequence.bounds import iteration_lower_bound
from ocsched.sequence.fabric_bound import fabric_iteration_lower_bound
from ocsched.sequence.independent import run_independent
from ocsched.sequence.on_fabric import run_independent_on, run_seq_on
from ocsched.sequence.rows import iteration_row, phase_rows
from ocsched.sequence.seq import run_seq
from ocsched.sequence.validate import validate_iteration

__all__ = [
    "ITERATION_SCHEDULERS",
    "IterationScheduler",
    "fabric_iteration_lower_bound",
    "iteration_algorithms",
    "iteration_lower_bound",
    "iteration_row",
    "phase_rows",
    "schedule_iteration",
    "validate_iteration",
]


@dataclass(frozen=True)
class IterationScheduler:
    """A registered iteration scheduler.

    Attributes
    ----------
    run : callable
        ``run(iteration, fabric, base, rng)`` returning, per switch, ``(phase, Configuration)`` in
        time order (absolute times); ``base`` is a key of :data:`~ocsched.schedulers.SCHEDULERS`.
        Any fabric: the base must support it (:func:`schedule_iteration` checks).
    description : str
        One line for listings.
    """

    run: Callable[[Iteration, Fabric, str, RngLike], Tagged]
    description: str


def _spectra_seq(iteration: Iteration, fabric: Fabric, base: str, rng: RngLike) -> Tagged:
    if fabric.is_uniform:
        return run_seq(iteration, fabric, base, rng)
    return run_seq_on(iteration, fabric, base, rng)


def _independent(iteration: Iteration, fabric: Fabric, base: str, rng: RngLike) -> Tagged:
    if fabric.is_uniform:
        return run_independent(iteration, fabric, base, rng)
    return run_independent_on(iteration, fabric, base, rng)


ITERATION_SCHEDULERS: dict[str, IterationScheduler] = {
    "spectra-seq": IterationScheduler(
        _spectra_seq,
        "per-phase base schedules with delays hidden in gaps and idle time, persistence of recurring "
        "permutations and joint re-placement; never later than independent",
    ),
    "independent": IterationScheduler(
        _independent, "each phase scheduled on its own by the base scheduler, makespans added up"
    ),
}


def iteration_algorithms() -> dict[str, str]:
    """Return ``{name: one-line description}`` of every iteration scheduler.

    >>> sorted(iteration_algorithms())
    ['independent', 'spectra-seq']
    """
    return {k: a.description for k, a in ITERATION_SCHEDULERS.items()}


def _check_base(base: str, fabric: Fabric, n: int) -> None:
    """Refuse a base the fabric or the port count rules out (the iteration schedulers take any fabric)."""
    sch = SCHEDULERS[base]
    if sch.max_ports is not None and n > sch.max_ports:
        raise InvalidInputError(
            f"base {base!r} supports at most {sch.max_ports} ports; the iteration has {n}"
        )
    if fabric.eps_rate > 0:
        # Not yet: the phases would each need their EPS share, timed within the phase.
        raise InvalidInputError(
            f"an iteration schedule does not support eps fabrics (eps_rate={fabric.eps_rate:g}) yet; "
            "schedule each phase with ocsched.schedule, or use eps_rate=0"
        )
    features = fabric_features(fabric)
    missing = features - sch.supports
    if missing:
        can = ", ".join(sorted(sch.supports)) or "identical all-stop switches without failures only"
        raise InvalidInputError(
            f"base {base!r} does not support {', '.join(sorted(missing))} fabrics (it supports: {can}); "
            f"choose another `base` ({', '.join(supporting(fabric)) or 'none'} do)"
        )
    lacking = sch.requires - features
    if lacking:
        raise InvalidInputError(f"base {base!r} needs a fabric with {', '.join(sorted(lacking))}")


def schedule_iteration(
    iteration: Iteration,
    *,
    switches: int | None = None,
    delta: float | None = None,
    fabric: Fabric | None = None,
    algorithm: str = "spectra-seq",
    base: str = "spectra",
    rng: RngLike = None,
    predicted: Iteration | None = None,
) -> IterationSchedule:
    """Schedule every phase of ``iteration`` on ``switches`` parallel OCSes with delay ``delta``.

    Parameters
    ----------
    iteration : Iteration
        The phases in order, with their gaps.
    switches : int
        Number of parallel switches s >= 1.
    delta : float
        Reconfiguration delay >= 0, in the unit of the demands and gaps.
    fabric : Fabric, optional
        Instead of ``switches`` and ``delta``: any fabric (per-switch delays and rates, down
        windows and failed links at absolute times, the partial model) that ``base`` supports.
    algorithm : str
        A key of :data:`ITERATION_SCHEDULERS`; ``"spectra-seq"``, the best, by default.
    base : str
        The single-matrix scheduler each phase starts from (a key of
        :data:`ocsched.schedulers.SCHEDULERS`, or a former name in
        :data:`~ocsched.schedulers.ALIASES`).
    rng : Generator, int or None
        Seed for a randomised base. With an int or None, equal phases get equal base schedules,
        and ``spectra-seq`` is never later than ``independent`` with the same seed.
    predicted : Iteration, optional
        The online mode: a prediction of every phase (same phases, same ports). Each phase's
        base schedule is then ``base``'s schedule of its prediction, fitted to the phase by
        :meth:`ocsched.online.Plan.fit` (``meta["fit_modes"]`` lists each phase's mode). With
        ``independent`` nothing else sees the actual phases before they run; ``spectra-seq``'s
        re-placements still use them. Identical all-stop switches without failures only.

    Returns
    -------
    IterationSchedule
        With ``makespan`` (the iteration time), ``exposed``, per-phase ``releases``/``ends``,
        ``lower_bound`` (:func:`iteration_lower_bound`, or :func:`fabric_iteration_lower_bound`
        on a fabric), its ``fabric`` (None when uniform) and provenance in ``meta``.

    Raises
    ------
    InvalidInputError
        For an iteration that is not an :class:`~ocsched.iteration.Iteration`, bad ``switches``
        or ``delta``, an unknown ``algorithm`` or ``base``, a ``base`` that does not support the
        fabric (the message names the feature), or a failed link on a port the iteration lacks.

    Notes
    -----
    ``spectra-seq`` goes phase by phase. It computes the base schedule of the phase and keeps the
    best (earliest phase end) of: (0) the base schedule as it is, started as early as the delay
    rule allows; (1) the base timelines re-assigned so that a switch gets the timeline holding
    the permutation it already has (run first, at no delay) and each switch ends with a
    permutation the next phase uses (so it may persist); (2) the base's permutations re-placed
    jointly: the share of a permutation that switches already hold is split over them at no
    delay, the rest is placed largest first onto the switch that is free earliest (a switch
    whose last configuration ended at least ``delta`` before the release starts at the release),
    then equalized; (3) like (2), after a decomposition that keeps the permutations the switches
    hold wherever they still cover at least half of their circuits with demand (consecutive
    MoE layers). A switch reconfigures as soon as it is idle, so delays hide in gaps and idle time.
    Candidate (3) costs a decomposition: after it loses, it is skipped for 1, 2, 4, ... 16 phases.
    When some phase has few permutations that no switch holds (pipeline sends), the whole
    iteration is also run with the last x switches dedicated to such phases (x in 1..12; they
    carry nothing else while such a phase is still to come, so they set up its permutation while
    idle), and the run that ends earliest is kept. Where candidate (3) was tried and two
    consecutive phases share a perfect matching of nonzeros (consecutive dense phases), one
    more whole run *carries*: each phase is decomposed around the held
    permutations and s - 1 permutations chosen for the next phase as well
    (:func:`ocsched.sequence.carry.carry`), which end the phase on their own switches and so
    persist into the next; kept if the iteration ends earlier.

    Never later than ``independent``: candidate (0) starts each configuration no later than
    ``independent`` does (by induction along each switch: the first start is at most
    ``R_k + delta``, the base's first start relative to the phase), so every phase ends no later
    than ``independent``'s, whatever the state the earlier phases left. That holds for the first
    run; the dedication and carry runs (which may end a phase later, for a better state) are
    kept only if the whole iteration ends earlier than it.

    On a fabric other than identical all-stop switches without failures, windows and failures
    are absolute times, so each phase's base schedule is computed from the phase's release
    (:mod:`ocsched.sequence.on_fabric`). ``independent`` places each phase from its release;
    ``spectra-seq`` keeps per phase the earliest-ending of ``independent``'s configurations of
    the phase (so it is never later), the base schedule from its own release, and that schedule
    with timelines moved between interchangeable switches to the one holding their first
    permutation, and, where the configurations the switches hold serve every entry of the
    phase, those held longer (no delay; hold times from one LP); each switch's timeline then
    starts as early as its fabric's rule and persistence allow (delays hidden in gaps and idle
    time, checked configuration by configuration). On identical one-port directed switches (any
    rate, either model) the uniform walk above also runs (all-stop, on the demands over the
    rate), and the earlier iteration is kept if it avoids the fabric's down windows and failed
    links. On bidirectional and multi-port switches (``base="spectra-ports"``) a configuration
    persists when it holds the same circuits.

    Examples
    --------
    Two identical phases: the permutation persists, so the second pays no delay.

    >>> from ocsched.iteration import Iteration, Phase
    >>> it = Iteration([Phase([[0, 1], [1, 0]]), Phase([[0, 1], [1, 0]], gap_before=0.2)])
    >>> ind = schedule_iteration(it, switches=1, delta=0.5, algorithm="independent")
    >>> seq = schedule_iteration(it, switches=1, delta=0.5)
    >>> ind.makespan, seq.makespan, seq.persisted
    (3.2, 2.7, 1)
    """
    if not isinstance(iteration, Iteration):
        raise InvalidInputError(f"`iteration` must be an ocsched.Iteration; got {type(iteration).__name__}")
    fab = as_fabric(switches, delta, fabric)
    fab.check_ports(iteration.n)
    check_choice(algorithm, "algorithm", ITERATION_SCHEDULERS)
    base = scheduler_name(base, "base")
    _check_base(base, fab, iteration.n)
    t0 = clock()
    fitted, modes = _fitted(iteration, predicted, fab, base)
    token = FITTED.set(fitted)
    try:
        tagged = ITERATION_SCHEDULERS[algorithm].run(iteration, fab, base, rng)
    finally:
        FITTED.reset(token)
    elapsed = clock() - t0
    if fab.is_uniform:
        bound = iteration_lower_bound(iteration, switches=fab.size, delta=fab.deltas[0])
    else:
        bound = fabric_iteration_lower_bound(iteration, fabric=fab)
    return IterationSchedule(
        ports=iteration.n,
        delta=max(fab.deltas),
        switches=tuple(tuple(c for _, c in sw) for sw in tagged),
        phase_of=tuple(tuple(k for k, _ in sw) for sw in tagged),
        gaps=iteration.gaps,
        names=iteration.names,
        algorithm=f"{algorithm}/{base}",
        lower_bound=bound,
        meta={
            "ocsched_version": __version__,
            "switches": fab.size,
            "seed": rng if isinstance(rng, int) and not isinstance(rng, bool) else None,
            "runtime_s": elapsed,
            **({"fit_modes": modes} if predicted is not None else {}),
        },
        fabric=None if fab.is_uniform else fab,
    )


def _fitted(
    iteration: Iteration, predicted: Iteration | None, fab: Fabric, base: str
) -> tuple[dict[bytes, tuple[tuple[Configuration, ...], ...]] | None, list[str]]:
    """Each phase's base configurations from its prediction's plan, fitted to it (the online mode)."""
    if predicted is None:
        return None, []
    if not isinstance(predicted, Iteration):
        raise InvalidInputError(f"`predicted` must be an ocsched.Iteration; got {type(predicted).__name__}")
    if len(predicted) != len(iteration) or predicted.n != iteration.n:
        raise InvalidInputError(
            f"`predicted` must have the iteration's {len(iteration)} phases on {iteration.n} ports; "
            f"got {len(predicted)} on {predicted.n}"
        )
    if not fab.is_uniform:
        raise InvalidInputError("`predicted` runs on identical all-stop switches without failures only")
    out: dict[bytes, tuple[tuple[Configuration, ...], ...]] = {}
    modes = []
    for guess, phase in zip(predicted.phases, iteration.phases, strict=True):
        fit = plan(guess.demand, fabric=fab, algorithm=base).fit(phase.demand)
        out.setdefault(demand_key(phase.demand), fit.switches)
        modes.append(str(fit.meta["online"]["mode"]))
    return out, modes
