"""Each optimizer's fused GPU update against the same optimizer on the CPU, same arrays."""

import math

import numpy
import pytest

from dbr.core import Link, Parameter
from dbr.core.serializers import load_npz, save_npz
from dbr.core.testing import get_test_device
from dbr.training import optimizers

W0 = numpy.array([[0.3, -0.2, 0.05], [0.1, 0.4, -0.6]])
B0 = numpy.array([0.05, -0.1, 0.2])
STEPS = 5

# (optimizer, hyperparameters): every rule, every kernel variant.
CASES = [
    (optimizers.SGD, {"lr": 0.1}),
    (optimizers.MomentumSGD, {"lr": 0.1, "momentum": 0.8}),
    (optimizers.NesterovAG, {"lr": 0.1, "momentum": 0.8}),
    (optimizers.CorrectedMomentumSGD, {"lr": 0.1, "momentum": 0.8}),
    (optimizers.AdaGrad, {"lr": 0.1, "eps": 1e-3}),
    (optimizers.AdaDelta, {"rho": 0.9, "eps": 1e-3}),
    (optimizers.RMSprop, {"lr": 0.05, "alpha": 0.9, "eps": 1e-2}),
    (optimizers.RMSprop, {"lr": 0.05, "alpha": 0.8, "eps": 0.1, "eps_inside_sqrt": True}),
    (optimizers.RMSpropGraves, {"lr": 0.05, "alpha": 0.9, "momentum": 0.5, "eps": 0.1}),
    (optimizers.Adam, {"alpha": 0.05, "beta1": 0.8, "beta2": 0.9}),
    (optimizers.AdamW, {"alpha": 0.05, "weight_decay_rate": 0.1, "eta": 0.5}),
    (optimizers.AMSGrad, {"alpha": 0.05, "beta2": 0.9}),
    (optimizers.AdaBound, {"alpha": 0.02, "gamma": 0.5}),
    (optimizers.AMSBound, {"alpha": 0.02, "gamma": 0.5, "eps": 1e-3}),
    (
        optimizers.Adam,
        {"alpha": 0.02, "amsgrad": True, "adabound": True, "eta": 0.5, "weight_decay_rate": 0.1},
    ),
    (optimizers.SMORMS3, {"lr": 0.05, "eps": 1e-3}),
    (optimizers.MSVAG, {"lr": 0.2, "beta": 0.8, "eta": 0.5, "weight_decay_rate": 0.1}),
]
IDS = [f"{cls.__name__}-{i}" for i, (cls, _) in enumerate(CASES)]
TOL = {
    numpy.float16: {"rtol": 2e-2, "atol": 2e-3},
    numpy.float32: {"rtol": 1e-5, "atol": 1e-6},
    numpy.float64: {"rtol": 1e-12, "atol": 1e-14},
}


class Model(Link):
    def __init__(self, dtype):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(W0.astype(dtype))
            self.b = Parameter(B0.astype(dtype))


def grads(step, dtype):
    """A fixed gradient sequence, with no zeros and changing signs."""
    rng = numpy.random.default_rng(step)
    gw = rng.uniform(0.1, 1.0, W0.shape) * rng.choice([-1.0, 1.0], W0.shape)
    gb = rng.uniform(0.1, 1.0, B0.shape) * rng.choice([-1.0, 1.0], B0.shape)
    return gw.astype(dtype), gb.astype(dtype)


def run(cls, hp, dtype, device, steps=STEPS, fp32=False, model=None, opt=None, first=0):
    if model is None:
        model = Model(dtype)
        model.to_device(device)
        opt = cls(**hp).setup(model)
        if fp32:
            opt.use_fp32_update()
    for step in range(first, first + steps):
        gw, gb = grads(step, dtype)
        model.W.grad = device.send(gw)
        model.b.grad = device.send(gb)
        opt.update()
    return model, opt


def to_numpy(array):
    return array if isinstance(array, numpy.ndarray) else array.get()


def assert_same_run(gpu_model, cpu_model, tol):
    for p_gpu, p_cpu in zip(gpu_model.params(), cpu_model.params(), strict=True):
        assert p_gpu.array.dtype == p_cpu.array.dtype
        numpy.testing.assert_allclose(to_numpy(p_gpu.array), p_cpu.array, **tol)
        s_gpu, s_cpu = p_gpu.update_rule.state, p_cpu.update_rule.state
        assert s_gpu.keys() == s_cpu.keys()
        for key in s_cpu:
            assert not isinstance(s_gpu[key], numpy.ndarray), key
            numpy.testing.assert_allclose(to_numpy(s_gpu[key]), s_cpu[key], **tol)


# M-SVAG's first step divides vt - mt**2 (zero but for rounding) by 1 - rho = 1e-4; with
# m and v stored in float16 that amplifies one rounding step into a factor anywhere in
# [0, 1], so its float16 runs agree only as far as their last bits do. Its float16
# parameters are compared through the float32 master update below instead.
SAME_DTYPE_CASES = [
    (cls, hp, dtype)
    for (cls, hp) in CASES
    for dtype in (numpy.float16, numpy.float32, numpy.float64)
    if not (cls is optimizers.MSVAG and dtype is numpy.float16)
]
SAME_DTYPE_IDS = [
    f"{cls.__name__}-{CASES.index((cls, hp))}-{numpy.dtype(dtype).name}"
    for cls, hp, dtype in SAME_DTYPE_CASES
]


@pytest.mark.gpu
@pytest.mark.parametrize(("cls", "hp", "dtype"), SAME_DTYPE_CASES, ids=SAME_DTYPE_IDS)
def test_gpu_update_matches_cpu(cls, hp, dtype):
    gpu = get_test_device("@cupy:0")
    cpu = get_test_device("@numpy")
    gpu_model, gpu_opt = run(cls, hp, dtype, gpu)
    cpu_model, cpu_opt = run(cls, hp, dtype, cpu)
    assert_same_run(gpu_model, cpu_model, TOL[dtype])
    assert gpu_model.W.update_rule.t == cpu_model.W.update_rule.t == STEPS
    assert not numpy.allclose(to_numpy(gpu_model.W.array), W0.astype(dtype))


@pytest.mark.gpu
@pytest.mark.parametrize(("cls", "hp"), CASES, ids=IDS)
def test_gpu_fp32_master_update_of_float16_params(cls, hp):
    gpu = get_test_device("@cupy:0")
    cpu = get_test_device("@numpy")
    gpu_model, _ = run(cls, hp, numpy.float16, gpu, fp32=True)
    cpu_model, _ = run(cls, hp, numpy.float16, cpu, fp32=True)
    for p_gpu, p_cpu in zip(gpu_model.params(), cpu_model.params(), strict=True):
        master_gpu, master_cpu = p_gpu.update_rule._fp32_param, p_cpu.update_rule._fp32_param
        assert master_gpu.array.dtype == numpy.float32
        numpy.testing.assert_allclose(
            to_numpy(master_gpu.array), master_cpu.array, **TOL[numpy.float32]
        )
        assert p_gpu.array.dtype == numpy.float16
        numpy.testing.assert_array_equal(
            to_numpy(p_gpu.array), to_numpy(master_gpu.array).astype(numpy.float16)
        )
        for key, value in p_gpu.update_rule.state.items():
            assert value.dtype == numpy.float32, key


def sgd_formula(p, g, s, t):
    return p - 0.1 * g


def momentum_formula(p, g, s, t):
    s["v"] = 0.8 * s.get("v", 0.0) - 0.1 * g
    return p + s["v"]


def adam_formula(p, g, s, t):
    s["m"] = 0.8 * s.get("m", 0.0) + 0.2 * g
    s["v"] = 0.9 * s.get("v", 0.0) + 0.1 * g * g
    alpha_t = 0.05 * math.sqrt(1 - 0.9**t) / (1 - 0.8**t)
    return p - alpha_t * s["m"] / (numpy.sqrt(s["v"]) + 1e-8)


def adamw_formula(p, g, s, t):
    # Chainer: param -= eta * (step * m + weight_decay_rate * param), eta 0.5, rate 0.1.
    s["m"] = 0.8 * s.get("m", 0.0) + 0.2 * g
    s["v"] = 0.9 * s.get("v", 0.0) + 0.1 * g * g
    alpha_t = 0.05 * math.sqrt(1 - 0.9**t) / (1 - 0.8**t)
    return p - 0.5 * (alpha_t * s["m"] / (numpy.sqrt(s["v"]) + 1e-8) + 0.1 * p)


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("cls", "hp", "formula"),
    [
        (optimizers.SGD, {"lr": 0.1}, sgd_formula),
        (optimizers.MomentumSGD, {"lr": 0.1, "momentum": 0.8}, momentum_formula),
        (optimizers.Adam, {"alpha": 0.05, "beta1": 0.8, "beta2": 0.9}, adam_formula),
        (
            optimizers.AdamW,
            {"alpha": 0.05, "beta1": 0.8, "beta2": 0.9, "eta": 0.5, "weight_decay_rate": 0.1},
            adamw_formula,
        ),
    ],
    ids=["SGD", "MomentumSGD", "Adam", "AdamW"],
)
def test_gpu_float64_update_matches_the_written_out_formula(cls, hp, formula):
    gpu = get_test_device("@cupy:0")
    model, _ = run(cls, hp, numpy.float64, gpu)
    w, b, sw, sb = W0.copy(), B0.copy(), {}, {}
    for step in range(STEPS):
        gw, gb = grads(step, numpy.float64)
        w, b = formula(w, gw, sw, step + 1), formula(b, gb, sb, step + 1)
    numpy.testing.assert_allclose(model.W.array.get(), w, rtol=1e-12)
    numpy.testing.assert_allclose(model.b.array.get(), b, rtol=1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize(("cls", "hp"), CASES, ids=IDS)
def test_gpu_optimizer_state_saved_loads_into_a_cpu_optimizer(cls, hp, tmp_path):
    gpu = get_test_device("@cupy:0")
    cpu = get_test_device("@numpy")
    gpu_model, gpu_opt = run(cls, hp, numpy.float32, gpu, steps=3)
    save_npz(tmp_path / "opt.npz", gpu_opt)
    save_npz(tmp_path / "model.npz", gpu_model)
    cpu_model = Model(numpy.float32)
    cpu_opt = cls(**hp).setup(cpu_model)
    load_npz(tmp_path / "model.npz", cpu_model)
    load_npz(tmp_path / "opt.npz", cpu_opt)
    assert cpu_opt.t == 3 and cpu_model.W.update_rule.t == 3
    run(cls, hp, numpy.float32, gpu, steps=2, model=gpu_model, opt=gpu_opt, first=3)
    run(cls, hp, numpy.float32, cpu, steps=2, model=cpu_model, opt=cpu_opt, first=3)
    assert_same_run(gpu_model, cpu_model, TOL[numpy.float32])


@pytest.mark.gpu
def test_gpu_rmsprop_refuses_an_eps_that_rounds_to_zero():
    gpu = get_test_device("@cupy:0")
    with pytest.raises(ValueError, match="RMSpropRule.*eps=1e-08.*float16"):
        run(optimizers.RMSprop, {"eps": 1e-8}, numpy.float16, gpu, steps=1)


@pytest.mark.gpu
def test_gpu_dynamic_loss_scaling_skips_a_step_with_inf_after_one_sync():
    gpu = get_test_device("@cupy:0")
    model = Model(numpy.float32)
    model.to_device(gpu)
    opt = optimizers.SGD(lr=0.1).setup(model)
    opt.loss_scaling(interval=4)
    gw, gb = grads(0, numpy.float32)
    gb[1] = numpy.inf
    model.W.grad, model.b.grad = gpu.send(gw), gpu.send(gb)
    with pytest.warns(UserWarning, match="non-finite value in the gradient of /b"):
        opt.update()
    numpy.testing.assert_array_equal(model.W.array.get(), W0.astype(numpy.float32))
    assert not opt.is_safe_to_update() and opt._loss_scale == 1
    model.W.grad, model.b.grad = gpu.send(gw), gpu.send(grads(0, numpy.float32)[1])
    opt.update()
    assert opt.is_safe_to_update()
    numpy.testing.assert_allclose(model.W.array.get(), W0 - 0.1 * gw, rtol=1e-6)
