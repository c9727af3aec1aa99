"""Load scipy only when a function first uses it: ``import ocsched`` stays light.

Twenty modules import ``scipy.sparse`` at the top for their sparse matrices; scipy's own
import costs about twice numpy's (its array-API layer imports ``numpy.testing`` and
``numpy.f2py``), and a light command (``ocsched bound`` on a 3 x 3) needs none of it.
:func:`lazy_modules` puts stand-ins for ``scipy`` and ``scipy.sparse`` in :data:`sys.modules`:
an ``import scipy.sparse as sp`` binds the stand-in at once, and the first attribute read on it
imports the real modules and copies their namespace into the stand-in, so that later reads
cost nothing. (:class:`importlib.util.LazyLoader` does not serve: on Python 3.11 an ``import``
statement reads the module's ``__spec__``, which loads it.) A module already imported is left
alone.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["issparse", "lazy_attributes", "lazy_modules"]


class _StandIn(types.ModuleType):
    """A module not yet imported: the first attribute it lacks imports it (see module doc)."""

    def __getattr__(self, attr: str) -> Any:
        real = _load(self.__name__)
        return getattr(real, attr)


_STAND_INS: dict[str, _StandIn] = {}


def _load(name: str) -> types.ModuleType:
    """Import the real modules behind the stand-ins (parents first) and fill the stand-ins."""
    for other in sorted(_STAND_INS):  # parents sort before their submodules
        if sys.modules.get(other) is _STAND_INS[other]:
            del sys.modules[other]
    stand_ins = dict(_STAND_INS)
    _STAND_INS.clear()
    for other, stand_in in sorted(stand_ins.items()):
        real = importlib.import_module(other)
        stand_in.__dict__.update(real.__dict__)
    return sys.modules[name]


def lazy_modules(*names: str) -> None:
    """Register stand-ins for ``names`` (each parent before its submodules) if importable.

    Examples
    --------
    >>> import sys
    >>> lazy_modules("json")  # already imported here: left as it is
    >>> type(sys.modules["json"]).__name__
    'module'
    """
    for name in names:
        if name in sys.modules or importlib.util.find_spec(name.partition(".")[0]) is None:
            continue
        parent, _, child = name.rpartition(".")
        stand_in = _StandIn(name)
        # What the import system reads of a module it finds in sys.modules, without loading it.
        stand_in.__spec__ = importlib.machinery.ModuleSpec(name, None)
        _STAND_INS[name] = stand_in
        sys.modules[name] = stand_in
        if parent in _STAND_INS:  # `import scipy.sparse as sp` reads scipy's attribute
            setattr(_STAND_INS[parent], child, stand_in)


def issparse(x: Any) -> bool:
    """:func:`scipy.sparse.issparse`, without importing scipy where it is not loaded yet.

    A scipy sparse matrix or array exists only once scipy.sparse is loaded.
    """
    if "scipy.sparse" in _STAND_INS:
        return False
    import scipy.sparse

    return bool(scipy.sparse.issparse(x))


def lazy_attributes(package: str, table: Mapping[str, tuple[str, str | None]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) that imports a name of ``table`` on its first read.

    ``table[name] = (module, attribute)``: the attribute of that module, or the module itself
    when ``attribute`` is None. The value is then set on ``package``, so later reads cost nothing.

    Examples
    --------
    >>> import types, sys
    >>> sys.modules["demo_pkg"] = pkg = types.ModuleType("demo_pkg")
    >>> pkg.__getattr__ = lazy_attributes("demo_pkg", {"dumps": ("json", "dumps")})
    >>> pkg.dumps([1])
    '[1]'
    >>> "dumps" in vars(pkg), sys.modules.pop("demo_pkg") is pkg
    (True, True)
    """

    def __getattr__(name: str) -> Any:
        try:
            module_name, attr = table[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        module = importlib.import_module(module_name)
        value = module if attr is None else getattr(module, attr)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
