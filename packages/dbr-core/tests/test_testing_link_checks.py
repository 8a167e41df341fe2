"""dbr.core.testing.link_checks, and the tests LinkTestCase builds on it."""

import numpy
import pytest

from dbr.core import (
    Chain,
    FunctionNode,
    Link,
    Parameter,
    config,
    initializers,
    testing,
    using_config,
)
from dbr.core.testing import LinkTestCase, link_checks


class Affine(Link):
    """``x * w + b`` with a persistent ``calls`` counter; ``w`` is drawn at random.

    With ``w_grad_scale`` other than 1, the gradient of ``w`` is that much off.
    """

    def __init__(self, size=3, w_grad_scale=1.0):
        super().__init__()
        self.w_grad_scale = w_grad_scale
        with self.init_scope():
            self.w = Parameter(initializers.Uniform(0.5), (size,))
            self.b = Parameter(initializers.Constant(0.25), (size,))
        self.add_persistent("calls", 0)

    def forward(self, x):
        self.calls += 1
        return x * ScaledGradient(self.w_grad_scale).apply((self.w,))[0] + self.b


class ScaledGradient(FunctionNode):
    """The identity, whose gradient is ``scale`` times the right one."""

    def __init__(self, scale):
        self.scale = scale

    def forward(self, inputs):
        return (inputs[0].copy(),)

    def backward(self, indexes, grad_outputs):
        return (grad_outputs[0] * self.scale,)


class Forgetful(Affine):
    """An Affine whose loading keeps ``w`` (``forget='w'``) or ``calls`` as they were."""

    def __init__(self, forget):
        super().__init__()
        self.forget = forget

    def serialize(self, serializer):
        kept = getattr(self, self.forget)
        kept = kept.array.copy() if self.forget == "w" else kept
        super().serialize(serializer)
        if self.forget == "w":
            self.w.array = kept
        else:
            self.calls = kept


class Stack(Chain):
    """Two Affines, the second lazy."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.first = Affine()
            self.second = Link()
            with self.second.init_scope():
                self.second.v = Parameter(initializers.Zero())


# -- names ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
def test_make_link_builds_the_parameters_in_the_dtype_asked_and_leaves_config_alone(dtype):
    link = testing.make_link(Affine, dtype, size=4)
    assert link.w.dtype == link.b.dtype == numpy.dtype(dtype)
    assert link.w.shape == (4,)
    assert config.dtype == numpy.float32


def test_float_dtypes_are_those_tolerances_knows():
    assert [numpy.dtype(t).name for t in testing.FLOAT_DTYPES] == ["float16", "float32", "float64"]
    for dtype in testing.FLOAT_DTYPES:
        testing.tolerances(dtype)


def test_param_and_persistent_names_cover_every_link_and_uninitialized_parameters():
    assert link_checks.param_names(Stack()) == ["/first/b", "/first/w", "/second/v"]
    assert link_checks.persistent_names(Stack()) == ["/first/calls"]
    assert link_checks.persistent_names(Affine()) == ["/calls"]


# -- check_round_trip ---------------------------------------------------------------------


def test_round_trip_loads_every_value_and_initialises_lazy_parameters():
    link = Affine()
    link.calls = 7
    fresh = Affine()
    fresh.w.cleargrad()
    returned = link_checks.check_round_trip(link, fresh, (numpy.ones((2, 3), numpy.float32),))
    assert returned is fresh and fresh.calls == 8
    numpy.testing.assert_array_equal(fresh.w.array, link.w.array)
    lazy = Stack()
    link_checks.check_round_trip(lazy, Stack())


@pytest.mark.parametrize("forget, name", [("w", "/w"), ("calls", "/calls")])
def test_round_trip_names_a_value_that_loading_left_alone(forget, name):
    link = Affine()
    link.calls = 3
    with pytest.raises(AssertionError, match=name):
        link_checks.check_round_trip(link, Forgetful(forget))


def test_round_trip_compares_the_outputs_of_both_links():
    link = Affine()
    fresh = Affine()
    fresh.forward = lambda x: x * fresh.w
    with pytest.raises(AssertionError, match="output 0"):
        link_checks.check_round_trip(link, fresh, (numpy.ones((2, 3), numpy.float32),))
    # Both calls start from the same random state.
    link_checks.check_round_trip(
        link,
        Affine(),
        (),
        lambda lk, xs: lk(numpy.random.uniform(size=(2, 3)).astype(numpy.float32)),
    )


def test_round_trip_refuses_what_is_not_a_link():
    with pytest.raises(TypeError, match="check_round_trip: expected two Links, got dict"):
        link_checks.check_round_trip({}, Affine())


# -- check_copy_modes ---------------------------------------------------------------------


def test_copy_modes_passes_for_a_link_with_a_random_initializer():
    link_checks.check_copy_modes(Stack())


def test_copy_modes_fails_where_init_refills_nothing_or_nothing_is_initialized():
    link = Affine()
    link.w.initializer = initializers.One()
    link.w.array[...] = 1
    with pytest.raises(AssertionError, match=r"copy\('init'\) refilled no parameter"):
        link_checks.check_copy_modes(link)
    lazy = Link()
    with lazy.init_scope():
        lazy.v = Parameter(initializers.Zero())
    with pytest.raises(AssertionError, match="needs an initialized link"):
        link_checks.check_copy_modes(lazy)


def test_copy_modes_fails_where_share_copies_the_arrays():
    class Unshared(Affine):
        def copy(self, mode="share"):
            return super().copy("copy" if mode == "share" else mode)

    with pytest.raises(AssertionError, match="/b"):
        link_checks.check_copy_modes(Unshared())


# -- check_link_lifecycle -----------------------------------------------------------------


def test_link_lifecycle_checks_names_round_trip_and_copies():
    link = Affine()
    x = numpy.random.uniform(-1, 1, 3).astype(numpy.float32)
    fresh = link_checks.check_link_lifecycle(link, Affine(), ["/b", "/w"], ["/calls"], (x,))
    numpy.testing.assert_array_equal(fresh.w.array, link.w.array)


@pytest.mark.parametrize(
    "params, persistents, message",
    [
        (["/w"], ["/calls"], r"parameter names \['/b', '/w'\], expected \['/w'\]"),
        (["/b", "/w"], [], r"persistent names \['/calls'\], expected \[\]"),
    ],
)
def test_link_lifecycle_names_the_names_that_differ(params, persistents, message):
    with pytest.raises(AssertionError, match=message):
        link_checks.check_link_lifecycle(Affine(), Affine(), params, persistents)


def test_link_lifecycle_runs_the_round_trip_and_copy_checks():
    with pytest.raises(AssertionError, match="w"):
        link_checks.check_link_lifecycle(Forgetful("w"), Forgetful("w"), ["/b", "/w"], ["/calls"])
    link = Affine()
    link.w.initializer = initializers.One()
    link.w.array[...] = 1
    with pytest.raises(AssertionError, match=r"copy\('init'\) refilled no parameter"):
        link_checks.check_link_lifecycle(link, Affine(), ["/b", "/w"], ["/calls"])


# -- gradients -----------------------------------------------------------------------------


def test_link_backward_checks_the_parameters_in_the_tolerances_of_the_dtype():
    x = numpy.random.uniform(-1, 1, (2, 3)).astype(numpy.float32)
    gy = numpy.random.uniform(-1, 1, (2, 3)).astype(numpy.float32)
    link = Affine()
    link_checks.check_link_backward(link, x, gy, link.params(), numpy.float32)
    wrong = Affine(w_grad_scale=1.05)
    with pytest.raises(AssertionError):
        link_checks.check_link_backward(wrong, x, gy, wrong.params(), numpy.float32)
    link_checks.check_link_backward(wrong, x, gy, (), numpy.float32)
    link_checks.check_link_backward(
        wrong, x, gy, wrong.params(), numpy.float32, tol={"atol": 0.2, "rtol": 0.2}
    )


class Kink(FunctionNode):
    """``|x|``: a kink at 0 of its first input."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        return (abs(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        return (grad_outputs[0] * (x.array > 0) - grad_outputs[0] * (x.array < 0),)


def _kinked(x):
    return Kink().apply((x,))[0]


def _rounded_near_the_kink():
    """``x * w + b`` in float16, whose first element float16 rounds to 0, float64 does not."""
    w = Parameter(numpy.full(3, 1 + 2**-10, numpy.float16))
    b = Parameter(numpy.array([-(1 + 2**-9), 0, 0], numpy.float16))
    return (lambda x: _kinked(x * w + b)), (w, b)


def _draw_once_near_the_kink():
    """A ``draw``: first an input near the kink, with a gradient check_backward refuses."""
    made = []

    def draw():
        made.append(None)
        if len(made) == 1:
            return numpy.full(3, 1 + 2**-10, numpy.float16), numpy.ones(7, numpy.float16)
        return numpy.array([0.5, 0.75, -0.5], numpy.float16), numpy.ones(3, numpy.float16)

    return draw, made


def test_clear_of_kinks_redraws_where_the_dtype_moves_a_kinked_input_across_zero():
    function, params = _rounded_near_the_kink()
    draw, made = _draw_once_near_the_kink()
    link_checks.check_backward_clear_of_kinks(draw, function, params, numpy.float16, (Kink,))
    assert len(made) == 2
    assert all(p.dtype == numpy.float16 for p in params)
    # Without ``kinked`` the signs are not compared: the first draw reaches check_backward.
    draw, made = _draw_once_near_the_kink()
    with pytest.raises(ValueError):
        link_checks.check_backward_clear_of_kinks(draw, function, params, numpy.float16)


def test_clear_of_kinks_redraws_at_a_kink_and_gives_up_after_the_attempts():
    at_kink = numpy.array([0.5, 0.0, -0.5])
    calls = []

    def draw():
        calls.append(None)
        return at_kink, numpy.ones(3)

    with pytest.raises(AssertionError, match="each of 20 draws put a kink too close"):
        link_checks.check_backward_clear_of_kinks(draw, _kinked, (), numpy.float64)
    assert len(calls) == link_checks.REDRAW_ATTEMPTS


def test_clear_of_kinks_still_fails_a_wrong_gradient():
    def draw():
        x = numpy.random.uniform(0.5, 1, (2, 3)).astype(numpy.float32)
        return x, numpy.ones((2, 3), numpy.float32)

    wrong = Affine(w_grad_scale=1.05)
    with pytest.raises(AssertionError):
        link_checks.check_backward_clear_of_kinks(draw, wrong, wrong.params(), numpy.float32)


# -- stateful links ------------------------------------------------------------------------


class CubicAccumulator(Link):
    """A stateful link: ``y = x * w + h``, ``h = y - y**3 / 3``.

    ``reset_state`` forgets the state, or with ``resets=False`` only hides it:
    ``h`` reads None but the next call continues from the old state.
    """

    def __init__(self, resets=True):
        super().__init__()
        self.resets = resets
        with self.init_scope():
            self.w = Parameter(initializers.Uniform(1.0), (3,))
        self.h = self._state = None

    def reset_state(self):
        self.h = None
        if self.resets:
            self._state = None

    def forward(self, x):
        y = x * self.w
        if self._state is not None:
            y = y + self._state
        self.h = self._state = y * (1 - y * y / 3)
        return self.h


def _cubic_step(link, h, x):
    y = x.astype(numpy.float64) * link.w.array
    y = y if h is None else y + h
    return y * (1 - y * y / 3)


def test_stateful_steps_follow_the_reference_and_restart_after_reset_state():
    xs = [numpy.random.uniform(-1, 1, (2, 3)).astype(numpy.float32) for _ in range(3)]
    link_checks.check_stateful_steps(CubicAccumulator(), xs, _cubic_step, numpy.float32)
    with pytest.raises(AssertionError):
        link_checks.check_stateful_steps(
            CubicAccumulator(resets=False), xs, _cubic_step, numpy.float32
        )


def test_stateful_backward_goes_through_every_step_from_a_reset_state():
    xs = [numpy.random.uniform(-1, 1, (2, 3)).astype(numpy.float32) for _ in range(2)]
    gy = numpy.random.uniform(-1, 1, (2, 3)).astype(numpy.float32)
    link = CubicAccumulator()
    link(xs[0])
    link_checks.check_stateful_backward(link, xs, gy, numpy.float32)
    link_checks.check_stateful_backward(link, xs, gy, numpy.float32, params=())


# -- LinkTestCase's round-trip and copy tests ----------------------------------------------


class _AffineCase(LinkTestCase):
    dtype = numpy.float32
    link_class = Affine
    skip_round_trip_test = False
    skip_copy_modes_test = False

    def create_link(self):
        return self.link_class()

    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, (2, 3)).astype(numpy.float32),)

    def forward_expected(self, link, inputs):
        return (inputs[0] * link.w.array + link.b.array,)


def test_link_test_case_round_trip_and_copy_modes_pass_for_a_correct_link():
    case = _AffineCase()
    case.test_round_trip()
    case.test_copy_modes()


def test_link_test_case_round_trip_fails_where_loading_leaves_a_parameter():
    case = _AffineCase()
    case.link_class = lambda: Forgetful("w")
    with pytest.raises(AssertionError, match=r"_AffineCase.test_round_trip on @numpy(?s:.*)/w"):
        case.test_round_trip()


def test_link_test_case_copy_modes_copy_under_the_dtype_of_the_class():
    def half_affine():
        with using_config("dtype", numpy.dtype(numpy.float16)):
            return Affine()

    case = _AffineCase()
    case.dtype = numpy.float16
    case.link_class = half_affine
    assert case.create_link().w.dtype == numpy.float16
    case.test_copy_modes()


def test_link_test_case_round_trip_and_copy_modes_are_asked_for():
    class Plain(LinkTestCase):
        pass

    class NoSaving(_AffineCase):
        skip_round_trip_test = True
        skip_copy_modes_test = True

    class Inherits(_AffineCase):
        pass

    for case in (Plain, NoSaving):
        assert getattr(case, "test_round_trip", None) is None
        assert getattr(case, "test_copy_modes", None) is None
    assert Inherits.test_round_trip is not None and Inherits.test_copy_modes is not None
    case = Inherits()
    case.skip_round_trip_test = True
    with pytest.raises(pytest.skip.Exception, match="skip_round_trip_test is set"):
        case.test_round_trip()
