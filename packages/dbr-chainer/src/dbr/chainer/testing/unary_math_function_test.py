"""``unary_math_function_unittest``: the tests of an elementwise function of one input."""

import unittest
import warnings

import numpy

from dbr.chainer.testing import attr

__all__ = ["unary_math_function_unittest"]


def _func_name(func):
    from dbr.core.function import Function

    if isinstance(func, Function):
        return type(func).__name__.lower()
    return func.__name__


def _func_class(func):
    from dbr.core.function import Function

    if isinstance(func, Function):
        return type(func)
    from dbr.chainer import functions

    return getattr(functions, func.__name__.capitalize(), None)


def _make_data_default(shape, dtype):
    return tuple(numpy.random.uniform(-1, 1, shape).astype(dtype, copy=False) for _ in range(3))


def _squared(func):
    def squared(x):
        y = func(x)
        return y * y

    return squared


def _set_options(test, forward_options, backward_options, double_backward_options):
    if test.dtype == numpy.float16:
        half_eps = float(numpy.finfo(numpy.float16).eps)
        test.forward_options = {"atol": half_eps, "rtol": half_eps}
        loose = {"eps": 2**-4, "atol": 2**-4, "rtol": 2**-4, "dtype": numpy.float64}
        test.backward_options = dict(loose)
        test.double_backward_options = dict(loose)
    else:
        test.forward_options = {"atol": 1e-4, "rtol": 1e-4}
        test.backward_options = {"dtype": numpy.float64, "atol": 1e-4, "rtol": 1e-4}
        test.double_backward_options = {"dtype": numpy.float64, "atol": 1e-4, "rtol": 1e-4}
    test.forward_options.update(forward_options or {})
    test.backward_options.update(backward_options or {})
    test.double_backward_options.update(double_backward_options or {})


def unary_math_function_unittest(
    func,
    func_expected=None,
    label_expected=None,
    make_data=None,
    is_linear=None,
    forward_options=None,
    backward_options=None,
    double_backward_options=None,
):
    """Class decorator adding tests of a unary elementwise function ``func``.

    The class (a ``unittest.TestCase``) gets ``test_forward_cpu``/``_gpu``
    (``func`` against ``func_expected(x, dtype=...)``, by default NumPy's
    function of the same name), ``test_backward_cpu``/``_gpu`` and
    ``test_double_backward_cpu``/``_gpu`` (the ``_gpu`` ones marked ``gpu``),
    plus ``test_label`` when the function has a FunctionNode class of its
    capitalized name; it is then parameterized over ``shape`` ``(3, 2)`` and
    ``()`` and ``dtype`` float16, float32 and float64. ``make_data(shape,
    dtype)`` returns ``(x, gy, ggx)``; the ``*_options`` dicts update the
    default tolerances (float16's forward within its machine epsilon, its
    gradients within 2**-4).
    """
    from dbr.chainer.testing import parameterized
    from dbr.core import backend, gradient_check
    from dbr.core.function import Function
    from dbr.core.testing.array import assert_allclose
    from dbr.core.variable import Variable

    new_style = not isinstance(func, Function)
    name = _func_name(func)
    func_class = _func_class(func)
    if func_expected is None:
        func_expected = getattr(numpy, name, None)
        if func_expected is None:
            raise ValueError(f"NumPy has no functions corresponding to Chainer function '{name}'.")
    if label_expected is None:
        label_expected = name
    elif func_class is None:
        raise ValueError(
            "Expected label is given even though Chainer function does not have its label."
        )
    if make_data is None:
        make_data = _make_data_default if new_style else lambda s, d: _make_data_default(s, d)[:2]
    if is_linear is not None:
        warnings.warn("is_linear option is deprecated", DeprecationWarning, stacklevel=2)

    def setUp(self):
        data = make_data(self.shape, self.dtype)
        if new_style:
            self.x, self.gy, self.ggx = data
        else:
            self.x, self.gy = data
        _set_options(self, forward_options, backward_options, double_backward_options)

    def check_forward(self, x_data):
        y = func(Variable(x_data))
        self.assertEqual(y.data.dtype, x_data.dtype)
        expected = func_expected(backend.to_cpu(x_data), dtype=x_data.dtype)
        assert_allclose(expected, y.data, **self.forward_options)

    def check_backward(self, x_data, y_grad):
        gradient_check.check_backward(func, x_data, y_grad, **self.backward_options)

    def check_double_backward(self, x_data, y_grad, x_grad_grad):
        f = _squared(func) if is_linear else func
        gradient_check.check_double_backward(
            f, x_data, y_grad, x_grad_grad, **self.double_backward_options
        )

    def to_gpu(x):
        return backend.to_device(backend.get_device("@cupy:0"), x)

    def test_forward_cpu(self):
        self.check_forward(self.x)

    @attr.gpu
    def test_forward_gpu(self):
        self.check_forward(to_gpu(self.x))

    def test_backward_cpu(self):
        self.check_backward(self.x, self.gy)

    @attr.gpu
    def test_backward_gpu(self):
        self.check_backward(to_gpu(self.x), to_gpu(self.gy))

    def test_double_backward_cpu(self):
        self.check_double_backward(self.x, self.gy, self.ggx)

    @attr.gpu
    def test_double_backward_gpu(self):
        self.check_double_backward(to_gpu(self.x), to_gpu(self.gy), to_gpu(self.ggx))

    def test_label(self):
        self.assertEqual(func_class().label, label_expected)

    members = [setUp, check_forward, test_forward_cpu, test_forward_gpu]
    members += [check_backward, test_backward_cpu, test_backward_gpu]
    if new_style:
        members += [check_double_backward, test_double_backward_cpu, test_double_backward_gpu]
    if func_class is not None:
        members.append(test_label)

    def decorate(klass):
        assert issubclass(klass, unittest.TestCase)
        for member in members:
            setattr(klass, member.__name__, member)
        return parameterized.parameterize(
            *parameterized.product(
                {"shape": [(3, 2), ()], "dtype": [numpy.float16, numpy.float32, numpy.float64]}
            )
        )(klass)

    return decorate
