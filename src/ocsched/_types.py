"""The array aliases of the package, declared once.

>>> import numpy as np
>>> FloatArray == np.typing.NDArray[np.float64]
True
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["BoolArray", "FloatArray", "IntArray"]

#: An array of float64: demands, durations, times.
FloatArray = NDArray[np.float64]
#: An array of int64: ports, permutations, indices, counts.
IntArray = NDArray[np.int64]
#: An array of booleans: masks.
BoolArray = NDArray[np.bool_]
