"""The GPU kernels of dbr.functions, built through dbr.gpu on first use.

Each kernel is defined as a module-level dict named ``*_ELEMENTWISE``,
``*_REDUCTION`` or ``*_RAW`` in the module that uses it, holding the keyword
arguments of ``dbr.gpu.elementwise``, ``reduce`` or ``raw``. Only this
module imports dbr.gpu, and only when a kernel is first asked for, which
happens on CuPy arrays alone: the CPU paths never import it.

``ACC_PREAMBLE`` defines ``dbr_acc<T>::type``, the type a kernel computes
in: float for float16, ``T`` itself otherwise.

``reads_values`` is the one rule for checks that read array values back to
the host (labels, IDs, indexes in range): always on NumPy, on a device in
debug mode only.
"""

import numpy

from dbr.core import FunctionNode, config

ACC_PREAMBLE = """
template <typename T> struct dbr_acc { typedef T type; };
template <> struct dbr_acc<float16> { typedef float type; };
"""


def reads_values(x):
    """Whether a check that reads the values of ``x`` back to the host runs now.

    Always for a NumPy array; for a device array only in debug mode
    (``config.debug``), since the read-back synchronizes the device on every
    call (Chainer checks such values in debug mode only).
    """
    return type(x) is numpy.ndarray or config.debug


def kernel(spec, kind="elementwise"):
    """The CuPy kernel of the definition ``spec``, built (through dbr.gpu) once.

    Args:
        spec (dict): the keyword arguments of ``dbr.gpu.<kind>``, a module constant.
        kind (str): ``'elementwise'``, ``'reduce'`` or ``'raw'``.

    Returns:
        cupy.ElementwiseKernel, cupy.ReductionKernel or cupy.RawKernel.
    """
    from dbr.gpu.kernels import from_definition

    return from_definition(spec, kind)


def use_cudnn(dtype):
    """Whether a convolution of ``dtype`` on CuPy arrays goes through cuDNN (``'>=auto'``)."""
    from dbr.gpu import cudnn

    return cudnn.should_use_cudnn(">=auto", dtype)


def cudnn(operation, *args):
    """``dbr.gpu.cudnn.<operation>(*args)``, or None when no cuDNN engine takes it.

    The caller then computes the same result with im2col + matmul; so does
    Chainer for the configurations its cuDNN path rejects.
    """
    from dbr.gpu import cudnn

    try:
        return getattr(cudnn, operation)(*args)
    except cudnn.CudnnNotSupportedError:
        return None


class ElementwiseGrad(FunctionNode):
    """``gx = k(cond, gy, *scalars)`` by one elementwise kernel, linear in ``gy``.

    The gradient of an activation whose derivative depends only on a
    constant array ``cond`` (its input or output, not differentiated
    through): its own gradient is the same node applied to ``ggx``. GPU only.

    Args:
        spec (dict): an ``*_ELEMENTWISE`` definition with inputs
            ``(cond, gy, *scalars)`` and one output ``gx`` of ``gy``'s dtype.
        cond: the array the derivative is computed from.
        scalars: the kernel's scalar arguments.
    """

    def __init__(self, spec, cond, *scalars):
        self.spec = spec
        self.cond = cond
        self.scalars = scalars

    def forward(self, inputs):
        return (kernel(self.spec)(self.cond, inputs[0], *self.scalars),)

    def backward(self, indexes, grad_outputs):
        return ElementwiseGrad(self.spec, self.cond, *self.scalars).apply(grad_outputs)
