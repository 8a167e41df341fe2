import numpy
import pytest

from dbr.core import DebugMode, Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.softmax_cross_entropy import softmax_cross_entropy

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _log_softmax(x):
    x = x.astype(numpy.float64)
    m = x.max(axis=1, keepdims=True)
    return x - m - numpy.log(numpy.exp(x - m).sum(axis=1, keepdims=True))


def _reference(x, t, normalize, class_weight, ignore_label, reduce):
    log_p = _log_softmax(x)
    loss = numpy.zeros(t.shape)
    count = 0
    for index in numpy.ndindex(*t.shape):
        label = t[index]
        if label == ignore_label:
            continue
        count += 1
        n, rest = index[0], index[1:]
        weight = 1.0 if class_weight is None else float(class_weight[label])
        loss[index] = -weight * log_p[(n, label) + rest]
    if reduce == "no":
        return loss
    return loss.sum() / max(count if normalize else x.shape[0], 1)


def _soft_reference(x, t, soft_target_loss, reduce):
    log_p = _log_softmax(x)
    t = t.astype(numpy.float64)
    loss = -(t * log_p).sum(axis=1)
    if soft_target_loss == "kl-divergence":
        loss += (t * numpy.log(t + 1e-7)).sum(axis=1)
    return loss.mean() if reduce == "mean" else loss


def _labels(shape, n_class, ignore_label, with_ignored):
    t = numpy.random.randint(0, n_class, shape).astype(numpy.int32)
    if with_ignored and t.size:
        t.ravel()[:: max(t.size // 3, 1)] = ignore_label
    return t


_HARD_CASES = testing.product(
    {
        "shape": [(4, 3), (3, 4, 2), (2, 3, 2, 2)],
        "dtype": FLOATS,
        "reduce": ["mean", "no"],
        "with_ignored": [False, True],
        "weighted": [False, True],
        "double_backprop": [False, True],
    }
) + testing.product(
    {
        "shape": [(4, 3)],
        "dtype": [numpy.float32],
        "reduce": ["mean"],
        "with_ignored": [True],
        "weighted": [False],
        "double_backprop": [False, True],
        "normalize": [False],
        "cache_score": [False],
        "ignore_label": [1, -5],
    }
)


@testing.parameterize(*_HARD_CASES)
class TestSoftmaxCrossEntropy(FunctionTestCase):
    normalize = True
    cache_score = True
    ignore_label = -1

    def before_test(self, test_name):
        if self.dtype == numpy.float16:
            self.check_backward_options = {"atol": 5e-3, "rtol": 5e-2}
            self.check_double_backward_options = {"atol": 5e-3, "rtol": 5e-2}

    def generate_inputs(self):
        n_class = self.shape[1]
        x = numpy.random.uniform(-2, 2, self.shape).astype(self.dtype)
        t_shape = self.shape[:1] + self.shape[2:]
        self.t = _labels(t_shape, n_class, self.ignore_label, self.with_ignored)
        self.class_weight = (
            numpy.random.uniform(0.5, 2, n_class).astype(self.dtype) if self.weighted else None
        )
        return (x,)

    def forward(self, inputs, device):
        class_weight = None if self.class_weight is None else device.send(self.class_weight)
        loss = softmax_cross_entropy(
            inputs[0],
            device.send(self.t),
            normalize=self.normalize,
            cache_score=self.cache_score,
            class_weight=class_weight,
            ignore_label=self.ignore_label,
            reduce=self.reduce,
            enable_double_backprop=self.double_backprop,
        )
        return (loss,)

    def forward_expected(self, inputs):
        loss = _reference(
            inputs[0], self.t, self.normalize, self.class_weight, self.ignore_label, self.reduce
        )
        return (numpy.asarray(loss).astype(self.dtype),)


@testing.parameterize(
    *testing.product(
        {
            "shape": [(4, 3), (3, 4, 2)],
            "dtype": FLOATS,
            "reduce": ["mean", "no"],
            "soft_target_loss": ["cross-entropy", "kl-divergence"],
            "double_backprop": [False, True],
        }
    )
)
class TestSoftmaxCrossEntropySoftTarget(FunctionTestCase):
    def before_test(self, test_name):
        if self.dtype == numpy.float16:
            self.check_backward_options = {"atol": 5e-3, "rtol": 5e-2}
            self.check_double_backward_options = {"atol": 5e-3, "rtol": 5e-2}

    def generate_inputs(self):
        x = numpy.random.uniform(-2, 2, self.shape).astype(self.dtype)
        t = numpy.random.uniform(0.1, 1, self.shape)
        self.t = (t / t.sum(axis=1, keepdims=True)).astype(self.dtype)
        return (x,)

    def forward(self, inputs, device):
        loss = softmax_cross_entropy(
            inputs[0],
            device.send(self.t),
            reduce=self.reduce,
            enable_double_backprop=self.double_backprop,
            soft_target_loss=self.soft_target_loss,
        )
        return (loss,)

    def forward_expected(self, inputs):
        loss = _soft_reference(inputs[0], self.t, self.soft_target_loss, self.reduce)
        return (numpy.asarray(loss).astype(self.dtype),)


@testing.parameterize(*testing.product({"double_backprop": [False, True]}))
class TestUnnormalizedSoftTarget(FunctionTestCase):
    """Targets that do not sum to 1 still get the exact gradient."""

    dtype = numpy.float64

    def generate_inputs(self):
        self.t = numpy.random.uniform(0, 2, (3, 4))
        return (numpy.random.uniform(-2, 2, (3, 4)),)

    def forward(self, inputs, device):
        loss = softmax_cross_entropy(
            inputs[0], device.send(self.t), enable_double_backprop=self.double_backprop
        )
        return (loss,)

    def forward_expected(self, inputs):
        return (numpy.asarray(_soft_reference(inputs[0], self.t, "cross-entropy", "mean")),)


def test_chainer_example():
    x = numpy.array([[-1, 0, 1, 2], [2, 0, 1, -1]], numpy.float32)
    t = numpy.array([3, 0], numpy.int32)
    y = softmax_cross_entropy(x, t)
    assert y.shape == () and y.dtype == numpy.float32
    assert float(y.array) == pytest.approx(0.44018972, rel=1e-6)
    expected = numpy.mean([-_log_softmax(x)[i, c] for i, c in enumerate(t)])
    assert float(y.array) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("double_backprop", [False, True])
def test_large_logits_are_stable(dtype, double_backprop):
    x = numpy.array([[1000.0, 0.0, -1000.0], [-500.0, -510.0, -520.0]]).astype(dtype)
    t = numpy.array([1, 0], numpy.int32)
    v = Variable(x)
    y = softmax_cross_entropy(v, t, reduce="no", enable_double_backprop=double_backprop)
    expected = -_log_softmax(x)[[0, 1], t]
    numpy.testing.assert_allclose(y.array.astype(numpy.float64), expected, rtol=1e-3)
    y.grad = numpy.ones(2, dtype)
    y.backward()
    assert numpy.isfinite(v.grad).all()


@pytest.mark.parametrize("double_backprop", [False, True])
def test_all_labels_ignored(double_backprop):
    x = Variable(numpy.random.uniform(-1, 1, (3, 4)).astype(numpy.float32))
    t = numpy.full(3, -1, numpy.int32)
    y = softmax_cross_entropy(x, t, enable_double_backprop=double_backprop)
    assert float(y.array) == 0.0
    y.backward()
    numpy.testing.assert_array_equal(x.grad, numpy.zeros((3, 4)))


@pytest.mark.parametrize("double_backprop", [False, True])
@pytest.mark.parametrize("reduce", ["mean", "no"])
def test_empty_batch(double_backprop, reduce):
    x = Variable(numpy.zeros((0, 4), numpy.float32))
    t = numpy.zeros(0, numpy.int32)
    y = softmax_cross_entropy(x, t, reduce=reduce, enable_double_backprop=double_backprop)
    assert y.shape == (() if reduce == "mean" else (0,))
    if reduce == "mean":
        assert float(y.array) == 0.0
        y.backward()
        assert x.grad.shape == (0, 4)


def test_fast_and_composed_paths_agree_to_second_order():
    x = numpy.random.uniform(-2, 2, (5, 4, 3))
    t = numpy.random.randint(0, 4, (5, 3)).astype(numpy.int32)
    t[0, 0] = -1
    w = numpy.random.uniform(0.5, 2, 4)
    results = []
    for double_backprop in (False, True):
        v = Variable(x)
        loss = softmax_cross_entropy(
            v, t, class_weight=w, normalize=False, enable_double_backprop=double_backprop
        )
        (gx,) = grad([loss], [v], enable_double_backprop=True)
        (ggx,) = grad([gx], [v], [Variable(x * 0.5)])
        results.append((loss.array, gx.array, ggx.array))
    for a, b in zip(*results):
        numpy.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_backward_twice_on_one_graph():
    x = Variable(numpy.random.uniform(-1, 1, (3, 5)).astype(numpy.float32))
    t = numpy.array([0, 4, 2], numpy.int32)
    loss = softmax_cross_entropy(x, t)
    (g1,) = grad([loss], [x])
    (g2,) = grad([loss], [x])
    numpy.testing.assert_allclose(g1.array, g2.array, rtol=1e-6)


@pytest.mark.parametrize("cache_score", [True, False])
def test_gradient_is_softmax_minus_onehot(cache_score):
    x = numpy.random.uniform(-1, 1, (3, 5))
    t = numpy.array([0, 4, -1], numpy.int32)
    v = Variable(x)
    softmax_cross_entropy(v, t, cache_score=cache_score).backward()
    y = numpy.exp(_log_softmax(x))
    expected = y.copy()
    expected[[0, 1], [0, 4]] -= 1
    expected[2] = 0
    numpy.testing.assert_allclose(v.grad, expected / 2, rtol=1e-12)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("soft", [False, True])
def test_cached_softmax_y(dtype, soft):
    x = numpy.random.uniform(-1, 1, (3, 4)).astype(dtype)
    t = numpy.full((3, 4), 0.25, dtype) if soft else numpy.array([0, 3, -1], numpy.int32)
    loss = softmax_cross_entropy(Variable(x), t)
    y = loss.creator.y
    assert y.dtype == dtype and y.shape == x.shape
    tol = {"rtol": 1e-3} if dtype == numpy.float16 else {"rtol": 1e-6}
    numpy.testing.assert_allclose(y, numpy.exp(_log_softmax(x)), **tol)
    loss.backward()
    assert loss.creator.y is None
    assert softmax_cross_entropy(x, t, cache_score=False).creator.y is None


def test_soft_onehot_target_equals_hard_label():
    x = numpy.random.uniform(-1, 1, (4, 3)).astype(numpy.float32)
    t = numpy.array([0, 2, 1, 1], numpy.int32)
    onehot = numpy.eye(3, dtype=numpy.float32)[t]
    hard = softmax_cross_entropy(x, t).array
    soft = softmax_cross_entropy(x, onehot).array
    kl = softmax_cross_entropy(x, onehot, soft_target_loss="kl-divergence").array
    numpy.testing.assert_allclose(soft, hard, rtol=1e-6)
    numpy.testing.assert_allclose(kl, hard, rtol=1e-5)


def test_soft_target_of_another_float_dtype():
    x = numpy.random.uniform(-1, 1, (4, 3)).astype(numpy.float32)
    t = numpy.full((4, 3), 1 / 3)
    y = softmax_cross_entropy(x, t)
    assert y.dtype == numpy.float32
    numpy.testing.assert_allclose(
        y.array, _soft_reference(x, t, "cross-entropy", "mean"), rtol=1e-6
    )


def test_labels_as_variable_and_int64():
    x = numpy.random.uniform(-1, 1, (4, 3)).astype(numpy.float32)
    t = numpy.array([0, 2, 1, 1])
    expected = _reference(x, t, True, None, -1, "mean")
    numpy.testing.assert_allclose(softmax_cross_entropy(x, t).array, expected, rtol=1e-6)
    numpy.testing.assert_allclose(
        softmax_cross_entropy(x, Variable(t.astype(numpy.int32))).array, expected, rtol=1e-6
    )


def test_class_weight_of_another_dtype():
    x = numpy.random.uniform(-1, 1, (4, 3)).astype(numpy.float32)
    t = numpy.array([0, 2, 1, -1], numpy.int32)
    w = numpy.array([1.0, 2.0, 3.0])
    y = softmax_cross_entropy(x, t, class_weight=w, reduce="no")
    assert y.dtype == numpy.float32
    numpy.testing.assert_allclose(y.array, _reference(x, t, True, w, -1, "no"), rtol=1e-6)


def test_float16_large_batch_accumulates_in_float32():
    x = numpy.zeros((4096, 2), numpy.float16)
    t = numpy.zeros(4096, numpy.int32)
    y = softmax_cross_entropy(x, t)
    assert y.dtype == numpy.float16
    assert float(y.array) == pytest.approx(numpy.log(2), rel=1e-3)


@pytest.mark.parametrize("double_backprop", [False, True])
@pytest.mark.parametrize("label", [4, -2])
def test_label_out_of_range_in_debug_mode(double_backprop, label):
    x = numpy.zeros((3, 4), numpy.float32)
    t = numpy.array([0, label, -1], numpy.int32)
    pattern = (
        r"softmax_cross_entropy: .*0 <= t < x.shape\[1\] == 4 or t == ignore_label == -1"
        rf".*t == {label}"
    )
    with DebugMode(True), pytest.raises(ValueError, match=pattern):
        softmax_cross_entropy(x, t, enable_double_backprop=double_backprop)


def test_ignore_label_inside_the_class_range():
    x = numpy.random.uniform(-1, 1, (3, 4)).astype(numpy.float32)
    t = numpy.array([0, 3, 2], numpy.int32)
    y = softmax_cross_entropy(x, t, ignore_label=3, reduce="no")
    assert y.array[1] == 0.0 and y.array[0] > 0 and y.array[2] > 0
    with pytest.raises(ValueError, match="t == -1"):
        softmax_cross_entropy(x, numpy.array([0, -1, 2], numpy.int32), ignore_label=3)


# Each refusal is checked with and without the double-backprop implementation.
test_bad_input = bad_input_test(
    [
        (
            (x, t),
            {"enable_double_backprop": double_backprop},
            InvalidType,
            ("SoftmaxCrossEntropy", condition),
        )
        for x, t, condition in [
            (numpy.zeros((2, 3), numpy.int32), numpy.zeros(2, numpy.int32), "x.dtype.kind == 'f'"),
            (numpy.zeros(3, numpy.float32), numpy.zeros((), numpy.int32), "x.ndim >= 2"),
            (
                numpy.zeros((2, 3), numpy.float32),
                numpy.zeros(2, numpy.uint8),
                "t.dtype.kind == 'i'",
            ),
            (
                numpy.zeros((2, 3), numpy.float32),
                numpy.zeros((2, 3), numpy.int32),
                "t.ndim == x.ndim - 1",
            ),
            (
                numpy.zeros((2, 3), numpy.float32),
                numpy.zeros(3, numpy.int32),
                "x.shape[0] == t.shape[0]",
            ),
            (
                numpy.zeros((2, 3, 4), numpy.float32),
                numpy.zeros((2, 5), numpy.int32),
                "x.shape[2:] == t.shape[1:]",
            ),
            (numpy.zeros((2, 0), numpy.float32), numpy.zeros(2, numpy.int32), "x.shape[1] > 0"),
            (
                numpy.zeros((2, 3), numpy.float32),
                numpy.zeros((2, 4), numpy.float32),
                "x.shape == t.shape",
            ),
        ]
        for double_backprop in (False, True)
    ]
    + [
        (
            (numpy.zeros((2, 3), numpy.float32), numpy.zeros(2, numpy.int32)),
            {"enable_double_backprop": double_backprop, **kwargs},
            error,
            ("softmax_cross_entropy: ", message),
        )
        for kwargs, error, message in [
            ({"reduce": "sum"}, ValueError, "expected reduce to be 'mean' or 'no', got 'sum'"),
            (
                {"soft_target_loss": "kl"},
                ValueError,
                "soft_target_loss to be 'cross-entropy' or 'kl-divergence', got 'kl'",
            ),
            ({"ignore_label": 1.5}, TypeError, "expected ignore_label to be an int, got 1.5"),
            (
                {"class_weight": [1.0, 1.0, 1.0]},
                TypeError,
                "class_weight to be a numpy.ndarray or cupy.ndarray, got list",
            ),
            (
                {"class_weight": Variable(numpy.ones(3, numpy.float32))},
                TypeError,
                "got a Variable",
            ),
            (
                {"class_weight": numpy.ones((3, 1), numpy.float32)},
                ValueError,
                "1-d floating array, got ndim 2",
            ),
            (
                {"class_weight": numpy.ones(3, numpy.int32)},
                ValueError,
                "1-d floating array, got ndim 1 and dtype int32",
            ),
            (
                {"class_weight": numpy.ones(4, numpy.float32)},
                ValueError,
                "class_weight of shape (x.shape[1],) == (3,), got (4,)",
            ),
        ]
        for double_backprop in (False, True)
    ]
    + [
        (
            (numpy.zeros((3, 4), numpy.float32), numpy.array([0, label, -1], numpy.int32)),
            {"enable_double_backprop": double_backprop},
            ValueError,
            "softmax_cross_entropy: expected every label t to satisfy 0 <= t < x.shape[1] == 4 "
            f"or t == ignore_label == -1, got t == {label}",
        )
        for label in [4, -2]
        for double_backprop in (False, True)
    ],
    function=softmax_cross_entropy,
)


@pytest.mark.parametrize("dtype, rel", [(numpy.float32, 3e-3), (numpy.float64, 1e-9)])
@pytest.mark.parametrize("offset", [0.0, 50.0, -50.0, 500.0])
def test_small_loss_keeps_its_precision(offset, dtype, rel):
    # A confident, correct prediction: the loss is about 4.54e-5 whatever the offset of x.
    # In float32 the sum 1 + 4.54e-5 of the shifted exponentials is itself rounded by
    # 6e-8, about 1e-3 of the loss; an offset must not make it worse.
    x = numpy.array([[10.0, 0.0, -10.0]]) + offset
    expected = numpy.log1p(numpy.exp(-10.0) + numpy.exp(-20.0))
    y = softmax_cross_entropy(x.astype(dtype), numpy.array([0], numpy.int32))
    assert float(y.array) == pytest.approx(expected, rel=rel)
