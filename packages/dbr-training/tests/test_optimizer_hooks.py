"""Optimizer hooks against their formulas, computed independently here."""

import types

import numpy as np
import pytest

from dbr.core import Link, Parameter, ops
from dbr.training.optimizer_hooks import (
    GradientClipping,
    GradientHardClipping,
    GradientLARS,
    GradientNoise,
    Lasso,
    WeightDecay,
    exponential_decay_noise,
)
from dbr.training.optimizers.sgd import SGD


def make_param(array, grad):
    param = Parameter(np.array(array, dtype=np.float64))
    param.grad = np.array(grad, dtype=np.float64)
    return param


RULE = types.SimpleNamespace(t=0)
P0 = [[1.5, -2.0, 0.0], [0.25, 3.0, -0.5]]
G0 = [[0.1, 0.2, -0.3], [-4.0, 0.5, 2.5]]


class TwoParams(Link):
    def __init__(self, a, b):
        super().__init__()
        with self.init_scope():
            self.a = Parameter(np.array(a, dtype=np.float32))
            self.b = Parameter(np.array(b, dtype=np.float32))


def test_class_attributes_follow_chainer():
    for cls, per_param in [
        (WeightDecay, True),
        (Lasso, True),
        (GradientHardClipping, True),
        (GradientNoise, True),
        (GradientLARS, True),
        (GradientClipping, False),
    ]:
        assert cls.name == cls.__name__
        assert cls.timing == "pre"
        assert cls.call_for_each_param is per_param
    lars = GradientLARS()
    assert (lars.threshold, lars.weight_decay, lars.eps) == (0.01, 0.0, 1e-9)
    assert GradientNoise(0.1).noise_func is exponential_decay_noise


def test_weight_decay_adds_rate_times_param():
    param = make_param(P0, G0)
    grad = param.grad
    WeightDecay(0.3)(RULE, param)
    expected = [[g + 0.3 * p for g, p in zip(gr, pr)] for gr, pr in zip(G0, P0)]
    assert param.grad is grad
    np.testing.assert_allclose(param.grad, expected, rtol=1e-15)
    np.testing.assert_array_equal(param.array, np.array(P0))


def test_lasso_adds_rate_times_sign():
    param = make_param(P0, G0)
    Lasso(0.5)(RULE, param)
    sign = lambda v: (v > 0) - (v < 0)  # noqa: E731
    expected = [[g + 0.5 * sign(p) for g, p in zip(gr, pr)] for gr, pr in zip(G0, P0)]
    np.testing.assert_allclose(param.grad, expected, rtol=1e-15)


def test_gradient_hard_clipping_clips_elementwise():
    param = make_param(P0, G0)
    GradientHardClipping(-0.25, 1.0)(RULE, param)
    expected = [[min(max(g, -0.25), 1.0) for g in row] for row in G0]
    np.testing.assert_array_equal(param.grad, expected)


def test_hooks_skip_params_without_grad_or_array():
    param = Parameter(np.ones(3))
    for hook in [WeightDecay(1.0), Lasso(1.0), GradientHardClipping(0, 1), GradientNoise(1.0)]:
        hook(RULE, param)
        assert param.grad is None
    uninit = Parameter()
    WeightDecay(1.0)(RULE, uninit)
    GradientLARS()(RULE, uninit)
    assert uninit.array is None


def lars_reference(p, g, threshold, weight_decay, eps):
    p, g = np.array(p), np.array(g)
    p_norm = np.sqrt((p * p).sum())
    g_norm = np.sqrt((g * g).sum())
    if p_norm > threshold:
        rate = p_norm / (eps + g_norm + weight_decay * p_norm)
    else:
        rate = 1.0
    return rate * (g + weight_decay * p)


@pytest.mark.parametrize("threshold", [0.01, 100.0])
@pytest.mark.parametrize("weight_decay", [0.0, 0.2])
def test_gradient_lars(threshold, weight_decay):
    param = make_param(P0, G0)
    GradientLARS(threshold=threshold, weight_decay=weight_decay, eps=1e-3)(RULE, param)
    expected = lars_reference(P0, G0, threshold, weight_decay, 1e-3)
    np.testing.assert_allclose(param.grad, expected, rtol=1e-12)
    if threshold == 100.0 and weight_decay == 0.0:
        np.testing.assert_array_equal(param.grad, G0)


def test_gradient_noise_custom_function_gets_chainer_arguments():
    calls = []

    def noise(xp, shape, dtype, hook, opt):
        calls.append((xp, shape, dtype, hook, opt))
        return xp.full(shape, 0.5, dtype=dtype)

    hook = GradientNoise(0.2, noise_func=noise)
    param = make_param(P0, G0)
    rule = types.SimpleNamespace(t=4)
    hook(rule, param)
    assert calls == [(np, (2, 3), np.dtype(np.float64), hook, rule)]
    np.testing.assert_allclose(param.grad, np.array(G0) + 0.5, rtol=1e-15)


def test_gradient_noise_statistics():
    eta, t, n = 0.3, 3, 200_000
    expected_std = (eta / (1 + t) ** 0.55) ** 0.5
    np.random.seed(7)
    param = Parameter(np.zeros(n))
    param.grad = np.full(n, 1.0)
    GradientNoise(eta)(types.SimpleNamespace(t=t), param)
    noise = param.grad - 1.0
    # Mean within 5 standard errors; std within 5 standard errors of a sample std.
    assert abs(noise.mean()) < 5 * expected_std / n**0.5
    assert abs(noise.std() - expected_std) < 5 * expected_std / (2 * n) ** 0.5
    assert noise.std() > 0.1

    np.random.seed(7)
    again = Parameter(np.zeros(n))
    again.grad = np.full(n, 1.0)
    GradientNoise(eta)(types.SimpleNamespace(t=t), again)
    np.testing.assert_array_equal(again.grad, param.grad)


def test_exponential_decay_noise_decays_with_t():
    hook = GradientNoise(1.0)
    np.random.seed(0)
    early = exponential_decay_noise(np, (100_000,), np.float32, hook, types.SimpleNamespace(t=0))
    late = exponential_decay_noise(np, (100_000,), np.float32, hook, types.SimpleNamespace(t=99))
    assert early.dtype == np.float32 and early.shape == (100_000,)
    np.testing.assert_allclose(early.std(), 1.0, rtol=0.02)
    np.testing.assert_allclose(late.std(), (1.0 / 100**0.55) ** 0.5, rtol=0.02)


def test_gradient_clipping_scales_to_threshold():
    link = TwoParams([1.0, 2.0], [[3.0], [4.0]])
    ga = np.array([3.0, 0.0], dtype=np.float32)
    gb = np.array([[0.0], [4.0]], dtype=np.float32)
    link.a.grad, link.b.grad = ga.copy(), gb.copy()
    opt = types.SimpleNamespace(target=link)
    GradientClipping(2.5)(opt)
    # Global norm sqrt(9 + 16) = 5: every gradient is halved.
    np.testing.assert_allclose(link.a.grad, [1.5, 0.0], rtol=1e-6)
    np.testing.assert_allclose(link.b.grad, [[0.0], [2.0]], rtol=1e-6)


def test_gradient_clipping_leaves_small_gradients_and_skips_none():
    link = TwoParams([1.0, 2.0], [[3.0], [4.0]])
    link.a.grad = np.array([3.0, 4.0], dtype=np.float32)
    opt = types.SimpleNamespace(target=link)
    GradientClipping(5.0)(opt)
    np.testing.assert_array_equal(link.a.grad, [3.0, 4.0])
    GradientClipping(1.0)(opt)
    np.testing.assert_allclose(link.a.grad, [0.6, 0.8], rtol=1e-6)
    assert link.b.grad is None
    link.a.grad = np.zeros(2, dtype=np.float32)
    GradientClipping(1.0)(opt)
    np.testing.assert_array_equal(link.a.grad, [0.0, 0.0])


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: WeightDecay("0.1"), TypeError, ["WeightDecay", "rate", "'0.1'"]),
        (lambda: WeightDecay(float("nan")), ValueError, ["WeightDecay", "rate", "finite"]),
        (lambda: Lasso(None), TypeError, ["Lasso", "rate", "None"]),
        (lambda: GradientClipping(0), ValueError, ["GradientClipping", "threshold", "positive"]),
        (lambda: GradientClipping(True), TypeError, ["GradientClipping", "threshold", "bool"]),
        (
            lambda: GradientHardClipping(1.0, -1.0),
            ValueError,
            ["GradientHardClipping", "lower_bound=1.0", "upper_bound=-1.0"],
        ),
        (lambda: GradientNoise(-1.0), ValueError, ["GradientNoise", "eta", ">= 0"]),
        (lambda: GradientNoise(1.0, noise_func=3), TypeError, ["GradientNoise", "noise_func"]),
        (lambda: GradientLARS(eps=-1.0), ValueError, ["GradientLARS", "eps"]),
        (lambda: GradientLARS(weight_decay=[0.1]), TypeError, ["GradientLARS", "weight_decay"]),
    ],
)
def test_bad_arguments(make, error, words):
    with pytest.raises(error) as info:
        make()
    for word in words:
        assert word in str(info.value)


# Through the optimizer: SGD(lr) computes param -= lr * grad after the 'pre' hooks.
C = np.array([[0.5, -1.0, 2.0], [3.0, -0.25, 0.75]])


class Linear(Link):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(np.array(P0, dtype=np.float64))
            self.v = Parameter(np.array([0.3, -0.4], dtype=np.float64))

    def loss(self):
        # d loss / d W = C, d loss / d v = [1, 2]
        return ops.sum(self.W * C) + ops.sum(self.v * np.array([1.0, 2.0]))


def sgd_step(*hooks, timing="auto"):
    link = Linear()
    opt = SGD(lr=0.1).setup(link)
    for hook in hooks:
        opt.add_hook(hook, timing=timing)
    opt.update(link.loss)
    return link


def test_weight_decay_through_sgd():
    link = sgd_step(WeightDecay(0.5))
    w0 = np.array(P0)
    np.testing.assert_allclose(link.W.array, w0 - 0.1 * (C + 0.5 * w0), rtol=1e-14)


def test_post_timing_runs_after_the_update():
    link = sgd_step(WeightDecay(0.5), timing="post")
    w1 = np.array(P0) - 0.1 * C
    np.testing.assert_allclose(link.W.array, w1, rtol=1e-14)
    np.testing.assert_allclose(link.W.grad, C + 0.5 * w1, rtol=1e-14)


def test_hook_timing_attribute_is_honoured():
    hook = Lasso(0.5)
    hook.timing = "post"
    link = sgd_step(hook)
    np.testing.assert_allclose(link.W.array, np.array(P0) - 0.1 * C, rtol=1e-14)


def test_update_rule_hook_through_sgd():
    link = Linear()
    opt = SGD(lr=0.1).setup(link)
    link.W.update_rule.add_hook(GradientHardClipping(-0.6, 0.6))
    opt.update(link.loss)
    np.testing.assert_allclose(link.W.array, np.array(P0) - 0.1 * np.clip(C, -0.6, 0.6))
    np.testing.assert_allclose(link.v.array, [0.3 - 0.1, -0.4 - 0.2], rtol=1e-14)


def test_gradient_clipping_through_sgd():
    link = sgd_step(GradientClipping(1.0))
    norm = np.sqrt((C**2).sum() + 1.0**2 + 2.0**2)
    np.testing.assert_allclose(link.W.array, np.array(P0) - 0.1 * C / norm, rtol=1e-12)
    np.testing.assert_allclose(
        link.v.array, np.array([0.3, -0.4]) - 0.1 * np.array([1.0, 2.0]) / norm, rtol=1e-12
    )


def _sgd_step_with(hook, loss_scale, on_rule):
    link = TwoParams([0.0, 1.0, 2.0], [1.0])
    opt = SGD(lr=1.0).setup(link)
    if on_rule:
        link.a.update_rule.add_hook(hook)
    else:
        opt.add_hook(hook)
    loss = ops.sum(link.a * link.a * link.a)
    link.cleargrads()
    loss.backward(loss_scale=loss_scale)
    opt.update()
    return link.a.array


@pytest.mark.parametrize("on_rule", [False, True])
@pytest.mark.parametrize("make_hook", [lambda: WeightDecay(0.125), lambda: Lasso(0.125)])
def test_penalty_hooks_give_the_same_step_with_loss_scaling(make_hook, on_rule):
    # An optimizer's hook sees the loss-scaled gradient and scales the penalty
    # alike; a rule's hook sees the gradient already divided back.
    plain = _sgd_step_with(make_hook(), None, on_rule)
    scaled = _sgd_step_with(make_hook(), 4.0, on_rule)
    np.testing.assert_allclose(plain, scaled, rtol=1e-6)
    # 3 p**2 + 0.125 * (p or sign p), one SGD step of lr 1 from p = [0, 1, 2]:
    penalty = [0.0, 0.125, 0.25] if isinstance(make_hook(), WeightDecay) else [0.0, 0.125, 0.125]
    np.testing.assert_allclose(plain, [0.0, 1.0 - 3.0 - penalty[1], 2.0 - 12.0 - penalty[2]])


def test_hooks_leave_a_param_created_uninitialized_alone():
    uninit = Parameter()
    for hook in [WeightDecay(1.0), Lasso(1.0), GradientHardClipping(0, 1), GradientNoise(1.0)]:
        hook(RULE, uninit)
    assert uninit.array is None
