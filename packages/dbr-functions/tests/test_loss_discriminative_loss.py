import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.discriminative_loss import discriminative_margin_based_clustering_loss

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference(emb, labels, delta_v, delta_d, n_inst, norm, alpha, beta, gamma):
    """Chainer's three terms, computed instance by instance and image by image."""
    emb = emb.astype(numpy.float64)
    n_batch = emb.shape[0]

    def length(v):
        v = numpy.ravel(v)
        return numpy.abs(v).sum() if norm == 1 else numpy.sqrt((v * v).sum())

    means = numpy.zeros((n_inst, n_batch, n_inst))
    for c in range(n_inst):
        for b in range(n_batch):
            pixels = [emb[b, :, h, w] for h, w in zip(*numpy.nonzero(labels[b] == c + 1))]
            if pixels:
                means[c, b] = numpy.mean(pixels, axis=0)
    regularization = sum(length(means[c]) for c in range(n_inst)) / (n_inst * n_batch)

    variance = 0.0
    for c in range(n_inst):
        total = 0.0
        count = 0
        for b in range(n_batch):
            for h in range(labels.shape[1]):
                for w in range(labels.shape[2]):
                    inside = labels[b, h, w] == c + 1
                    d = length(means[c, b] - emb[b, :, h, w]) if inside else 0.0
                    total += max(d - delta_v, 0.0) ** 2
                    count += int(inside)
        variance += total / max(count, 1)
    variance /= n_inst

    distance = 0.0
    pairs = 0
    for a in range(n_inst):
        for c in range(a + 1, n_inst):
            for b in range(n_batch):
                distance += max(2 * delta_d - length(means[a, b] - means[c, b]), 0.0) ** 2
            pairs += 1
    distance /= max(pairs * n_batch, 1)
    return alpha * variance, beta * distance, gamma * regularization


@testing.parameterize(
    *testing.product(
        {
            "shape": [(2, 3, 4, 5), (1, 2, 3, 3), (2, 1, 2, 3)],
            "norm": [1, 2],
            "deltas": [(0.5, 1.5), (0.1, 0.2)],
            "dtype": FLOATS,
        }
    )
)
class TestDiscriminativeLoss(FunctionTestCase):
    dodge_nondifferentiable = True

    def generate_inputs(self):
        n_batch, n_inst, height, width = self.shape
        emb = numpy.random.uniform(-1, 1, self.shape).astype(self.dtype)
        labels = numpy.random.randint(0, n_inst + 1, (n_batch, height, width))
        labels[0, 0, 0] = n_inst + 1  # an id beyond max_embedding_dim is ignored
        return emb, labels.astype(numpy.int32)

    def _args(self):
        delta_v, delta_d = self.deltas
        return delta_v, delta_d, self.shape[1], self.norm, 1.5, 0.5, 0.01

    def forward(self, inputs, device):
        return discriminative_margin_based_clustering_loss(*inputs, *self._args())

    def forward_expected(self, inputs):
        return tuple(
            numpy.asarray(v).astype(self.dtype) for v in reference(*inputs, *self._args())
        )


def test_defaults_and_absent_instances():
    emb = numpy.zeros((1, 3, 1, 2), numpy.float32)
    emb[0, :, 0, 1] = [1.0, 0.0, 0.0]
    labels = numpy.array([[[1, 2]]], numpy.int32)
    var, dist, reg = discriminative_margin_based_clustering_loss(emb, labels, 0.5, 1.5, 3)
    assert float(var.array) == 0.0
    # Means (0,0,0), (1,0,0) and (0,0,0) for the absent id 3: L1 distances 1, 0, 1.
    testing.assert_allclose(dist.array, (4 + 9 + 4) / 3, atol=0, rtol=1e-6)
    testing.assert_allclose(reg.array, 0.001 * 1 / 3, atol=0, rtol=1e-6)


def test_l2_gradient_is_finite_at_zero_distance():
    emb = Variable(numpy.zeros((1, 2, 2, 2)))
    labels = numpy.array([[[1, 1], [0, 0]]], numpy.int32)
    terms = discriminative_margin_based_clustering_loss(emb, labels, 0.5, 1.5, 2, norm=2)
    (g,) = grad([terms[0] + terms[1] + terms[2]], [emb])
    assert numpy.isfinite(g.array).all()


def test_l2_float16_second_derivative_is_finite_at_small_distances():
    # The pixels lie 0.02 from their mean, inside delta_v: the squared distance 4e-4
    # must not overflow float16 on the way to a zero second derivative.
    emb = Variable(numpy.array([[[[0.0, 0.04]]]], numpy.float16))
    labels = numpy.array([[[1, 1]]], numpy.int32)
    variance = discriminative_margin_based_clustering_loss(emb, labels, 0.5, 1.5, 1, norm=2)[0]
    (g,) = grad([variance], [emb], enable_double_backprop=True)
    (gg,) = grad([g * numpy.ones_like(g.array)], [emb])
    numpy.testing.assert_array_equal(gg.array, numpy.zeros((1, 1, 1, 2), numpy.float16))


_EMB = numpy.zeros((1, 2, 2, 2), numpy.float32)
_LABELS = numpy.zeros((1, 2, 2), numpy.int32)
_DISCRIMINATIVE = "discriminative_margin_based_clustering_loss"

test_bad_input = bad_input_test(
    [
        (
            (_EMB, _LABELS, 0.5, 1.5, 2),
            {"norm": 3},
            ValueError,
            f"{_DISCRIMINATIVE}: expected norm to be 1 or 2, got 3",
        ),
        (
            (_EMB, _LABELS, 0.5, 1.5, 0),
            ValueError,
            f"{_DISCRIMINATIVE}: expected max_embedding_dim > 0, got 0",
        ),
        (
            (_EMB, _LABELS, 0.5, 1.5, 2.0),
            TypeError,
            f"{_DISCRIMINATIVE}: expected max_embedding_dim to be an int",
        ),
        (
            (_EMB, _LABELS, 0.5, 1.5, 3),
            ValueError,
            "embeddings.shape[1] == max_embedding_dim, got 2 != 3",
        ),
        (
            (_EMB, _LABELS, None, 1.5, 2),
            TypeError,
            f"{_DISCRIMINATIVE}: expected delta_v to be a real number",
        ),
        (
            (_EMB.astype(numpy.int32), _LABELS, 0.5, 1.5, 2),
            InvalidType,
            (_DISCRIMINATIVE, "embeddings.dtype.kind == 'f'"),
        ),
        ((_EMB[0], _LABELS, 0.5, 1.5, 2), InvalidType, (_DISCRIMINATIVE, "embeddings.ndim == 4")),
        (
            (_EMB, _LABELS.astype(numpy.float32), 0.5, 1.5, 2),
            InvalidType,
            (_DISCRIMINATIVE, "labels.dtype.kind in 'iu'"),
        ),
        (
            (_EMB, _LABELS[:, :1], 0.5, 1.5, 2),
            InvalidType,
            (_DISCRIMINATIVE, "labels.shape == (embeddings.shape[0],) + embeddings.shape[2:]"),
        ),
    ],
    function=discriminative_margin_based_clustering_loss,
)
