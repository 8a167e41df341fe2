"""Comparison of arrays in tests, the tolerances that suit each floating dtype, random inputs."""

import numpy

from dbr.core import backend
from dbr.core.variable import Variable

__all__ = ["FLOAT_DTYPES", "assert_allclose", "tolerances", "uniform"]

#: The floating dtypes a test runs over, those :func:`tolerances` knows.
FLOAT_DTYPES = (numpy.float16, numpy.float32, numpy.float64)

_float64 = numpy.dtype(numpy.float64)

# (atol, rtol) per check and dtype. Forward values are compared with a NumPy
# reference in the same dtype; backward checks compare backprop in the dtype
# with a float64 numerical gradient, so they absorb the dtype's rounding of
# every intermediate result too.
_TOLERANCES = {
    "forward": {
        numpy.dtype(numpy.float16): (1e-3, 1e-2),
        numpy.dtype(numpy.float32): (1e-5, 1e-4),
        numpy.dtype(numpy.float64): (1e-10, 1e-8),
    },
    "backward": {
        numpy.dtype(numpy.float16): (2e-3, 2e-2),
        numpy.dtype(numpy.float32): (1e-4, 1e-3),
        numpy.dtype(numpy.float64): (1e-6, 1e-5),
    },
    "double_backward": {
        numpy.dtype(numpy.float16): (3e-3, 3e-2),
        numpy.dtype(numpy.float32): (1e-4, 1e-3),
        numpy.dtype(numpy.float64): (1e-5, 1e-4),
    },
}


def tolerances(dtype, kind="forward"):
    """Return default tolerances ``{'atol': ..., 'rtol': ...}`` for a check in ``dtype``.

    Args:
        dtype: float16, float32 or float64 (a dtype, a type or its name).
        kind (str): ``'forward'`` (values against a reference in the same
            dtype), ``'backward'`` (:func:`~dbr.core.gradient_check.check_backward`
            with a float64 numerical gradient) or ``'double_backward'``.

    Returns:
        dict: keyword arguments for :func:`assert_allclose` or the gradient
        checks. Lower precision gives looser tolerances, and each order of
        differentiation looser than the one before.
    """
    table = _TOLERANCES.get(kind)
    if table is None:
        raise ValueError(
            f"tolerances: expected kind to be one of {sorted(_TOLERANCES)}, got {kind!r}"
        )
    dtype = numpy.dtype(dtype)
    if dtype not in table:
        raise ValueError(f"tolerances: expected a float16, float32 or float64 dtype, got {dtype}")
    atol, rtol = table[dtype]
    return {"atol": atol, "rtol": rtol}


def uniform(shape, dtype, low=-1, high=1):
    """Return a NumPy array of ``shape`` drawn uniformly from ``[low, high)``, cast to ``dtype``.

    It draws from NumPy's global generator (in float64, then casts), so a seeded
    test draws the same values as ``numpy.random.uniform(low, high, shape)``;
    ``shape=()`` gives a 0-d array.
    """
    return numpy.asarray(numpy.random.uniform(low, high, shape)).astype(dtype)


def _as_host_array(x, name):
    if isinstance(x, Variable):
        x = x.array
    if x is None:
        raise TypeError(
            f"assert_allclose: expected {name} to be an array, a Variable or a scalar, got None"
        )
    x = numpy.asarray(backend.to_cpu(x))
    if x.dtype.kind not in "biufc":
        raise TypeError(f"assert_allclose: expected {name} to have a numeric dtype, got {x.dtype}")
    return x


def _worst(values, count):
    """Flat indexes of the ``count`` largest ``values``, largest first."""
    return numpy.argsort(-values, axis=None, kind="stable")[:count]


def assert_allclose(x, y, atol=1e-5, rtol=1e-4, verbose=True):
    """Assert that ``|x - y| <= atol + rtol * |y|`` elementwise.

    ``x`` and ``y`` may be NumPy or CuPy arrays, Variables or scalars; they
    are moved to the CPU and compared in float64 (complex128 for complex
    input). Their shapes must be equal, except that a 0-d value is compared
    with every element of the other. NaNs in the same places, and infinities
    of the same sign, count as equal.

    Args:
        x: the computed value.
        y: the expected value.
        atol (float): absolute tolerance.
        rtol (float): tolerance relative to ``|y|``.
        verbose (bool): include both arrays in the failure message.

    Raises:
        AssertionError: naming the number of mismatched elements, the largest
            absolute and relative errors and the indexes of the worst elements.
    """
    x = _as_host_array(x, "x")
    y = _as_host_array(y, "y")
    if x.shape != y.shape and x.ndim and y.ndim:
        raise AssertionError(
            f"assert_allclose: shapes differ: x.shape == {x.shape}, y.shape == {y.shape}"
        )
    shape = numpy.broadcast_shapes(x.shape, y.shape)
    compute = numpy.complex128 if "c" in (x.dtype.kind, y.dtype.kind) else _float64
    xf = numpy.broadcast_to(x, shape).astype(compute)
    yf = numpy.broadcast_to(y, shape).astype(compute)
    with numpy.errstate(invalid="ignore", over="ignore"):
        err = numpy.abs(xf - yf)
        tol = atol + rtol * numpy.abs(yf)
        same_special = (numpy.isnan(xf) & numpy.isnan(yf)) | (numpy.isinf(xf) & (xf == yf))
        infinite = numpy.isinf(xf) | numpy.isinf(yf)
        bad = (~(err <= tol) | infinite) & ~same_special
        if not bad.any():
            return
        err = numpy.where(numpy.isnan(err), numpy.inf, err)
        rel = numpy.where(yf != 0, err / numpy.where(yf != 0, numpy.abs(yf), 1), numpy.inf)
        rel = numpy.where(err == 0, 0.0, rel)
        excess = numpy.where(bad, err - tol, -numpy.inf)
    err = numpy.atleast_1d(err)
    rel = numpy.atleast_1d(rel)
    out_shape = err.shape

    def index_of(flat):
        return tuple([int(i) for i in numpy.unravel_index(int(flat), out_shape)])

    def shown(index):
        return index if shape else ()

    i_abs = index_of(numpy.argmax(err))
    i_rel = index_of(numpy.argmax(rel))
    lines = [
        f"assert_allclose failed: {int(bad.sum())} of {bad.size} elements differ "
        f"(atol={atol}, rtol={rtol})",
        f"  shapes: {x.shape}, {y.shape}; dtypes: {x.dtype}, {y.dtype}",
        f"  max absolute error: {err[i_abs]:.6g} at index {shown(i_abs)}",
        f"  max relative error: {rel[i_rel]:.6g} at index {shown(i_rel)}",
        "  worst elements (largest excess of |x - y| over atol + rtol * |y|):",
    ]
    xs = numpy.atleast_1d(xf)
    ys = numpy.atleast_1d(yf)
    tols = numpy.atleast_1d(tol)
    for flat in _worst(numpy.atleast_1d(excess), min(5, int(bad.sum()))):
        i = index_of(flat)
        lines.append(
            f"    index {shown(i)}: x={xs[i]:.8g}, y={ys[i]:.8g}, |x - y|={err[i]:.6g}, "
            f"tolerance={tols[i]:.6g}"
        )
    if verbose:
        with numpy.printoptions(threshold=1000, edgeitems=5):
            lines.append("x: " + numpy.array2string(x, prefix="x: "))
            lines.append("y: " + numpy.array2string(y, prefix="y: "))
    raise AssertionError("\n".join(lines))
