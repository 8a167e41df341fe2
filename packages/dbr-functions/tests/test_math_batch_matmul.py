import pathlib
import runpy
import types
import warnings

import numpy
import pytest

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.batch_matmul import BatchMatMul, batch_matmul

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


def as_matrices(x, trans):
    x = x if x.ndim == 3 else x[:, :, None]
    return x.swapaxes(1, 2) if trans else x


def quiet_batch_matmul(a, b, transa, transb):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return batch_matmul(a, b, transa=transa, transb=transb)


@testing.parameterize(
    *testing.product(
        {
            "a_shape,b_shape,transa,transb": [
                ((2, 3, 4), (2, 4, 5), False, False),
                ((2, 4, 3), (2, 4, 5), True, False),
                ((2, 3, 4), (2, 5, 4), False, True),
                ((2, 4, 3), (2, 5, 4), True, True),
                ((2, 3), (2, 3), True, False),
                ((2, 3), (2, 3), False, True),
                ((2, 3, 4), (2, 4), False, False),
                ((2, 4), (2, 1, 5), False, False),
                ((2, 3), (2, 3, 5), True, False),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestBatchMatMul(FunctionTestCase):
    def generate_inputs(self):
        return families.uniform_inputs(self.dtype, self.a_shape, self.b_shape)

    def forward(self, inputs, device):
        a, b = inputs
        return (quiet_batch_matmul(a, b, self.transa, self.transb),)

    def forward_expected(self, inputs):
        a, b = (x.astype(numpy.float64) for x in inputs)
        y = as_matrices(a, self.transa) @ as_matrices(b, self.transb)
        return (y.astype(self.dtype),)


def test_batch_matmul_is_deprecated():
    a = numpy.ones((2, 3), numpy.float32)
    with pytest.warns(DeprecationWarning, match="batch_matmul is deprecated. Use matmul"):
        y = batch_matmul(a, a, transb=True)
    assert type(y.creator) is BatchMatMul
    testing.assert_allclose(y, numpy.ones((2, 3, 3)), atol=0, rtol=0)


def _operands(a_shape, b_shape, a_dtype=numpy.float32, b_dtype=numpy.float32):
    """The arguments of quiet_batch_matmul: arrays of ones, neither transposed."""
    return numpy.ones(a_shape, a_dtype), numpy.ones(b_shape, b_dtype), False, False


test_bad_input = bad_input_test(
    [
        (_operands((2, 3, 4), (2, 5, 6)), InvalidType, ("BatchMatMul", "inner sizes")),
        (
            _operands((2, 3, 4), (3, 4, 6)),
            InvalidType,
            ("BatchMatMul", "a.shape[0] == b.shape[0]"),
        ),
        (_operands((2,), (2, 1)), InvalidType, ("BatchMatMul", "a.ndim >= 2")),
        (_operands((2, 1, 1, 1), (2, 1)), InvalidType, ("BatchMatMul", "a.ndim <= 3")),
        (
            _operands((2, 3), (2, 3), b_dtype=numpy.float64),
            InvalidType,
            ("BatchMatMul", "b.dtype == a.dtype"),
        ),
        (
            _operands((2, 3), (2, 3), numpy.int32, numpy.int32),
            InvalidType,
            ("BatchMatMul", "a.dtype.kind == 'f'"),
        ),
    ],
    function=quiet_batch_matmul,
)
