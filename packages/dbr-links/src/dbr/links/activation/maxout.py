"""Maxout: a fully-connected layer followed by the maximum over groups of units."""

import numpy

import dbr.functions as F
from dbr.core import Chain, backend
from dbr.links._checks import check_size
from dbr.links.connection.linear import Linear


def _grouped_initializer(cls_name, arg, initial, shape):
    """Turn ``initial``, given in ``shape`` (``(out_size, pool_size, ...)``), into one for Linear.

    A None in ``shape`` (a lazy ``in_size``) matches any length.
    """
    if initial is None or numpy.isscalar(initial):
        return initial
    if isinstance(initial, backend.get_array_types()):
        if initial.ndim != len(shape) or any(
            d is not None and d != n for d, n in zip(shape, initial.shape)
        ):
            expected = tuple("in_size" if d is None else d for d in shape)
            raise ValueError(f"{cls_name}: {arg} must have shape {expected}, got {initial.shape}")
        return initial.reshape(shape[0] * shape[1], *initial.shape[2:])
    if callable(initial):
        grouped_shape = shape[:2] + (-1,) * (len(shape) - 2)

        def initializer(array):
            grouped = array.reshape(grouped_shape)
            initial(grouped)
            array[...] = grouped.reshape(array.shape)

        initializer.dtype = getattr(initial, "dtype", None)
        return initializer
    raise TypeError(
        f"{cls_name}: {arg} must be None, a scalar, an array or a callable, "
        f"got {type(initial).__name__}"
    )


class Maxout(Chain):
    """Maxout layer (Goodfellow et al., 2013).

    A fully-connected layer with ``out_size * pool_size`` outputs, followed by
    :func:`dbr.functions.maxout`: output unit ``i`` is the maximum of the
    linear units ``i * pool_size`` to ``(i + 1) * pool_size - 1``.

    Args:
        in_size (int or None): the size of one input sample; None infers it
            at the first call.
        out_size (int): the number of output units.
        pool_size (int): the number of linear units per output unit.
        initialW: initializer of the weight; an array has shape
            ``(out_size, pool_size, in_size)``, and a callable is given the
            weight viewed in that shape. None uses LeCunNormal.
        initial_bias: initializer of the bias; an array has shape
            ``(out_size, pool_size)``. None means no bias. Default 0.

    Attributes:
        linear (Linear): the fully-connected layer, whose ``W`` has shape
            ``(out_size * pool_size, in_size)``.
        out_size, pool_size: as given.

    Input ``x`` of shape ``(batch, in_size)`` (or more axes, flattened);
    output of shape ``(batch, out_size)``.

    >>> import numpy
    >>> Maxout(3, 2, 4)(numpy.zeros((5, 3), numpy.float32)).shape
    (5, 2)
    """

    def __init__(self, in_size, out_size, pool_size, initialW=None, initial_bias=0):
        super().__init__()
        check_size("Maxout", "out_size", out_size)
        check_size("Maxout", "pool_size", pool_size)
        initialW = _grouped_initializer(
            "Maxout", "initialW", initialW, (out_size, pool_size, in_size)
        )
        initial_bias = _grouped_initializer(
            "Maxout", "initial_bias", initial_bias, (out_size, pool_size)
        )
        self.out_size = out_size
        self.pool_size = pool_size
        with self.init_scope():
            self.linear = Linear(
                in_size,
                out_size * pool_size,
                nobias=initial_bias is None,
                initialW=initialW,
                initial_bias=initial_bias,
            )

    def forward(self, x):
        """Apply the linear layer to ``x`` and take the maximum over each pool."""
        return F.maxout(self.linear(x), self.pool_size)
