"""The independent iteration scheduler: each phase's base schedule on its own, concatenated."""

from __future__ import annotations

from ocsched.fabric import Fabric
from ocsched.iteration import Iteration
from ocsched.model import Configuration
from ocsched.sequence._common import BaseSchedules, RngLike, Tagged


def independent(iteration: Iteration, fabric: Fabric, base: BaseSchedules) -> Tagged:
    """Each phase's base schedule shifted to start at its release: every delay paid inside the phase."""
    out: Tagged = [[] for _ in range(fabric.size)]
    end = 0.0
    for k, phase in enumerate(iteration.phases):
        release = end + phase.gap_before
        end = release
        for b, sw in enumerate(base(phase.demand)):
            for c in sw:
                conf = Configuration(release + c.start, c.duration, c.perm)
                out[b].append((k, conf))
                end = max(end, conf.end)
    return out


def run_independent(iteration: Iteration, fabric: Fabric, base: str, rng: RngLike) -> Tagged:
    return independent(iteration, fabric, BaseSchedules(base, fabric, rng))
