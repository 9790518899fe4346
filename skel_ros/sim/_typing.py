"""Type names shared by the simulation modules."""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = ["Dart", "Vector"]

Dart: TypeAlias = Any
"""A dartpy object (World, Skeleton, Joint, shape, properties ...): dartpy has no type stubs."""

Vector: TypeAlias = npt.NDArray[np.float64]
"""A flat float64 array (one entry per DOF)."""
