import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.einsum import DiagEinSum, EinSum, einsum

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# subscripts, operand shapes, and a reference other than NumPy's einsum (None for it).
CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)], None),
    ("ij,jk", [(2, 3), (3, 4)], None),
    ("ij->ji", [(2, 3)], None),
    ("ij->", [(2, 3)], None),
    ("ij", [(2, 3)], None),
    ("ii->i", [(3, 3)], None),
    ("ii", [(3, 3)], None),
    ("iij->ji", [(2, 2, 3)], None),
    ("i,i->", [(4,), (4,)], None),
    ("i,j->ij", [(2,), (3,)], None),
    ("ii,i->i", [(3, 3), (3,)], None),
    ("ij,ij->i", [(2, 3), (2, 3)], None),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)], None),
    ("Ab,bC->AC", [(2, 3), (3, 2)], None),
    ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 4)], None),
    ("...i,...i", [(2, 3), (2, 3)], None),
    ("...i,i", [(2, 3), (3,)], None),
    ("i...->...", [(3, 2, 2)], None),
    ("...,...->...", [(2, 3), (2, 3)], None),
    ("ij...,jk...->ik...", [(2, 3, 2), (3, 4, 2)], None),
    ("...ij->ij", [(2, 3)], None),
    ("...i,j...->ij", [(2,), (3,)], None),
]


@testing.parameterize(*testing.product({"subscripts,shapes,reference": CASES, "dtype": FLOATS}))
class TestEinSum(FunctionTestCase):
    def generate_inputs(self):
        return tuple(
            numpy.random.uniform(-1, 1, shape).astype(self.dtype) for shape in self.shapes
        )

    def forward(self, inputs, device):
        return (einsum(self.subscripts, *inputs),)

    def forward_expected(self, inputs):
        xs = [x.astype(numpy.float64) for x in inputs]
        if self.reference is not None:
            y = self.reference(*xs)
        else:
            y = numpy.einsum(self.subscripts, *xs)
        return (numpy.asarray(y).astype(self.dtype),)


@testing.parameterize(*testing.product({"dtype": FLOATS}))
class TestEinSumSublistFormat(FunctionTestCase):
    def generate_inputs(self):
        return (
            numpy.random.uniform(-1, 1, (2, 3)).astype(self.dtype),
            numpy.random.uniform(-1, 1, (3, 4)).astype(self.dtype),
        )

    def forward(self, inputs, device):
        a, b = inputs
        return (einsum(a, [0, 1], b, [1, 2], [2, 0]),)

    def forward_expected(self, inputs):
        a, b = (x.astype(numpy.float64) for x in inputs)
        return ((a @ b).T.astype(self.dtype),)


def test_sublist_format_with_ellipsis_and_implicit_output():
    a = numpy.random.uniform(-1, 1, (2, 3, 4))
    b = numpy.random.uniform(-1, 1, (2, 4))
    y = einsum(a, [Ellipsis, 27, 28], b, [Ellipsis, 28])
    testing.assert_allclose(y, numpy.einsum("...bc,...c", a, b), atol=1e-14, rtol=0)


def test_gradient_of_a_trace_is_the_identity_and_is_a_diag_einsum():
    x = Variable(numpy.random.uniform(-1, 1, (3, 3)))
    y = einsum("ii", x)
    assert type(y.creator) is EinSum
    (gx,) = grad([y], [x], enable_double_backprop=True)
    assert type(gx.creator) is DiagEinSum
    testing.assert_allclose(gx, numpy.eye(3), atol=0, rtol=0)


@pytest.mark.parametrize(
    ("in_subs", "out_sub", "shapes", "out_shape", "expected"),
    [
        # a letter no input has: constant along it
        ("i", "ij", [(3,)], (3, 2), lambda x: numpy.repeat(x[:, None], 2, axis=1)),
        ("", "i", [()], (3,), lambda x: numpy.full(3, x)),
        (",ij", "i", [(), (3, 4)], (3,), lambda a, b: a * b.sum(axis=1)),
        # a repeated letter: zero off the diagonal
        ("i", "ii", [(3,)], (3, 3), numpy.diag),
    ],
)
def test_diag_einsum(in_subs, out_sub, shapes, out_shape, expected):
    from dbr.core.gradient_check import check_backward, check_double_backward

    rng = numpy.random.default_rng(0)
    xs = [rng.uniform(-1, 1, shape) for shape in shapes]

    def f(*inputs):
        return DiagEinSum(in_subs, out_sub, out_shape).apply(inputs)[0]

    testing.assert_allclose(f(*xs).array, expected(*xs), atol=1e-14, rtol=0)
    gy = rng.uniform(-1, 1, out_shape)
    ggxs = [rng.uniform(-1, 1, shape) for shape in shapes]
    check_backward(f, xs, gy)
    check_double_backward(f, xs, gy, ggxs)


@pytest.mark.parametrize(
    ("subscripts", "shapes"),
    [("...->", [(2,)]), ("j...i->ij", [(2, 1, 3)]), ("i,...i->", [(2,), (3, 2)])],
)
def test_summing_over_ellipsis_axes_is_a_value_error(subscripts, shapes):
    operands = [numpy.ones(shape, numpy.float32) for shape in shapes]
    with pytest.raises(ValueError, match="einsum: summing over the 1 axes of '...'"):
        einsum(subscripts, *operands)
    # an ellipsis of no axes may be left out
    einsum("...i->i", numpy.ones(2, numpy.float32))


def test_third_order_gradient_of_a_cubic_form():
    x_data = numpy.array([1.0, 2.0, -1.0])
    x = Variable(x_data)
    y = einsum("i,j,k->", x, x, x)  # (sum x)^3
    (g1,) = grad([y], [x], enable_double_backprop=True)
    (g2,) = grad([g1], [x], [Variable(numpy.ones(3))], enable_double_backprop=True)
    (g3,) = grad([g2], [x], [Variable(numpy.ones(3))])
    s = x_data.sum()
    testing.assert_allclose(g1, numpy.full(3, 3 * s**2), atol=0, rtol=1e-14)
    testing.assert_allclose(g2, numpy.full(3, 3 * 6 * s), atol=0, rtol=1e-14)
    testing.assert_allclose(g3, numpy.full(3, 9 * 6.0), atol=0, rtol=1e-14)


@pytest.mark.parametrize(
    ("subscripts", "shapes", "message"),
    [
        ("ij,jk->ik", [(2, 3), (4, 5)], "x1.shape[0] == x0.shape[1]"),
        ("ij->i", [(2, 3, 4)], "x0.ndim == 2"),
        ("...ij->i", [(2,)], "x0.ndim == 2"),
        ("ii->i", [(2, 3)], "x0.shape[1] == x0.shape[0]"),
        ("...i,...i", [(2, 3), (4, 3)], "x1.shape[0] == x0.shape[0]"),
        # no broadcasting: every '...' covers the same axes
        ("...i,...i", [(2,), (1, 2)], "x0.ndim == 2"),
        ("...i,...i", [(2, 3), (3,)], "x1.ndim == 2"),
    ],
)
def test_inconsistent_shapes_raise_invalid_type(subscripts, shapes, message):
    operands = [numpy.ones(shape, numpy.float32) for shape in shapes]
    with pytest.raises(InvalidType) as info:
        einsum(subscripts, *operands)
    assert "EinSum" in str(info.value) and message in str(info.value)


def test_dtypes_raise_invalid_type():
    a = numpy.ones((2, 2), numpy.float32)
    with pytest.raises(InvalidType, match="x1.dtype == x0.dtype"):
        einsum("ij,jk", a, a.astype(numpy.float64))
    with pytest.raises(InvalidType, match="x0.dtype.kind == 'f'"):
        einsum("ij", a.astype(numpy.int32))


V = numpy.ones(2, numpy.float32)


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((), ValueError, "einsum: expected subscripts and at least one operand"),
        (("ij,jk",), ValueError, r"einsum: expected one operand per subscript term \(2\), got 0"),
        (("i$", V), ValueError, "einsum: '\\$' is not a valid subscript"),
        (("i->i->i", V), ValueError, "einsum: expected at most one '->'"),
        (("i.->i", V), ValueError, "einsum: '.' is only allowed as '...'"),
        (("i->ii", V), ValueError, "einsum: output subscript 'i' appears more than once"),
        (("i->j", V), ValueError, "einsum: output subscript 'j' does not appear"),
        (("i->...", V), ValueError, r"einsum: output subscript \.\.\. does not appear"),
        (("......", V), ValueError, "einsum: expected at most one '...' per operand"),
        (("i", [1.0, 2.0]), TypeError, "einsum: expected operand 0 to be a Variable or an array"),
        ((V, ["i"]), TypeError, "einsum: expected subscript lists of ints"),
    ],
)
def test_malformed_subscripts_raise_before_computing(args, error, match):
    with pytest.raises(error, match=match):
        einsum(*args)
