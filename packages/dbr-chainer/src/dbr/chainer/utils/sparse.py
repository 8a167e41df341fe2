"""``chainer.utils.sparse``: COO matrices, dbr.functions.math.sparse_matmul's."""

from dbr.functions.math.sparse_matmul import CooMatrix, get_order, to_coo

__all__ = ["CooMatrix", "get_order", "to_coo"]
