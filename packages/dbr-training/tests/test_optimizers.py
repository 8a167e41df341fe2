"""Each optimizer against its update formula, written independently here in float64 NumPy."""

import inspect
import math
import os

import numpy
import pytest

from dbr.core import Link, Parameter, ops
from dbr.core.serializers import load_npz, save_npz
from dbr.training import optimizers

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
X = numpy.linspace(-1.0, 1.0, 15).reshape(5, 3)
T = numpy.array([[0.5, -1.0], [0.0, 2.0], [1.0, 1.0], [-0.5, 0.3], [0.2, 0.1]])
W0 = numpy.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.25]])
B0 = numpy.array([0.05, -0.1])


class Model(Link):
    def __init__(self, dtype=numpy.float64):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(W0.astype(dtype))
            self.b = Parameter(B0.astype(dtype))


def loss_fn(model):
    y = ops.matmul(X, model.W) + ops.broadcast_to(model.b, T.shape)
    return ops.sum((y - T) ** 2) / len(X)


def ref_grads(params):
    W, b = params["W"], params["b"]
    r = X @ W + b - T
    return {"W": 2 * X.T @ r / len(X), "b": 2 * r.sum(axis=0) / len(X)}


# Reference rules: step(p, g, s, t, hp) updates the state dict s and returns the new p.
def ref_sgd(p, g, s, t, hp):
    return p - hp["lr"] * g


def ref_momentum(p, g, s, t, hp):
    s["v"] = hp["momentum"] * s.get("v", 0.0) - hp["lr"] * g
    return p + s["v"]


def ref_nesterov(p, g, s, t, hp):
    mu, lr = hp["momentum"], hp["lr"]
    s["v"] = mu * s.get("v", 0.0) - lr * g
    return p + mu * mu * s["v"] - (1 + mu) * lr * g


def ref_corrected(p, g, s, t, hp):
    s["v"] = hp["momentum"] * s.get("v", 0.0) - g
    return p + hp["lr"] * s["v"]


def ref_adagrad(p, g, s, t, hp):
    s["h"] = s.get("h", 0.0) + g**2
    return p - hp["lr"] * g / (numpy.sqrt(s["h"]) + hp["eps"])


def ref_adadelta(p, g, s, t, hp):
    rho, eps = hp["rho"], hp["eps"]
    s["msg"] = rho * s.get("msg", 0.0) + (1 - rho) * g**2
    dx = numpy.sqrt((s.get("msdx", 0.0) + eps) / (s["msg"] + eps)) * g
    s["msdx"] = rho * s.get("msdx", 0.0) + (1 - rho) * dx**2
    return p - dx


def ref_rmsprop(p, g, s, t, hp):
    a, eps = hp["alpha"], hp["eps"]
    s["ms"] = a * s.get("ms", 0.0) + (1 - a) * g**2
    if hp["eps_inside_sqrt"]:
        denom = numpy.sqrt(s["ms"] + eps)
    else:
        denom = numpy.sqrt(s["ms"]) + eps
    return p - hp["lr"] * g / denom


def ref_graves(p, g, s, t, hp):
    a = hp["alpha"]
    s["n"] = a * s.get("n", 0.0) + (1 - a) * g**2
    s["g"] = a * s.get("g", 0.0) + (1 - a) * g
    s["d"] = hp["momentum"] * s.get("d", 0.0) - hp["lr"] * g / numpy.sqrt(
        s["n"] - s["g"] ** 2 + hp["eps"]
    )
    return p + s["d"]


def ref_adam(p, g, s, t, hp):
    b1, b2 = hp["beta1"], hp["beta2"]
    s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g**2
    vhat = s["v"]
    if hp["amsgrad"]:
        s["vhat"] = numpy.maximum(s.get("vhat", 0.0), s["v"])
        vhat = s["vhat"]
    alpha_t = hp["alpha"] * math.sqrt(1 - b2**t) / (1 - b1**t)
    step = alpha_t / (numpy.sqrt(vhat) + hp["eps"])
    if hp["adabound"]:
        lo = hp["final_lr"] * (1 - 1 / (hp["gamma"] * t + 1))
        hi = hp["final_lr"] * (1 + 1 / (hp["gamma"] * t))
        step = numpy.minimum(numpy.maximum(step, lo), hi)
    # Chainer's decoupled weight decay is scaled by eta, as the step is.
    return (1 - hp["eta"] * hp["weight_decay_rate"]) * p - hp["eta"] * step * s["m"]


def ref_smorms3(p, g, s, t, hp):
    mem = s.get("mem", numpy.ones_like(p))
    r = 1 / (mem + 1)
    s["g"] = (1 - r) * s.get("g", 0.0) + r * g
    s["g2"] = (1 - r) * s.get("g2", 0.0) + r * g**2
    x = s["g"] ** 2 / (s["g2"] + hp["eps"])
    p = p - g * numpy.minimum(x, hp["lr"]) / (numpy.sqrt(s["g2"]) + hp["eps"])
    s["mem"] = 1 + mem * (1 - x)
    return p


def ref_msvag(p, g, s, t, hp):
    beta = hp["beta"]
    bt = beta**t
    rho = min((1 - beta) ** 2 * (1 - bt**2) / ((1 - bt) ** 2 * (1 - beta**2)), 0.9999)
    s["m"] = beta * s.get("m", 0.0) + (1 - beta) * g
    s["v"] = beta * s.get("v", 0.0) + (1 - beta) * g**2
    mt, vt = s["m"] / (1 - bt), s["v"] / (1 - bt)
    var = (vt - mt**2) / (1 - rho)
    factor = numpy.clip(mt**2 / (mt**2 + rho * var), 0, 1)
    return p - hp["eta"] * (hp["lr"] * mt * factor + hp["weight_decay_rate"] * p)


ADAM_DEFAULTS = {
    "alpha": 0.001,
    "beta1": 0.9,
    "beta2": 0.999,
    "eps": 1e-8,
    "eta": 1.0,
    "weight_decay_rate": 0,
    "amsgrad": False,
    "adabound": False,
    "final_lr": 0.1,
    "gamma": 1e-3,
}

# (optimizer class, reference, Chainer v7's defaults, two non-default hyperparameter sets)
CASES = [
    (optimizers.SGD, ref_sgd, {"lr": 0.01}, [{"lr": 0.1}, {"lr": 0.03}]),
    (
        optimizers.MomentumSGD,
        ref_momentum,
        {"lr": 0.01, "momentum": 0.9},
        [{"lr": 0.1, "momentum": 0.5}, {"lr": 0.02, "momentum": 0.95}],
    ),
    (
        optimizers.NesterovAG,
        ref_nesterov,
        {"lr": 0.01, "momentum": 0.9},
        [{"lr": 0.1, "momentum": 0.5}, {"lr": 0.02, "momentum": 0.8}],
    ),
    (
        optimizers.CorrectedMomentumSGD,
        ref_corrected,
        {"lr": 0.01, "momentum": 0.9},
        [{"lr": 0.1, "momentum": 0.5}, {"lr": 0.02, "momentum": 0.8}],
    ),
    (
        optimizers.AdaGrad,
        ref_adagrad,
        {"lr": 0.001, "eps": 1e-8},
        [{"lr": 0.1, "eps": 1e-3}, {"lr": 0.5, "eps": 0.1}],
    ),
    (
        optimizers.AdaDelta,
        ref_adadelta,
        {"rho": 0.95, "eps": 1e-6},
        [{"rho": 0.9, "eps": 1e-3}, {"rho": 0.5, "eps": 0.01}],
    ),
    (
        optimizers.RMSprop,
        ref_rmsprop,
        {"lr": 0.01, "alpha": 0.99, "eps": 1e-8, "eps_inside_sqrt": False},
        [
            {"lr": 0.05, "alpha": 0.9, "eps": 1e-2, "eps_inside_sqrt": False},
            {"lr": 0.05, "alpha": 0.8, "eps": 0.1, "eps_inside_sqrt": True},
        ],
    ),
    (
        optimizers.RMSpropGraves,
        ref_graves,
        {"lr": 1e-4, "alpha": 0.95, "momentum": 0.9, "eps": 1e-4},
        [
            {"lr": 0.05, "alpha": 0.9, "momentum": 0.5, "eps": 0.1},
            {"lr": 0.01, "alpha": 0.7, "momentum": 0.8, "eps": 1e-2},
        ],
    ),
    (
        optimizers.Adam,
        ref_adam,
        ADAM_DEFAULTS,
        [
            dict(ADAM_DEFAULTS, alpha=0.05, beta1=0.8, beta2=0.9, eta=0.5, weight_decay_rate=0.1),
            dict(ADAM_DEFAULTS, alpha=0.02, amsgrad=True, adabound=True, gamma=0.5, eps=1e-3),
        ],
    ),
    (
        optimizers.SMORMS3,
        ref_smorms3,
        {"lr": 0.001, "eps": 1e-16},
        [{"lr": 0.05, "eps": 1e-8}, {"lr": 0.2, "eps": 1e-3}],
    ),
    (
        optimizers.MSVAG,
        ref_msvag,
        {"lr": 0.1, "beta": 0.9, "eta": 1.0, "weight_decay_rate": 0},
        [
            {"lr": 0.2, "beta": 0.8, "eta": 0.5, "weight_decay_rate": 0.1},
            {"lr": 0.05, "beta": 0.95, "eta": 2.0, "weight_decay_rate": 0},
        ],
    ),
]


CASE_PARAMS = pytest.mark.parametrize(
    "cls,ref,defaults,hp_sets", CASES, ids=lambda c: getattr(c, "__name__", "")
)


def run_reference(ref, hp, steps):
    params = {"W": W0.copy(), "b": B0.copy()}
    states = {"W": {}, "b": {}}
    for t in range(1, steps + 1):
        grads = ref_grads(params)
        for k in params:
            params[k] = ref(params[k], grads[k], states[k], t, hp)
    return params


@pytest.mark.parametrize(
    "cls,ref,defaults,hp_sets", CASES, ids=lambda c: getattr(c, "__name__", "")
)
def test_defaults_are_chainers(cls, ref, defaults, hp_sets):
    opt = cls()
    assert opt.hyperparam.get_dict() == defaults
    for name, value in defaults.items():
        assert getattr(opt, name) == value


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize(
    "cls,ref,defaults,hp_sets", CASES, ids=lambda c: getattr(c, "__name__", "")
)
def test_matches_formula(cls, ref, defaults, hp_sets, index):
    hp = hp_sets[index]
    model = Model()
    opt = cls(**hp).setup(model)
    steps = 6
    for _ in range(steps):
        opt.update(loss_fn, model)
    expected = run_reference(ref, hp, steps)
    numpy.testing.assert_allclose(model.W.array, expected["W"], rtol=1e-10, atol=1e-13)
    numpy.testing.assert_allclose(model.b.array, expected["b"], rtol=1e-10, atol=1e-13)
    assert opt.t == steps
    assert model.W.update_rule.t == steps
    assert not numpy.allclose(model.W.array, W0)


@pytest.mark.parametrize(
    "cls,ref,defaults,hp_sets", CASES, ids=lambda c: getattr(c, "__name__", "")
)
def test_defaults_follow_formula(cls, ref, defaults, hp_sets):
    model = Model()
    opt = cls().setup(model)
    for _ in range(3):
        opt.update(loss_fn, model)
    expected = run_reference(ref, defaults, 3)
    numpy.testing.assert_allclose(model.W.array, expected["W"], rtol=1e-10, atol=1e-13)


def test_adam_variants_fix_their_flags():
    assert optimizers.AdamW(weight_decay_rate=0.2).weight_decay_rate == 0.2
    assert not optimizers.AdamW().amsgrad and not optimizers.AdamW().adabound
    assert optimizers.AMSGrad().amsgrad and not optimizers.AMSGrad().adabound
    bound = optimizers.AdaBound(0.01, 0.8, 0.9, 0.2, 0.5)
    assert bound.adabound and not bound.amsgrad
    assert (bound.alpha, bound.beta1, bound.beta2, bound.final_lr, bound.gamma) == (
        0.01,
        0.8,
        0.9,
        0.2,
        0.5,
    )
    ams = optimizers.AMSBound()
    assert ams.adabound and ams.amsgrad
    assert isinstance(ams, optimizers.Adam)


ADAM_VARIANTS = {
    "AdamW": (optimizers.AdamW, {}),
    "AMSGrad": (optimizers.AMSGrad, {"amsgrad": True}),
    "AdaBound": (optimizers.AdaBound, {"adabound": True, "gamma": 0.5}),
    "AMSBound": (optimizers.AMSBound, {"amsgrad": True, "adabound": True, "gamma": 0.5}),
}


@pytest.mark.parametrize("name", list(ADAM_VARIANTS))
def test_adam_variants_scale_weight_decay_by_eta(name):
    hp = dict(ADAM_DEFAULTS, alpha=0.05, beta1=0.8, beta2=0.9, eta=0.3, weight_decay_rate=0.2)
    hp.update(ADAM_VARIANTS[name][1])
    model = Model()
    opt = make_adam_variant(name, hp).setup(model)
    for _ in range(4):
        opt.update(loss_fn, model)
    params = {"W": W0.copy(), "b": B0.copy()}
    states = {"W": {}, "b": {}}
    for t in range(1, 5):
        grads = ref_grads(params)
        for k in params:
            b1, b2 = hp["beta1"], hp["beta2"]
            s = states[k]
            s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * grads[k]
            s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * grads[k] ** 2
            s["vhat"] = numpy.maximum(s.get("vhat", 0.0), s["v"])
            vhat = s["vhat"] if hp["amsgrad"] else s["v"]
            step = hp["alpha"] * math.sqrt(1 - b2**t) / (1 - b1**t) / (numpy.sqrt(vhat) + 1e-8)
            if hp["adabound"]:
                lower = 0.1 * (1 - 1 / (hp["gamma"] * t + 1))
                upper = 0.1 * (1 + 1 / (hp["gamma"] * t))
                step = numpy.clip(step, lower, upper)
            decay = hp["weight_decay_rate"] * params[k]
            params[k] = params[k] - hp["eta"] * (step * s["m"] + decay)
    numpy.testing.assert_allclose(model.W.array, params["W"], rtol=1e-12, atol=1e-14)
    numpy.testing.assert_allclose(model.b.array, params["b"], rtol=1e-12, atol=1e-14)


def make_adam_variant(name, hp):
    cls, _ = ADAM_VARIANTS[name]
    kwargs = {key: hp[key] for key in ("alpha", "beta1", "beta2", "eta")}
    if hp["adabound"]:
        kwargs["gamma"] = hp["gamma"]
    opt = cls(**kwargs)
    # Only AdamW takes weight_decay_rate in its constructor; the others take it as a
    # hyperparameter, as in Chainer.
    opt.weight_decay_rate = hp["weight_decay_rate"]
    return opt


@pytest.mark.parametrize("name", list(ADAM_VARIANTS))
def test_adam_variants_with_eta_and_weight_decay_match_chainer(name):
    # Written by fixtures/make_adam_chainer.py with Chainer 7.8.1, same model and settings.
    hp = dict(ADAM_DEFAULTS, alpha=0.05, beta1=0.8, beta2=0.9, eta=0.3, weight_decay_rate=0.2)
    hp.update(ADAM_VARIANTS[name][1])
    model = Model()
    opt = make_adam_variant(name, hp).setup(model)
    for _ in range(4):
        opt.update(loss_fn, model)
    with numpy.load(os.path.join(FIXTURES, "adam_chainer.npz")) as chainer_values:
        numpy.testing.assert_allclose(model.W.array, chainer_values[f"{name}/W"], rtol=1e-12)
        numpy.testing.assert_allclose(model.b.array, chainer_values[f"{name}/b"], rtol=1e-12)


def test_adabound_final_lr_follows_alpha():
    hp = dict(ADAM_DEFAULTS, alpha=0.01, adabound=True, gamma=0.5)
    model = Model()
    opt = optimizers.AdaBound(alpha=0.01, gamma=0.5).setup(model)
    opt.update(loss_fn, model)
    opt.alpha = 0.005
    opt.update(loss_fn, model)
    # Reference: the bounds scale with alpha / initial alpha (final_lr 0.1 -> 0.05).
    params = {"W": W0.copy(), "b": B0.copy()}
    states = {"W": {}, "b": {}}
    for t, (alpha, final_lr) in enumerate([(0.01, 0.1), (0.005, 0.05)], start=1):
        grads = ref_grads(params)
        for k in params:
            params[k] = ref_adam(
                params[k], grads[k], states[k], t, dict(hp, alpha=alpha, final_lr=final_lr)
            )
    numpy.testing.assert_allclose(model.W.array, params["W"], rtol=1e-10)


def test_adam_lr_property():
    opt = optimizers.Adam(alpha=0.1, beta1=0.8, beta2=0.9).setup(Model())
    with pytest.raises(RuntimeError, match="Adam"):
        _ = opt.lr
    opt.update(loss_fn, opt.target)
    opt.update(loss_fn, opt.target)
    expected = 0.1 * math.sqrt(1 - 0.9**2) / (1 - 0.8**2)
    assert opt.lr == pytest.approx(expected, rel=1e-15)
    assert opt.alpha_t == pytest.approx(expected, rel=1e-15)
    assert opt.target.W.update_rule.alpha_t == pytest.approx(expected, rel=1e-15)


def test_eps_too_small_for_float32():
    model = Model(numpy.float32)
    opt = optimizers.RMSprop(eps=1e-50).setup(model)
    for p in model.params():
        p.grad = numpy.ones_like(p.array)
    with pytest.raises(ValueError, match="RMSpropRule.*eps"):
        opt.update()


@pytest.mark.parametrize(
    "cls,ref,defaults,hp_sets", CASES, ids=lambda c: getattr(c, "__name__", "")
)
def test_serialize_round_trip_continues_bit_for_bit(cls, ref, defaults, hp_sets, tmp_path):
    model = Model()
    opt = cls(**hp_sets[0]).setup(model)
    for _ in range(3):
        opt.update(loss_fn, model)
    save_npz(tmp_path / "opt.npz", opt)
    save_npz(tmp_path / "model.npz", model)

    model2 = Model()
    opt2 = cls(**hp_sets[0]).setup(model2)
    load_npz(tmp_path / "model.npz", model2)
    load_npz(tmp_path / "opt.npz", opt2)
    assert opt2.t == 3 and model2.W.update_rule.t == 3
    for _ in range(3):
        opt.update(loss_fn, model)
        opt2.update(loss_fn, model2)
    for p, p2 in zip(model.params(), model2.params(), strict=True):
        assert numpy.array_equal(p.array, p2.array)
        s, s2 = p.update_rule.state, p2.update_rule.state
        assert s is not None and s2 is not None and s.keys() == s2.keys()
        for key in s:
            assert numpy.array_equal(s[key], s2[key])


@pytest.mark.parametrize("name", sorted(n for n in optimizers.__all__ if not n.endswith("Rule")))
def test_constructor_arguments_are_hyperparameters_with_proxies(name):
    cls = getattr(optimizers, name)
    arguments = list(inspect.signature(cls).parameters)
    opt = cls()
    for argument in arguments:
        default = inspect.signature(cls).parameters[argument].default
        assert getattr(opt.hyperparam, argument) == default
        assert getattr(opt, argument) == default
        setattr(opt, argument, 0.125)
        assert getattr(opt.hyperparam, argument) == 0.125
    assert set(arguments) <= set(opt.hyperparam.get_dict())
