"""Bilinear: the bilinear layer of two inputs."""

import dbr.functions as F
from dbr.core import Link, Parameter, backend, initializers
from dbr.links._checks import ArgumentAssertionError, check_size


def _initializer(cls_name, arg, value, shape):
    """``value`` as an initializer; an array must have ``shape`` (else a ValueError that is
    also the AssertionError Chainer raises)."""
    if isinstance(value, backend.get_array_types()) and value.shape != shape:
        raise ArgumentAssertionError(
            f"{cls_name}: {arg} must have shape {shape}, got shape {value.shape}"
        )
    return initializers.get_initializer(value)


class Bilinear(Link):
    """Bilinear layer: ``y = e1^T W e2 + V1^T e1 + V2^T e2 + b`` per sample.

    See :func:`dbr.functions.bilinear`; with ``J = left_size``,
    ``K = right_size`` and ``L = out_size``,
    :math:`y_{il} = \\sum_{jk} e^1_{ij} e^2_{ik} W_{jkl} + \\sum_j e^1_{ij} V^1_{jl}
    + \\sum_k e^2_{ik} V^2_{kl} + b_l`.

    Args:
        left_size (int): the size ``J`` of each left input sample.
        right_size (int): the size ``K`` of each right input sample.
        out_size (int): the size ``L`` of each output sample.
        nobias (bool): if True, there are no ``V1``, ``V2`` and ``b`` (all
            three are None) and the output is ``e1^T W e2`` only.
        initialW: initializer of ``W``, of shape ``(J, K, L)`` when an array;
            None uses :class:`~dbr.core.initializers.LeCunNormal`.
        initial_bias (tuple or None): initializers ``(V1, V2, b)``, arrays
            of shapes ``(J, L)``, ``(K, L)`` and ``(L,)``; None uses
            LeCunNormal for ``V1`` and ``V2`` and zeros for ``b``.

    An initial array of the wrong shape raises a ValueError that is also an
    AssertionError (the type Chainer raises).

    Attributes:
        in_sizes (tuple): ``(left_size, right_size)``.
        nobias (bool): as given.
        W, V1, V2, b (Parameter): the parameters (the last three None with
            ``nobias``).

    >>> import numpy
    >>> link = Bilinear(2, 3, 4)
    >>> link(numpy.ones((5, 2), numpy.float32), numpy.ones((5, 3), numpy.float32)).shape
    (5, 4)
    """

    def __init__(
        self, left_size, right_size, out_size, nobias=False, initialW=None, initial_bias=None
    ):
        super().__init__()
        check_size("Bilinear", "left_size", left_size, False)
        check_size("Bilinear", "right_size", right_size, False)
        check_size("Bilinear", "out_size", out_size, False)
        self.in_sizes = (left_size, right_size)
        self.nobias = nobias
        W_shape = (left_size, right_size, out_size)
        with self.init_scope():
            self.W = Parameter(_initializer("Bilinear", "initialW", initialW, W_shape), W_shape)
            if nobias:
                self.V1 = self.V2 = self.b = None
                return
            V1_shape, V2_shape = (left_size, out_size), (right_size, out_size)
            b_shape = (out_size,)
            if initial_bias is None:
                V1 = initializers.LeCunNormal()
                V2 = initializers.LeCunNormal()
                b = initializers.Constant(0)
            elif isinstance(initial_bias, tuple) and len(initial_bias) == 3:
                V1, V2, b = (
                    _initializer("Bilinear", f"initial_bias[{i}]", value, shape)
                    for i, (value, shape) in enumerate(
                        zip(initial_bias, (V1_shape, V2_shape, b_shape))
                    )
                )
            else:
                raise ValueError(
                    "Bilinear: initial_bias must be None or a tuple (V1, V2, b), "
                    f"got {initial_bias!r}"
                )
            self.V1 = Parameter(V1, V1_shape)
            self.V2 = Parameter(V2, V2_shape)
            self.b = Parameter(b, b_shape)

    def forward(self, e1, e2):
        """Apply the layer.

        Args:
            e1 (Variable or array): left input of shape ``(n, ...)`` whose
                axes after the first hold ``left_size`` elements.
            e2 (Variable or array): right input of shape ``(n, ...)`` whose
                axes after the first hold ``right_size`` elements.

        Returns:
            Variable: of shape ``(n, out_size)`` and the inputs' dtype.
        """
        if self.nobias:
            return F.bilinear(e1, e2, self.W)
        return F.bilinear(e1, e2, self.W, self.V1, self.V2, self.b)
