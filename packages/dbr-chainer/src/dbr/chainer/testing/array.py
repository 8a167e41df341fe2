"""``assert_allclose`` (dbr.core.testing's: Chainer's signature) and array layout helpers."""

from dbr.core import backend as _backend
from dbr.core.testing.array import assert_allclose

__all__ = ["assert_allclose"]


def _as_noncontiguous_array(array):
    """A copy of ``array`` (or of each array in a tuple/list) that is neither C- nor F-contiguous.

    Arrays of at most one element are returned as they are.
    """
    if isinstance(array, (list, tuple)):
        return type(array)(_as_noncontiguous_array(a) for a in array)
    if array is None or array.size <= 1:
        return array
    xp = _backend.get_array_module(array)
    buffer = xp.empty(array.shape + (2,), array.dtype)
    view = buffer[..., 0]
    view[...] = array
    return view
