import io
import os
import threading

import numpy
import pytest

from dbr.core import (
    Chain,
    Link,
    LinkHook,
    Parameter,
    Variable,
    gradient_check,
    ops,
    serializers,
    using_config,
)
from dbr.core.link_hooks import SpectralNormalization, TimerHook, WeightStandardization

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


class Scale(Link):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.a = Parameter(numpy.float32(2.0), ())

    def forward(self, x, offset=0.0):
        return x * self.a + offset


class Pair(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.first = Scale()
            self.second = Scale()

    def forward(self, x):
        return self.second(self.first(x))


class Affine(Link):
    """``x @ W.T + b`` with a lazily shaped W: L.Linear's math on dbr.core's ops."""

    def __init__(self, out_size, W=None, b=None):
        super().__init__()
        self.out_size = out_size
        with self.init_scope():
            self.W = Parameter(W) if W is not None else Parameter(0.5, None)
            self.b = Parameter(b) if b is not None else None

    def _initialize_params(self, in_size):
        self.W.initialize((self.out_size, in_size))

    def forward(self, x):
        if self.W.array is None:
            self._initialize_params(x.shape[1])
        y = ops.matmul(x, self.W, transb=True)
        return y if self.b is None else y + self.b


class Recorder(LinkHook):
    """Records every callback as a tuple."""

    def __init__(self, name="Recorder", log=None):
        self.name = name
        self.log = [] if log is None else log

    def added(self, link):
        self.log.append((self.name, "added", link))

    def deleted(self, link):
        self.log.append((self.name, "deleted", link))

    def forward_preprocess(self, args):
        self.log.append((self.name, "pre", args.link, args.forward_name, args.args, args.kwargs))

    def forward_postprocess(self, args):
        self.log.append(
            (self.name, "post", args.link, args.forward_name, args.args, args.kwargs, args.out)
        )


class WeightRecorder(LinkHook):
    """Records the weight array that the forward sees (registered after a weight hook)."""

    name = "WeightRecorder"

    def forward_preprocess(self, args):
        self.weight = args.link.W.array.copy()
        self.weight_type = type(args.link.W)


# -- the mechanism -------------------------------------------------------------------


def test_add_hook_calls_around_forward_with_the_call_data():
    link = Scale()
    hook = Recorder()
    assert link.add_hook(hook) is link
    assert link.local_link_hooks == {"Recorder": hook}
    x = numpy.float32(3.0)
    out = link(x, offset=1.0)
    assert out.array == 7.0
    assert hook.log[0] == ("Recorder", "added", link)
    assert hook.log[1] == ("Recorder", "pre", link, "forward", (x,), {"offset": 1.0})
    assert hook.log[2] == ("Recorder", "post", link, "forward", (x,), {"offset": 1.0}, out)
    link.delete_hook("Recorder")
    assert hook.log[3] == ("Recorder", "deleted", link)
    assert link.local_link_hooks == {}
    link(x)
    assert len(hook.log) == 4


def test_add_hook_under_another_name_and_errors():
    link = Scale()
    hook = Recorder()
    link.add_hook(hook, name="other")
    assert list(link.local_link_hooks) == ["other"]
    with pytest.raises(KeyError, match="Scale.add_hook: a hook named 'other'"):
        link.add_hook(Recorder(), name="other")
    with pytest.raises(TypeError, match="expected hook to be a LinkHook, got object"):
        link.add_hook(object())
    with pytest.raises(KeyError, match="Scale.delete_hook: no hook named 'Recorder'"):
        link.delete_hook("Recorder")
    assert list(link.local_link_hooks) == ["other"]


def test_callback_args_repr_names_their_data():
    link = Scale()
    seen = []

    class Repr(LinkHook):
        def forward_preprocess(self, args):
            seen.append(repr(args))

        def forward_postprocess(self, args):
            seen.append(repr(args))

    link.add_hook(Repr())
    link(1.0)
    assert seen[0] == (
        "<_ForwardPreprocessCallbackArgs link=Scale() forward_name=forward args=(1.0,) kwargs={}>"
    )
    assert seen[1].startswith("<_ForwardPostprocessCallbackArgs link=Scale() forward_name=forward")
    assert " out=variable(" in seen[1]


def test_global_hook_applies_to_every_link_in_the_with_block():
    model = Pair()
    log = []
    hook = Recorder("global", log)
    with hook as entered:
        assert entered is hook
        model(numpy.float32(1.0))
    model(numpy.float32(1.0))
    events = [(event[1], event[2]) for event in log]
    assert events == [
        ("added", None),
        ("pre", model),
        ("pre", model.first),
        ("post", model.first),
        ("pre", model.second),
        ("post", model.second),
        ("post", model),
        ("deleted", None),
    ]


def test_global_hooks_come_first_and_a_local_hook_replaces_a_global_one_of_its_name():
    link = Scale()
    log = []
    link.add_hook(Recorder("local", log))
    link.add_hook(Recorder("shared", log), name="shared")
    with Recorder("global", log), Recorder("shared", log):
        del log[:]
        link(1.0)
    assert [(event[0], event[1]) for event in log[:3]] == [
        ("global", "pre"),
        ("shared", "pre"),
        ("local", "pre"),
    ]
    assert len([event for event in log if event[1] == "pre"]) == 3


def test_global_hook_names_are_unique_per_thread():
    with Recorder("same"):
        with (
            pytest.raises(KeyError, match="LinkHook: a hook named 'same' is already"),
            Recorder("same"),
        ):
            pass
        log = []
        other = Recorder("other", log)
        seen = []

        def call_in_thread():
            link = Scale()
            link(1.0)
            with other:
                link(1.0)
            seen.append(True)

        thread = threading.Thread(target=call_in_thread)
        thread.start()
        thread.join()
        assert seen == [True]
        # The thread saw its own global hook, not "same".
        assert [event[1] for event in log] == ["added", "pre", "post", "deleted"]
    with Recorder("same"):
        pass


def test_a_hook_may_return_nothing_and_the_output_is_forward_s():
    link = Scale()
    link.add_hook(LinkHook())
    assert link(numpy.float32(2.0)).array == 4.0


# -- TimerHook ------------------------------------------------------------------------


def test_timer_hook_records_each_link_and_counts_outermost_calls_in_the_total():
    model = Pair()
    with TimerHook() as hook:
        model(numpy.float32(1.0))
        model.first(numpy.float32(1.0))
    names = [name for name, _ in hook.call_history]
    assert names == ["Scale", "Scale", "Pair", "Scale"]
    times = dict(enumerate(seconds for _, seconds in hook.call_history))
    assert all(seconds >= 0 for seconds in times.values())
    assert times[2] >= times[0] + times[1]
    assert hook.total_time() == pytest.approx(times[2] + times[3])
    summary = hook.summary()
    assert list(summary) == ["Scale", "Pair"]
    assert summary["Scale"]["occurrence"] == 3
    assert summary["Scale"]["elapsed_time"] == pytest.approx(times[0] + times[1] + times[3])
    assert summary["Pair"] == {"elapsed_time": times[2], "occurrence": 1}


def test_timer_hook_on_one_link_and_after_a_raising_call():
    class Failing(Link):
        def forward(self, x):
            raise RuntimeError("boom")

    link = Scale()
    failing = Failing()
    hook = TimerHook()
    link.add_hook(hook)
    failing.add_hook(hook)
    with pytest.raises(RuntimeError):
        failing(1.0)
    link(1.0)
    assert [name for name, _ in hook.call_history] == ["Scale"]
    assert hook.total_time() == hook.call_history[0][1]


# The expected tables are what Chainer 7.8.1's TimerHook prints for this history.
_TIMER_TABLES = {
    None: "LinkName  ElapsedTime  Occurrence\n"
    "  Linear      0.75sec           2\n"
    "     MLP      2.00sec           1\n",
    "auto_foreach": "LinkName  ElapsedTime  Occurrence\n"
    "  Linear     750.00ms           2\n"
    "     MLP      2.00sec           1\n",
    "us": "LinkName   ElapsedTime  Occurrence\n"
    "  Linear   750000.00us           2\n"
    "     MLP  2000000.00us           1\n",
}


@pytest.mark.parametrize("unit", list(_TIMER_TABLES))
def test_timer_hook_print_report(unit):
    hook = TimerHook()
    hook.call_history = [("Linear", 0.5), ("MLP", 2.0), ("Linear", 0.25)]
    out = io.StringIO()
    kwargs = {} if unit is None else {"unit": unit}
    hook.print_report(file=out, **kwargs)
    assert out.getvalue() == _TIMER_TABLES[unit]
    with pytest.raises(ValueError, match="TimerHook.print_report: expected unit"):
        hook.print_report(unit="min")


# -- SpectralNormalization ------------------------------------------------------------


@pytest.fixture(scope="module")
def chainer_sn():
    with numpy.load(os.path.join(FIXTURES, "link_hooks.npz")) as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize(
    "case, train, options",
    [
        ("train", True, {}),
        ("test", False, {}),
        ("gamma", True, {"n_power_iteration": 2, "use_gamma": True, "factor": 2.0}),
    ],
)
def test_spectral_normalization_matches_chainer(chainer_sn, case, train, options):
    ref = {
        key.split("/", 1)[1]: value for key, value in chainer_sn.items() if key.startswith(case)
    }
    link = Affine(3, ref["W"].copy(), ref["b"].copy())
    hook = SpectralNormalization(**options)
    link.add_hook(hook)
    recorder = WeightRecorder()
    link.add_hook(recorder)
    link.W_u = ref["u"].copy()
    if options.get("use_gamma"):
        numpy.testing.assert_allclose(link.gamma.array, ref["gamma"], rtol=1e-12)
        assert link.gamma.dtype == numpy.float64 and link.gamma.shape == ()
    x = Variable(ref["x"])
    with using_config("train", train):
        y = link(x)
    link.cleargrads()
    y.grad = ref["gy"]
    y.backward()
    numpy.testing.assert_allclose(recorder.weight, ref["W_bar"], rtol=1e-12)
    assert recorder.weight_type is Variable
    numpy.testing.assert_allclose(y.array, ref["y"], rtol=1e-12)
    numpy.testing.assert_allclose(link.W_u, ref["u_after"], rtol=1e-12)
    numpy.testing.assert_allclose(x.grad, ref["gx"], rtol=1e-10)
    numpy.testing.assert_allclose(link.W.grad, ref["gW"], rtol=1e-10, atol=1e-14)
    numpy.testing.assert_allclose(link.b.grad, ref["gb"], rtol=1e-12)
    if options.get("use_gamma"):
        numpy.testing.assert_allclose(link.gamma.grad, ref["ggamma"], rtol=1e-10)
    # After the call the link holds its Parameter again.
    assert type(link.W) is Parameter
    numpy.testing.assert_array_equal(link.W.array, ref["W"])


def test_spectral_normalization_u_is_persistent_and_deleted_with_the_hook(tmp_path):
    rng = numpy.random.default_rng(0)
    link = Affine(3, rng.normal(size=(3, 4)), None)
    hook = SpectralNormalization(use_gamma=True)
    link.add_hook(hook)
    assert link.W_u.shape == (3,) and link.W_u.dtype == numpy.float64
    assert "W_u" in link._persistent
    assert [path for path, _ in link.namedparams()] == ["/W", "/gamma"]
    serializers.save_npz(tmp_path / "m.npz", link)
    with numpy.load(tmp_path / "m.npz") as saved:
        assert sorted(saved.files) == ["W", "W_u", "gamma"]
        numpy.testing.assert_array_equal(saved["W_u"], link.W_u)
    link.delete_hook(hook.name)
    assert not hasattr(link, "W_u") and not hasattr(link, "gamma")
    assert "W_u" not in link._persistent
    assert [path for path, _ in link.namedparams()] == ["/W"]


def test_spectral_normalization_initializes_a_lazy_weight_from_the_first_input():
    link = Affine(3)
    hook = SpectralNormalization()
    link.add_hook(hook)
    assert not hasattr(link, "W_u")
    y = link(numpy.ones((2, 5), numpy.float32))
    assert link.W.shape == (3, 5) and link.W_u.shape == (3,)
    assert y.shape == (2, 3)


def test_spectral_normalization_normalizes_to_unit_spectral_norm():
    rng = numpy.random.default_rng(1)
    W = rng.normal(size=(4, 6))
    link = Affine(4, W.copy(), None)
    link.add_hook(SpectralNormalization(n_power_iteration=100, eps=0.0))
    recorder = WeightRecorder()
    link.add_hook(recorder)
    link(numpy.ones((1, 6)))
    numpy.testing.assert_allclose(numpy.linalg.norm(recorder.weight, 2), 1.0, rtol=1e-10)
    numpy.testing.assert_allclose(recorder.weight, W / numpy.linalg.norm(W, 2), rtol=1e-10)


def test_spectral_normalization_gradient_matches_numerical_gradient():
    # With a converged u, sigma(W) is W's largest singular value and the gradient that
    # flows through sigma (u and v held constant) is its exact derivative. The hook's
    # eps shrinks u and v by about eps / sigma, so a default eps (1e-6) would move the
    # gradient by that relative amount; a tiny eps keeps the check exact.
    rng = numpy.random.default_rng(2)
    U, _ = numpy.linalg.qr(rng.normal(size=(3, 3)))
    V, _ = numpy.linalg.qr(rng.normal(size=(4, 4)))
    W = U @ numpy.diag([3.0, 1.0, 0.5]) @ V[:3]
    link = Affine(3, W.copy(), None)
    link.add_hook(SpectralNormalization(n_power_iteration=200, eps=1e-14, use_gamma=True))

    def f(x, weight):
        link.W = weight
        return link(x)

    with using_config("train", False):
        gradient_check.check_backward(
            f,
            (rng.normal(size=(2, 4)), W),
            rng.normal(size=(2, 3)),
            params=(link.gamma,),
            eps=1e-6,
            atol=1e-7,
            rtol=1e-6,
        )


def test_spectral_normalization_recomputation_reuses_v_and_keeps_u():
    rng = numpy.random.default_rng(5)
    link = Affine(3, rng.normal(size=(3, 4)), None)
    link.add_hook(SpectralNormalization())
    recorder = WeightRecorder()
    link.add_hook(recorder)
    x = rng.normal(size=(2, 4))
    first = link(x).array
    u = link.W_u.copy()
    with using_config("in_recomputing", True):
        again = link(x).array
    numpy.testing.assert_array_equal(link.W_u, u)
    numpy.testing.assert_array_equal(again, first)


def test_spectral_normalization_errors():
    with pytest.raises(ValueError, match="n_power_iteration to be at least 1, got 0"):
        SpectralNormalization(n_power_iteration=0)
    with pytest.raises(ValueError, match="the link Scale has no weight 'W'"):
        Scale().add_hook(SpectralNormalization())
    with (
        pytest.raises(NotImplementedError, match="register it with link.add_hook"),
        SpectralNormalization(),
    ):
        pass
    with pytest.raises(ValueError, match=r"expected W.shape\[0\] > 0"):
        Affine(0, numpy.ones((0, 2)), None).add_hook(SpectralNormalization())


# -- WeightStandardization ------------------------------------------------------------


class Weighted(Link):
    """Returns ``W * x``, so that the output is the weight the forward sees."""

    def __init__(self, W):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(W)

    def forward(self, x):
        return self.W * x


def standardized(W, eps):
    axes = tuple(range(1, W.ndim))
    mu = W.mean(axis=axes, keepdims=True)
    var = ((W - mu) ** 2).mean(axis=axes, keepdims=True)
    return (W - mu) / numpy.sqrt(var + eps)


@pytest.mark.parametrize("shape", [(3, 4), (3, 2, 2, 2)])
def test_weight_standardization_gives_the_formula(shape):
    rng = numpy.random.default_rng(3)
    W = rng.normal(size=shape).astype(numpy.float32)
    link = Weighted(W.copy())
    link.add_hook(WeightStandardization())
    y = link(numpy.ones(shape, numpy.float32))
    assert y.dtype == numpy.float32
    numpy.testing.assert_allclose(y.array, standardized(W.astype(numpy.float64), 1e-5), rtol=1e-5)
    assert type(link.W) is Parameter
    numpy.testing.assert_array_equal(link.W.array, W)


def test_weight_standardization_gradients():
    rng = numpy.random.default_rng(4)
    W = rng.normal(size=(3, 2, 3))
    link = Weighted(W.copy())
    link.add_hook(WeightStandardization(eps=1e-2))
    with pytest.raises(TypeError):
        WeightStandardization(1e-2)  # eps is keyword only, as in Chainer

    def f(x, weight):
        link.W = weight
        return link(x)

    x = rng.normal(size=W.shape)
    gy = rng.normal(size=W.shape)
    gradient_check.check_backward(f, (x, W), gy, eps=1e-6, atol=1e-7, rtol=1e-6)
    gradient_check.check_double_backward(
        f, (x, W), gy, (rng.normal(size=W.shape), rng.normal(size=W.shape)), eps=1e-6,
        atol=1e-6, rtol=1e-5,
    )  # fmt: skip


def test_weight_standardization_of_a_constant_row():
    W = numpy.array([[1.0, 1.0, 1.0], [0.0, 1.0, 3.0]])
    link = Weighted(W.copy())
    link.add_hook(WeightStandardization(eps=1e-4))
    y = link(numpy.ones_like(W))
    gy = numpy.array([[1.0, 2.0, 6.0], [1.0, 1.0, 1.0]])
    y.grad = gy
    y.backward()
    numpy.testing.assert_array_equal(y.array[0], 0.0)
    numpy.testing.assert_allclose(y.array[1], standardized(W, 1e-4)[1], rtol=1e-12)
    # Where the row is constant the output is x_mu / sqrt(eps): the gradient is gy / sqrt(eps)
    # less its mean.
    numpy.testing.assert_allclose(link.W.grad[0], (gy[0] - gy[0].mean()) / 1e-2, rtol=1e-12)


def test_weight_standardization_errors_and_lazy_weight():
    with pytest.raises(ValueError, match="the link Scale has no weight 'W'"):
        Scale().add_hook(WeightStandardization())
    with (
        pytest.raises(NotImplementedError, match="register it with link.add_hook"),
        WeightStandardization(),
    ):
        pass
    link = Weighted(numpy.ones(3))
    link.add_hook(WeightStandardization())
    with pytest.raises(ValueError, match=r"to have at least 2 axes, got the shape \(3,\)"):
        link(numpy.ones(3))
    link = Affine(2)
    link.add_hook(WeightStandardization())
    assert link(numpy.ones((1, 3), numpy.float32)).shape == (1, 2)
    assert link.W.shape == (2, 3)
