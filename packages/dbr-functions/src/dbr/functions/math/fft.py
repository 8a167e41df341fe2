"""fft and ifft: discrete Fourier transforms of complex data given as (real, imag) pairs."""

import numpy

from dbr.core import FunctionNode, Variable, type_check
from dbr.core.backend import get_array_module

_float64 = numpy.dtype(numpy.float64)


class FFT(FunctionNode):
    """The one-dimensional DFT (``'fft'``) or its inverse (``'ifft'``) over the last axis.

    Inputs and outputs are the real and imaginary parts as separate arrays.
    """

    def __init__(self, method):
        if method not in ("fft", "ifft"):
            raise ValueError(f"FFT: expected method 'fft' or 'ifft', got {method!r}")
        self._method = method

    @property
    def label(self):
        """``'FFT'`` or ``'IFFT'``."""
        return self._method.upper()

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("real", "imag"))
        r_type, i_type = in_types
        type_check.expect(
            r_type.dtype.kind == "f",
            i_type.dtype == r_type.dtype,
            r_type.ndim > 0,
            i_type.shape == r_type.shape,
        )

    def forward(self, inputs):
        real, imag = inputs
        xp = get_array_module(real)
        z = xp.empty(real.shape, numpy.complex128 if real.dtype == _float64 else numpy.complex64)
        z.real = real
        z.imag = imag
        y = getattr(xp.fft, self._method)(z)
        return y.real.astype(real.dtype), y.imag.astype(real.dtype)

    def backward(self, indexes, grad_outputs):
        # The adjoint of the (inverse) DFT M is conj(M); for g = gr + i gi,
        # M(gi + i gr) = M(i conj(g)) = i conj(conj(M) g): the transform of the swapped
        # parts is the gradient with its parts swapped.
        gr, gi = grad_outputs
        if gr is None:
            gr = _zeros_like(gi)
        elif gi is None:
            gi = _zeros_like(gr)
        gxi, gxr = FFT(self._method).apply((gi, gr))
        return gxr, gxi


def _zeros_like(v):
    return Variable(v.xp.zeros_like(v.array), requires_grad=False)


def fft(x):
    """Discrete Fourier transform over the last axis.

    ``y[..., k] = sum_j x[..., j] exp(-2 pi i j k / n)`` for complex ``x``
    given as its real and imaginary parts (NumPy's ``fft.fft``).

    Args:
        x (tuple): ``(real, imag)``, two Variables or arrays of one floating
            dtype and shape, with at least one axis.

    Returns:
        tuple: ``(real, imag)`` of the transform, Variables of the inputs'
        shape and dtype.

    >>> import numpy as np
    >>> re, im = fft((np.array([1.0, 0.0], np.float32), np.zeros(2, np.float32)))
    >>> re.array, im.array
    (array([1., 1.], dtype=float32), array([0., 0.], dtype=float32))
    """
    real, imag = x
    return FFT("fft").apply((real, imag))


def ifft(x):
    """Inverse discrete Fourier transform over the last axis.

    ``y[..., j] = (1 / n) sum_k x[..., k] exp(2 pi i j k / n)`` for complex
    ``x`` given as its real and imaginary parts (NumPy's ``fft.ifft``).

    Args:
        x (tuple): ``(real, imag)``, two Variables or arrays of one floating
            dtype and shape, with at least one axis.

    Returns:
        tuple: ``(real, imag)`` of the inverse transform, Variables of the
        inputs' shape and dtype.

    >>> import numpy as np
    >>> re, im = ifft((np.array([2.0, 2.0], np.float32), np.zeros(2, np.float32)))
    >>> re.array
    array([2., 0.], dtype=float32)
    """
    real, imag = x
    return FFT("ifft").apply((real, imag))
