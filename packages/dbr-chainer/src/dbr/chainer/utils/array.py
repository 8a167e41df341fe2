"""``chainer.utils.array``: array helpers, dbr.core.utils' (``size_of_shape``, ``sum_to``, ...).

``as_vec``, ``as_mat`` and ``empty_like`` are deprecated, as in Chainer.
"""

from dbr.core.utils import as_mat, as_vec, empty_like, size_of_shape, sum_to

__all__ = ["as_mat", "as_vec", "empty_like", "size_of_shape", "sum_to"]
