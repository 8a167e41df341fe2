"""stack, hstack, vstack, dstack: join arrays along a new or an existing axis."""

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module
from dbr.functions.array import separate as _separate
from dbr.functions.array import split_axis as _split_axis
from dbr.functions.array._args import check_int


def _name_inputs(in_types):
    type_check.expect(in_types.size() > 0)
    type_check.argname(in_types, [f"xs[{i}]" for i in range(len(in_types))])


class Stack(FunctionNode):
    """Arrays of one shape and dtype stacked along a new axis ``axis``."""

    def __init__(self, axis=0):
        self.axis = axis

    def check_type_forward(self, in_types):
        _name_inputs(in_types)
        x0 = in_types[0]
        type_check.expect(-x0.ndim - 1 <= self.axis, x0.ndim >= self.axis)
        shape0 = type_check.eval(x0.shape)
        dtype0 = type_check.eval(x0.dtype)
        for x in in_types[1:]:
            if type_check.eval(x.shape) != shape0 or type_check.eval(x.dtype) != dtype0:
                type_check.expect(x.dtype == x0.dtype, x.shape == x0.shape)

    def forward(self, inputs):
        xp = get_array_module(inputs[0])
        return (xp.stack(inputs, axis=self.axis),)

    def backward(self, indexes, grad_outputs):
        gxs = _separate.Separate(self.axis).apply(grad_outputs)
        return tuple([gxs[i] for i in indexes])


class _JoinAtLeast(FunctionNode):
    """Base of hstack/vstack/dstack: inputs promoted to ``_min_ndim`` dimensions, then joined.

    A subclass sets ``_min_ndim``, ``_join_dim(ndim)`` (the input axis whose
    lengths may differ, or None) and ``_out_axis(ndim)`` (the output axis
    joined along).
    """

    _min_ndim = 0

    def check_type_forward(self, in_types):
        _name_inputs(in_types)
        x0 = in_types[0]
        ndim = type_check.eval(x0.ndim)
        free = self._join_dim(ndim)
        for x in in_types[1:]:
            type_check.expect(x.dtype == x0.dtype, x.ndim == x0.ndim)
            for d in range(ndim):
                if d != free:
                    type_check.expect(x.shape[d] == x0.shape[d])

    def forward(self, inputs):
        x0 = inputs[0]
        ndim = x0.ndim
        axis = self._out_axis(ndim)
        sections = []
        end = 0
        for x in inputs[:-1]:
            end += self._promoted(x.shape)[axis]
            sections.append(end)
        self._sections = sections
        self._shapes = [x.shape for x in inputs]
        xp = get_array_module(x0)
        return (self._join(xp, inputs),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        axis = self._out_axis(len(self._shapes[0]))
        if len(self._shapes) == 1:
            gxs = (gy,)
        else:
            gxs = _split_axis.SplitAxis(self._sections, axis).apply((gy,))
        return tuple([ops.reshape(gxs[i], self._shapes[i]) for i in indexes])


class Hstack(_JoinAtLeast):
    """``numpy.hstack``: joined along axis 1 (axis 0 for 0-d and 1-d inputs)."""

    @staticmethod
    def _join_dim(ndim):
        return 0 if ndim == 1 else (1 if ndim >= 2 else None)

    @staticmethod
    def _out_axis(ndim):
        return 0 if ndim <= 1 else 1

    @staticmethod
    def _promoted(shape):
        return shape if shape else (1,)

    @staticmethod
    def _join(xp, inputs):
        return xp.hstack(inputs)


class Vstack(_JoinAtLeast):
    """``numpy.vstack``: joined along axis 0 (1-d inputs become rows)."""

    @staticmethod
    def _join_dim(ndim):
        return 0 if ndim >= 2 else None

    @staticmethod
    def _out_axis(ndim):
        return 0

    @staticmethod
    def _promoted(shape):
        return ((1,) * (2 - len(shape)) + shape) if len(shape) < 2 else shape

    @staticmethod
    def _join(xp, inputs):
        return xp.vstack(inputs)


class Dstack(_JoinAtLeast):
    """``numpy.dstack``: joined along axis 2 (inputs promoted to at least 3-d)."""

    @staticmethod
    def _join_dim(ndim):
        return 2 if ndim >= 3 else None

    @staticmethod
    def _out_axis(ndim):
        return 2

    @staticmethod
    def _promoted(shape):
        if len(shape) == 0:
            return (1, 1, 1)
        if len(shape) == 1:
            return (1, shape[0], 1)
        if len(shape) == 2:
            return shape + (1,)
        return shape

    @staticmethod
    def _join(xp, inputs):
        return xp.dstack(inputs)


def stack(xs, axis=0):
    """Stack arrays of one shape along a new axis.

    ``y[..., i, ...] = xs[i]`` with ``i`` at position ``axis`` of ``y``. It
    is the inverse of :func:`~dbr.functions.array.separate.separate`.

    Args:
        xs (list or tuple of Variable or array): arrays of one shape and dtype
            (at least one).
        axis (int): the position of the new axis in the output, in
            ``[-x.ndim - 1, x.ndim]`` (negative counts from the end).

    Returns:
        Variable: of shape ``x.shape[:axis] + (len(xs),) + x.shape[axis:]``.

    Raises:
        TypeError: ``axis`` is not an int.
        InvalidType: ``xs`` is empty, the inputs differ in shape or dtype, or
            ``axis`` is out of range.

    >>> import numpy as np
    >>> a = np.zeros(3, np.float32)
    >>> b = np.ones(3, np.float32)
    >>> stack((a, b), axis=1).array
    array([[0., 1.],
           [0., 1.],
           [0., 1.]], dtype=float32)
    """
    axis = check_int(axis, "axis", "stack")
    return Stack(axis).apply(xs)[0]


def hstack(xs):
    """Stack arrays horizontally (column wise), as ``numpy.hstack``.

    0-d inputs are treated as 1-d of length 1; 1-d inputs are joined along
    axis 0, the others along axis 1. The inputs must have one dtype, one
    number of dimensions and equal lengths along every axis but the joined one.

    Args:
        xs (list or tuple of Variable or array): the arrays (at least one).

    Returns:
        Variable: the joined array.

    Raises:
        InvalidType: ``xs`` is empty, or the inputs do not fit together.

    >>> import numpy as np
    >>> hstack((np.zeros((2, 1), np.float32), np.ones((2, 2), np.float32))).shape
    (2, 3)
    """
    return Hstack().apply(xs)[0]


def vstack(xs):
    """Stack arrays vertically (row wise), as ``numpy.vstack``.

    0-d and 1-d inputs are treated as rows, of shape ``(1, 1)`` and
    ``(1, N)``; all inputs are joined along axis 0. They must have one dtype,
    one number of dimensions and equal lengths along every axis but the first
    (all of it for 0-d and 1-d inputs).

    Args:
        xs (list or tuple of Variable or array): the arrays (at least one).

    Returns:
        Variable: the joined array, of at least two dimensions.

    Raises:
        InvalidType: ``xs`` is empty, or the inputs do not fit together.

    >>> import numpy as np
    >>> vstack((np.zeros(3, np.float32), np.ones(3, np.float32))).shape
    (2, 3)
    """
    return Vstack().apply(xs)[0]


def dstack(xs):
    """Stack arrays along the third axis (depth wise), as ``numpy.dstack``.

    Inputs are promoted to three dimensions first: ``()`` to ``(1, 1, 1)``,
    ``(N,)`` to ``(1, N, 1)`` and ``(M, N)`` to ``(M, N, 1)``; then joined
    along axis 2. They must have one dtype, one number of dimensions and
    equal lengths along every axis but the third (all of it below three
    dimensions).

    Args:
        xs (list or tuple of Variable or array): the arrays (at least one).

    Returns:
        Variable: the joined array, of at least three dimensions.

    Raises:
        InvalidType: ``xs`` is empty, or the inputs do not fit together.

    >>> import numpy as np
    >>> dstack((np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32))).shape
    (2, 3, 2)
    """
    return Dstack().apply(xs)[0]
