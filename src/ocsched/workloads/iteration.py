"""Training iterations: sequences of communication phases separated by compute gaps.

Three generators, each returning an :class:`ocsched.iteration.Iteration` in seconds (bytes at
``link_gbps`` per link, compute from a FLOP model at ``tflops`` per GPU), reachable by name
through :data:`ITERATION_WORKLOADS` and :func:`generate_iteration`:

- :func:`gpt_iteration`: one GPT training iteration under TP x PP x DP, GPipe schedule;
- :func:`moe_iteration`: per MoE layer, dispatch then combine, routing drifting between layers;
- :func:`coflow_sequence`: the Facebook trace's coflows in arrival order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from ocsched._checks import check_choice, check_int, check_number
from ocsched._types import FloatArray
from ocsched.errors import InvalidInputError
from ocsched.iteration import Iteration, Phase
from ocsched.workloads._common import _UNSET, call_generator, renamed
from ocsched.workloads.coflow import COFLOW_OPTIONS, Trace, coflow_matrix, packaged_trace
from ocsched.workloads.gpt import GPT_OPTIONS
from ocsched.workloads.gpt import PRESETS as GPT_PRESETS
from ocsched.workloads.moe import MOE_OPTIONS, POPULARITIES, calibrate, moe_shape
from ocsched.workloads.options import Option, with_defaults

__all__ = [
    "ITERATION_WORKLOADS",
    "IterationWorkload",
    "coflow_sequence",
    "generate_iteration",
    "gpt_iteration",
    "iteration_workloads",
    "moe_iteration",
]


def _seconds(matrix: FloatArray, link_gbps: float) -> FloatArray:
    return matrix * 8.0 / (link_gbps * 1e9)


def _build(
    phases: list[tuple[str, float, FloatArray]], gaps: float | Sequence[float] | None, link_gbps: float
) -> Iteration:
    """Phases ``(name, modelled gap, bytes)``; ``gaps`` replaces the modelled gaps (one or one each)."""
    if gaps is not None:
        if isinstance(gaps, bool | int | float):
            values = [check_number(gaps, "gaps")] * len(phases)  # check_number refuses a bool
        else:
            values = [check_number(g, "gaps") for g in gaps]
            if len(values) != len(phases):
                raise InvalidInputError(
                    f"`gaps` must have one entry per phase ({len(phases)}); got {len(values)}"
                )
        phases = [(n, g, m) for (n, _, m), g in zip(phases, values, strict=True)]
    return Iteration(Phase(_seconds(m, link_gbps), g, n) for n, g, m in phases)


def gpt_iteration(
    *,
    preset: str = "gpt3-1.3b",
    tp: int = 8,
    pp: int = 4,
    dp: int = 4,
    hidden: int | None = None,
    layers: int | None = None,
    seq_len: int | None = None,
    vocab: int | None = None,
    micro_batch: int = 1,
    micro_batches: int = 8,
    param_bytes: int = 2,
    tflops: float = 100.0,
    link_gbps: float = 100.0,
    gaps: float | Sequence[float] | None = None,
) -> Iteration:
    """Return the phases of one GPT training iteration under TP x PP x DP, GPipe schedule.

    GPUs are numbered as in :func:`ocsched.workloads.gpt.gpt` (``g(k, r, q) = k dp tp + r tp + q``),
    volumes follow the same Megatron formulas, and the phases of the iteration add up to its
    matrix. The pipeline runs GPipe in lockstep: forward slots ``tau = 0 .. m + pp - 2``, stage k
    working on micro-batch ``tau - k`` when ``0 <= tau - k < m``; then backward slots, stage k on
    micro-batch ``tau - (pp - 1 - k)``. In each slot, for each of the stage's ``L / pp`` layers:

    - forward: attention compute, TP all-reduce (phase ``F<tau>.L<j>.attn``), MLP compute, TP
      all-reduce (``F<tau>.L<j>.mlp``); backward: the same in reverse order at twice the compute;
    - then the activations (forward) or their gradients (backward) go to the next stage
      (``F<tau>.send`` / ``B<tau>.send``, no gap).

    Every active stage of a slot does the same thing at once, so one phase holds all their TP
    rings (``2 (t-1)/t A`` bytes from each rank to its ring successor, ``A = b S h e``) or all their
    sends. The iteration ends with the data-parallel gradient all-reduce and the embedding
    synchronisation (``dp-allreduce``). Phases without traffic (``tp = 1``) are left out and
    their compute joins the next gap.

    Compute gaps come from a FLOP model (unless ``gaps`` is given): per layer and micro-batch, a
    TP rank does ``(8 h^2 b S + 4 b S^2 h) / t`` FLOPs of attention and ``16 h^2 b S / t`` of MLP
    forward, twice that backward, at ``tflops`` TFLOP/s.

    Parameters
    ----------
    preset, tp, pp, dp, hidden, layers, seq_len, vocab, micro_batch, micro_batches, param_bytes
        As for :func:`ocsched.workloads.gpt.gpt`.
    tflops : float
        Sustained TFLOP/s per GPU for the compute gaps.
    link_gbps : float
        Link rate in Gb/s: bytes become seconds at this rate.
    gaps : float or sequence of float, optional
        Instead of the FLOP model: one gap (seconds) for every phase, or one per phase.

    Returns
    -------
    Iteration
        Demands in seconds at one link's line rate, gaps in seconds.

    Examples
    --------
    >>> it = gpt_iteration(preset="gpt3-125m", tp=2, pp=2, dp=2, micro_batches=2)
    >>> it.n, len(it), it.names[:3], it.names[-1]
    (8, 77, ('F0.L0.attn', 'F0.L0.mlp', 'F0.L1.attn'), 'dp-allreduce')
    """
    check_choice(preset, "preset", GPT_PRESETS)
    shape = dict(GPT_PRESETS[preset])
    for key, value in (("hidden", hidden), ("layers", layers), ("seq_len", seq_len), ("vocab", vocab)):
        if value is not None:
            shape[key] = check_int(value, key)
    t, p, d = check_int(tp, "tp"), check_int(pp, "pp"), check_int(dp, "dp")
    b, m, e = (
        check_int(micro_batch, "micro_batch"),
        check_int(micro_batches, "micro_batches"),
        check_int(param_bytes, "param_bytes"),
    )
    rate = check_number(tflops, "tflops", low=0.0, closed=False) * 1e12
    gbps = check_number(link_gbps, "link_gbps", low=0.0, closed=False)
    h, n_layers, s, v = shape["hidden"], shape["layers"], shape["seq_len"], shape["vocab"]
    if n_layers % p:
        raise InvalidInputError(f"`pp` must divide `layers` = {n_layers}; got pp = {p}")
    per_stage = n_layers // p
    act = float(b * s * h * e)
    n = p * d * t
    attn = (8.0 * h * h * b * s + 4.0 * b * s * s * h) / t / rate
    mlp = 16.0 * h * h * b * s / t / rate

    def g(k: int, r: int, q: int) -> int:
        return k * (d * t) + r * t + q

    def tp_ring(stages: list[int]) -> FloatArray:
        out = np.zeros((n, n))
        if t > 1:
            for k in stages:
                for r in range(d):
                    for q in range(t):
                        out[g(k, r, q), g(k, r, (q + 1) % t)] = 2.0 * (t - 1) / t * act
        return out

    def sends(pairs: list[tuple[int, int]]) -> FloatArray:
        out = np.zeros((n, n))
        for k, k2 in pairs:
            for r in range(d):
                for q in range(t):
                    out[g(k, r, q), g(k2, r, q)] = act
        return out

    phases: list[tuple[str, float, FloatArray]] = []
    pending = 0.0

    def emit(name: str, compute: float, matrix: FloatArray) -> None:
        nonlocal pending
        pending += compute
        if matrix.any():
            phases.append((name, pending, matrix))
            pending = 0.0

    slots = m + p - 1
    for tau in range(slots):
        active = [k for k in range(p) if 0 <= tau - k < m]
        ring = tp_ring(active)
        for j in range(per_stage):
            emit(f"F{tau}.L{j}.attn", attn, ring)
            emit(f"F{tau}.L{j}.mlp", mlp, ring)
        emit(f"F{tau}.send", 0.0, sends([(k, k + 1) for k in active if k + 1 < p]))
    for tau in range(slots):
        active = [k for k in range(p) if 0 <= tau - (p - 1 - k) < m]
        ring = tp_ring(active)
        for j in reversed(range(per_stage)):
            emit(f"B{tau}.L{j}.mlp", 2 * mlp, ring)
            emit(f"B{tau}.L{j}.attn", 2 * attn, ring)
        emit(f"B{tau}.send", 0.0, sends([(k, k - 1) for k in active if k > 0]))
    final = np.zeros((n, n))
    for k in range(p):
        params = per_stage * (12.0 * h * h + 13.0 * h) / t
        if k == 0:
            params += v * h / t + s * h
        if k == p - 1:
            params += 2.0 * h + (v * h / t if p > 1 else 0.0)
        for r in range(d):
            for q in range(t):
                i = g(k, r, q)
                if d > 1:
                    final[i, g(k, (r + 1) % d, q)] += 2.0 * (d - 1) / d * params * e
                if k == 0 and p > 1:
                    final[i, g(p - 1, r, q)] += v * h * e / t
                    final[g(p - 1, r, q), i] += v * h * e / t
    emit("dp-allreduce", 0.0, final)
    if pending > 0 or not phases:
        phases.append(("compute", pending, np.zeros((n, n))))
    return _build(phases, gaps, gbps)


def _popularity(
    gen: np.random.Generator, family: str, param: float, sources: int, experts: int
) -> FloatArray:
    """One popularity vector per source, drawn as :func:`ocsched.workloads.moe.moe` draws them."""
    if family == "uniform":
        return np.full((sources, experts), 1.0 / experts)
    if family == "zipf":
        base = np.arange(1, experts + 1, dtype=np.float64) ** (-param)
        base /= base.sum()
        pop = np.zeros((sources, experts))
        for row in range(sources):
            pop[row, gen.permutation(experts)] = base
        return pop
    return np.asarray(gen.dirichlet(np.full(experts, param), size=sources), dtype=np.float64)


def moe_iteration(
    *,
    preset: str = "olmoe-1b-7b",
    gpus: int = 64,
    layers: int = 16,
    experts: int | None = None,
    top_k: int | None = None,
    hidden: int | None = None,
    tokens: int = 4096,
    bytes_per_element: int = 2,
    popularity: str = "zipf",
    gini: float = 0.25,
    drift: float = 0.2,
    expert_ffn: int = 1024,
    seq_len: int = 4096,
    tflops: float = 100.0,
    link_gbps: float = 100.0,
    gaps: float | Sequence[float] | None = None,
    rng: np.random.Generator | int | None = None,
) -> Iteration:
    """Return the all-to-all phases of a MoE model's forward pass: per layer, dispatch then combine.

    Routing is sampled as in :func:`ocsched.workloads.moe.moe` (experts in contiguous blocks
    over the GPUs, ``tokens`` per GPU, ``top_k`` slots each, multinomial counts). Layer 0's
    popularity ``p_0`` is drawn as there; layer l's is ``(1 - drift) p_{l-1} + drift q_l`` with
    ``q_l`` a fresh draw, so consecutive layers route alike but not identically (``drift=0``: one
    popularity for all layers, counts still resampled; ``drift=1``: independent layers). The
    combine of a layer is the transpose of its dispatch.

    Gaps (FLOP model, unless ``gaps`` is given): before each dispatch, the attention block,
    ``T (8 h^2 + 4 seq_len h)`` FLOPs; before each combine, the expert compute of the busiest
    GPU, ``6 h expert_ffn`` FLOPs per token it receives (SwiGLU experts); at ``tflops`` per GPU.

    Parameters
    ----------
    preset, experts, top_k, hidden, tokens, bytes_per_element, popularity, gini
        As for :func:`ocsched.workloads.moe.moe`.
    gpus : int
        Number of GPUs G.
    layers : int
        Number of MoE layers (two phases each).
    drift : float
        In [0, 1]: how far each layer's popularity moves from the previous one.
    expert_ffn : int
        Intermediate size of an expert.
    seq_len : int
        Context length for the attention FLOPs.
    tflops : float
        Sustained TFLOP/s per GPU.
    link_gbps : float
        Link rate in Gb/s.
    gaps : float or sequence of float, optional
        Instead of the FLOP model: one gap for every phase (e.g. 0), or one per phase.
    rng : Generator, int or None
        Source of randomness.

    Returns
    -------
    Iteration
        ``2 * layers`` phases ``L<l>.dispatch``, ``L<l>.combine``; seconds.

    Examples
    --------
    >>> it = moe_iteration(gpus=8, layers=2, rng=0)
    >>> len(it), it.names, it.n
    (4, ('L0.dispatch', 'L0.combine', 'L1.dispatch', 'L1.combine'), 8)
    >>> d = it.phases[0].demand.to_dense()
    >>> bool(np.allclose(it.phases[1].demand.to_dense(), d.T))
    True
    """
    g, n_exp, k, h = moe_shape(preset, gpus, experts, top_k, hidden)
    n_layers = check_int(layers, "layers")
    t = check_int(tokens, "tokens")
    e = check_int(bytes_per_element, "bytes_per_element")
    fam = check_choice(popularity, "popularity", POPULARITIES)
    mix = check_number(drift, "drift", high=1.0)
    ffn, ctx = check_int(expert_ffn, "expert_ffn"), check_int(seq_len, "seq_len")
    rate = check_number(tflops, "tflops", low=0.0, closed=False) * 1e12
    gbps = check_number(link_gbps, "link_gbps", low=0.0, closed=False)
    param = 0.0
    if fam != "uniform" and n_exp > 1:
        param = calibrate(gini, experts=n_exp, popularity=fam)
    gen = np.random.default_rng(rng)
    owner = (np.arange(n_exp) * g) // n_exp
    to_gpu = (owner[:, None] == np.arange(g)).astype(np.float64)
    attention = t * (8.0 * h * h + 4.0 * ctx * h) / rate
    phases: list[tuple[str, float, FloatArray]] = []
    pop = _popularity(gen, fam, param, g, n_exp)
    for layer in range(n_layers):
        if layer:
            pop = (1.0 - mix) * pop + mix * _popularity(gen, fam, param, g, n_exp)
        counts = gen.multinomial(t * k, pop / pop.sum(axis=1, keepdims=True)).astype(np.float64)
        per_gpu = counts @ to_gpu  # tokens source i sends to GPU j (local ones included)
        expert = float(per_gpu.sum(axis=0).max()) * 6.0 * h * ffn / rate
        np.fill_diagonal(per_gpu, 0.0)
        dispatch = per_gpu * float(h * e)
        phases.append((f"L{layer}.dispatch", attention, dispatch))
        phases.append((f"L{layer}.combine", expert, dispatch.T.copy()))
    return _build(phases, gaps, gbps)


def coflow_sequence(
    *,
    trace: Trace | None = None,
    count: int = 20,
    start: int = 0,
    link_gbps: float = 1.0,
) -> Iteration:
    """Return ``count`` coflows of a trace in arrival order, each a phase, gaps from the arrivals.

    Coflows are sorted by arrival time (ties by id); the ``start``-th and the ``count - 1`` after
    it become phases (rack-to-rack bytes as :func:`ocsched.workloads.coflow.coflow_matrix`),
    with ``gap_before`` the time since the previous coflow's arrival (0 for the first).
    Coflows that are rack-local only carry no traffic: they are skipped and their gap joins the
    next one.

    Parameters
    ----------
    trace : Trace, optional
        A parsed trace (default: the packaged FB2010 trace, 150 ports).
    count : int
        Number of coflows.
    start : int
        Index of the first coflow in arrival order.
    link_gbps : float
        Link rate in Gb/s (the trace's racks had 1 Gb/s uplinks).

    Returns
    -------
    Iteration

    Examples
    --------
    >>> it = coflow_sequence(count=3)
    >>> it.n, len(it) <= 3, it.gaps[0]
    (150, True, 0.0)
    """
    tr = packaged_trace() if trace is None else trace
    c = check_int(count, "count")
    first = check_int(start, "start", minimum=0)
    gbps = check_number(link_gbps, "link_gbps", low=0.0, closed=False)
    ordered = sorted(tr.coflows, key=lambda f: (f.arrival_ms, f.id))
    if first + c > len(ordered):
        raise InvalidInputError(
            f"`start` + `count` must be at most {len(ordered)} (the trace's coflows); got {first + c}"
        )
    phases: list[tuple[str, float, FloatArray]] = []
    pending, prev = 0.0, ordered[first].arrival_ms
    for f in ordered[first : first + c]:
        pending += (f.arrival_ms - prev) / 1e3
        prev = f.arrival_ms
        matrix = coflow_matrix(f, tr.ports)
        if matrix.any():
            phases.append((f"coflow{f.id}", pending, matrix))
            pending = 0.0
    if not phases:
        phases.append(("empty", pending, np.zeros((tr.ports, tr.ports))))
    return _build(phases, None, gbps)


_AS_GPT = with_defaults(GPT_OPTIONS, tp=8)
# moe-iteration samples each layer's routing as `moe` does, with these of its options.
_AS_MOE = tuple(
    o
    for o in MOE_OPTIONS
    if o.name in ("preset", "experts", "top_k", "hidden", "tokens", "bytes_per_element", "popularity")
)
# Both model iterations turn FLOPs into compute gaps and bytes into seconds the same way.
_TIMING = (
    Option("tflops", float, 100.0, "Sustained TFLOP/s per GPU for the compute gaps.", unit="TFLOP/s"),
    Option("link_gbps", float, 100.0, "Link rate: bytes become seconds at this rate.", unit="Gb/s"),
    Option("gaps", float, None, "Instead of the FLOP model: one gap for every phase.", unit="s"),
)
#: The options of :func:`gpt_iteration`.
GPT_ITERATION_OPTIONS: Final = (*_AS_GPT, *_TIMING)
#: The options of :func:`moe_iteration`.
MOE_ITERATION_OPTIONS: Final = (
    _AS_MOE[0],
    Option("gpus", int, 64, "Number of GPUs G."),
    Option("layers", int, 16, "Number of MoE layers (two phases each)."),
    *_AS_MOE[1:],
    Option("gini", float, 0.25, "Target Gini of each popularity vector (not for uniform)."),
    Option("drift", float, 0.2, "In [0, 1]: how far each layer's popularity moves from the previous one."),
    Option("expert_ffn", int, 1024, "Intermediate size of an expert."),
    Option("seq_len", int, 4096, "Context length for the attention FLOPs.", unit="tokens"),
    *_TIMING,
)
#: The options of :func:`coflow_sequence` (``trace`` is offered as ``path``, a file read for you).
COFLOW_SEQUENCE_OPTIONS: Final = (
    COFLOW_OPTIONS[0],
    Option("count", int, 20, "Number of coflows."),
    Option("start", int, 0, "Index of the first coflow in arrival order."),
    Option("link_gbps", float, 1.0, "Link rate (the trace's racks had 1 Gb/s uplinks).", unit="Gb/s"),
)


@dataclass(frozen=True)
class IterationWorkload:
    """A registered iteration generator.

    Attributes
    ----------
    name : str
        Registry key.
    func : callable
        ``func(*, rng, **options) -> Iteration``.
    description : str
        One line for listings.
    options : tuple of Option
        Its options (:mod:`ocsched.workloads.options`), as the command line and sweeps take them.
    """

    name: str
    func: Callable[..., Iteration]
    description: str
    options: tuple[Option, ...]

    def defaults(self) -> dict[str, Any]:
        """``{option: default}``."""
        return {o.name: o.default for o in self.options}


ITERATION_WORKLOADS: dict[str, IterationWorkload] = {
    "gpt-iteration": IterationWorkload(
        "gpt-iteration",
        gpt_iteration,
        "One GPT training iteration (TP x PP x DP, GPipe): per-layer phases",
        GPT_ITERATION_OPTIONS,
    ),
    "moe-iteration": IterationWorkload(
        "moe-iteration",
        moe_iteration,
        "MoE forward pass: dispatch and combine per layer, routing drifting",
        MOE_ITERATION_OPTIONS,
    ),
    "coflow-sequence": IterationWorkload(
        "coflow-sequence",
        coflow_sequence,
        "Facebook trace coflows in arrival order, gaps from arrivals",
        COFLOW_SEQUENCE_OPTIONS,
    ),
}


def iteration_workloads() -> dict[str, str]:
    """Return ``{name: one-line description}`` of every iteration workload."""
    return {k: w.description for k, w in sorted(ITERATION_WORKLOADS.items())}


def generate_iteration(
    name: str,
    *,
    rng: int | np.random.Generator | None = _UNSET,
    seed: int | np.random.Generator | None = _UNSET,
    **options: Any,
) -> Iteration:
    """Generate the iteration workload ``name`` with ``options`` (a key of :data:`ITERATION_WORKLOADS`).

    Raises
    ------
    InvalidInputError
        For an unknown workload or option (the message lists the valid ones).

    Examples
    --------
    >>> len(generate_iteration("moe-iteration", gpus=8, layers=3, rng=1))
    6
    """
    rng = renamed(rng, seed, "rng", "seed", None)
    it: Iteration = call_generator(ITERATION_WORKLOADS, name, rng, options, kind="iteration workload")
    return it
