import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.connection.bilinear import bilinear

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
I, K, L = 3, 2, 4  # batch, right size, output size


def bilinear_ref(e1, e2, W, V1=None, V2=None, b=None):
    """The defining sums, in float64, one output element at a time."""
    e1 = e1.reshape(len(e1), -1).astype(numpy.float64)
    e2 = e2.reshape(len(e2), -1).astype(numpy.float64)
    J, K, L = W.shape
    y = numpy.zeros((len(e1), L))
    for i in range(len(e1)):
        for l in range(L):  # the index of the formula
            s = 0.0
            for j in range(J):
                for k in range(K):
                    s += e1[i, j] * e2[i, k] * float(W[j, k, l])
            if V1 is not None:
                s += sum(e1[i, j] * float(V1[j, l]) for j in range(J))
                s += sum(e2[i, k] * float(V2[k, l]) for k in range(K))
                s += float(b[l])
            y[i, l] = s
    return y


@testing.parameterize(
    *testing.product(
        {
            "e1_shape": [(I, 3), (I, 2, 2)],
            "linear_terms": [True, False],
            "dtype": FLOATS,
        }
    )
)
class TestBilinear(FunctionTestCase):
    def generate_inputs(self):
        J = int(numpy.prod(self.e1_shape[1:]))

        def uniform(*shape):
            return numpy.random.uniform(-1, 1, shape).astype(self.dtype)

        inputs = (uniform(*self.e1_shape), uniform(I, K), uniform(J, K, L))
        if self.linear_terms:
            inputs += (uniform(J, L), uniform(K, L), uniform(L))
        return inputs

    def forward(self, inputs, device):
        return (bilinear(*inputs),)

    def forward_expected(self, inputs):
        return (bilinear_ref(*inputs).astype(self.dtype),)


def test_gradients_against_einsum():
    e1 = Variable(numpy.random.uniform(-1, 1, (I, 3)))
    e2 = Variable(numpy.random.uniform(-1, 1, (I, K)))
    W = Variable(numpy.random.uniform(-1, 1, (3, K, L)))
    V1 = Variable(numpy.random.uniform(-1, 1, (3, L)))
    V2 = Variable(numpy.random.uniform(-1, 1, (K, L)))
    b = Variable(numpy.random.uniform(-1, 1, L))
    gy = numpy.random.uniform(-1, 1, (I, L))
    y = bilinear(e1, e2, W, V1, V2, b)
    ge1, ge2, gW, gV1, gV2, gb = grad([y], [e1, e2, W, V1, V2, b], [Variable(gy)])
    a1, a2, aW = e1.array, e2.array, W.array
    testing.assert_allclose(
        ge1, numpy.einsum("ik,jkl,il->ij", a2, aW, gy) + gy @ V1.array.T, rtol=1e-12
    )
    testing.assert_allclose(
        ge2, numpy.einsum("ij,jkl,il->ik", a1, aW, gy) + gy @ V2.array.T, rtol=1e-12
    )
    testing.assert_allclose(gW, numpy.einsum("ij,ik,il->jkl", a1, a2, gy), rtol=1e-12)
    testing.assert_allclose(gV1, a1.T @ gy, rtol=1e-12)
    testing.assert_allclose(gV2, a2.T @ gy, rtol=1e-12)
    testing.assert_allclose(gb, gy.sum(axis=0), rtol=1e-12)


def test_empty_batch():
    e1 = Variable(numpy.zeros((0, 3), numpy.float32))
    e2 = Variable(numpy.zeros((0, K), numpy.float32))
    W = Variable(numpy.ones((3, K, L), numpy.float32))
    y = bilinear(e1, e2, W)
    assert y.shape == (0, L)
    ge1, gW = grad([y], [e1, W], [Variable(numpy.zeros((0, L), numpy.float32))])
    assert ge1.shape == (0, 3)
    numpy.testing.assert_array_equal(gW.array, numpy.zeros((3, K, L), numpy.float32))


@pytest.mark.parametrize(
    "given", [("V1",), ("V2",), ("b",), ("V1", "V2"), ("V1", "b"), ("V2", "b")]
)
def test_linear_parameters_all_or_none(given):
    kwargs = {
        "V1": numpy.ones((3, L)),
        "V2": numpy.ones((K, L)),
        "b": numpy.ones(L),
    }
    kwargs = {name: kwargs[name] for name in given}
    message = r"bilinear: expected V1, V2 and b to be given all together or not at all, got only "
    with pytest.raises(ValueError, match=message + ", ".join(given)):
        bilinear(numpy.ones((I, 3)), numpy.ones((I, K)), numpy.ones((3, K, L)), **kwargs)


def _ones(*shape, dtype=numpy.float64):
    return numpy.ones(shape, dtype)


_BILINEAR = "BilinearFunction"

test_bad_input = bad_input_test(
    [
        (
            (_ones(I, 3, dtype=numpy.int32), _ones(I, K), _ones(3, K, L)),
            InvalidType,
            (_BILINEAR, "e1.dtype.kind"),
        ),
        (
            (_ones(I, 3), _ones(I, K, dtype=numpy.float32), _ones(3, K, L)),
            InvalidType,
            (_BILINEAR, "e2.dtype"),
        ),
        (
            (_ones(I, 3), _ones(I, K), _ones(3, K, L, dtype=numpy.float32)),
            InvalidType,
            (_BILINEAR, "W.dtype"),
        ),
        ((_ones(3), _ones(I, K), _ones(3, K, L)), InvalidType, (_BILINEAR, "e1.ndim")),
        ((_ones(I, 3), _ones(K), _ones(3, K, L)), InvalidType, (_BILINEAR, "e2.ndim")),
        (
            (_ones(I, 3), _ones(I + 1, K), _ones(3, K, L)),
            InvalidType,
            (_BILINEAR, "e1.shape", "e2.shape"),
        ),
        ((_ones(I, 3), _ones(I, K), _ones(3, K * L)), InvalidType, (_BILINEAR, "W.ndim")),
        (
            (_ones(I, 4), _ones(I, K), _ones(3, K, L)),
            InvalidType,
            (_BILINEAR, "e1.shape", "W.shape"),
        ),
        (
            (_ones(I, 3), _ones(I, K + 1), _ones(3, K, L)),
            InvalidType,
            (_BILINEAR, "e2.shape", "W.shape"),
        ),
        (
            (_ones(I, 3), _ones(I, K), _ones(3, K, L), _ones(3, L + 1), _ones(K, L), _ones(L)),
            InvalidType,
            (_BILINEAR, "V1.shape"),
        ),
        (
            (_ones(I, 3), _ones(I, K), _ones(3, K, L), _ones(3, L), _ones(K + 1, L), _ones(L)),
            InvalidType,
            (_BILINEAR, "V2.shape"),
        ),
        (
            (_ones(I, 3), _ones(I, K), _ones(3, K, L), _ones(3, L), _ones(K, L), _ones(L + 1)),
            InvalidType,
            (_BILINEAR, "b.shape"),
        ),
        (
            (
                _ones(I, 3),
                _ones(I, K),
                _ones(3, K, L),
                _ones(3, L),
                _ones(K, L),
                _ones(L, dtype=numpy.float32),
            ),
            InvalidType,
            (_BILINEAR, "b.dtype"),
        ),
    ],
    function=bilinear,
)
