import math
import re
import sys

import numpy
import pytest

INSTALL_HINT = 'pip install "dbr-functions[special]"'
pytest.importorskip("scipy.special", reason=f"the special functions need SciPy: {INSTALL_HINT}")

from dbr.core import Variable, grad, testing  # noqa: E402
from dbr.core.testing import FunctionTestCase, bad_input_test  # noqa: E402
from dbr.core.type_check import InvalidType  # noqa: E402
from dbr.functions.math.gamma import digamma, lgamma, polygamma, zeta  # noqa: E402

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# B_2, B_4, ..., B_12
BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730]


def digamma_ref(x):
    """psi(x) by reflection, the recurrence psi(x) = psi(x + 1) - 1/x and the asymptotic series."""
    if x < 0.5:
        return digamma_ref(1.0 - x) - math.pi / math.tan(math.pi * x)
    total = 0.0
    while x < 15.0:
        total -= 1.0 / x
        x += 1.0
    series = math.log(x) - 0.5 / x
    power = 1.0
    for k, b in enumerate(BERNOULLI, 1):
        power /= x * x
        series -= b / (2 * k) * power
    return total + series


def hurwitz_zeta_ref(s, q, n=20):
    """zeta(s, q) for s > 1, q > 0 by Euler-Maclaurin summation after ``n`` terms."""
    total = sum((q + k) ** -s for k in range(n))
    a = q + n
    total += a ** (1 - s) / (s - 1) + 0.5 * a**-s
    rising = s  # s (s + 1) ... (s + 2j - 2)
    for j, b in enumerate(BERNOULLI, 1):
        total += b / math.factorial(2 * j) * rising * a ** (-s - 2 * j + 1)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return total


def polygamma_ref(n, x):
    if n == 0:
        return digamma_ref(x)
    return (-1) ** (n + 1) * math.factorial(n) * hurwitz_zeta_ref(n + 1, x)


def elementwise(f, *args, dtype):
    y = numpy.vectorize(f, otypes=[numpy.float64])(*args)
    return numpy.asarray(y).astype(dtype)


def uniform(low, high, shape, dtype):
    return numpy.asarray(numpy.random.uniform(low, high, shape)).astype(dtype)


def test_references_agree_with_known_values():
    assert digamma_ref(1.0) == pytest.approx(-0.5772156649015329, rel=1e-14)
    assert hurwitz_zeta_ref(2.0, 1.0) == pytest.approx(math.pi**2 / 6, rel=1e-14)
    assert hurwitz_zeta_ref(4.0, 1.0) == pytest.approx(math.pi**4 / 90, rel=1e-14)


UNARY = {
    "lgamma": (lgamma, math.lgamma),
    "digamma": (digamma, digamma_ref),
}


@testing.parameterize(
    *testing.product({"function": list(UNARY), "shape": [(3, 2), ()], "dtype": FLOATS})
)
class TestUnaryGammaFunction(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(0.5, 4.0, self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (UNARY[self.function][0](inputs[0]),)

    def forward_expected(self, inputs):
        x = inputs[0]
        return (elementwise(UNARY[self.function][1], x.astype(numpy.float64), dtype=x.dtype),)


@testing.parameterize(
    *testing.product(
        {
            "shapes": [((3, 2), (3, 2)), ((), (3, 2)), ((2,), (3, 2)), ((3, 2), (2,))],
            "dtype": FLOATS,
        }
    )
)
class TestPolyGamma(FunctionTestCase):
    def before_test(self, test_name):
        if self.dtype == numpy.float16:
            # float16 rounds each gradient of size ~10 by ~1e-2; the combined direction cancels
            self.check_double_backward_options = {"atol": 1e-2, "rtol": 5e-2}

    def generate_inputs(self):
        n_shape, x_shape = self.shapes
        n = numpy.asarray(numpy.random.randint(0, 3, n_shape)).astype(numpy.int32)
        return n, uniform(0.8, 3.0, x_shape, self.dtype)

    def forward(self, inputs, device):
        return (polygamma(*inputs),)

    def forward_expected(self, inputs):
        n, x = inputs
        return (elementwise(polygamma_ref, n, x.astype(numpy.float64), dtype=x.dtype),)


@testing.parameterize(
    *testing.product(
        {"x": [2.0, 3.5, numpy.array([2.5, 4.0])], "shape": [(3, 2)], "dtype": FLOATS}
    ),
    *testing.product({"x": [2.0], "shape": [()], "dtype": FLOATS}),
)
class TestZeta(FunctionTestCase):
    def before_test(self, test_name):
        if self.dtype == numpy.float16:
            # float16 rounds each gradient of size ~10 by ~1e-2; the combined direction cancels
            self.check_double_backward_options = {"atol": 1e-2, "rtol": 5e-2}

    def generate_inputs(self):
        return (uniform(0.8, 3.0, self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (zeta(self.x, inputs[0]),)

    def forward_expected(self, inputs):
        q = inputs[0]
        return (elementwise(hurwitz_zeta_ref, self.x, q.astype(numpy.float64), dtype=q.dtype),)


def test_lgamma_of_negative_and_pole_arguments():
    y = lgamma(numpy.array([-0.5, -2.5, 0.0, -1.0]))
    expected = [math.lgamma(-0.5), math.lgamma(-2.5), math.inf, math.inf]
    testing.assert_allclose(y, numpy.array(expected), atol=0, rtol=1e-12)


def test_digamma_of_negative_arguments():
    x = numpy.array([-0.5, -2.3])
    testing.assert_allclose(digamma(x), numpy.vectorize(digamma_ref)(x), atol=0, rtol=1e-12)


def test_derivatives_climb_the_family():
    x = Variable(numpy.array([0.7, 1.9, 3.3]))
    (g1,) = grad([lgamma(x)], [x], enable_double_backprop=True)
    (g2,) = grad([g1], [x], enable_double_backprop=True)
    (g3,) = grad([g2], [x])
    xs = x.array
    testing.assert_allclose(g1, numpy.vectorize(digamma_ref)(xs), atol=0, rtol=1e-12)
    testing.assert_allclose(g2, [polygamma_ref(1, v) for v in xs], atol=0, rtol=1e-12)
    testing.assert_allclose(g3, [polygamma_ref(2, v) for v in xs], atol=0, rtol=1e-12)


def test_polygamma_accepts_a_python_int_order():
    x = numpy.array([1.0, 2.5], numpy.float32)
    y = polygamma(1, x)
    assert y.dtype == numpy.float32
    testing.assert_allclose(y, [polygamma_ref(1, 1.0), polygamma_ref(1, 2.5)])


def test_polygamma_gives_no_gradient_to_the_order():
    n = Variable(numpy.array([1, 2], numpy.int32))
    x = Variable(numpy.array([1.5, 2.0]))
    gn, gx = grad([polygamma(n, x)], [n, x])
    assert gn is None
    testing.assert_allclose(gx, [polygamma_ref(2, 1.5), polygamma_ref(3, 2.0)], rtol=1e-12)


def test_zeta_gradient_in_q_and_none_in_x():
    x = Variable(numpy.array(3.0))
    q = Variable(numpy.array([1.0, 2.0]))
    y = zeta(x, q)
    testing.assert_allclose(y, [hurwitz_zeta_ref(3.0, 1.0), hurwitz_zeta_ref(3.0, 2.0)])
    gq, gx = grad([y], [q, x])
    assert gx is None
    testing.assert_allclose(gq, [-3 * hurwitz_zeta_ref(4.0, v) for v in (1.0, 2.0)], rtol=1e-12)


def test_zeta_pole_and_known_value():
    testing.assert_allclose(zeta(1.0, numpy.array([1.0])), [math.inf])
    testing.assert_allclose(zeta(2.0, numpy.array([1.0])), [math.pi**2 / 6], rtol=1e-14)


test_bad_input = bad_input_test(
    [
        (lgamma, (numpy.array([1, 2], numpy.int32),), {}, InvalidType, ("LGamma", "x.dtype.kind")),
        (
            digamma,
            (numpy.array([1, 2], numpy.int64),),
            {},
            InvalidType,
            ("DiGamma", "x.dtype.kind"),
        ),
        (
            polygamma,
            (numpy.array([1.0], numpy.float32), numpy.ones(2, numpy.float32)),
            {},
            InvalidType,
            ("PolyGamma", "n.dtype.kind"),
        ),
        (
            polygamma,
            (numpy.array([1], numpy.int32), numpy.ones(2, numpy.int32)),
            {},
            InvalidType,
            ("PolyGamma", "x.dtype.kind"),
        ),
        (
            polygamma,
            (numpy.ones(3, numpy.int32), numpy.ones(2, numpy.float32)),
            {},
            InvalidType,
            ("PolyGamma", "n.shape", "x.shape"),
        ),
        (zeta, (2.0, numpy.array([1, 2], numpy.int32)), {}, InvalidType, ("Zeta", "q.dtype.kind")),
        (zeta, (numpy.ones(3), numpy.ones(2)), {}, InvalidType, ("Zeta", "x.shape", "q.shape")),
        (
            zeta,
            (numpy.ones((2, 2)), numpy.ones(2)),
            {},
            InvalidType,
            ("Zeta", "x.shape", "q.shape"),
        ),
        (
            zeta,
            ("2", numpy.ones(2)),
            {},
            TypeError,
            ("zeta: expected x to be a real scalar", "got str"),
        ),
    ]
)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda x: lgamma(x), "lgamma"),
        (lambda x: digamma(x), "digamma"),
        (lambda x: polygamma(1, x), "polygamma"),
        (lambda x: zeta(2.0, x), "zeta"),
    ],
)
def test_without_scipy_the_error_says_how_to_install_it(monkeypatch, call, name):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    with pytest.raises(ImportError, match=rf"^{name} needs SciPy.*{re.escape(INSTALL_HINT)}"):
        call(numpy.array([1.5], numpy.float32))
