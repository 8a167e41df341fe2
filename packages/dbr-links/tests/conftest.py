"""Checks that every link's tests share, offered as the ``link_check`` fixture.

It is a fixture rather than a helper module because the tests run with
``--import-mode=importlib``, which puts no test folder on ``sys.path``.
"""

import numpy
import pytest

from dbr.core import FunctionHook, Link, Variable, backend, initializers
from dbr.core.gradient_check import NondifferentiableError, check_backward
from dbr.core.serializers import load_npz, save_npz
from dbr.core.testing import assert_allclose, tolerances
from dbr.core.testing.seeding import numpy_seeded_per_test  # noqa: F401
from dbr.functions.activation.relu import ReLU

# How many inputs LinkChecks.backward_clear_of_kinks draws before it gives up.
KINK_ATTEMPTS = 20


class _ReLUSigns(FunctionHook):
    """Records, call by call, where the input of each ReLU of a forward is positive."""

    name = "LinkChecksReLUSigns"

    def __init__(self):
        self.positive = []

    def forward_preprocess(self, function, in_data):
        if isinstance(function, ReLU):
            self.positive.append(backend.to_cpu(in_data[0]) > 0)


def _relu_signs(function, inputs, params, dtype=None):
    """The ReLU input signs of ``function(*inputs)``, inputs and ``params`` cast to ``dtype``."""

    def cast(x):
        return x if dtype is None or x is None or x.dtype.kind != "f" else x.astype(dtype)

    originals = [p.array for p in params]
    try:
        for p in params:
            p.array = cast(p.array)
        with _ReLUSigns() as signs:
            function(*[Variable(cast(x)) for x in inputs])
    finally:
        for p, array in zip(params, originals):
            p.array = array
    return signs.positive


def _persistent_values(link):
    """``{path: value}`` of the persistent values of every link under ``link``."""
    values = {}
    for prefix, sub in link.namedlinks():
        for name in sorted(sub._persistent):
            values[f"{prefix.rstrip('/')}/{name}"] = sub.__dict__[name]
    return values


class LinkChecks:
    """Assertions about a link's parameters, saved files, copies, gradients and steps."""

    def __init__(self, tmp_path):
        self._tmp_path = tmp_path

    @staticmethod
    def param_names(link):
        """The sorted ``namedparams`` paths of ``link``, uninitialized ones included."""
        return sorted(path for path, _ in link.namedparams())

    @staticmethod
    def persistent_names(link):
        """The sorted paths of the persistent values under ``link``."""
        return sorted(_persistent_values(link))

    def round_trip(self, link, fresh):
        """Save ``link`` with ``save_npz``, load the file into ``fresh`` and compare them.

        Every parameter and persistent value of ``fresh`` must equal
        ``link``'s afterwards (``fresh`` may hold uninitialized parameters,
        which loading initialises). Returns ``fresh``.
        """
        assert isinstance(link, Link) and isinstance(fresh, Link)
        path = self._tmp_path / f"{type(link).__name__}.npz"
        save_npz(str(path), link)
        load_npz(str(path), fresh)
        expected = dict(link.namedparams())
        loaded = dict(fresh.namedparams())
        assert sorted(loaded) == sorted(expected)
        for name, param in expected.items():
            if param.array is None:
                assert loaded[name].array is None, name
                continue
            assert loaded[name].array is not param.array, name
            assert loaded[name].dtype == param.dtype, name
            numpy.testing.assert_array_equal(loaded[name].array, param.array, err_msg=name)
        expected_persistent = _persistent_values(link)
        loaded_persistent = _persistent_values(fresh)
        assert sorted(loaded_persistent) == sorted(expected_persistent)
        for name, value in expected_persistent.items():
            numpy.testing.assert_array_equal(
                numpy.asarray(loaded_persistent[name]), numpy.asarray(value), err_msg=name
            )
        return fresh

    def round_trip_same_output(self, link, fresh, x_shape):
        """:meth:`round_trip` of ``link`` into ``fresh``, then the same output from both.

        The input is float32 of ``x_shape`` from U(0, 1); the outputs must be
        equal to the bit.
        """
        self.round_trip(link, fresh)
        x = numpy.random.rand(*x_shape).astype(numpy.float32)
        numpy.testing.assert_array_equal(fresh(x).array, link(x).array)

    @staticmethod
    def copy_modes(link):
        """Check ``copy('share')``, ``copy('copy')`` and ``copy('init')`` of an initialized link.

        'share' gives new Parameter objects over the same arrays; 'copy'
        gives equal values in new arrays; 'init' gives new arrays of the same
        shapes and dtypes, refilled by the initializers (so at least one
        non-constant parameter must change, which the caller arranges by
        using a random initializer for one of them).
        """
        original = {name: p for name, p in link.namedparams() if p.array is not None}
        assert original, "copy_modes needs an initialized link"

        shared = dict(link.copy("share").namedparams())
        for name, param in original.items():
            assert shared[name] is not param, name
            assert shared[name].array is param.array, name

        copied = dict(link.copy("copy").namedparams())
        for name, param in original.items():
            assert copied[name].array is not param.array, name
            numpy.testing.assert_array_equal(copied[name].array, param.array, err_msg=name)

        fresh = dict(link.copy("init").namedparams())
        changed = False
        for name, param in original.items():
            assert fresh[name].array is not param.array, name
            assert fresh[name].shape == param.shape, name
            assert fresh[name].dtype == param.dtype, name
            changed |= not numpy.array_equal(fresh[name].array, param.array)
        assert changed, "copy('init') refilled no parameter"

    @staticmethod
    def backward(function, inputs, grad_outputs, link, dtype, params=None):
        """``check_backward`` of ``function`` in float64 with ``dtype``'s backward tolerances.

        The gradients of ``params`` (default: every parameter of ``link``) are
        checked too.
        """
        check_backward(
            function,
            inputs,
            grad_outputs,
            params=tuple(link.params()) if params is None else params,
            dtype=numpy.float64,
            **tolerances(dtype, "backward"),
        )

    @staticmethod
    def backward_clear_of_kinks(draw, function, link, dtype, params=None, tol=None):
        """:meth:`backward` on inputs from ``draw()``, drawn again while a kink is too close.

        For links with a ReLU, a max or a bilinear sampling inside, whose inputs
        the test cannot keep clear of the kinks and ties directly. Inputs are
        drawn again, up to ``KINK_ATTEMPTS`` times, where

        - the numerical gradient (in float64, sampling five points along the
          check's direction) raises ``NondifferentiableError``: the outputs do
          not fit a quadratic, so a kink or a tie lies within the
          finite-difference step;
        - the input of a ReLU (the function node; a fused RNN layer's is not
          seen) falls on the other side of 0 in ``dtype`` than in float64
          (float16 rounds pre-activations by about 1e-3), where backprop in
          ``dtype`` and the float64 numerical gradient would take different
          branches.

        ``draw()`` returns ``(inputs, grad_outputs)``, drawing from NumPy's
        global generator (seeded per test, as is the check's direction), so a
        run reproduces. A wrong gradient still fails: only the forward decides
        a redraw. ``tol`` overrides ``dtype``'s backward tolerances.
        """
        params = tuple(link.params()) if params is None else tuple(params)
        for _ in range(KINK_ATTEMPTS):
            inputs, grad_outputs = draw()
            inputs = inputs if isinstance(inputs, tuple) else (inputs,)
            if numpy.dtype(dtype) != numpy.float64:
                own = _relu_signs(function, inputs, params)
                wide = _relu_signs(function, inputs, params, numpy.float64)
                if not all(numpy.array_equal(a, b) for a, b in zip(own, wide, strict=True)):
                    continue
            try:
                check_backward(
                    function,
                    inputs,
                    grad_outputs,
                    params=params,
                    dtype=numpy.float64,
                    detect_nondifferentiable=True,
                    **(tolerances(dtype, "backward") if tol is None else tol),
                )
                return
            except NondifferentiableError:
                continue
        raise AssertionError(
            f"backward_clear_of_kinks: each of {KINK_ATTEMPTS} draws put a kink too close"
        )

    @staticmethod
    def stateless_step(link, step, dtype, in_size, out_size):
        """One step ``link(h, x)`` of a stateless GRU-like link on a batch of 4 gives ``step``.

        ``step(link, h, x)`` is the float64 reference of the new state.
        """
        h = numpy.random.uniform(-1, 1, (4, out_size)).astype(dtype)
        x = numpy.random.uniform(-1, 1, (4, in_size)).astype(dtype)
        y = link(h, x)
        assert y.dtype == dtype and y.shape == (4, out_size)
        assert_allclose(y.array, step(link, h, x), **tolerances(dtype))

    def stateless_backward(self, link, dtype, in_size, out_size):
        """:meth:`backward` of one step ``link(h, x)`` of a stateless GRU-like link."""
        h = numpy.random.uniform(-1, 1, (2, out_size)).astype(dtype)
        x = numpy.random.uniform(-1, 1, (2, in_size)).astype(dtype)
        gy = numpy.random.uniform(-1, 1, (2, out_size)).astype(dtype)
        self.backward(link, (h, x), gy, link, dtype)

    def two_steps_backward(self, link, xs, gy, dtype, params=None):
        """:meth:`backward` through two steps of the stateful ``link`` from a reset state."""

        def two_steps(x1, x2):
            link.reset_state()
            link(x1)
            return link(x2)

        self.backward(two_steps, tuple(xs), gy, link, dtype, params)

    @staticmethod
    def stateful_steps(link, xs, step, dtype):
        """Each step of the stateful ``link`` over ``xs`` gives ``step(link, h, x)``, its state.

        ``h`` is None at the first step. Checked twice: from a fresh link and
        after ``reset_state``.
        """
        for _ in range(2):
            h = None
            for x in xs:
                y = link(x)
                h = step(link, h, x)
                assert y.dtype == dtype and link.h is y
                assert_allclose(y.array, h, **tolerances(dtype))
            link.reset_state()
            assert link.h is None

    def in_out_ksize_link(self, cls, check):
        """One of the saving and copying checks of a ``cls(in, out, ksize)`` link of W and b.

        ``check`` names it: ``param_names``, ``round_trip_into_lazy_link``
        (into ``cls(out, ksize)``, then the same output on a 3-channel 4x4
        image), ``round_trip_uninitialized`` or ``copy_modes``.
        """
        if check == "param_names":
            assert self.param_names(cls(3, 2, 3)) == ["/W", "/b"]
            assert self.param_names(cls(2, 3, nobias=True)) == ["/W"]
            assert self.persistent_names(cls(3, 2, 3)) == []
        elif check == "round_trip_into_lazy_link":
            link = cls(3, 2, 3, initial_bias=initializers.Normal(1.0))
            self.round_trip_same_output(link, cls(2, 3), (1, 3, 4, 4))
        elif check == "round_trip_uninitialized":
            self.round_trip(cls(2, 3), cls(2, 3))
        elif check == "copy_modes":
            self.copy_modes(cls(3, 2, 3))
        else:
            raise ValueError(f"in_out_ksize_link: unknown check {check!r}")


IN_OUT_KSIZE_CHECKS = (
    "param_names",
    "round_trip_into_lazy_link",
    "round_trip_uninitialized",
    "copy_modes",
)


@pytest.fixture(params=IN_OUT_KSIZE_CHECKS)
def in_out_ksize_check(request):
    """The name of each check of :meth:`LinkChecks.in_out_ksize_link`, one per test."""
    return request.param


@pytest.fixture
def link_check(tmp_path):
    """A :class:`LinkChecks` whose files go to the test's ``tmp_path``."""
    return LinkChecks(tmp_path)
