import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.inv import BatchInv, Inv, batch_inv, inv

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def well_conditioned(shape, dtype):
    """Random matrices plus (n + 1) * identity: far from singular.

    Each row's diagonal exceeds the sum of its off-diagonal magnitudes by more
    than 1, so every singular value is above 1 (Varah's bound). With only n * I
    a 1x1 input was uniform in (0, 2): near 0 the central difference of 1 / x
    (relative error about (eps / x) ** 2) missed the float64 tolerance.
    """
    n = shape[-1]
    a = numpy.random.uniform(-1, 1, shape) + (n + 1) * numpy.eye(n)
    return a.astype(dtype)


@testing.parameterize(
    *testing.product({"shape": [(1, 1), (3, 3)], "batched": [False], "dtype": FLOATS})
    + testing.product(
        {"shape": [(2, 3, 3), (1, 1, 1), (0, 2, 2)], "batched": [True], "dtype": FLOATS}
    )
)
class TestInv(FunctionTestCase):
    def generate_inputs(self):
        return (well_conditioned(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return ((batch_inv if self.batched else inv)(inputs[0]),)

    def forward_expected(self, inputs):
        a = inputs[0].astype(numpy.float64)
        return (numpy.linalg.inv(a).astype(self.dtype),)


def test_well_conditioned_keeps_every_singular_value_above_one():
    for shape in [(1, 1), (3, 3), (50, 2, 2)]:
        a = well_conditioned(shape, numpy.float64)
        assert numpy.linalg.svd(a, compute_uv=False).min() > 1


def test_inverse_times_input_is_identity():
    a = well_conditioned((4, 4), numpy.float64)
    y = inv(a)
    assert type(y.creator) is Inv
    testing.assert_allclose(y.array @ a, numpy.eye(4), atol=1e-12, rtol=0)
    assert type(batch_inv(a[None]).creator) is BatchInv


test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros((2, 2), numpy.float32),),
            ValueError,
            "inv: the input has a singular matrix",
        ),
        (
            batch_inv,
            (numpy.stack([numpy.eye(2), numpy.ones((2, 2))]).astype(numpy.float32),),
            {},
            ValueError,
            "batch_inv: the input has a singular matrix",
        ),
        (
            (Variable(numpy.ones((2, 3), numpy.float32)),),
            InvalidType,
            ("Inv", "a.shape[-1] == a.shape[-2]"),
        ),
        (
            (Variable(numpy.ones((2, 2, 2), numpy.float32)),),
            InvalidType,
            ("Inv", "a.ndim == 2"),
        ),
        (
            (Variable(numpy.ones((2, 2), numpy.int32)),),
            InvalidType,
            ("Inv", "a.dtype.kind == 'f'"),
        ),
        (
            batch_inv,
            (Variable(numpy.ones((2, 2), numpy.float32)),),
            {},
            InvalidType,
            ("BatchInv", "a.ndim == 3"),
        ),
        (
            batch_inv,
            (Variable(numpy.ones((2, 2, 3), numpy.float64)),),
            {},
            InvalidType,
            ("BatchInv", "a.shape[-1] == a.shape[-2]"),
        ),
    ],
    function=inv,
)
