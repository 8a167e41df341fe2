"""sparse_matmul: products of sparse (COO) and dense matrices; CooMatrix and to_coo.

A sparse matrix (or a batch of them with one shape) is held as its entries
``data`` with their ``row`` and ``col`` indexes; unused slots at the end of
the arrays have index -1 (so that the matrices of a batch can have different
numbers of entries). Repeated indexes add up, as in any COO format. Only
``data`` is differentiable; the indexes are constants of the function.
"""

import numpy

from dbr.core import FunctionNode, Variable, type_check
from dbr.core.backend import get_array_module, get_array_types
from dbr.core.utils import accumulation_dtype

_scipy_sparse = None


def _sparse_module():
    """scipy.sparse when it is installed (the fast CPU path), else False."""
    global _scipy_sparse
    if _scipy_sparse is None:
        try:
            from scipy import sparse
        except ImportError:
            sparse = False
        _scipy_sparse = sparse
    return _scipy_sparse


def _valid_entries(row, col, xp):
    """Batch and slot indexes of the used entries (the batch index is None when unbatched)."""
    valid = (row >= 0) & (col >= 0)
    if row.ndim == 1:
        return None, xp.flatnonzero(valid)
    return xp.nonzero(valid)


def _entries(row, col, transa, xp):
    """(batch, slot, i, j) of the used entries of op(S), op transposing when ``transa``."""
    row = xp.asarray(row)
    col = xp.asarray(col)
    if transa:
        row, col = col, row
    b, k = _valid_entries(row, col, xp)
    if b is None:
        return None, k, row[k], col[k]
    return b, k, row[b, k], col[b, k]


def _scatter_add_rows(out, index, values):
    """``out[index[e]] += values[e]`` over the entries ``e`` (repeated indexes add up)."""
    xp = get_array_module(out)
    if xp is not numpy:
        xp.add.at(out, index, values)
        return
    if not len(index):
        return
    order = numpy.argsort(index, kind="stable")
    index = index[order]
    starts = numpy.flatnonzero(numpy.concatenate(([True], index[1:] != index[:-1])))
    out[index[starts]] += numpy.add.reduceat(values[order], starts, axis=0)


def _coo_matmul(data, row, col, shape, dense, transa, transb, transc, dtype):
    """``op(S) @ op(D)``, transposed when ``transc``, as an array of ``dtype``.

    S is given by ``data``, ``row``, ``col`` and ``shape`` (or a batch of
    them) and D by ``dense``; ``op`` transposes when ``transa`` (``transb``).
    """
    xp = get_array_module(dense)
    acc = accumulation_dtype(data.dtype, dense.dtype)
    if transb:
        dense = dense.swapaxes(-1, -2)
    b, k, i, j = _entries(row, col, transa, xp)
    m = shape[1] if transa else shape[0]
    n = dense.shape[-1]
    batched = b is not None
    nb = dense.shape[0] if batched else 1
    inner = dense.shape[-2]
    values = data[b, k] if batched else data[k]
    if batched:
        i = b * m + i
        j = b * inner + j
    dense2 = dense.reshape(nb * inner, n)
    sparse = _sparse_module() if xp is numpy else False
    if sparse:
        matrix = sparse.coo_matrix(
            (values.astype(acc, copy=False), (i, j)), shape=(nb * m, nb * inner)
        )
        out = numpy.asarray(matrix @ dense2.astype(acc, copy=False), dtype=acc)
    else:
        out = xp.zeros((nb * m, n), acc)
        contrib = dense2[j].astype(acc, copy=False) * values.astype(acc)[:, None]
        _scatter_add_rows(out, i, contrib)
    out = out.reshape((nb, m, n) if batched else (m, n))
    if transc:
        out = out.swapaxes(-1, -2)
    return out.astype(dtype, copy=False)


class CooMatMul(FunctionNode):
    """``op(S) @ op(D)``, transposed when ``transc``: S sparse (input 0 is its ``data``), D dense.

    ``op`` transposes each matrix of S when ``transa`` and of D (input 1)
    when ``transb``. ``op(D)`` is ``(K, N)`` with 1-D ``data``, or a batch
    ``(B, K, N)`` with ``data`` of shape ``(B, ldnz)``. The operands may have
    different floating dtypes; the output has ``dtype`` (None: NumPy's
    promotion of the two). ``order`` is S's ``CooMatrix.order``, the hint
    that Chainer's GPU kernel takes; dbr's products do not need it.
    """

    def __init__(
        self, row, col, shape, order="other", transa=False, transb=False, transc=False, dtype=None
    ):
        self.row = row
        self.col = col
        self.shape = tuple(shape)
        self.order = order
        self.transa = transa
        self.transb = transb
        self.transc = transc
        self.dtype = None if dtype is None else numpy.dtype(dtype)

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("sp", "dn"))
        sp_type, dn_type = in_types
        type_check.expect(
            sp_type.dtype.kind == "f",
            dn_type.dtype.kind == "f",
            sp_type.ndim == self.row.ndim,
            dn_type.ndim == sp_type.ndim + 1,
            sp_type.shape[-1] == self.row.shape[-1],
        )
        if type_check.eval(dn_type.ndim) == 3:
            type_check.expect(
                sp_type.shape[0] == self.row.shape[0], dn_type.shape[0] == self.row.shape[0]
            )
        k = self.shape[0] if self.transa else self.shape[1]
        axis = -1 if self.transb else -2
        dn_shape = type_check.eval(dn_type.shape)
        if dn_shape[axis] != k:
            raise type_check.InvalidType(
                f"dn.shape[{axis}] == {k} (the columns of the sparse operand after transa)",
                f"dn.shape == {dn_shape}",
            )

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        data, dense = inputs
        dtype = self.dtype or numpy.result_type(data.dtype, dense.dtype)
        trans = (self.transa, self.transb, self.transc)
        return (_coo_matmul(data, self.row, self.col, self.shape, dense, *trans, dtype),)

    def backward(self, indexes, grad_outputs):
        data, dense = self.get_retained_inputs()
        gy = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                node = CooGatherDot(
                    self.row,
                    self.col,
                    self.shape,
                    transa=self.transa,
                    transx=self.transc,
                    transy=self.transb,
                    dtype=data.dtype,
                )
                ret.append(node.apply((gy, dense))[0])
            else:
                node = CooMatMul(
                    self.row,
                    self.col,
                    self.shape,
                    self.order,
                    transa=not self.transa,
                    transb=self.transc,
                    transc=self.transb,
                    dtype=dense.dtype,
                )
                ret.append(node.apply((data, gy))[0])
        return tuple(ret)


class CooGatherDot(FunctionNode):
    """``out[e] = sum_n op(X)[i_e, n] * op(Y)[j_e, n]`` for each entry ``e = (i_e, j_e)`` of op(S).

    ``op`` transposes S when ``transa``, X when ``transx`` and Y when
    ``transy``. This is the gradient of CooMatMul with respect to the sparse
    entries (0 in unused slots), in ``dtype``; batched when ``X`` and ``Y``
    are 3-D.
    """

    def __init__(self, row, col, shape, transa, transx, transy, dtype):
        self.row = row
        self.col = col
        self.shape = tuple(shape)
        self.transa = transa
        self.transx = transx
        self.transy = transy
        self.dtype = dtype

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, y = inputs
        xp = get_array_module(x)
        acc = accumulation_dtype(x.dtype, y.dtype)
        if self.transx:
            x = x.swapaxes(-1, -2)
        if self.transy:
            y = y.swapaxes(-1, -2)
        b, k, i, j = _entries(self.row, self.col, self.transa, xp)
        if b is None:
            xs, ys = x[i], y[j]
        else:
            xs, ys = x[b, i], y[b, j]
        values = (xs.astype(acc, copy=False) * ys.astype(acc, copy=False)).sum(axis=-1)
        out = xp.zeros(self.row.shape, self.dtype)
        if b is None:
            out[k] = values
        else:
            out[b, k] = values
        return (out,)

    def backward(self, indexes, grad_outputs):
        x, y = self.get_retained_inputs()
        g = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                node = CooMatMul(
                    self.row,
                    self.col,
                    self.shape,
                    transa=self.transa,
                    transb=self.transy,
                    transc=self.transx,
                    dtype=x.dtype,
                )
                ret.append(node.apply((g, y))[0])
            else:
                node = CooMatMul(
                    self.row,
                    self.col,
                    self.shape,
                    transa=not self.transa,
                    transb=self.transx,
                    transc=self.transy,
                    dtype=y.dtype,
                )
                ret.append(node.apply((g, x))[0])
        return tuple(ret)


def sparse_matmul(a, b, transa=False, transb=False):
    """Matrix product of a sparse (COO) matrix and a dense one, either way round.

    ``op(a) @ op(b)`` where one operand is a :class:`CooMatrix` and the other
    dense; ``op`` transposes each matrix when ``transa`` (``transb``) is set.
    A 3-D dense operand with a batch of sparse matrices (2-D ``data``)
    gives one product per batch element. Gradients flow to the dense operand
    and to the sparse matrix's ``data``, each in its own dtype.

    Args:
        a (CooMatrix, Variable or array): the left operand.
        b (CooMatrix, Variable or array): the right operand; exactly one of
            ``a`` and ``b`` is a CooMatrix, and the dense one is floating
            (of any floating dtype) with two or three axes.
        transa (bool): transpose each matrix of ``a`` first.
        transb (bool): transpose each matrix of ``b`` first.

    Returns:
        Variable: the dense product, 2-D or a 3-D batch, of the dtype NumPy's
        promotion gives the two operands.

    >>> import numpy as np
    >>> s = to_coo(np.array([[0.0, 2.0], [1.0, 0.0]], np.float32))
    >>> sparse_matmul(s, np.array([[1.0], [3.0]], np.float32)).array
    array([[6.],
           [1.]], dtype=float32)
    """
    dense_types = (Variable, *get_array_types())
    if isinstance(a, CooMatrix) and isinstance(b, dense_types):
        node = CooMatMul(a.row, a.col, a.shape, a.order, transa, transb)
        return node.apply((a.data, b))[0]
    if isinstance(a, dense_types) and isinstance(b, CooMatrix):
        # op(a) @ op(B) = (op(B)^T @ op(a)^T)^T
        node = CooMatMul(b.row, b.col, b.shape, b.order, not transb, not transa, True)
        return node.apply((b.data, a))[0]
    raise ValueError(
        "sparse_matmul: expected one CooMatrix and one Variable or array, got "
        f"{type(a).__name__} and {type(b).__name__}"
    )


class CooMatrix:
    """A sparse matrix, or a batch of sparse matrices of one shape, in COO format.

    Args:
        data (array or Variable): the entries, 1-D ``(ldnz,)`` for one
            matrix or 2-D ``(B, ldnz)`` for a batch; unused slots hold 0. A
            Variable is used as it is (gradients reach it).
        row (array): the row index of each entry (int), shaped like
            ``data``; -1 marks an unused slot.
        col (array): the column index of each entry, like ``row``.
        shape (tuple of int): ``(rows, columns)`` of each dense matrix.
        order ('C', 'F', 'other' or None): whether the entries are sorted by
            row ('C') or by column ('F'); None finds out. A hint only.
        requires_grad (bool): whether backprop computes ``data``'s gradient
            (for an array ``data``).

    Attributes:
        data (Variable): the entries.
        row, col: the index arrays.
        shape (tuple of int): the dense shape of each matrix.
        order (str): 'C', 'F' or 'other'.
    """

    def __init__(self, data, row, col, shape, order=None, requires_grad=False):
        if not 1 <= data.ndim <= 2:
            raise ValueError(f"CooMatrix: expected data with 1 or 2 axes, got {data.ndim}")
        if not data.shape == row.shape == col.shape:
            raise ValueError(
                "CooMatrix: expected data, row and col of one shape, got "
                f"{data.shape}, {row.shape} and {col.shape}"
            )
        if row.dtype.kind not in "iu" or col.dtype.kind not in "iu":
            raise TypeError(
                f"CooMatrix: expected integer row and col, got {row.dtype} and {col.dtype}"
            )
        shape = tuple(shape)
        if len(shape) != 2 or not (shape[0] > 0 and shape[1] > 0):
            raise ValueError(f"CooMatrix: expected shape to be two positive ints, got {shape}")
        if row.size and (int(row.max()) >= shape[0] or int(col.max()) >= shape[1]):
            raise ValueError(
                f"CooMatrix: expected row < {shape[0]} and col < {shape[1]}, got row up to "
                f"{int(row.max())} and col up to {int(col.max())}"
            )
        if order not in ("C", "F", "other", None):
            raise ValueError(f"CooMatrix: expected order 'C', 'F', 'other' or None, got {order!r}")
        self.data = (
            data if isinstance(data, Variable) else Variable(data, requires_grad=requires_grad)
        )
        self.row = row
        self.col = col
        self.shape = shape
        self.order = get_order(row, col) if order is None else order

    def to_dense(self):
        """Return the dense matrix (or batch), with repeated indexes added up."""
        data = self.data.array
        xp = get_array_module(data)
        b, k, i, j = _entries(self.row, self.col, False, xp)
        if b is None:
            out = xp.zeros(self.shape, data.dtype)
            xp.add.at(out, (i, j), data[k])
        else:
            out = xp.zeros((data.shape[0],) + self.shape, data.dtype)
            xp.add.at(out, (b, i, j), data[b, k])
        return out


def _sorted_pairs(major, minor, xp):
    """Whether the used (major, minor) index pairs of each row of the batch are sorted."""
    if major.ndim == 1:
        major, minor = major[None], minor[None]
    for r, c in zip(major, minor):
        used = (r >= 0) & (c >= 0)
        r, c = r[used], c[used]
        if r.size > 1:
            dr = r[1:] - r[:-1]
            if bool((dr < 0).any()) or bool(((dr == 0) & (c[1:] < c[:-1])).any()):
                return False
    return True


def get_order(row, col):
    """Return the order of COO entries: 'C' (sorted by row), 'F' (by column) or 'other'.

    Entries whose row or column is -1 (unused slots) are ignored; for a batch
    (2-D ``row`` and ``col``), each matrix must be in that order.

    Args:
        row (array): the row index of each entry.
        col (array): the column index of each entry, of ``row``'s shape.

    Raises:
        ValueError: ``row`` and ``col`` differ in shape, or an entry has -1 in
            only one of them.

    >>> import numpy as np
    >>> get_order(np.array([0, 0, 1]), np.array([1, 2, 0]))
    'C'
    """
    if row.shape != col.shape:
        raise ValueError(
            f"get_order: expected row and col of one shape, got {row.shape} and {col.shape}"
        )
    xp = get_array_module(row)
    if bool(((row < 0) != (col < 0)).any()):
        raise ValueError(
            f"get_order: an entry has -1 (unused) in only one of row and col: row {row}, col {col}"
        )
    if _sorted_pairs(row, col, xp):
        return "C"
    if _sorted_pairs(col, row, xp):
        return "F"
    return "other"


def to_coo(x, ldnz=None, requires_grad=False):
    """Return the COO form of a dense matrix or of a batch of them.

    Args:
        x (array or Variable): a matrix ``(M, N)`` or a batch ``(B, M, N)``.
            Its nonzero elements become the entries, in row-major order.
        ldnz (int or None): the length of the entry arrays; the number of
            nonzeros (the largest over the batch) when None or smaller.
        requires_grad (bool): whether backprop computes the gradient of the
            result's ``data``.

    Returns:
        CooMatrix: ``data`` of shape ``(ldnz,)`` or ``(B, ldnz)``, int32
        ``row`` and ``col`` (-1 in unused slots), ``shape == (M, N)``.

    >>> import numpy as np
    >>> s = to_coo(np.array([[0.0, 2.0, 0.0], [-1.0, 0.0, 0.0]], np.float32))
    >>> s.data.array
    array([ 2., -1.], dtype=float32)
    >>> s.row, s.col, s.shape
    (array([0, 1], dtype=int32), array([1, 0], dtype=int32), (2, 3))
    """
    if isinstance(x, Variable):
        x = x.array
    if x.ndim not in (2, 3):
        raise ValueError(f"to_coo: expected x with 2 or 3 axes, got shape {x.shape}")
    xp = get_array_module(x)
    batch = x if x.ndim == 3 else x[None]
    b, i, j = xp.nonzero(batch)
    counts = xp.bincount(b, minlength=len(batch))
    width = int(counts.max()) if len(batch) else 0
    if ldnz is not None:
        width = max(width, int(ldnz))
    starts = xp.cumsum(counts) - counts
    slot = xp.arange(len(b)) - starts[b]
    data = xp.zeros((len(batch), width), x.dtype)
    row = xp.full((len(batch), width), -1, numpy.int32)
    col = xp.full((len(batch), width), -1, numpy.int32)
    data[b, slot] = batch[b, i, j]
    row[b, slot] = i
    col[b, slot] = j
    if x.ndim == 2:
        data, row, col = data[0], row[0], col[0]
    return CooMatrix(data, row, col, x.shape[-2:], requires_grad=requires_grad)
