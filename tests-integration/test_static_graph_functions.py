"""Under @static_graph, dbr's functions give define-by-run's bits, on arrays or not.

Each case is a chain ``sum(f(x * W + W) ** 2)`` with one parameter ``W``, trained
for seven SGD steps on data that changes on the way: after the three calls that
record and agree, signs flip, magnitudes double and a label becomes ignored. The
losses and ``W``'s gradients of the static chain equal define-by-run's to the last
bit, whether a function's backward runs on arrays (its gradient functions
replayed) or keeps the Variable path (a backward that computes with arrays of its
own, such as a mask).
"""

import numpy
import pytest

import dbr.functions as F
from dbr.core import Chain, Parameter, static_graph
from dbr.core.graph_optimizations._node_backward import ArrayPlan

SHAPE = (4, 6)


def _image(h):
    return F.reshape(h, (1, 1, *SHAPE))


# name -> f(h, labels): labels holds the call's label arrays (arguments of the chain).
CASES = {
    "relu": lambda h, a: F.relu(h),
    "sigmoid": lambda h, a: F.sigmoid(h),
    "tanh": lambda h, a: F.tanh(h),
    "leaky_relu": lambda h, a: F.leaky_relu(h, 0.1),
    "elu": lambda h, a: F.elu(h),
    "selu": lambda h, a: F.selu(h),
    "softplus": lambda h, a: F.softplus(h),
    "hard_sigmoid": lambda h, a: F.hard_sigmoid(h),
    "clipped_relu": lambda h, a: F.clipped_relu(h, 0.5),
    "crelu": lambda h, a: F.crelu(h),
    "prelu": lambda h, a: F.prelu(h, h[0]),
    "maxout": lambda h, a: F.maxout(h, 2),
    "exp": lambda h, a: F.exp(h * 0.1),
    "expm1": lambda h, a: F.expm1(h * 0.1),
    "log": lambda h, a: F.log(h * h + 1),
    "log1p": lambda h, a: F.log1p(h * h),
    "sqrt": lambda h, a: F.sqrt(h * h + 1),
    "rsqrt": lambda h, a: F.rsqrt(h * h + 1),
    "square": lambda h, a: F.square(h),
    "sin": lambda h, a: F.sin(h),
    "arctan": lambda h, a: F.arctan(h),
    "erf": lambda h, a: F.erf(h),
    "absolute": lambda h, a: F.absolute(h),
    "clip": lambda h, a: F.clip(h, -0.5, 0.5),
    "fmod": lambda h, a: F.fmod(h, h * 0 + 0.7),
    "maximum": lambda h, a: F.maximum(h, h * 0.5),
    "minimum": lambda h, a: F.minimum(h, -h),
    "squared_difference": lambda h, a: F.squared_difference(h * 0.3, h[::-1] * 0.3),
    "max": lambda h, a: F.max(h, axis=1),
    "min": lambda h, a: F.min(h, axis=0),
    "mean": lambda h, a: F.mean(h, axis=1),
    "average": lambda h, a: F.average(h, axis=1, weights=h[0] * 0 + 1),
    "prod": lambda h, a: F.prod(h, axis=1),
    "cumsum": lambda h, a: F.cumsum(h, axis=1),
    "logsumexp": lambda h, a: F.logsumexp(h, axis=1),
    "softmax": lambda h, a: F.softmax(h),
    "log_softmax": lambda h, a: F.log_softmax(h),
    "matmul": lambda h, a: F.matmul(h, h, transb=True),
    "linear": lambda h, a: F.linear(h, h[:3]),
    "bilinear": lambda h, a: F.bilinear(
        h * 0.1, h * 0.1, F.reshape(F.concat([h] * 6, axis=0), (6, 6, 4))[:, :, :2] * 0.01
    ),
    "scale": lambda h, a: F.scale(h, h[0], axis=1),
    "bias": lambda h, a: F.bias(h, h[0], axis=1),
    "reshape": lambda h, a: F.reshape(h, (6, 4)) * 2,
    "transpose": lambda h, a: F.transpose(h) * 3,
    "swapaxes": lambda h, a: F.swapaxes(h, 0, 1) * 2,
    "rollaxis": lambda h, a: F.rollaxis(h, 1),
    "flip": lambda h, a: F.flip(h, 1) * 2,
    "tile": lambda h, a: F.tile(h, 2),
    "squeeze": lambda h, a: F.squeeze(F.expand_dims(h, 0)),
    "concat": lambda h, a: F.concat([h, h * 2], axis=1),
    "stack": lambda h, a: F.stack([h, h]),
    "split_axis": lambda h, a: F.split_axis(h, 2, axis=1)[0] * F.split_axis(h, 2, axis=1)[1],
    "separate": lambda h, a: F.separate(h)[1] * F.separate(h)[2],
    "broadcast_to": lambda h, a: F.broadcast_to(F.sum(h, axis=0, keepdims=True), SHAPE) * h,
    "get_item": lambda h, a: h[1:3, ::2] * 2,
    "pad": lambda h, a: F.pad(h, 1, "constant"),
    "where": lambda h, a: F.where(a["condition"], h, -h),
    "select_item": lambda h, a: F.select_item(h, a["column"]),
    "embed_id": lambda h, a: F.embed_id(a["row"], h),
    "dropout": lambda h, a: F.dropout(h, 0.3),
    "layer_normalization": lambda h, a: F.layer_normalization(h, h[0] * 0 + 1, h[0] * 0),
    "batch_normalization": lambda h, a: F.batch_normalization(h, h[0] * 0 + 1, h[0] * 0),
    "fixed_batch_normalization": lambda h, a: F.fixed_batch_normalization(
        h, h[0] * 0 + 1, h[0] * 0, h[1] * 0, h[1] * 0 + 1
    ),
    "normalize": lambda h, a: F.normalize(h),
    "local_response_normalization": lambda h, a: F.local_response_normalization(
        F.reshape(h, (1, 6, 2, 2))
    ),
    "convolution_2d": lambda h, a: F.convolution_2d(
        _image(h), F.reshape(h[0, :4], (1, 1, 2, 2)), pad=1
    ),
    "max_pooling_2d": lambda h, a: F.max_pooling_2d(_image(h), 2),
    "average_pooling_2d": lambda h, a: F.average_pooling_2d(_image(h), 2),
    "unpooling_2d": lambda h, a: F.unpooling_2d(_image(h), 2),
    "resize_images": lambda h, a: F.resize_images(_image(h), (5, 7)),
    "lstm": lambda h, a: F.lstm(h[:, :2] * 0 + h[:, 4:], F.concat([h, h[:, :2]], axis=1))[1],
    "mean_squared_error": lambda h, a: F.mean_squared_error(h, h * 0.5 + 0.1),
    "huber_loss": lambda h, a: F.huber_loss(h, h * 0 + 0.2, 0.5),
    "softmax_cross_entropy": lambda h, a: F.softmax_cross_entropy(h, a["label"]),
    "sigmoid_cross_entropy": lambda h, a: F.sigmoid_cross_entropy(h, a["binary"]),
    "hinge": lambda h, a: F.hinge(h, a["column"]),
    "contrastive": lambda h, a: F.contrastive(h, h[::-1], a["pair"]),
    "triplet": lambda h, a: F.triplet(h, h[::-1], h * 0.5),
    "gaussian_kl_divergence": lambda h, a: F.gaussian_kl_divergence(h * 0.1, F.tanh(h)),
}


def _chain(f, static):
    class Probe(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.W = Parameter(numpy.random.default_rng(0).standard_normal(SHAPE))

        def forward(self, x, label, column, row, pair, binary, condition):
            labels = {"label": label, "column": column, "row": row, "pair": pair}
            labels.update(binary=binary, condition=condition)
            y = f(x * self.W + self.W, labels)
            return F.sum(y * y)

    if static:
        Probe.forward = static_graph(Probe.forward)
    return Probe()


def _train(chain):
    """Seven SGD steps; every loss and gradient of ``W`` on the way."""
    numpy.random.seed(3)
    rng = numpy.random.default_rng(5)
    seen = []
    for step in range(7):
        x = rng.standard_normal(SHAPE) * (1 if step < 3 else 2 * (-1) ** step)
        label = rng.integers(0, SHAPE[1], SHAPE[0]).astype(numpy.int32)
        if step >= 3:
            label[0] = -1  # ignored by softmax cross entropy from now on
        column = numpy.abs(label) % SHAPE[1]
        arguments = (
            label,
            column,
            column % SHAPE[0],
            (column % 2).astype(numpy.int32),
            numpy.broadcast_to((label % 2 == 0)[:, None], SHAPE).astype(numpy.int32),
            numpy.broadcast_to((label > 2)[:, None], SHAPE).copy(),
        )
        chain.cleargrads()
        loss = chain(x, *arguments)
        loss.backward()
        seen.extend([loss.array.copy(), chain.W.grad.copy()])
        chain.W.array -= 0.01 * chain.W.grad
    return seen


def _on_arrays(chain):
    """Whether every recorded node's backward ended on arrays (none refused)."""
    plans = [
        plan
        for schedules in chain.schedule_manager.schedules.values()
        for schedule in schedules
        for node_backward, _, _ in schedule._backward
        for plan in node_backward._plans.values()
    ]
    return all(type(plan) is ArrayPlan or isinstance(plan, tuple) for plan in plans)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_static_chain_gives_define_by_runs_bits(name):
    static, plain = _chain(CASES[name], True), _chain(CASES[name], False)
    expected, got = _train(plain), _train(static)
    for a, b in zip(got, expected, strict=True):
        numpy.testing.assert_array_equal(a, b, strict=True)


def test_most_functions_backward_runs_on_arrays():
    on_arrays = []
    for f in CASES.values():
        chain = _chain(f, True)
        _train(chain)
        on_arrays.append(_on_arrays(chain))
    # 55 of 79 when written; the rest compute masks of their own in backward.
    assert sum(on_arrays) >= 2 * len(CASES) // 3
