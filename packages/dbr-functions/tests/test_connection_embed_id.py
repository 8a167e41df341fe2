import numpy
import pytest

from dbr.core import Variable, grad, testing, using_config
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.connection.embed_id import embed_id

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
V, D = 5, 3  # vocabulary size, embedding size


def embed_ref(x, W, ignore_label):
    y = numpy.zeros(x.shape + (W.shape[1],), W.dtype)
    for index in numpy.ndindex(*x.shape):
        if x[index] != ignore_label:
            y[index] = W[x[index]]
    return y


@testing.parameterize(
    *testing.product(
        {
            "x_data": [[0, 4, 2, 2], [[1, 0, 3], [3, 4, 1]]],
            "ignore_label": [None, 1, -1],
            "x_dtype": [numpy.int32, numpy.int64],
            "dtype": FLOATS,
        }
    )
)
class TestEmbedID(FunctionTestCase):
    def generate_inputs(self):
        x = numpy.array(self.x_data, self.x_dtype)
        if self.ignore_label == -1:
            x[..., 0] = -1
        W = numpy.random.uniform(-1, 1, (V, D)).astype(self.dtype)
        return x, W

    def forward(self, inputs, device):
        x, W = inputs
        return (embed_id(x, W, ignore_label=self.ignore_label),)

    def forward_expected(self, inputs):
        x, W = inputs
        return (embed_ref(x, W, self.ignore_label),)


@pytest.mark.parametrize("ignore_label", [None, 2, -1])
def test_gradient_adds_rows_of_repeated_ids(ignore_label):
    x = numpy.array([[2, 0, 2], [-1 if ignore_label == -1 else 4, 2, 0]], numpy.int32)
    W = Variable(numpy.random.uniform(-1, 1, (V, D)))
    gy = numpy.random.uniform(-1, 1, (2, 3, D))
    y = embed_id(x, W, ignore_label=ignore_label)
    (gW,) = grad([y], [W], [Variable(gy)])
    expected = numpy.zeros((V, D))
    for index in numpy.ndindex(*x.shape):
        if x[index] != ignore_label:
            expected[x[index]] += gy[index]
    testing.assert_allclose(gW, expected, rtol=1e-12)


def test_x_gets_no_gradient():
    x = Variable(numpy.array([0, 1], numpy.int32))
    W = Variable(numpy.ones((2, 2), numpy.float32))
    y = embed_id(x, W)
    y.grad = numpy.ones((2, 2), numpy.float32)
    y.backward()
    assert x.grad is None
    numpy.testing.assert_array_equal(W.grad, numpy.ones((2, 2), numpy.float32))


def test_empty_ids():
    W = Variable(numpy.ones((V, D), numpy.float32))
    y = embed_id(numpy.zeros((0, 2), numpy.int32), W, ignore_label=0)
    assert y.shape == (0, 2, D)
    (gW,) = grad([y], [W], [Variable(numpy.zeros((0, 2, D), numpy.float32))])
    numpy.testing.assert_array_equal(gW.array, numpy.zeros((V, D), numpy.float32))


def test_only_ignored_ids_with_empty_vocabulary():
    W = numpy.zeros((0, D), numpy.float32)
    y = embed_id(numpy.array([-1, -1], numpy.int32), W, ignore_label=-1)
    numpy.testing.assert_array_equal(y.array, numpy.zeros((2, D), numpy.float32))


def test_ignore_label_inside_the_vocabulary_gives_zeros():
    W = numpy.arange(6, dtype=numpy.float64).reshape(3, 2) + 1
    y = embed_id(numpy.array([0, 1, 2], numpy.int64), W, ignore_label=1).array
    numpy.testing.assert_array_equal(y, [[1.0, 2.0], [0.0, 0.0], [5.0, 6.0]])


@pytest.mark.parametrize("bad_id", [-1, V, 100])
@pytest.mark.parametrize("ignore_label", [None, 3])
def test_id_out_of_range(bad_id, ignore_label):
    x = numpy.array([0, bad_id, 1], numpy.int32)
    W = numpy.ones((V, D), numpy.float32)
    with pytest.raises(ValueError, match=rf"embed_id: expected every ID .* got {bad_id}"):
        embed_id(x, W, ignore_label=ignore_label)


@pytest.mark.gpu
def test_ids_on_a_gpu_are_checked_in_debug_mode_only():
    # Outside debug mode the check would read a flag back from the device on every call.
    device = testing.get_test_device("@cupy:0")
    x = device.send(numpy.array([0, V + 1, 1], numpy.int32))
    W = device.send(numpy.ones((V, D), numpy.float32))
    assert embed_id(x, W).shape == (3, D)
    message = rf"embed_id: expected every ID .* got {V + 1}"
    with using_config("debug", True), pytest.raises(ValueError, match=message):
        embed_id(x, W)


_EMBED = "EmbedIDFunction"

test_bad_input = bad_input_test(
    [
        ((numpy.array([0.0, 1.0]), numpy.ones((V, D))), InvalidType, (_EMBED, "x.dtype.kind")),
        (
            (numpy.array([0, 1], numpy.uint8), numpy.ones((V, D))),
            InvalidType,
            (_EMBED, "x.dtype.kind"),
        ),
        ((numpy.array(1, numpy.int32), numpy.ones((V, D))), InvalidType, (_EMBED, "x.ndim")),
        ((numpy.array([0, 1], numpy.int32), numpy.ones(V)), InvalidType, (_EMBED, "W.ndim")),
        (
            (numpy.array([0, 1], numpy.int32), numpy.ones((V, D), numpy.int32)),
            InvalidType,
            (_EMBED, "W.dtype.kind"),
        ),
    ],
    function=embed_id,
)


@pytest.mark.parametrize("ignore_label", [1.0, "1", True])
def test_ignore_label_not_int(ignore_label):
    with pytest.raises(TypeError, match=r"embed_id: expected ignore_label to be an int or None"):
        embed_id(numpy.array([0], numpy.int32), numpy.ones((V, D)), ignore_label=ignore_label)
