"""The reconfiguration models as objects: what each one means, declared once.

Every other module asks the fabric's :class:`Reconfiguration` (``fabric.reconfiguration``)
what it needs, instead of comparing the model's name: whether kept circuits stay lit through a
reconfiguration (:attr:`~Reconfiguration.keeps_circuits`), and which scheduler features it
requires (:attr:`~Reconfiguration.features`). The rules themselves are written in
:mod:`ocsched.timing.tolerance` and checked by :mod:`ocsched.timing.switch`.

>>> reconfiguration("partial").keeps_circuits, reconfiguration("all-stop").features
(True, frozenset())
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ALL_STOP", "PARTIAL", "RECONFIGURATIONS", "Reconfiguration", "reconfiguration"]


@dataclass(frozen=True)
class Reconfiguration:
    """A reconfiguration model.

    Attributes
    ----------
    name : str
        Its name in fabric files, schedule files and on the command line.
    keeps_circuits : bool
        True when a circuit held by consecutive configurations stays lit through the gap and
        only new circuits' ports go dark for the delay (partial); False when the whole switch
        goes dark for the delay before every configuration (all-stop).
    features : frozenset of str
        The scheduler features (``ocsched.schedulers.FEATURES``) a fabric with this model uses.
    description : str
        One line for listings.
    """

    name: str
    keeps_circuits: bool
    features: frozenset[str]
    description: str


#: The paper's model: every configuration is preceded by the switch's full delay.
ALL_STOP = Reconfiguration(
    "all-stop",
    False,
    frozenset(),
    "every configuration is preceded by delta of dark time on the whole switch",
)
#: Kept circuits stay lit; only the ports of new circuits go dark for delta.
PARTIAL = Reconfiguration(
    "partial",
    True,
    frozenset({"partial"}),
    "kept circuits stay lit; only new circuits' ports go dark for delta",
)
#: Every model by name, the paper's first.
RECONFIGURATIONS: dict[str, Reconfiguration] = {m.name: m for m in (ALL_STOP, PARTIAL)}


def reconfiguration(model: str) -> Reconfiguration:
    """The model named ``model`` (a key of :data:`RECONFIGURATIONS`).

    >>> reconfiguration("all-stop") is ALL_STOP
    True
    """
    try:
        return RECONFIGURATIONS[model]
    except KeyError:
        raise ValueError(
            f"unknown reconfiguration model {model!r}; use one of {', '.join(RECONFIGURATIONS)}"
        ) from None
