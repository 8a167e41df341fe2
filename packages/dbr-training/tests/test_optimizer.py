"""The optimizer machinery: hyperparameters, rules, hooks, fp32 updates, loss scaling, errors."""

import numpy
import pytest

from dbr.core import Link, Parameter, backend, ops
from dbr.core.serializers import load_npz, save_npz
from dbr.training.optimizer import GradientMethod, Hyperparameter, Optimizer, UpdateRule
from dbr.training.optimizers import SGD, Adam, MomentumSGD

W0 = numpy.array([[1.0, -2.0], [0.5, 3.0]])
B0 = numpy.array([0.25, -0.75])


class Model(Link):
    def __init__(self, dtype=numpy.float64):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(W0.astype(dtype))
            self.b = Parameter(B0.astype(dtype))


def set_grads(model, gw, gb):
    model.W.grad = numpy.asarray(gw, dtype=model.W.dtype)
    model.b.grad = numpy.asarray(gb, dtype=model.b.dtype)


GW = numpy.array([[0.5, 1.0], [-1.0, 2.0]])
GB = numpy.array([1.0, -3.0])


def test_hyperparameter_falls_back_to_parent():
    parent = Hyperparameter()
    parent.lr = 0.1
    parent.momentum = 0.9
    child = Hyperparameter(parent)
    child.lr = 0.5
    assert child.lr == 0.5 and child.momentum == 0.9 and child.parent is parent
    assert child.get_dict() == {"lr": 0.5, "momentum": 0.9}
    assert repr(child) == "Hyperparameter(lr=0.5, momentum=0.9)"
    parent.momentum = 0.1
    assert child.momentum == 0.1
    with pytest.raises(AttributeError):
        _ = child.missing


def test_per_parameter_override_and_proxy():
    model = Model()
    opt = SGD(lr=0.1).setup(model)
    model.W.update_rule.hyperparam.lr = 0.5
    set_grads(model, GW, GB)
    opt.update()
    numpy.testing.assert_array_equal(model.W.array, W0 - 0.5 * GW)
    numpy.testing.assert_array_equal(model.b.array, B0 - 0.1 * GB)
    opt.lr = 0.01
    assert opt.hyperparam.lr == 0.01
    set_grads(model, GW, GB)
    opt.update()
    numpy.testing.assert_array_equal(model.b.array, B0 - 0.1 * GB - 0.01 * GB)
    numpy.testing.assert_array_equal(model.W.array, W0 - 0.5 * GW - 0.5 * GW)


def test_disabled_update_rules():
    model = Model()
    opt = MomentumSGD(lr=0.1).setup(model)
    model.disable_update()
    set_grads(model, GW, GB)
    opt.update()
    numpy.testing.assert_array_equal(model.W.array, W0)
    numpy.testing.assert_array_equal(model.b.array, B0)
    assert opt.t == 1 and model.W.update_rule.t == 0 and model.W.update_rule.state is None
    model.b.update_rule.enabled = True
    opt.update()
    numpy.testing.assert_array_equal(model.W.array, W0)
    numpy.testing.assert_array_equal(model.b.array, B0 - 0.1 * GB)


class Recorder:
    def __init__(self, log, name, timing, each=False):
        self.log, self.name, self.timing, self.call_for_each_param = log, name, timing, each

    def __call__(self, *args):
        if self.call_for_each_param:
            rule, param = args
            self.log.append((self.name, param.array.copy(), rule.t))
        else:
            (opt,) = args
            self.log.append((self.name, opt.target.W.array.copy(), opt.t))


def test_hooks_pre_and_post_order():
    log = []
    model = Model()
    opt = SGD(lr=0.1).setup(model)
    opt.add_hook(Recorder(log, "post1", "post"))
    opt.add_hook(Recorder(log, "pre1", "pre"))
    opt.add_hook(Recorder(log, "pre2", "post"), timing="pre")
    opt.add_hook(Recorder(log, "each", "pre", each=True))
    set_grads(model, GW, GB)
    opt.update()
    assert [entry[0] for entry in log] == ["pre1", "pre2", "each", "each", "post1"]
    numpy.testing.assert_array_equal(log[0][1], W0)
    numpy.testing.assert_array_equal(log[1][1], W0)
    assert log[0][2] == 0
    numpy.testing.assert_array_equal(log[4][1], W0 - 0.1 * GW)
    assert log[4][2] == 1
    opt.remove_hook("pre2")
    with pytest.raises(KeyError, match="pre1"):
        opt.add_hook(Recorder(log, "pre1", "pre"))
    log.clear()
    opt.update()
    assert [entry[0] for entry in log] == ["pre1", "each", "each", "post1"]


def test_rule_hooks_see_the_rule_and_param():
    log = []
    model = Model()
    opt = SGD(lr=0.1).setup(model)
    model.W.update_rule.add_hook(Recorder(log, "rpre", "pre", each=True))
    model.W.update_rule.add_hook(Recorder(log, "rpost", "post", each=True))
    set_grads(model, GW, GB)
    opt.update()
    assert [e[0] for e in log] == ["rpre", "rpost"]
    numpy.testing.assert_array_equal(log[0][1], W0)
    numpy.testing.assert_array_equal(log[1][1], W0 - 0.1 * GW)


def test_fp32_update_of_float16_params():
    model = Model(numpy.float16)
    opt = SGD(lr=1e-3).setup(model)
    opt.use_fp32_update()
    master = W0.astype(numpy.float32)
    for _ in range(5):
        set_grads(model, GW, GB)
        opt.update()
        master = master - numpy.float32(1e-3) * GW.astype(numpy.float16).astype(numpy.float32)
    rule = model.W.update_rule
    copy = rule._fp32_param.array
    assert copy.dtype == numpy.float32
    numpy.testing.assert_allclose(copy, master, rtol=1e-6)
    numpy.testing.assert_array_equal(model.W.array, copy.astype(numpy.float16))
    assert model.W.array.dtype == numpy.float16
    # Without the master copy the small steps would be lost in float16 rounding.
    assert not numpy.array_equal(copy, W0.astype(numpy.float16).astype(numpy.float32))


def test_fp32_update_state_is_float32_and_round_trips(tmp_path):
    model = Model(numpy.float16)
    opt = Adam(alpha=0.01).setup(model)
    opt.use_fp32_update()
    for _ in range(2):
        set_grads(model, GW, GB)
        opt.update()
    assert model.W.update_rule.state["m"].dtype == numpy.float32
    save_npz(tmp_path / "o.npz", opt)
    save_npz(tmp_path / "m.npz", model)
    model2 = Model(numpy.float16)
    opt2 = Adam(alpha=0.01).setup(model2)
    opt2.use_fp32_update()
    load_npz(tmp_path / "m.npz", model2)
    load_npz(tmp_path / "o.npz", opt2)
    for _ in range(3):
        set_grads(model, GW, GB)
        opt.update()
        set_grads(model2, GW, GB)
        opt2.update()
    numpy.testing.assert_array_equal(
        model.W.update_rule._fp32_param.array, model2.W.update_rule._fp32_param.array
    )
    numpy.testing.assert_array_equal(model.W.array, model2.W.array)


def test_dynamic_loss_scaling_skips_overflow_and_rescales():
    model = Model()
    opt = SGD(lr=0.1).setup(model)
    opt.loss_scaling(interval=4)
    assert opt._loss_scale == 1.0
    expected_w = W0.copy()
    for scale in (2.0, 4.0, 8.0):
        set_grads(model, GW, GB)
        opt.update()
        expected_w = expected_w - 0.1 * GW
        assert opt._loss_scale == scale
    numpy.testing.assert_array_equal(model.W.array, expected_w)
    before_w, before_b = model.W.array.copy(), model.b.array.copy()
    set_grads(model, [[numpy.inf, 0.0], [0.0, 0.0]], GB)
    with pytest.warns(UserWarning, match="non-finite"):
        opt.update()
    numpy.testing.assert_array_equal(model.W.array, before_w)
    numpy.testing.assert_array_equal(model.b.array, before_b)
    assert opt._loss_scale == 4.0 and not opt.is_safe_to_update()
    assert opt.t == 4 and model.W.update_rule.t == 3
    for _ in range(4):
        set_grads(model, GW, GB)
        opt.update()
    assert opt._loss_scale == pytest.approx(8.0, rel=1e-12)


def test_static_loss_scale_is_divided_out():
    x = numpy.array([[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0]])
    t = numpy.array([[0.5, 1.0], [0.0, -1.0], [2.0, 0.0]])

    def loss_fn():
        y = ops.matmul(x, model.W) + ops.broadcast_to(model.b, t.shape)
        return ops.sum((y - t) ** 2) / 3

    model = Model()
    opt = SGD(lr=0.1).setup(model)
    opt.set_loss_scale(1024.0)
    opt.update(loss_fn)
    r = x @ W0 + B0 - t
    numpy.testing.assert_allclose(model.W.array, W0 - 0.1 * 2 * x.T @ r / 3, rtol=1e-14)
    numpy.testing.assert_allclose(model.b.array, B0 - 0.1 * 2 * r.sum(0) / 3, rtol=1e-14)


def test_loss_scaling_bad_arguments():
    opt = SGD()
    with pytest.raises(ValueError, match="SGD.loss_scaling.*interval.*0"):
        opt.loss_scaling(interval=0)
    with pytest.raises(ValueError, match="SGD.loss_scaling.*scale.*-1"):
        opt.loss_scaling(scale=-1)


def test_use_before_setup():
    opt = Adam()
    with pytest.raises(RuntimeError, match=r"Adam\.update.*setup\(link\)"):
        opt.update()
    with pytest.raises(RuntimeError, match=r"Adam\.add_hook.*setup\(link\)"):
        opt.add_hook(lambda o: None, name="h", timing="pre")
    with pytest.raises(TypeError, match="Adam.setup.*Link.*int"):
        opt.setup(3)
    # Chainer's words, which its own tests match
    with pytest.raises(TypeError, match="optimization target must be a link"):
        opt.setup("model")


def test_bad_timing_name():
    opt = SGD().setup(Model())
    with pytest.raises(ValueError, match="SGD.add_hook.*'middle'"):
        opt.add_hook(lambda o: None, name="h", timing="middle")
    with pytest.raises(ValueError, match="'later'"):
        opt.call_hooks("later")


def test_auto_timing_without_attribute_defaults_to_pre():
    opt = SGD().setup(Model())
    with pytest.warns(UserWarning, match="'pre'"):
        opt.add_hook(lambda o: None, name="h")
    assert "h" in opt._pre_update_hooks


def test_new_epoch_auto_and_manual_cannot_mix():
    opt = SGD().setup(Model())
    opt.new_epoch()
    assert opt.epoch == 1
    with pytest.raises(RuntimeError, match="auto=True"):
        opt.new_epoch(auto=True)
    opt.use_auto_new_epoch = True
    opt.new_epoch(auto=True)
    assert opt.epoch == 2
    with pytest.raises(RuntimeError, match="duplicated"):
        opt.new_epoch()


def test_update_with_lossfun_clears_grads_first():
    model = Model()
    opt = SGD(lr=0.1).setup(model)
    set_grads(model, GW * 100, GB * 100)

    def loss_fn():
        return ops.sum(model.W * 1.0) + ops.sum(model.b * 2.0)

    opt.update(loss_fn)
    numpy.testing.assert_array_equal(model.W.array, W0 - 0.1)
    numpy.testing.assert_array_equal(model.b.array, B0 - 0.2)


def test_uninitialized_param_gets_rule_and_state_later():
    class Lazy(Link):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.W = Parameter(0.5)

    model = Lazy()
    opt = MomentumSGD(lr=0.1).setup(model)
    assert isinstance(model.W.update_rule, UpdateRule)
    opt.update()
    assert model.W.update_rule.state is None
    model.W.initialize((2,))
    model.W.grad = numpy.ones(2, dtype=numpy.float32)
    opt.update()
    numpy.testing.assert_array_equal(model.W.array, numpy.float32(0.5) - numpy.float32(0.1))
    assert model.W.update_rule.state["v"].shape == (2,)


def test_base_classes_are_abstract():
    with pytest.raises(NotImplementedError, match="Optimizer"):
        Optimizer().update()
    with pytest.raises(NotImplementedError, match="GradientMethod"):
        GradientMethod().setup(Model())


# -- the state follows the parameter's device ------------------------------------------


class _FakeArray:
    """An array on the fake device: a NumPy array wrapped so that dbr.core sees another device."""

    def __init__(self, array):
        self.a = numpy.asarray(array)

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)
    ndim = property(lambda self: self.a.ndim)
    size = property(lambda self: self.a.size)

    def __array__(self, dtype=None, copy=None):
        return self.a


class _FakeDevice(backend.Device):
    xp = numpy
    name = "@fake"

    def send_array(self, array):
        return array if isinstance(array, _FakeArray) else _FakeArray(numpy.array(array))

    def is_array_supported(self, array):
        return isinstance(array, _FakeArray)


@pytest.fixture
def fake_device(monkeypatch):
    device = _FakeDevice()
    monkeypatch.setattr(backend, "_device_resolvers", dict(backend._device_resolvers))
    monkeypatch.setattr(backend, "_array_types", dict(backend._array_types))
    backend.register_device_resolver("@fake", lambda spec: device)
    backend.register_array_type(_FakeArray, numpy, lambda array: device)
    return device


class _AccumulateRule(UpdateRule):
    """v += grad; param -= v, on NumPy arrays or on the fake device's."""

    def init_state(self, param):
        self.state["v"] = param.device.send(numpy.zeros(param.shape))

    def update_core_cpu(self, param):
        v = self.state["v"]
        assert type(v) is numpy.ndarray
        v += param.grad
        param.array -= v

    def update_core_gpu(self, param):
        v = self.state["v"]
        assert isinstance(v, _FakeArray), "the state did not follow the parameter"
        v.a += param.grad.a
        param.array.a -= v.a


class _Accumulate(GradientMethod):
    def create_update_rule(self):
        return _AccumulateRule(self.hyperparam)


class _OneParam(Link):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(numpy.zeros(2))


def test_state_follows_the_parameter_moved_after_the_state_exists(fake_device):
    link = _OneParam()
    opt = _Accumulate().setup(link)
    rule = link.W.update_rule
    link.W.grad = numpy.ones(2)
    opt.update()
    assert type(rule.state["v"]) is numpy.ndarray

    link.to_device("@fake")
    assert isinstance(link.W.grad, _FakeArray)
    opt.update()
    assert isinstance(rule.state["v"], _FakeArray)
    numpy.testing.assert_array_equal(rule.state["v"].a, [2.0, 2.0])
    numpy.testing.assert_array_equal(link.W.array.a, [-3.0, -3.0])

    link.to_device("@numpy")
    opt.update()
    assert type(rule.state["v"]) is numpy.ndarray
    numpy.testing.assert_array_equal(rule.state["v"], [3.0, 3.0])
    link.to_device("@numpy")
    opt.update()
    numpy.testing.assert_array_equal(rule.state["v"], [4.0, 4.0])
    numpy.testing.assert_array_equal(link.W.array, [-10.0, -10.0])


def test_state_stays_on_the_old_device_until_the_next_update(fake_device):
    # As in Chainer, the state moves at the next update of the parameter, not at to_device.
    link = _OneParam()
    opt = _Accumulate().setup(link)
    link.W.grad = numpy.ones(2)
    opt.update()
    link.to_device("@fake")
    assert type(link.W.update_rule.state["v"]) is numpy.ndarray


def test_adam_state_follows_numpy_to_numpy_moves():
    model = Model()
    opt = Adam(alpha=0.1).setup(model)
    set_grads(model, GW, GB)
    opt.update()
    state = model.W.update_rule.state
    m = state["m"]
    model.to_device("@numpy")
    set_grads(model, GW, GB)
    opt.update()
    assert model.W.update_rule.state["m"] is m
    assert opt.t == 2


ALL_OPTIMIZERS = [
    "AdaDelta", "AdaGrad", "Adam", "AdamW", "AMSGrad", "AdaBound", "AMSBound",
    "CorrectedMomentumSGD", "MomentumSGD", "MSVAG", "NesterovAG", "RMSprop",
    "RMSpropGraves", "SGD", "SMORMS3",
]  # fmt: skip


class Scalar(Link):
    def __init__(self, value):
        super().__init__()
        with self.init_scope():
            self.w = Parameter(numpy.asarray(value, dtype=numpy.float32))


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
def test_0dim_parameter_updates_as_a_one_element_one(name):
    import dbr.training.optimizers as optimizers

    scalar, vector = Scalar(0.75), Scalar([0.75])
    opt_s = getattr(optimizers, name)().setup(scalar)
    opt_v = getattr(optimizers, name)().setup(vector)
    for grad in (0.5, -1.25, 2.0):
        scalar.w.grad = numpy.asarray(grad, dtype=numpy.float32)
        vector.w.grad = numpy.asarray([grad], dtype=numpy.float32)
        opt_s.update()
        opt_v.update()
        assert scalar.w.array.shape == ()
        # Within an ulp: under NumPy 1.x a 0-d array times a Python float is computed
        # in float64 (value-based casting), a one-element array in float32.
        numpy.testing.assert_allclose(scalar.w.array, vector.w.array[0], rtol=2e-7)
        assert scalar.w.array.item() != 0.75
    for key, value in scalar.w.update_rule.state.items():
        assert value.shape == ()
        numpy.testing.assert_allclose(value, vector.w.update_rule.state[key][0], rtol=2e-7)


class _Recording(UpdateRule):
    def __init__(self):
        super().__init__()
        self.calls = []

    def init_state(self, param):
        self.state["v"] = numpy.zeros_like(param.array)

    def update_core_cpu(self, param):
        self.calls.append(param)


class _RecordingMethod(GradientMethod):
    def create_update_rule(self):
        return _Recording()


def test_update_core_runs_for_params_without_grad_or_array_as_in_chainer():
    class Three(Link):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.lazy = Parameter()
                self.ready = Parameter(numpy.ones(2, dtype=numpy.float32))

    link = Three()
    opt = _RecordingMethod().setup(link)
    seen = []
    link.lazy.update_rule.add_hook(lambda rule, param: seen.append(param), name="h")
    opt.update()
    assert link.lazy.update_rule.calls == [link.lazy]
    assert seen == [link.lazy]
    assert link.lazy.update_rule.state is None  # no state for an uninitialised parameter
    assert link.ready.update_rule.calls == [link.ready]
    assert link.ready.update_rule.state["v"].shape == (2,)


def test_fp32_update_of_an_uninitialized_float16_param_sees_a_float32_master():
    class Lazy16:
        dtype = numpy.float16

        def __call__(self, array):
            raise AssertionError("never called")

    param = Parameter(Lazy16())
    rule = _Recording()
    rule.use_fp32_update()
    rule.update(param)
    (master,) = rule.calls
    assert master is not param
    assert master.dtype == numpy.float32 and master.array is None
    assert param.array is None and param.dtype == numpy.float16


def test_update_core_chainerx_updates_as_update_core():
    rule = _Recording()
    param = Parameter(numpy.ones(2, dtype=numpy.float32))
    rule.update_core_chainerx(param)
    assert rule.calls == [param]


def test_rule_hook_with_invalid_timing_warns_and_runs_before_the_update():
    order = []

    class Hook:
        name = "odd"
        timing = "middle"

        def __call__(self, rule, param):
            order.append("hook")

    rule = _Recording()
    with pytest.warns(UserWarning, match="_Recording.add_hook.*'middle'.*'pre'"):
        rule.add_hook(Hook())
    rule.update_core_cpu = lambda param: order.append("update")
    rule.update(Parameter(numpy.ones(1)))
    assert order == ["hook", "update"]


def test_rule_hook_name_clash_is_a_key_error():
    rule = _Recording()
    rule.add_hook(lambda r, p: None, name="h")
    with pytest.raises(KeyError, match="_Recording.add_hook.*'h'"):
        rule.add_hook(lambda r, p: None, name="h")


def test_a_disabled_rule_loads_without_its_state_an_enabled_one_needs_it():
    from dbr.core.serializers import Deserializer

    class Strict(Deserializer):
        def __getitem__(self, key):
            raise NotImplementedError

        def __call__(self, key, value):
            if key == "t":
                return 7
            raise KeyError(key)

    rule = _Recording()
    with pytest.raises(KeyError, match="v"):
        rule.serialize(Strict())
    rule = _Recording()
    rule.enabled = False
    rule.serialize(Strict())
    assert rule.t == 7 and rule.state is None
