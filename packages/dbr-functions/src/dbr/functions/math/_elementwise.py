"""The base nodes of the elementwise functions of one floating input.

:class:`UnaryElementwise` applies one ufunc; :class:`UnaryGrad` is the
first-order gradient node of such a function, computed from arrays in one
pass and itself differentiable.
"""

import numpy

from dbr.core import FunctionNode, backend, type_check
from dbr.core.utils import force_array
from dbr.functions._cpu import blockwise
from dbr.functions._gpu import kernel
from dbr.functions._tuning import MIN_PARALLEL_SIZE

_LightTypes = type_check.light_types
_ndarray = numpy.ndarray


def check_float_input(in_types):
    """Expect exactly one input, named ``x``, of a floating dtype."""
    type_check.argname(in_types, ("x",))
    type_check.expect(in_types[0].dtype.kind == "f")


class FloatInput(FunctionNode):
    """Base of the nodes of exactly one input, ``x``, of a floating dtype: their type check."""

    def check_type_forward(self, in_types):
        if type(in_types) is _LightTypes and len(in_types) == 1 and in_types[0].dtype.kind == "f":
            return  # the hot path: one floating array
        check_float_input(in_types)


class UnaryElementwise(FloatInput):
    """Elementwise ``y = xp.<ufunc>(x)`` of one floating input ``x``.

    A subclass either sets ``ufunc`` (the name of the NumPy/CuPy ufunc) or
    writes its own ``forward``, sets ``retains_output`` when its backward reads
    ``y`` rather than ``x``, and either names its gradient node in ``grad`` (a
    :class:`UnaryGrad` class, applied to the retained array and ``gy``) or
    writes its own ``backward``.
    """

    ufunc = None
    retains_output = False
    grad = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Chosen once per class so that forward, a hot path, does not branch on it.
        cls._retain = (
            FunctionNode.retain_outputs if cls.retains_output else FunctionNode.retain_inputs
        )

    @property
    def label(self):
        """str: the ufunc's name (``'sin'``, ``'exp'``), as Chainer labels these functions;
        the class name for a function with its own ``forward``."""
        return self.ufunc or type(self).__name__

    def forward(self, inputs):
        self._retain((0,))
        x = inputs[0]
        return (force_array(getattr(backend.get_array_module(x), self.ufunc)(x)),)

    def backward(self, indexes, grad_outputs):
        return self.apply_gradient(self.grad(), grad_outputs)


class UnaryGrad(FunctionNode):
    """``gx = gy * f'(z)`` of an elementwise ``f``, from ``z`` (its input or output) and ``gy``.

    A subclass writes ``gradient(xp, z, gy)``, the array ``gx`` (or names
    ``cpu_block``, a function ``(gx, z, gy)`` that writes ``gx`` from NumPy
    arrays, split into blocks on threads for large ones, and ``gpu_kernel``,
    the elementwise kernel spec for CuPy arrays), and ``grad_of_input(z, gy,
    ggx)``, the gradient with respect to ``z`` as a Variable built from dbr
    functions. ``gx`` is linear in ``gy``, so the gradient with respect to
    ``gy`` is this node again, applied to ``(z, ggx)``.
    """

    cpu_block = None
    gpu_kernel = None
    # Both inputs are always retained: declared once, no per-call attribute.
    _input_indexes_to_retain = (0, 1)

    def again(self):
        """A node of the same kind and parameters as this one."""
        return type(self)()

    def forward(self, inputs):
        z, gy = inputs
        xp = numpy if type(z) is _ndarray else backend.get_array_module(z)
        return (self.gradient(xp, z, gy),)

    def gradient(self, xp, z, gy):
        """The array ``gx`` from ``cpu_block`` or ``gpu_kernel``."""
        if xp is not numpy:
            return kernel(self.gpu_kernel)(z, gy)
        gx = numpy.empty(z.shape, z.dtype)
        # Small arrays skip blockwise's dispatch, which costs more than their passes.
        if z.size < MIN_PARALLEL_SIZE:
            self.cpu_block(gx, z, gy)
            return gx
        return blockwise(self.cpu_block, gx, z, gy)

    def backward(self, indexes, grad_outputs):
        z, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        return tuple(
            [
                self.grad_of_input(z, gy, ggx) if i == 0 else self.again().apply((z, ggx))[0]
                for i in indexes
            ]
        )
