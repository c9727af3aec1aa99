"""The iteration schedulers on any fabric: per-switch delays and rates, down windows, failed links, partial.

A fabric's down windows and link failures are absolute times, so a phase's base schedule depends
on when the phase starts: :class:`FabricBase` runs the base scheduler on the fabric seen from the
phase's release (:func:`seen_from`) and shifts the result back. ``independent`` places every
phase from its release that way. ``spectra-seq`` keeps, per phase, the earliest-ending of:

- ``independent``'s own configurations of the phase (run alongside): by induction the phase starts
  no later than there, so they are valid here too and the phase never ends later;
- the base schedule from this run's release;
- the same with each switch's timeline given, within a class of interchangeable switches (same
  delay, rate, down windows and failed links), to the switch that holds its first permutation, or
  (all-stop switches without windows or failures) re-ordered so the held permutation runs first
  and one the next phase uses runs last;

each switch's timeline moved earlier as a block as far as the switch's history allows (the delay
hidden in the gap or idle time; no delay at all where the first configuration persists), kept only
where :func:`~ocsched.sequence.rules.iteration_switch_violations` finds nothing wrong, else left
where it was. On identical switches (any rate, either model) the uniform ``spectra-seq``
(re-placement, reuse, dedication and carry runs) also runs, on the demands over the rate and
all-stop (valid under the partial model too), and the earlier iteration is kept if it avoids the
fabric's down windows and failed links (:func:`avoids`). On switches that differ, those runs do
not apply (they assume one delay and one rate): the per-phase candidates above are what is left.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from ocsched.assign.hold import hold_lengths
from ocsched.fabric import Fabric, LinkDown, SwitchDown
from ocsched.iteration import Iteration, Phase
from ocsched.model import Configuration, Demand
from ocsched.schedulers import SCHEDULERS
from ocsched.sequence._common import RngLike, Tagged, demand_key, tagged_end
from ocsched.sequence.rules import iteration_switch_violations
from ocsched.timing import reconfiguration

__all__ = ["FabricBase", "independent_on", "run_independent_on", "run_seq_on", "seen_from", "uniform_twin"]

Block = tuple[Configuration, ...]  # one switch's configurations of one phase, absolute times


def seen_from(fabric: Fabric, t0: float) -> Fabric:
    """Return ``fabric`` with time 0 moved to ``t0``: windows over before it dropped, failures from 0.

    >>> from ocsched.fabric import Switch
    >>> f = Fabric((Switch(0.1), Switch(0.1)), (SwitchDown(1, 2.0, 3.0),), (LinkDown(0, 1, 1.0),))
    >>> g = seen_from(f, 2.5)
    >>> g.down, g.failed_links
    ((SwitchDown(switch=1, start=0.0, end=0.5),), (LinkDown(port=0, switch=1, start=0.0),))
    """
    if t0 == 0.0 or not (fabric.down or fabric.failed_links):
        return fabric
    down = []
    for d in fabric.down:
        if d.end <= t0:
            continue  # over: the base's first configurations pay their delay after t0 anyway
        start = max(0.0, d.start - t0)
        end = d.end - t0 if math.isfinite(d.end) else math.inf
        down.append(SwitchDown(d.switch, start, max(end, float(np.nextafter(start, math.inf)))))
    links = [LinkDown(x.port, x.switch, max(0.0, x.start - t0)) for x in fabric.failed_links]
    return Fabric(fabric.switches, tuple(down), tuple(links), model=fabric.model)


class FabricBase:
    """The base scheduler's schedule of a phase started at ``t0`` on the fabric, in absolute times.

    Cached by demand and by the fabric seen from ``t0`` (a fabric without windows or later
    failures looks the same from every release), unless ``rng`` is a Generator.
    """

    def __init__(self, base: str, fabric: Fabric, rng: RngLike) -> None:
        self.run = SCHEDULERS[base].run
        self.fabric = fabric
        self.rng = rng
        self.cacheable = not isinstance(rng, np.random.Generator)
        self.cache: dict[tuple[bytes, Fabric], tuple[Block, ...]] = {}

    def __call__(self, demand: Demand, t0: float) -> tuple[Block, ...]:
        seen = seen_from(self.fabric, t0)
        key = (demand_key(demand), seen)
        if self.cacheable and key in self.cache:
            rel = self.cache[key]
        else:
            rel = self.run(demand, seen, self.rng).switches
            if self.cacheable:
                self.cache[key] = rel
        if t0 == 0.0:
            return rel
        return tuple(tuple(c.at(t0 + c.start) for c in sw) for sw in rel)


def independent_on(iteration: Iteration, base: FabricBase) -> Tagged:
    """Each phase's base schedule from its release on the fabric: every delay paid inside the phase."""
    out: Tagged = [[] for _ in range(base.fabric.size)]
    end = 0.0
    for k, phase in enumerate(iteration.phases):
        release = end + phase.gap_before
        end = release
        for b, sw in enumerate(base(phase.demand, release)):
            for c in sw:
                out[b].append((k, c))
                end = max(end, c.end)
    return out


def run_independent_on(iteration: Iteration, fabric: Fabric, base: str, rng: RngLike) -> Tagged:
    return independent_on(iteration, FabricBase(base, fabric, rng))


@dataclass
class _State:
    """What one switch's rule needs of its history: the last configuration and each port's last user."""

    delta: float
    model: str
    windows: list[tuple[float, float]]
    failed: dict[int, float]
    last: Configuration | None = None
    users: dict[tuple[int, int], tuple[int, Configuration]] = field(default_factory=dict)
    count: int = 0
    #: The switch's ports per endpoint and whether its circuits are bidirectional.
    ports: int = 1
    both: bool = False
    #: Partial on a multi-port or bidirectional switch: every configuration committed, in order.
    done: list[Configuration] = field(default_factory=list)

    @property
    def pooled(self) -> bool:
        """Partial with ports as pools (:mod:`ocsched.timing.pools`): a port's last user is not enough."""
        return reconfiguration(self.model).keeps_circuits and (self.ports > 1 or self.both)

    def history(self, after: float) -> list[Configuration]:
        """The configurations the rule looks back at from ``after + delta`` on, in time order.

        All-stop: the last one. Partial: the last user of each port that ends after ``after``
        (a port free since then constrains nothing that starts ``delta`` later), and the last one;
        with ports as pools, every configuration that ends after ``after`` (a suffix: the others
        left their ports dark long enough for anything starting ``delta`` later).
        """
        if self.pooled:  # the ends grow in commit order: read back from the last
            recent = list(itertools.takewhile(lambda c: c.end > after, reversed(self.done)))[::-1]
            return recent or ([] if self.last is None else [self.last])
        if not reconfiguration(self.model).keeps_circuits or not self.users:
            return [] if self.last is None else [self.last]
        seen = {id(c): (k, c) for k, c in self.users.values() if c.end > after}
        if self.last is not None:
            seen[id(self.last)] = (self.count, self.last)  # a configuration without circuits, too
        return [c for _, c in sorted(seen.values(), key=lambda x: x[0])]

    def commit(self, block: Block) -> None:
        for c in block:
            self.count += 1
            if self.pooled:
                self.done.append(c)
            elif reconfiguration(self.model).keeps_circuits:
                ins, outs = c.circuit_arrays()
                for i, j in zip(ins.tolist(), outs.tolist(), strict=True):
                    self.users[(0, i)] = self.users[(1, j)] = (self.count, c)
            self.last = c

    def earliest(self, first: Configuration, release: float) -> list[float]:
        """Starts to try for a block whose first configuration is ``first``, earliest first."""
        prev = self.last
        # After a down window the switch is dark again: a delay after its end.
        out = {max(release, e + self.delta) for _, e in self.windows if math.isfinite(e) and e <= first.start}
        if prev is None:
            return sorted(out | {max(release, self.delta)})
        out.add(max(release, prev.end + self.delta))
        if not reconfiguration(self.model).keeps_circuits:
            if prev.same_circuits(first):
                out.add(max(release, prev.end))  # persists
        elif not self.pooled:  # partial: new circuits wait a delay after their ports' last use
            held = {(i, j) for i, j in zip(*prev.circuit_arrays(), strict=True)}
            t = max(release, prev.end)
            for i, j in zip(*first.circuit_arrays(), strict=True):
                if (int(i), int(j)) not in held:
                    for key in ((0, int(i)), (1, int(j))):
                        if key in self.users:
                            t = max(t, self.users[key][1].end + self.delta)
            out.add(t)
        return sorted(out)

    def ok(self, block: Block) -> bool:
        """True if ``block`` may follow this history (the iteration rule, no tolerance granted).

        ``block`` is valid on its own from the release on (a base schedule from there, or one
        moved as a whole), so without down windows only what the history constrains is
        checked: under all-stop its first configuration (the others keep their delays within
        it), under partial the configurations starting less than a delay after the last end.
        """
        if not block:
            return True
        after = -math.inf
        if not self.windows:
            if not reconfiguration(self.model).keeps_circuits:
                block = block[:1]
            else:
                horizon = (0.0 if self.last is None else self.last.end) + self.delta
                cut = next((i for i, c in enumerate(block) if c.start >= horizon), len(block))
                block = block[: max(cut, 1)]
                after = block[0].start - self.delta
        past = self.history(after)
        found = iteration_switch_violations(
            [*past, *block],
            self.delta,
            model=self.model,
            windows=self.windows,
            failed_ports=self.failed,
            rtol=0.0,
            ports_per_endpoint=self.ports,
            bidirectional=self.both,
        )
        return not any(k >= len(past) for k, _, _ in found)

    def settle(self, block: Block, release: float) -> Block | None:
        """``block`` moved as early as the history allows (as a whole), or as is; None if neither is valid."""
        if not block:
            return block
        first = block[0].start
        for t in self.earliest(block[0], release):
            if t < first:
                moved = tuple(c.at(t + (c.start - first)) for c in block)
                if moved[0].start < first and self.ok(moved):
                    return moved
        return block if self.ok(block) else None


def _classes(fabric: Fabric) -> list[list[int]]:
    """Switches that are interchangeable: same delay, rate, down windows and failed links."""
    groups: dict[object, list[int]] = {}
    for b in range(fabric.size):
        key = (fabric.switches[b], tuple(fabric.windows(b)), tuple(sorted(fabric.failed_ports(b).items())))
        groups.setdefault(key, []).append(b)
    return [g for g in groups.values() if len(g) > 1]


def _back_to_back(block: Sequence[Configuration], order: Sequence[int], delta: float) -> Block:
    """The block's configurations in ``order``, from its first start, each a delay after the previous."""
    out = []
    t = block[0].start
    for i in order:
        c = block[i]
        out.append(c.at(t))
        t = t + c.duration + delta
    return tuple(out)


def _relabelled(
    blocks: tuple[Block, ...], states: list[_State], classes: list[list[int]], following: set[bytes]
) -> tuple[Block, ...] | None:
    """Blocks moved within classes to the switch holding their first permutation (re-ordered where simple)."""
    out = list(blocks)
    changed = False
    for group in classes:
        free = [b for b in group if blocks[b]]
        plan: dict[int, Block] = {}
        for b in group:
            h = states[b].last
            if h is None:
                continue
            key = h.circuit_key()
            match = next((j for j in free if blocks[j][0].circuit_key() == key), None)
            if match is None and _simple(states[b]):
                match = next((j for j in free if any(c.circuit_key() == key for c in blocks[j])), None)
            if match is not None:
                free.remove(match)
                plan[b] = blocks[match]
        rest = [b for b in group if b not in plan]
        # The longest remaining timelines to the switches that can start earliest.
        free.sort(key=lambda j: -blocks[j][-1].end)
        rest.sort(key=lambda b: _free_at(states[b]))
        for b, j in zip(rest, free, strict=False):
            plan[b] = blocks[j]
        for b in group:
            new = plan.get(b, ())
            if _simple(states[b]) and len(new) > 1:
                new = _reordered(new, states[b], following)
            if new is not blocks[b]:
                changed = True
            out[b] = new
    return tuple(out) if changed else None


def _free_at(state: _State) -> float:
    return -math.inf if state.last is None else state.last.end


def _simple(state: _State) -> bool:
    """All-stop, no down window, no failed link: any order of a block laid back to back is valid."""
    return not reconfiguration(state.model).keeps_circuits and not state.windows and not state.failed


def _reordered(block: Block, state: _State, following: set[bytes]) -> Block:
    """The held permutation first (it persists), one the next phase uses last, the rest largest first."""
    idx = sorted(range(len(block)), key=lambda i: -block[i].duration)
    held = None if state.last is None else state.last.circuit_key()
    head = [i for i in idx if block[i].circuit_key() == held][:1]
    idx = [i for i in idx if i not in head]
    tail = [i for i in idx if block[i].circuit_key() in following][:1]
    idx = [i for i in idx if i not in tail]
    return _back_to_back(block, head + idx + tail, state.delta)


def _held(
    demand: Demand, states: list[_State], release: float, fabric: Fabric, before: float
) -> tuple[Block, ...] | None:
    """Every switch holding the configuration it ends the previous phase with, long enough to
    serve the phase (:func:`~ocsched.assign.hold.hold_lengths`; None where those circuits miss
    an entry, or cannot end before ``before``). Each hold persists (no delay): where many
    circuits per endpoint cover every pair (a TPU pod's 96 ports per cube), consecutive phases
    then run on the same circuits.
    """
    holders = [b for b, st in enumerate(states) if st.last is not None]
    confs = [cast(Configuration, states[b].last) for b in holders]
    starts = np.array([max(release, c.end) for c in confs])
    hold = hold_lengths(demand, confs, [fabric.switches[b] for b in holders], starts, before=before)
    if hold is None:
        return None
    out: list[Block] = [() for _ in states]
    for b, c, t, x in zip(holders, confs, starts.tolist(), hold.tolist(), strict=True):
        if x > 0:
            out[b] = (c.at(t, x),)
    return tuple(out)


def _settled(
    states: list[_State], blocks: tuple[Block, ...], release: float
) -> tuple[tuple[Block, ...], float] | None:
    """Each switch's block settled after its history, and the phase's end; None if one cannot take it."""
    settled = [states[b].settle(blk, release) for b, blk in enumerate(blocks)]
    if any(s is None for s in settled):
        return None
    done = tuple(s for s in settled if s is not None)
    return done, max([release, *(c.end for blk in done for c in blk)])


def seq_on(iteration: Iteration, fabric: Fabric, base: FabricBase) -> Tagged:
    """spectra-seq's fabric path (see the module docstring); never later than :func:`independent_on`."""
    ind = independent_on(iteration, base)
    per_phase: list[list[list[Configuration]]] = [[[] for _ in ind] for _ in iteration.phases]
    for b, sw in enumerate(ind):
        for k, c in sw:
            per_phase[k][b].append(c)
    ind_blocks = [tuple(tuple(sw) for sw in phase) for phase in per_phase]
    states = [
        _State(
            fabric.deltas[b],
            fabric.model,
            fabric.windows(b),
            fabric.failed_ports(b),
            ports=fabric.switches[b].ports_per_endpoint,
            both=fabric.switches[b].bidirectional,
        )
        for b in range(fabric.size)
    ]
    classes = _classes(fabric)
    out: Tagged = [[] for _ in range(fabric.size)]
    end = 0.0
    phases = iteration.phases
    for k, phase in enumerate(phases):
        release = end + phase.gap_before
        own = base(phase.demand, release)
        following: set[bytes] = set()
        if k + 1 < len(phases) and any(_simple(st) for st in states) and seen_from(fabric, release) == fabric:
            # What the next phase's base uses (the same from any release here, and cached for it):
            # which permutation to end with, for ordering only.
            following = {c.circuit_key() for sw in base(phases[k + 1].demand, release) for c in sw}
        options = [own]
        moved = _relabelled(own, states, classes, following) if classes else None
        if moved is not None:
            options.append(moved)
        found = [_settled(states, blocks, release) for blocks in options]
        last = _settled(states, ind_blocks[k], release)
        # The hold is chosen (options in this order, the first earliest) only if it ends before
        # the candidates above and no later than independent's: its LP is skipped otherwise.
        top = min((x[1] for x in found if x is not None), default=math.inf)
        held = _held(
            phase.demand,
            states,
            release,
            fabric,
            min(top, math.nextafter(last[1], math.inf)) if last else top,
        )
        if held is not None:
            found.append(_settled(states, held, release))
        found.append(last)
        best: tuple[Block, ...] | None = None
        best_end = math.inf
        for x in found:
            if x is not None and x[1] < best_end:
                best, best_end = x
        if best is None:
            # Not expected: independent's configurations of the phase start after its release,
            # no earlier than this run's, so they follow any history this run left; kept as they are.
            best, best_end = ind_blocks[k], max([release, *(c.end for sw in ind_blocks[k] for c in sw)])
        for b, blk in enumerate(best):
            states[b].commit(blk)
            out[b].extend((k, c) for c in blk)
        end = best_end
    return out


def uniform_twin(fabric: Fabric) -> tuple[Fabric, float] | None:
    """``(Fabric.uniform(s, delta), rate)`` for identical one-port directed switches (any model), else None.

    Without down windows and failed links a schedule valid on the twin for the demands over
    ``rate`` is valid on the fabric: each configuration serves ``rate`` times as much, and an
    all-stop schedule is a partial one. With them it is valid where it avoids them
    (:func:`avoids`).
    """
    if len(set(fabric.switches)) != 1 or not fabric.switches[0].is_plain:
        return None  # differing switches, or b-matchings the uniform walk does not know
    sw = fabric.switches[0]
    return Fabric.uniform(fabric.size, sw.delta), sw.rate


def avoids(tagged: Tagged, fabric: Fabric) -> bool:
    """True if an all-stop schedule of the twin breaks none of the fabric's windows and failed links.

    The twin's rule with the fabric's down windows (none overlapped, a delay after each) and
    failed links (none used once failed); all-stop, which implies the partial rule, and serving
    (durations times the same rate) is unchanged.
    """
    for b, sw in enumerate(tagged):
        windows, failed = fabric.windows(b), fabric.failed_ports(b)
        if not (windows or failed):
            continue
        confs = [c for _, c in sw]
        delta = fabric.deltas[b]
        if iteration_switch_violations(confs, delta, windows=windows, failed_ports=failed, rtol=0.0):
            return False
    return True


def _over_rate(iteration: Iteration, rate: float) -> Iteration:
    if rate == 1.0:
        return iteration
    return Iteration(Phase(p.demand.scaled(1.0 / rate), p.gap_before, p.name) for p in iteration.phases)


def run_seq_on(iteration: Iteration, fabric: Fabric, base: str, rng: RngLike) -> Tagged:
    """spectra-seq on a fabric: :func:`seq_on`, or the uniform run on the twin if that ends earlier."""
    from ocsched.sequence.seq import run_seq  # the uniform walk; it does not know fabrics

    best = seq_on(iteration, fabric, FabricBase(base, fabric, rng))
    twin = uniform_twin(fabric)
    if twin is not None and not SCHEDULERS[base].requires:
        uni, rate = twin
        trial = run_seq(_over_rate(iteration, rate), uni, base, rng)
        if tagged_end(trial) < tagged_end(best) and avoids(trial, fabric):
            best = trial
    return best
