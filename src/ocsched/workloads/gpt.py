"""GPT training traffic under tensor, pipeline and data parallelism (3-D parallelism).

Two generators: :func:`gpt`, which derives byte volumes from a model's shape with Megatron-style
formulas, and :func:`gpt32`, the fixed 32-GPU instance of the Spectra paper (and its block-diagonal
copies GPT64 and GPT128).
"""

from __future__ import annotations

from typing import Final

import numpy as np
from numpy.typing import NDArray

from ocsched._checks import check_choice, check_int
from ocsched.errors import InvalidInputError
from ocsched.workloads._common import block_diagonal
from ocsched.workloads.options import Option

__all__ = ["MAX_GPUS", "MAX_SIZE", "PRESETS", "gpt", "gpt32", "gpt32_block"]

#: Most GPUs (ports) a generated GPT matrix may have: it is dense, G x G.
MAX_GPUS: Final = 4096
#: Largest model-size option (hidden, layers, seq_len, vocab, micro-batches, bytes per element).
MAX_SIZE: Final = 10**9

#: Public GPT-3 shapes (Brown et al. 2020, Table 2.1): hidden size, layers, context length, and the
#: GPT-2 BPE vocabulary of 50257 tokens.
PRESETS: Final[dict[str, dict[str, int]]] = {
    "gpt3-125m": {"hidden": 768, "layers": 12, "seq_len": 2048, "vocab": 50257},
    "gpt3-350m": {"hidden": 1024, "layers": 24, "seq_len": 2048, "vocab": 50257},
    "gpt3-760m": {"hidden": 1536, "layers": 24, "seq_len": 2048, "vocab": 50257},
    "gpt3-1.3b": {"hidden": 2048, "layers": 24, "seq_len": 2048, "vocab": 50257},
    "gpt3-2.7b": {"hidden": 2560, "layers": 32, "seq_len": 2048, "vocab": 50257},
    "gpt3-6.7b": {"hidden": 4096, "layers": 32, "seq_len": 2048, "vocab": 50257},
    "gpt3-175b": {"hidden": 12288, "layers": 96, "seq_len": 2048, "vocab": 50257},
}


def gpt(
    *,
    preset: str = "gpt3-1.3b",
    tp: int = 2,
    pp: int = 4,
    dp: int = 4,
    hidden: int | None = None,
    layers: int | None = None,
    seq_len: int | None = None,
    vocab: int | None = None,
    micro_batch: int = 1,
    micro_batches: int = 8,
    param_bytes: int = 2,
) -> NDArray[np.float64]:
    """Return the bytes each GPU sends to each other GPU in one training iteration of a GPT model.

    The G = tp * pp * dp GPUs are numbered ``g(k, r, q) = k * (dp * tp) + r * tp + q`` for pipeline
    stage k, data-parallel replica r and tensor-parallel rank q (so a TP group is contiguous, the
    replicas of a stage follow each other, and stages are blocks of ``dp * tp``). One iteration
    runs ``m = micro_batches`` micro-batches of ``b = micro_batch`` sequences of ``S = seq_len``
    tokens through each replica. With ``h = hidden``, ``L = layers``, ``V = vocab`` and
    ``e = param_bytes`` (bytes per element of every tensor sent: 2 for fp16/bf16), one
    micro-batch's activation tensor holds ``A = b * S * h * e`` bytes and, summed over the iteration:

    - **Tensor parallelism** (Megatron-LM): each transformer layer all-reduces ``A`` twice in the
      forward pass (after attention and after the MLP) and twice in the backward pass, so a stage
      runs ``4 * (L / pp) * m`` all-reduces of ``A`` in each TP group. A ring all-reduce over t
      ranks has each rank send ``2 (t - 1) / t`` times the buffer to its ring successor:
      ``D[g(k,r,q), g(k,r,(q+1) mod t)] += 8 (L / pp) m (t - 1) / t * A``.
    - **Pipeline parallelism**: each micro-batch's activations go forward from stage k to k + 1
      and their gradients come back, between matching TP ranks (no scatter/gather optimisation):
      ``D[g(k,r,q), g(k+1,r,q)] += m * A`` and ``D[g(k+1,r,q), g(k,r,q)] += m * A``.
    - **Data parallelism**: once per iteration the replicas of each (stage, TP rank) ring
      all-reduce their gradient shard of ``P_k * e`` bytes:
      ``D[g(k,r,q), g(k,(r+1) mod dp,q)] += 2 (dp - 1) / dp * P_k * e``, with the parameters
      per GPU (Megatron's count of ``12 h^2 + 13 h`` per layer, split over TP ranks)
      ``P_k = (L / pp)(12 h^2 + 13 h) / t + [k = 0](V h / t + S h) + [k = pp-1 > 0] V h / t
      + [k = pp-1] 2 h`` (word embedding, replicated position embedding, tied output embedding,
      final layer norm).
    - **Embedding synchronisation** (pp > 1): the first and last stages hold copies of the tied
      word embedding and all-reduce its gradient; with two members each sends its whole shard:
      ``D[g(0,r,q), g(pp-1,r,q)] += V h e / t`` and the reverse.

    Contributions to the same pair add up. The diagonal is zero. The matrix is deterministic (no
    randomness; a seed is ignored).

    Parameters
    ----------
    preset : str
        Model shape to start from, a key of :data:`PRESETS` (public GPT-3 sizes). ``hidden``,
        ``layers``, ``seq_len`` and ``vocab`` override it when given.
    tp, pp, dp : int
        Tensor-, pipeline- and data-parallel degrees; ``layers`` must be divisible by ``pp``.
    hidden : int, optional
        Hidden size h.
    layers : int, optional
        Number of transformer layers L.
    seq_len : int, optional
        Sequence length S in tokens.
    vocab : int, optional
        Vocabulary size V.
    micro_batch : int
        Sequences per micro-batch b.
    micro_batches : int
        Micro-batches per iteration m (per replica).
    param_bytes : int
        Bytes per element of activations and gradients e.

    Returns
    -------
    ndarray of float64, shape (G, G)
        ``D[i, j]`` = bytes GPU i sends to GPU j per iteration.

    Raises
    ------
    InvalidInputError
        If an option is not a positive integer, ``preset`` is unknown, or ``pp`` does not divide
        ``layers``.

    References
    ----------
    Shoeybi et al., "Megatron-LM", 2019; Narayanan et al., "Efficient large-scale language model
    training on GPU clusters using Megatron-LM", SC 2021; Brown et al., "Language models are
    few-shot learners", 2020 (the presets).

    Examples
    --------
    >>> d = gpt(preset="gpt3-125m", tp=2, pp=2, dp=2)
    >>> d.shape, int((d > 0).sum(axis=1).max())
    ((8, 8), 3)
    >>> a = 1 * 2048 * 768 * 2  # one micro-batch's activations, bytes
    >>> float(d[0, 1]) == 8 * (12 / 2) * 8 * (1 / 2) * a  # TP ring, t = 2
    True
    """
    check_choice(preset, "preset", PRESETS)
    shape = dict(PRESETS[preset])
    for key, value in (("hidden", hidden), ("layers", layers), ("seq_len", seq_len), ("vocab", vocab)):
        if value is not None:
            shape[key] = check_int(value, key, maximum=MAX_SIZE)
    t, p, d = check_int(tp, "tp"), check_int(pp, "pp"), check_int(dp, "dp")
    if t * p * d > MAX_GPUS:
        raise InvalidInputError(f"`tp` * `pp` * `dp` must be at most {MAX_GPUS} GPUs; got {t * p * d}")
    b, m, e = (
        check_int(micro_batch, "micro_batch", maximum=MAX_SIZE),
        check_int(micro_batches, "micro_batches", maximum=MAX_SIZE),
        check_int(param_bytes, "param_bytes", maximum=MAX_SIZE),
    )
    h, n_layers, s, v = shape["hidden"], shape["layers"], shape["seq_len"], shape["vocab"]
    if n_layers % p:
        raise InvalidInputError(f"`pp` must divide `layers` = {n_layers}; got pp = {p}")
    per_stage = n_layers // p
    act = float(b * s * h * e)
    out = np.zeros((p * d * t, p * d * t))

    def g(k: int, r: int, q: int) -> int:
        return k * (d * t) + r * t + q

    tp_bytes = 8.0 * per_stage * m * (t - 1) / t * act
    for k in range(p):
        params = per_stage * (12.0 * h * h + 13.0 * h) / t
        if k == 0:
            params += v * h / t + s * h
        if k == p - 1:
            params += 2.0 * h + (v * h / t if p > 1 else 0.0)
        dp_bytes = 2.0 * (d - 1) / d * params * e
        for r in range(d):
            for q in range(t):
                i = g(k, r, q)
                if t > 1:
                    out[i, g(k, r, (q + 1) % t)] += tp_bytes
                if d > 1:
                    out[i, g(k, (r + 1) % d, q)] += dp_bytes
                if k + 1 < p:
                    out[i, g(k + 1, r, q)] += m * act
                    out[g(k + 1, r, q), i] += m * act
                if k == 0 and p > 1:
                    out[i, g(p - 1, r, q)] += v * h * e / t
                    out[g(p - 1, r, q), i] += v * h * e / t
    return out


def gpt32_block() -> NDArray[np.float64]:
    """Return the paper's 32-GPU GPT matrix (TP = 2, DP = 4, PP = 4), in its time units.

    For GPUs ``i != j`` in 0..31 the entry adds up:

    - ``680 * 125 / 1024`` if ``i // 2 == j // 2`` (tensor-parallel pair),
    - ``16 * 125 / 1024`` if ``|i - j| = 8`` (adjacent pipeline stages, both directions),
    - ``741 / 1024`` on the data-parallel ring ``j = i + 2`` if ``i mod 8 < 6``, else ``j = i - 6``,
    - ``96 / 1024`` if ``|i - j| = 24`` (embedding sync between the first and last stage).

    Examples
    --------
    >>> b = gpt32_block()
    >>> b.shape, int((b > 0).sum(axis=1).max()), float(b[0, 1]) == 680 * 125 / 1024
    ((32, 32), 4, True)
    """
    i, j = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    gap = np.abs(i - j)
    ring = np.where(i % 8 < 6, i + 2, i - 6)
    out = (
        (i // 2 == j // 2) * (680 * 125 / 1024)
        + (gap == 8) * (16 * 125 / 1024)
        + (j == ring) * (741 / 1024)
        + (gap == 24) * (96 / 1024)
    )
    out[gap == 0] = 0.0
    return np.asarray(out, dtype=np.float64)


def gpt32(*, copies: int = 1) -> NDArray[np.float64]:
    """Return ``copies`` copies of the paper's GPT32 matrix on the block diagonal.

    GPT32 is :func:`gpt32_block`; the paper's GPT64 and GPT128 are ``copies=2`` and ``copies=4``
    (independent jobs side by side on 32 * copies ports). Entries are the paper's numbers, in
    time units; divide by the largest line sum (``normalized=True``, CLI ``--normalize``) to
    get the paper's convention. Deterministic.

    Parameters
    ----------
    copies : int
        Number of blocks (>= 1).

    Returns
    -------
    ndarray of float64, shape (32 * copies, 32 * copies)

    Raises
    ------
    InvalidInputError
        If ``copies`` is not an integer >= 1.

    Examples
    --------
    >>> d = gpt32(copies=2)
    >>> d.shape, float(d[:32, 32:].sum()), bool((d[32:, 32:] == d[:32, :32]).all())
    ((64, 64), 0.0, True)
    """
    return block_diagonal(gpt32_block(), check_int(copies, "copies", maximum=MAX_GPUS // 32))


#: The options of :func:`gpt`.
GPT_OPTIONS: Final = (
    Option(
        "preset", str, "gpt3-1.3b", "Model shape to start from (public GPT-3 sizes).", choices=tuple(PRESETS)
    ),
    Option("tp", int, 2, "Tensor-parallel degree."),
    Option("pp", int, 4, "Pipeline-parallel degree (must divide the layers)."),
    Option("dp", int, 4, "Data-parallel degree."),
    Option("hidden", int, None, "Hidden size h (unset: the preset's)."),
    Option("layers", int, None, "Number of transformer layers L (unset: the preset's)."),
    Option("seq_len", int, None, "Sequence length S (unset: the preset's).", unit="tokens"),
    Option("vocab", int, None, "Vocabulary size V (unset: the preset's)."),
    Option("micro_batch", int, 1, "Sequences per micro-batch b."),
    Option("micro_batches", int, 8, "Micro-batches per iteration m (per replica)."),
    Option("param_bytes", int, 2, "Bytes per element of activations and gradients e.", unit="bytes"),
)
#: The options of :func:`gpt32`.
GPT32_OPTIONS: Final = (Option("copies", int, 1, "Number of blocks on the diagonal (>= 1)."),)
