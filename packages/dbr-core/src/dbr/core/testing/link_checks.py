"""Checks of a link's parameters, saved files, copies, gradients and recurrent steps.

Plain functions, each raising AssertionError that names what differs, for
link tests written as pytest functions::

    from dbr.core.testing.link_checks import check_copy_modes, check_round_trip

    def test_round_trip_into_lazy_link():
        x = numpy.random.rand(2, 3).astype(numpy.float32)
        check_round_trip(Linear(3, 2), Linear(2), (x,))

    def test_copy_modes():
        check_copy_modes(Linear(3, 2))

:class:`~dbr.core.testing.LinkTestCase` derives its ``test_round_trip`` and
``test_copy`` from :func:`check_round_trip` and :func:`check_copy_modes`.
Gradients are checked as LinkTestCase checks them: against a float64
numerical gradient, with the tolerances of the dtype under test.
"""

import io

import numpy

from dbr.core import backend
from dbr.core.configuration import using_config
from dbr.core.function_hook import FunctionHook
from dbr.core.gradient_check import NondifferentiableError, check_backward
from dbr.core.link import Link
from dbr.core.serializers import load_npz, save_npz
from dbr.core.testing.array import assert_allclose, tolerances
from dbr.core.variable import Variable

__all__ = [
    "check_backward_clear_of_kinks",
    "check_copy_modes",
    "check_link_backward",
    "check_link_lifecycle",
    "check_round_trip",
    "check_stateful_backward",
    "check_stateful_steps",
    "make_link",
    "param_names",
    "persistent_names",
]

# How many draws check_backward_clear_of_kinks makes before it gives up.
REDRAW_ATTEMPTS = 20


def make_link(cls, dtype, *args, **kwargs):
    """``cls(*args, **kwargs)`` built under ``config.dtype = dtype``, so its parameters take it."""
    with using_config("dtype", numpy.dtype(dtype)):
        return cls(*args, **kwargs)


def param_names(link):
    """The sorted ``namedparams`` paths of ``link``, uninitialized parameters included."""
    return sorted(path for path, _ in link.namedparams())


def persistent_names(link):
    """The sorted paths (``'/sub/name'``) of the persistent values of every link under ``link``."""
    return sorted(_persistent_values(link))


def _persistent_values(link):
    values = {}
    for prefix, sub in link.namedlinks():
        for name in sorted(sub._persistent):
            values[f"{prefix.rstrip('/')}/{name}"] = sub.__dict__[name]
    return values


def check_round_trip(link, fresh, inputs=None, forward=None):
    """Save ``link`` with ``save_npz``, load it into ``fresh`` and check that they agree.

    Every parameter of ``fresh`` must then equal ``link``'s, with the same
    dtype, in an array of its own (``fresh`` may hold uninitialized
    parameters, which loading initialises; one uninitialized in ``link``
    stays so), and so must every persistent value.

    Args:
        link (Link): the link saved.
        fresh (Link): a link of the same structure, loaded from ``link``'s file.
        inputs (tuple or None): arrays to call both links on afterwards; their
            outputs must then be equal to the bit (each call starts from the
            same state of NumPy's global generator).
        forward: ``forward(link, inputs)`` → a Variable or a tuple of
            Variables; default ``link(*inputs)``.

    Returns:
        ``fresh``.
    """
    if not isinstance(link, Link) or not isinstance(fresh, Link):
        raise TypeError(
            f"check_round_trip: expected two Links, got {type(link).__name__} "
            f"and {type(fresh).__name__}"
        )
    file = io.BytesIO()
    save_npz(file, link)
    file.seek(0)
    load_npz(file, fresh)
    _assert_same_params(dict(fresh.namedparams()), dict(link.namedparams()))
    expected_persistent = _persistent_values(link)
    loaded_persistent = _persistent_values(fresh)
    assert sorted(loaded_persistent) == sorted(expected_persistent)
    for name, value in expected_persistent.items():
        numpy.testing.assert_array_equal(
            numpy.asarray(loaded_persistent[name]), numpy.asarray(value), err_msg=name
        )
    if inputs is not None:
        _assert_same_outputs(fresh, link, inputs, forward or (lambda lk, xs: lk(*xs)))
    return fresh


def _assert_same_params(loaded, expected):
    assert sorted(loaded) == sorted(expected)
    for name, param in expected.items():
        if param.array is None:
            assert loaded[name].array is None, name
            continue
        assert loaded[name].array is not param.array, name
        assert loaded[name].dtype == param.dtype, name
        numpy.testing.assert_array_equal(loaded[name].array, param.array, err_msg=name)


def _assert_same_outputs(fresh, link, inputs, forward):
    state = numpy.random.get_state()
    actual = forward(fresh, inputs)
    numpy.random.set_state(state)
    expected = forward(link, inputs)
    actual, expected = (ys if isinstance(ys, tuple) else (ys,) for ys in (actual, expected))
    assert len(actual) == len(expected), "the loaded link gives another number of outputs"
    for i, (a, e) in enumerate(zip(actual, expected)):
        numpy.testing.assert_array_equal(
            backend.to_cpu(a.array), backend.to_cpu(e.array), err_msg=f"output {i}"
        )


def check_copy_modes(link):
    """Check ``copy('share')``, ``copy('copy')`` and ``copy('init')`` of an initialized link.

    'share' gives new Parameter objects over the same arrays; 'copy' gives
    equal values in new arrays; 'init' gives new arrays of the same shapes and
    dtypes, refilled by the initializers, so at least one parameter must
    change: give one of them a random initializer.
    """
    original = {name: p for name, p in link.namedparams() if p.array is not None}
    assert original, "check_copy_modes needs an initialized link"

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


def check_link_lifecycle(link, fresh, params, persistents=(), inputs=None, forward=None):
    """Check ``link``'s names, its save-and-load round trip into ``fresh`` and its copy modes.

    The checks a link's life goes through, in one call: :func:`param_names`
    must be ``params`` and :func:`persistent_names` ``persistents``, then
    :func:`check_round_trip` (``fresh``, ``inputs`` and ``forward`` as there)
    and :func:`check_copy_modes` must pass.

    Returns:
        ``fresh``, loaded from ``link``.
    """
    for what, names, expected in (
        ("parameter", param_names(link), list(params)),
        ("persistent", persistent_names(link), list(persistents)),
    ):
        assert names == expected, f"{what} names {names}, expected {expected}"
    fresh = check_round_trip(link, fresh, inputs, forward)
    check_copy_modes(link)
    return fresh


def check_link_backward(function, inputs, grad_outputs, params, dtype, tol=None):
    """``check_backward`` of ``function`` and of ``params`` against a float64 numerical gradient.

    Args:
        function: the callable checked, a link or a function calling one.
        inputs: an array or a tuple of arrays in ``dtype``.
        grad_outputs: the gradients of the outputs, like ``inputs``.
        params: the Parameters whose gradients are checked too, such as
            ``link.params()``.
        dtype: the dtype under test, whose backward tolerances apply.
        tol (dict or None): ``{'atol': ..., 'rtol': ...}`` replacing them.
    """
    check_backward(
        function,
        inputs,
        grad_outputs,
        params=tuple(params),
        dtype=numpy.float64,
        **(tolerances(dtype, "backward") if tol is None else tol),
    )


class _BranchSigns(FunctionHook):
    """Records, call by call, where the first input of each node of ``types`` is positive."""

    name = "LinkChecksBranchSigns"

    def __init__(self, types):
        self.types = types
        self.positive = []

    def forward_preprocess(self, function, in_data):
        if isinstance(function, self.types):
            self.positive.append(backend.to_cpu(in_data[0]) > 0)


def _branch_signs(function, inputs, params, types, dtype=None):
    """The signs that ``types``' nodes see in ``function(*inputs)``, all cast to ``dtype``."""

    def cast(x):
        return x if dtype is None or x is None or x.dtype.kind != "f" else x.astype(dtype)

    originals = [p.array for p in params]
    try:
        for p in params:
            p.array = cast(p.array)
        with _BranchSigns(types) as signs:
            function(*[Variable(cast(x)) for x in inputs])
    finally:
        for p, array in zip(params, originals):
            p.array = array
    return signs.positive


def check_backward_clear_of_kinks(draw, function, params, dtype, kinked=(), tol=None):
    """:func:`check_link_backward` on inputs from ``draw()``, drawn again near a kink.

    For links with a ReLU, a max or a bilinear sampling inside, whose inputs a
    test cannot keep clear of the kinks and ties directly. Inputs are drawn
    again, up to ``REDRAW_ATTEMPTS`` (20) times, where

    - the numerical gradient (in float64, sampling five points along the
      check's direction) raises ``NondifferentiableError``: the outputs do
      not fit a quadratic, so a kink or a tie lies within the
      finite-difference step;
    - the first input of a node of one of the ``kinked`` FunctionNode classes
      (ReLU: a kink at 0) falls on the other side of 0 in ``dtype`` than in
      float64 (float16 rounds pre-activations by about 1e-3), where backprop
      in ``dtype`` and the float64 numerical gradient would take different
      branches.

    ``draw()`` returns ``(inputs, grad_outputs)``, drawing from NumPy's
    global generator (as the check's direction does), so a seeded test
    reproduces. A wrong gradient still fails: only the forward decides a
    redraw. ``tol`` overrides ``dtype``'s backward tolerances.
    """
    params = tuple(params)
    kinked = tuple(kinked)
    for _ in range(REDRAW_ATTEMPTS):
        inputs, grad_outputs = draw()
        inputs = inputs if isinstance(inputs, tuple) else (inputs,)
        if kinked and numpy.dtype(dtype) != numpy.float64:
            own = _branch_signs(function, inputs, params, kinked)
            wide = _branch_signs(function, inputs, params, kinked, numpy.float64)
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
        f"check_backward_clear_of_kinks: each of {REDRAW_ATTEMPTS} draws put a kink too close"
    )


def check_stateful_steps(link, xs, step, dtype):
    """Each call of the stateful ``link`` on ``xs`` gives ``step(link, h, x)``, its new state.

    ``link`` is a recurrent link with Chainer's stateful protocol: a call
    returns the new state ``h`` (kept as ``link.h``) and ``reset_state()``
    forgets it. ``step`` is the float64 reference; ``h`` is None at the first
    step. Checked twice: from the link as given and after ``reset_state``.
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


def check_stateful_backward(link, xs, gy, dtype, params=None):
    """:func:`check_link_backward` through the calls of the stateful ``link`` on ``xs``.

    The state is reset first; ``gy`` is the gradient of the last output, and
    ``params`` (default: every parameter of ``link``) are checked too.
    """

    def steps(*xs):
        link.reset_state()
        for x in xs:
            y = link(x)
        return y

    check_link_backward(steps, tuple(xs), gy, link.params() if params is None else params, dtype)
