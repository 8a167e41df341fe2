"""``chainer.types``: the type aliases Chainer code annotates with, over dbr's types.

They are for static type checkers; nothing checks them at run time.
"""

import numbers
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Protocol

import numpy

from dbr.core.backend import Device

__all__ = [
    "AbstractInitializer", "CudaDeviceSpec", "DTypeSpec", "DeviceSpec", "InitializerSpec",
    "NdArray", "Shape", "ShapeSpec", "Xp",
]  # fmt: skip

Shape = tuple[int, ...]
"""An array's shape."""

ShapeSpec = int | Sequence[int]
"""A shape, or the length of a 1-D one."""

DTypeSpec = Any
"""Anything :class:`numpy.dtype` accepts."""

NdArray = numpy.ndarray | Any
"""A NumPy array, or a CuPy one on a GPU."""

Xp = Any
"""An array module: ``numpy`` or ``cupy``."""


class AbstractInitializer(Protocol):
    """An initializer: a :class:`dbr.core.Initializer` or any callable filling an array."""

    dtype: DTypeSpec

    def __call__(self, array: NdArray) -> None:
        """Fill ``array`` in place."""


InitializerSpec = (
    AbstractInitializer | numbers.Number | bytes | str | memoryview | numpy.generic | numpy.ndarray
)
"""What a link accepts as an initializer: an initializer, a scalar or an array."""

DeviceSpec = Device | str | tuple[str, int] | ModuleType | tuple[ModuleType, int]
"""What :func:`dbr.core.get_device` accepts."""

CudaDeviceSpec = int | numpy.integer | Any
"""A GPU id, for Chainer's old ``cuda.get_device``."""
