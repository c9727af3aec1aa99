"""The figures' styles: a marker, line style and colour per algorithm, readable in black and white.

Colours are the Okabe-Ito palette (safe for colour-blind readers); every algorithm also has its
own marker and line style. Fabrics after the first in a panel get their own markers, bars their
own hatches.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FABRIC_MARKERS", "HATCHES", "PALETTE", "STYLES"]

#: Okabe & Ito's colour-blind-safe palette (yellow left out: too pale on white and in grey), then
#: two colours of Paul Tol's "muted" scheme for the ninth and tenth algorithm.
PALETTE = (
    "#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2",
    "#D55E00", "#CC79A7", "#999999", "#882255", "#44AA99",
)  # fmt: skip

#: The paper's algorithms' styles, chosen by hand (the figures of the results pages use them).
_CHOSEN: dict[str, tuple[str, Any, str]] = {
    "spectra": ("o", "-", PALETTE[0]),
    "spectra-pack": ("h", (0, (8, 2)), PALETTE[4]),
    "spectra-greedy": ("s", "--", PALETTE[1]),
    "baseline": ("^", "-.", PALETTE[5]),
    "baseline-eclipse": ("v", ":", PALETTE[2]),
    "eclipse": ("D", (0, (5, 1)), PALETTE[3]),
    "solstice": ("P", (0, (3, 1, 1, 1)), PALETTE[6]),
    "bvn": ("X", (0, (1, 1)), PALETTE[7]),
    "naive": ("*", (0, (4, 2, 1, 2)), PALETTE[8]),
    "exact": ("d", (0, (2, 2)), PALETTE[9]),
}
#: Markers for the other registered algorithms (none of the chosen ones' markers).
_MORE_MARKERS = ("p", "<", ">", "8", "H", "1", "2", "3", "4", "+", "x")
_EXTRA = ("p", "<", ">", "8", "H")


def _registered() -> dict[str, tuple[str, Any, str]]:
    """A style for every registered scheduler: the chosen ones, then one each in registry order.

    An algorithm keeps its style in every figure (it does not depend on which others a panel
    shows); a name the registry does not know (a result from another version) gets one by its
    place in the panel (:func:`_style`).
    """
    from ocsched.schedulers import SCHEDULERS

    out = dict(_CHOSEN)
    others = [a for a in SCHEDULERS if a not in out]
    for k, name in enumerate(others):
        dashes = (0, (4 + k, 1, 1, 1, 1, 1))  # a dash-dot-dot of its own length per algorithm
        out[name] = (_MORE_MARKERS[k % len(_MORE_MARKERS)], dashes, PALETTE[(k + 1) % len(PALETTE)])
    return out


#: Plot style per algorithm: (marker, line style, colour), one for every registered scheduler:
#: distinct in colour and in black and white.
STYLES: dict[str, tuple[str, Any, str]] = _registered()
#: Markers of the second, third, ... fabric in one panel (the first keeps the algorithm's own).
FABRIC_MARKERS = ("s", "^", "D", "v", "P", "X", "*", "p", "<", ">")
HATCHES = ("", "///", "...", "xx", "\\\\", "++", "oo", "--", "**")


def _style(algorithm: str, k: int) -> tuple[str, Any, str]:
    return STYLES.get(algorithm, (_EXTRA[k % len(_EXTRA)], "-", PALETTE[k % len(PALETTE)]))
