import pathlib
import runpy
import types

import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.tensordot import TensorDot, tensordot

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


@testing.parameterize(
    *testing.product(
        {
            "a_shape,b_shape,axes": [
                ((5, 3, 2), (3, 2, 4), 2),
                ((5, 3, 2), (2, 4), 1),
                ((3, 2), (4, 5), 0),
                ((3, 2), (3, 2), 2),
                ((2, 3, 4), (4, 2, 5), ([0, 2], [1, 0])),
                ((2, 3, 4), (4, 3, 2), ((2, 1, 0), (0, 1, 2))),
                ((2, 3, 4), (5, 3), (1, 1)),
                ((2, 3, 4), (3, 5), ([-2], [-2])),
                ((4,), (4,), 1),
                ((), (2, 3), 0),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestTensorDot(FunctionTestCase):
    def generate_inputs(self):
        return families.uniform_inputs(self.dtype, self.a_shape, self.b_shape)

    def forward(self, inputs, device):
        a, b = inputs
        return (tensordot(a, b, axes=self.axes),)

    def forward_expected(self, inputs):
        a, b = (x.astype(numpy.float64) for x in inputs)
        return (numpy.asarray(numpy.tensordot(a, b, axes=self.axes)).astype(self.dtype),)


@testing.parameterize(
    *testing.product(
        {
            "a_shape,b_shape,axes": [
                ((5, 3, 2), (3, 2, 4), 2),
                ((2, 3, 4), (4, 2), ([0, 2], [1, 0])),
            ],
            "a_dtype": FLOATS,
            "b_dtype": FLOATS,
        }
    )
)
class TestTensorDotMixedDtypes(FunctionTestCase):
    """Operands of two dtypes: the product in NumPy's promotion, each gradient in its input's."""

    def before_test(self, test_name):
        families.loosen_for_float16(self, self.a_dtype, self.b_dtype)

    def generate_inputs(self):
        (a,) = families.uniform_inputs(self.a_dtype, self.a_shape)
        (b,) = families.uniform_inputs(self.b_dtype, self.b_shape)
        return a, b

    def forward(self, inputs, device):
        a, b = inputs
        return (tensordot(a, b, axes=self.axes),)

    def forward_expected(self, inputs):
        a, b = (x.astype(numpy.float64) for x in inputs)
        y = numpy.tensordot(a, b, axes=self.axes)
        return (y.astype(numpy.result_type(self.a_dtype, self.b_dtype)),)


def test_tensordot_dtype_argument():
    node = TensorDot(axes=1, dtype=numpy.float16)
    (y,) = node.apply((numpy.ones((2, 3), numpy.float32), numpy.ones((3, 4), numpy.float64)))
    assert y.dtype == numpy.float16
    testing.assert_allclose(y, numpy.full((2, 4), 3.0), atol=0, rtol=0)


def test_tensordot_records_its_node():
    y = tensordot(numpy.ones((2, 3), numpy.float32), numpy.ones((3, 4), numpy.float32), axes=1)
    assert type(y.creator) is TensorDot
    testing.assert_allclose(y, numpy.full((2, 4), 3.0), atol=0, rtol=0)


_A = numpy.ones((2, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (numpy.ones(a_shape, numpy.float32), numpy.ones(b_shape, numpy.float32)),
            {"axes": axes},
            ValueError,
            ("tensordot: expected", expect),
        )
        for a_shape, b_shape, axes, expect in [
            ((2, 3), (4, 5), 1, "a.shape[1] == b.shape[0]"),
            ((2, 3), (3,), 2, "a.ndim >= 2 and b.ndim >= 2"),
            ((2, 3), (3, 2), ([2], [0]), "distinct axes of a"),
            ((2, 3), (3, 2), ([1, 1], [0, 1]), "distinct axes of a"),
        ]
    ]
    + [
        (
            (_A, numpy.ones((3, 2), numpy.float32)),
            {"axes": ([1], [0, 0])},
            ValueError,
            "tensordot: expected as many axes of a as of b",
        ),
        (
            (_A, numpy.ones((3, 2), numpy.int32)),
            {"axes": 1},
            InvalidType,
            "b.dtype.kind == 'f'",
        ),
        (
            (_A.astype(numpy.int32), _A.astype(numpy.int32)),
            {"axes": 0},
            InvalidType,
            "a.dtype.kind == 'f'",
        ),
        ((_A, _A), {"axes": 1.0}, TypeError, "tensordot: expected axes to be an int or a pair"),
        (
            (_A, _A),
            {"axes": ([0], [0], [1])},
            ValueError,
            "tensordot: expected axes to be a pair of sequences",
        ),
        ((_A, _A), {"axes": ()}, ValueError, "tensordot: expected axes to be a pair"),
        ((_A, _A), {"axes": -1}, ValueError, "tensordot: expected axes to be non-negative"),
    ],
    function=tensordot,
)
