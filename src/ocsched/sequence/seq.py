"""The spectra-seq iteration scheduler: per-phase base schedules improved across phases."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ocsched.decompose import DECOMPOSERS
from ocsched.fabric import Fabric
from ocsched.iteration import Iteration
from ocsched.model import Configuration, Demand
from ocsched.sequence._common import BaseSchedules, Held, Pieces, RngLike, Tagged, perm_key, tagged_end
from ocsched.sequence.carry import can_carry, carry
from ocsched.sequence.layout import (
    Padding,
    TailCost,
    holders,
    lay_out_phase,
    merge,
    phase_end,
    relabel,
    reuse_cost,
)
from ocsched.sequence.placement import joint
from ocsched.timing import earliest_start


def reuse(
    demand: Demand,
    held: Held,
    method: str,
    delta: float,
    known: set[bytes],
) -> Pieces | None:
    """Decompose with the held permutations kept: they cover what they can, a decomposition the rest.

    For consecutive similar matrices (MoE layers whose routing drifts) the permutations the
    switches hold at the end of a phase carry much of the next one, at no delay.
    """
    out = carry(demand, None, held, method, delta, 0, known)
    return None if out is None else out[0]


class Seq:
    """spectra-seq's state while it walks through the phases (see :func:`schedule_iteration`)."""

    def __init__(
        self,
        iteration: Iteration,
        fabric: Fabric,
        base: BaseSchedules,
        method: str,
        spread: int | None = None,
        like: Seq | None = None,
        carrying: bool = False,
    ) -> None:
        self.phases = iteration.phases
        self.s, self.delta = fabric.size, fabric.deltas[0]
        self.base, self.method = base, method
        self.spread = spread  # forced dedication: pieces nobody holds go to this many switches
        self.few_loose = False  # some phase has few pieces that no switch holds
        # Plan what each switch ends a phase with for the next one (ocsched.sequence.carry).
        self.carrying = carrying
        self.carry_at: int | None = None  # the carry candidate's index among the current ones
        self.can_carry = False  # some phase tried reuse, and could carry a permutation into the next
        # The reuse candidate costs a decomposition: after it loses, skip it for 1, 2, 4, ... 16 phases.
        self.reuse_at: int | None = None  # its index among the current phase's candidates
        self.reuse_skip, self.reuse_backoff = 0, 1
        self.pad: Padding
        self.next_keys: list[set[bytes]]
        self.small: list[bool]
        self.later_few: list[bool]
        self.dedicated: set[int]
        self._future: list[set[bytes]] | None
        self._tail: dict[int, TailCost] = {}
        if like is not None:  # the same iteration and base: share what does not depend on `spread`
            self.pad, self.next_keys, self.small = like.pad, like.next_keys, like.small
            self.later_few, self.dedicated = like.later_few, set(range(self.s - (spread or 0), self.s))
            self._future = like._future
            return
        perms = [[c.perm for sw in base(p.demand) for c in sw] for p in self.phases]
        self.pad = Padding([q for ps in perms for q in ps])
        keys = [{perm_key(q) for q in ps} for ps in perms]
        self.next_keys = [*keys[1:], set()]
        self.small = [len(ps) <= 2 * self.s for ps in perms]
        # Whether a later phase has few permutations (a pipeline send): switches dedicated to such
        # phases (the last `spread` ones) then carry nothing else, so they never wait for a delay.
        few = [0 < len({perm_key(q) for q in ps}) <= self.s // 2 for ps in perms]
        self.later_few = [any(few[k + 1 :]) for k in range(len(perms))]
        self.dedicated = set(range(self.s - (spread or 0), self.s))
        self._future = None

    @property
    def future(self) -> list[set[bytes]]:
        """Per phase, the padded permutations later phases use (a switch holding one is kept for them)."""
        if self.spread is None:
            return [set() for _ in self.phases]
        if self._future is None:
            out: list[set[bytes]] = [set() for _ in self.phases]
            later: set[bytes] = set()
            for k in range(len(self.phases) - 1, -1, -1):
                out[k] = later
                later = later | {
                    perm_key(self.pad(c.perm)) for sw in self.base(self.phases[k].demand) for c in sw
                }
            self._future = out
        return self._future

    def following(self, k: int) -> set[bytes]:
        return self.next_keys[k]

    def tail_cost(self, k: int) -> TailCost | None:
        """What ending phase k with a permutation costs phase k+1 if kept there (None: last phase)."""
        if k + 1 >= len(self.phases):
            return None
        if k not in self._tail:
            self._tail = {k: reuse_cost(self.phases[k + 1].demand)}  # phases go in order: keep one
        return self._tail[k]

    def candidates(self, k: int, held: Held, release: float, full: bool) -> list[list[list[Configuration]]]:
        """Phase k's candidate layouts; candidate 0 is the base schedule as it is."""
        if full:
            self.reuse_at = self.carry_at = None
        delta, phase = self.delta, self.phases[k]
        switches = self.base(phase.demand)
        following = self.following(k)
        tail = self.tail_cost(k)
        ready = np.array(
            [max(0.0, earliest_start(None if h is None else h.end, delta) - release) for h in held]
        )
        plans = [[[(c.perm, c.duration) for c in sw] for sw in switches]]
        if full and self.carrying:
            carried = self.carry_candidate(k, held, ready, release)
            if carried is not None:  # against the base schedule only: the other candidates cost time
                self.carry_at = 1
                return [lay_out_phase(plans[0], held, release, delta, self.pad), carried]
        plans.append(relabel(switches, held, ready, following, delta, tail))
        pieces = merge(switches)
        future = self.future[k] if self.spread is not None else set()
        reserved = {b for b, h in enumerate(held) if h is not None and perm_key(h.perm) in future}
        # Dedicating a few switches to the pieces nobody holds lets the others keep theirs: worth
        # trying when there are few such pieces (pipeline sends between tensor-parallel all-reduces).
        loose = sum(not h for h in holders(pieces, held))
        if 0 < loose <= self.s // 2 and any(h is not None for h in held):
            self.few_loose = True
            if self.spread is not None:
                # Dedicate, unless spreading ends this phase more than a delay earlier: a better
                # state saves the next phases about one delay (a large phase such as the final
                # data-parallel all-reduce is worth all the switches).
                plan = joint(
                    pieces,
                    held,
                    ready,
                    delta,
                    following,
                    spread=self.spread,
                    reserved=reserved,
                    prefer=self.dedicated,
                    pack=True,
                    tail_cost=tail,
                )
                wide = joint(
                    pieces, held, ready, delta, following, reserved=reserved, pack=True, tail_cost=tail
                )
                narrow, spread = (lay_out_phase(p, held, release, delta, self.pad) for p in (plan, wide))
                if phase_end(spread, release) < phase_end(narrow, release) - delta:
                    return [spread]
                return [narrow]
        keep = reserved | self.dedicated if self.later_few[k] else reserved
        together = joint(
            pieces,
            held,
            ready,
            delta,
            following,
            reserved=keep,
            pack=len(pieces) <= 2 * self.s,
            tail_cost=tail,
        )
        if self.spread is not None and keep:
            return [lay_out_phase(together, held, release, delta, self.pad)]  # keep dedicated switches
        plans.append(together)
        # Keeping held permutations only pays where some switch's delay is not hidden already.
        if full and ready.any() and self.reuse_skip > 0:
            self.reuse_skip -= 1
        elif full and ready.any():
            if not self.can_carry and k + 1 < len(self.phases):
                self.can_carry = can_carry(phase.demand, self.phases[k + 1].demand)
            reused = reuse(phase.demand, held, self.method, delta, {perm_key(p) for p, _ in pieces})
            if reused is not None:
                self.reuse_at = len(plans)
                plans.append(joint(reused, held, ready, delta, following, tail_cost=tail))
        return [lay_out_phase(plan, held, release, delta, self.pad) for plan in plans]

    def carry_candidate(
        self, k: int, held: Held, ready: NDArray[np.float64], release: float
    ) -> list[list[Configuration]] | None:
        """The carry candidate: :func:`ocsched.sequence.carry.carry`, its tails last on their switches."""
        nxt = self.phases[k + 1].demand if k + 1 < len(self.phases) else None
        # s - 1, not s: with s carried in, a dense phase's other Delta - s pieces leave one switch
        # a configuration short, its spare delay mostly idle; with s - 1 the counts come out even
        # (16 MoE layers at 1 ms: 0.7997 of independent; with s 0.8037, or 0.8015 giving the
        # switch with the spare delay the two largest pieces).
        carried = carry(self.phases[k].demand, nxt, held, self.method, self.delta, self.s - 1)
        if carried is None:
            return None
        pieces, tails = carried
        plan = joint(pieces, held, ready, self.delta, set(), tails=tails)
        return lay_out_phase(plan, held, release, self.delta, self.pad)

    def step(
        self, k: int, held: Held, release: float, lookahead: bool
    ) -> tuple[list[list[Configuration]], float]:
        """Choose phase k's layout: earliest end, or with ``lookahead`` the earliest end of phase k+1."""
        cands = self.candidates(k, held, release, full=lookahead)
        ends = [phase_end(c, release) for c in cands]
        c = self.carry_at
        if lookahead and c is not None and k + 1 < len(self.phases) and ends[c] <= min(ends) + self.delta:
            # What it ends with saves the next phase about a delay; the run as a whole is kept
            # only if it ends earlier than the first (which is never later than independent).
            return cands[c], ends[c]
        # Any candidate ending no later than candidate 0 keeps the never-worse guarantee.
        allowed = [i for i, e in enumerate(ends) if e <= ends[0]] if lookahead else list(range(len(cands)))
        if lookahead:
            # A better state saves the next phase at most about one delay: look ahead among near-best only.
            top = min(ends[i] for i in allowed)
            allowed = [i for i in allowed if ends[i] <= top + self.delta]
        # Looking ahead pays for small phases (a few permutations that recur, like pipeline sends
        # between all-reduces); a phase of many permutations is better served by reuse.
        small = self.small[k]
        if not lookahead or not small or k + 1 >= len(self.phases) or len(allowed) == 1:
            i = min(allowed, key=lambda j: (ends[j], j))
            if lookahead:
                self.backoff(i)
            return cands[i], ends[i]
        gap = self.phases[k + 1].gap_before
        scores = {}
        for i in allowed:
            after = [sw[-1] if sw else h for sw, h in zip(cands[i], held, strict=True)]
            scores[i] = (self.step(k + 1, after, ends[i] + gap, lookahead=False)[1], ends[i], i)
        i = min(allowed, key=lambda j: scores[j])
        self.backoff(i)
        return cands[i], ends[i]

    def backoff(self, chosen: int) -> None:
        """Record whether the reuse candidate (if tried) was chosen."""
        if self.reuse_at is None:
            return
        if chosen == self.reuse_at:
            self.reuse_backoff = 1
        else:
            self.reuse_skip, self.reuse_backoff = self.reuse_backoff, min(2 * self.reuse_backoff, 16)

    def run(self) -> Tagged:
        out: Tagged = [[] for _ in range(self.s)]
        held: Held = [None] * self.s
        end = 0.0
        for k, phase in enumerate(self.phases):
            confs, end = self.step(k, held, end + phase.gap_before, lookahead=True)
            for b, sw in enumerate(confs):
                out[b].extend((k, c) for c in sw)
                if sw:
                    held[b] = sw[-1]
        return out


def run_seq(iteration: Iteration, fabric: Fabric, base: str, rng: RngLike) -> Tagged:
    method = base if base in DECOMPOSERS else "spectra"
    cached = BaseSchedules(base, fabric, rng)
    first = Seq(iteration, fabric, cached, method)
    best = first.run()
    if first.few_loose:
        # Dedication only pays over many phases, which a one-phase lookahead cannot see: run the
        # whole iteration with it forced, for a few numbers of dedicated switches, keep the best.
        best_end = tagged_end(best)
        for x in (1, 2, 3, 4, 6, 8, 12):
            if x < fabric.size:
                trial = Seq(iteration, fabric, cached, method, spread=x, like=first).run()
                if tagged_end(trial) < best_end * (1 - 1e-12):
                    best, best_end = trial, tagged_end(trial)
    if first.can_carry:
        # Consecutive dense phases: plan what each switch ends a phase with for the next (a whole
        # run: it pays only in the next phase, which a one-phase lookahead cannot see).
        trial = Seq(iteration, fabric, cached, method, carrying=True, like=first).run()
        if tagged_end(trial) < tagged_end(best) * (1 - 1e-12):
            best = trial
    return best
