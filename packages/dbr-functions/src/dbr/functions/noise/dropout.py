"""dropout: zero elements at random and scale the rest, in training mode only."""

import numpy

from dbr.core import FunctionNode, Variable, as_variable, backend, config, type_check
from dbr.core.utils import force_array, force_type
from dbr.functions._gpu import kernel
from dbr.functions.noise._random import check_ratio, keep_flags, skip_uniforms

# The mask from uniform draws u in [0, 1) and the output, in one pass.
_DROPOUT_ELEMENTWISE = {
    "in_params": "T x, float32 u, float32 ratio, T scale",
    "out_params": "T mask, T y",
    "operation": "mask = u >= ratio ? scale : (T)0; y = x * mask",
    "name": "dbr_dropout",
}

_ndarray = numpy.ndarray


class Dropout(FunctionNode):
    """``x * mask``, ``mask`` holding 0 and ``1 / (1 - ratio)``; see :func:`dropout`.

    Its gradient is the same node applied to the output gradient, so it is
    differentiable any number of times and every order uses the same mask.

    Args:
        ratio (float): the probability of dropping an element.
        mask (array or None): the mask to multiply by (``x``'s shape and dtype);
            None draws one at the first forward.
    """

    def __init__(self, ratio, mask=None):
        self.ratio = ratio
        self.mask = mask

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        type_check.expect(in_types.size() == 1)
        x_type = in_types[0]
        type_check.expect(x_type.dtype.kind == "f")
        mask = self.mask
        if mask is not None:
            type_check.expect(
                x_type.shape == type_check.make_variable(mask.shape, "mask.shape"),
                x_type.dtype == type_check.make_variable(mask.dtype, "mask.dtype"),
            )

    def forward(self, inputs):
        x = inputs[0]
        mask = self.mask
        if mask is None:
            xp = numpy if type(x) is _ndarray else backend.get_array_module(x)
            if xp is numpy and self.ratio == 0:
                # Every element is kept, times 1: the output is x. The uniforms are
                # still drawn (and dropped), so numpy.random stays in step with Chainer.
                skip_uniforms(x.size)
                self.mask = numpy.broadcast_to(numpy.ones((), x.dtype), x.shape)
                return (x,)
            if xp is not numpy:
                u = xp.random.random_sample(x.shape, dtype=numpy.float32)
                scale = force_type(x.dtype, 1.0 / (1.0 - self.ratio))
                self.mask, y = kernel(_DROPOUT_ELEMENTWISE)(x, u, self.ratio, scale)
                return (y,)
            mask = keep_flags(xp, x.shape, self.ratio).astype(x.dtype)
            mask *= force_type(x.dtype, 1.0 / (1.0 - self.ratio))
            self.mask = mask
        elif type(mask) is _ndarray and mask.size and not any(mask.strides) and mask.flat[0] == 1:
            # The unit mask of ratio 0 (x * 1 is x, bit for bit).
            return (x,)
        return (force_array(x * mask),)

    def backward(self, indexes, grad_outputs):
        return Dropout(self.ratio, self.mask).apply(grad_outputs)


def dropout(x, ratio=0.5, *, mask=None, return_mask=False):
    """Drop elements of ``x`` at random in training mode (``config.train``).

    Each element is kept with probability ``1 - ratio`` and scaled by
    ``1 / (1 - ratio)``, so the expectation is ``x``; the others become 0:
    ``y = x * mask`` with ``mask`` in ``{0, 1 / (1 - ratio)}``. Outside
    training mode ``x`` is returned unchanged (as a Variable). The mask is
    drawn from ``numpy.random`` (``cupy.random`` on the GPU), so
    ``numpy.random.seed`` reproduces it; the backward pass reuses it.

    Args:
        x (Variable or array): input of any shape, float16, float32 or float64.
        ratio (float): the probability of dropping an element, in ``[0, 1)``.
        mask (array or None): a mask to use instead of drawing one, of
            ``x``'s shape and dtype and on its device, holding the factors
            that multiply ``x`` (0 and ``1 / (1 - ratio)`` for a drawn one);
            ``ratio`` is then not used. A mask returned earlier with
            ``return_mask=True`` repeats that dropout.
        return_mask (bool): also return the mask.

    Returns:
        Variable, or ``(Variable, mask)`` with ``return_mask``: the mask is the
        array that multiplied ``x``, or None outside training mode.

    >>> import numpy as np
    >>> from dbr.core import using_config
    >>> np.random.seed(0)
    >>> x = np.ones((2, 4), np.float32)
    >>> dropout(x, 0.5).array
    array([[2., 2., 2., 2.],
           [0., 2., 0., 2.]], dtype=float32)
    >>> with using_config("train", False):
    ...     dropout(x, 0.5).array
    array([[1., 1., 1., 1.],
           [1., 1., 1., 1.]], dtype=float32)
    """
    check_ratio(ratio, "dropout")
    if not config.train:
        y = as_variable(x)
        return (y, None) if return_mask else y
    if isinstance(mask, Variable):
        mask = mask.array
    func = Dropout(ratio, mask)
    y = func.apply((x,))[0]
    if not return_mask:
        return y
    mask = func.mask
    # Ratio 0 keeps a read-only view of a single 1; the caller gets an array it owns.
    return y, (mask.copy() if isinstance(mask, _ndarray) and not mask.flags.writeable else mask)
