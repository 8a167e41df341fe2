"""``FunctionTestCase``, ``LinkTestCase``, ``LinkInitializersTestCase``: declare, then check.

A test class states how to make inputs, run the function or link, and
compute the expected outputs on NumPy; the harness provides ``test_forward``,
``test_backward`` (and ``test_double_backward`` or ``test_initializers``),
each taking a :class:`~dbr.chainer.testing.BackendConfig`, so the class is
meant to be decorated with :func:`~dbr.chainer.testing.inject_backend_tests`.
Gradients are checked with dbr's :func:`~dbr.core.gradient_check.check_backward`
and :func:`~dbr.core.gradient_check.check_double_backward` in float64.
"""

import contextlib
import numbers
import unittest

import numpy

from dbr.chainer.testing import array as _array
from dbr.core import backend as _backend
from dbr.core import gradient_check
from dbr.core.link import Link
from dbr.core.variable import Variable

__all__ = [
    "FunctionTestCase",
    "FunctionTestError",
    "InitializerArgument",
    "LinkInitializersTestCase",
    "LinkTestCase",
    "LinkTestError",
]

_MAX_DODGES = 1000


class _TestError(AssertionError):
    """Base of the errors raised when the code under test is wrong."""

    @classmethod
    def check(cls, expr, message):
        """Raise ``cls(message)`` unless ``expr``."""
        if not expr:
            raise cls(message)

    @classmethod
    def fail(cls, message, exc=None):
        """Raise ``cls(message)``, chained to ``exc`` (whose text is appended) when given."""
        if exc is None:
            raise cls(message)
        raise cls(f"{message}\n\n(caused by)\n{type(exc).__name__}: {exc}\n") from exc

    @classmethod
    @contextlib.contextmanager
    def raise_if_fail(cls, message, error_types=AssertionError):
        """Context manager turning ``error_types`` raised in its body into ``cls``."""
        try:
            yield
        except error_types as e:
            cls.fail(message, e)


class FunctionTestError(_TestError):
    """Raised when the function under a :class:`FunctionTestCase` is implemented incorrectly."""


class LinkTestError(_TestError):
    """Raised when the link under a :class:`LinkTestCase` is implemented incorrectly."""


def _check_initializer_like(init):
    if init is None or callable(init) or isinstance(init, (numbers.Number, numpy.generic)):
        return
    if isinstance(init, _backend.get_array_types()):
        return
    raise TypeError(
        f"an initializer must be None, a scalar, an array or a callable, got {type(init).__name__}"
    )


class InitializerArgument:
    """A link constructor argument and the initializer the link should use for it.

    For :meth:`LinkInitializersTestCase.get_initializers`, when the argument
    (``None``, for instance) is not itself the initializer to compare with.
    """

    def __init__(self, argument_value, expected_initializer):
        if expected_initializer is None:
            raise ValueError("Expected initialized cannot be None.")
        _check_initializer_like(expected_initializer)
        self.argument_value = argument_value
        self.expected_initializer = expected_initializer


def _props(arrays):
    return ", ".join(
        "None" if a is None else f"{type(a).__name__}(shape={a.shape}, dtype={a.dtype})"
        for a in arrays
    )


def _check_array_types(arrays, func_name, allow_none=False):
    if not isinstance(arrays, tuple):
        raise TypeError(f"`{func_name}()` must return a tuple, not {type(arrays)}.")
    if not all(isinstance(a, numpy.ndarray) or (allow_none and a is None) for a in arrays):
        raise TypeError(
            f"{func_name}() must return a tuple of arrays supported by device @numpy.\n"
            f"Actual: {tuple(type(a) for a in arrays)}"
        )


def _check_variable_types(outputs, device, func_name, error):
    if not isinstance(outputs, tuple):
        error.fail(f"`{func_name}()` must return a tuple, not {type(outputs)}.")
    if not all(isinstance(v, Variable) for v in outputs):
        error.fail(
            f"{func_name}() must return a tuple of Variables.\n"
            f"Actual: {', '.join(str(type(v)) for v in outputs)}"
        )
    if not all(device.is_array_supported(v.array) for v in outputs):
        error.fail(
            f"{func_name}() must return a tuple of Variables of arrays supported by "
            f"device {device}.\nActual: {', '.join(str(type(v.array)) for v in outputs)}"
        )


def _check_arrays_equal(actual, expected, error, **options):
    message = details = None
    if len(actual) != len(expected):
        message = f"Number of outputs ({len(actual)}, {len(expected)}) does not match"
    elif not all(a.shape == e.shape and a.dtype == e.dtype for a, e in zip(actual, expected)):
        message = "Shapes and/or dtypes do not match"
    else:
        failures = []
        for i, (a, e) in enumerate(zip(actual, expected)):
            try:
                _array.assert_allclose(a, e, **options)
            except AssertionError as exc:
                failures.append((i, exc))
        if failures:
            message = (
                "Outputs do not match the expected values.\n"
                f"Indices of outputs that do not match: {', '.join(str(i) for i, _ in failures)}"
            )
            details = "".join(f"Error details of output [{i}]:\n{exc}\n" for i, exc in failures)
    if message is None:
        return
    text = (
        f"{message}\nExpected shapes and dtypes: {_props(expected)}\n"
        f"Actual shapes and dtypes:   {_props(actual)}\n"
    )
    if details is not None:
        text += "\n\n" + details
    error.fail(text)


def _random_like(templates):
    return tuple(numpy.random.uniform(-1, 1, a.shape).astype(a.dtype) for a in templates)


def _dodging(check, enabled):
    if not enabled:
        check()
        return
    for _ in range(_MAX_DODGES):
        try:
            check()
        except gradient_check.NondifferentiableError:
            continue
        return
    raise FunctionTestError(f"no differentiable point found in {_MAX_DODGES} samples")


class _ContiguityMixin:
    contiguous = None

    def _to_noncontiguous_as_needed(self, arrays):
        if self.contiguous is None:
            return _array._as_noncontiguous_array(arrays)
        if self.contiguous == "C":
            return arrays
        raise AssertionError(f"Invalid value of `contiguous`: {self.contiguous}")


class FunctionTestBase(_ContiguityMixin):
    """The checks of :class:`FunctionTestCase`, without the test methods."""

    backend_config = None
    check_forward_options = None
    check_backward_options = None
    check_double_backward_options = None
    skip_forward_test = False
    skip_backward_test = False
    skip_double_backward_test = False
    dodge_nondifferentiable = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.check_forward_options = {}
        self.check_backward_options = {}
        self.check_double_backward_options = {}

    def before_test(self, test_name):
        """Called before each test (``'test_forward'``, ...); raise SkipTest here to skip."""

    def forward(self, inputs, device):
        """Apply the function under test to ``inputs`` (Variables); return a tuple of Variables."""
        raise NotImplementedError("forward() is not implemented.")

    def forward_expected(self, inputs):
        """The expected outputs for ``inputs`` (NumPy arrays), as a tuple of NumPy arrays."""
        raise NotImplementedError("forward_expected() is not implemented.")

    def generate_inputs(self):
        """The inputs, a tuple of NumPy arrays."""
        raise NotImplementedError("generate_inputs() is not implemented.")

    def generate_grad_outputs(self, outputs_template):
        """Output gradients shaped like ``outputs_template``: uniform in [-1, 1] by default."""
        return _random_like(outputs_template)

    def generate_grad_grad_inputs(self, inputs_template):
        """Second-order input gradients shaped like ``inputs_template``: uniform in [-1, 1]."""
        return _random_like(inputs_template)

    def check_forward_outputs(self, outputs, expected_outputs):
        """Compare outputs with expected ones (count, shape, dtype, values) or raise."""
        _check_arrays_equal(
            outputs, expected_outputs, FunctionTestError, **self.check_forward_options
        )

    def _generate_inputs(self):
        inputs = self.generate_inputs()
        _check_array_types(inputs, "generate_inputs")
        return inputs

    def _forward_expected(self, inputs):
        outputs = self.forward_expected(inputs)
        _check_array_types(outputs, "forward_expected")
        return outputs

    def _generate_grad_outputs(self, template):
        grads = self.generate_grad_outputs(template)
        _check_array_types(grads, "generate_grad_outputs", allow_none=True)
        return grads

    def _generate_grad_grad_inputs(self, template):
        grads = self.generate_grad_grad_inputs(template)
        _check_array_types(grads, "generate_grad_grad_inputs", allow_none=True)
        return grads

    def _forward(self, inputs, backend_config):
        with backend_config:
            outputs = self.forward(inputs, backend_config.device)
        _check_variable_types(outputs, backend_config.device, "forward", FunctionTestError)
        return outputs

    def _begin(self, test_name, skip, backend_config):
        if skip:
            raise unittest.SkipTest(f"skip_{test_name[5:]}_test is set")
        self.backend_config = backend_config
        self.test_name = test_name
        self.before_test(test_name)

    def run_test_forward(self, backend_config):
        """Check ``forward`` against ``forward_expected``, and that it keeps its inputs."""
        self._begin("test_forward", self.skip_forward_test, backend_config)
        cpu_inputs = self._to_noncontiguous_as_needed(self._generate_inputs())
        copies = [a.copy() for a in cpu_inputs]
        expected = self._forward_expected(cpu_inputs)
        inputs = self._to_noncontiguous_as_needed(backend_config.get_array(cpu_inputs))
        outputs = self._forward(
            tuple(Variable(a, requires_grad=a.dtype.kind == "f") for a in inputs), backend_config
        )
        modified = []
        for i, (copy, x) in enumerate(zip(copies, inputs)):
            try:
                _array.assert_allclose(copy, x, atol=0, rtol=0)
            except AssertionError:
                modified.append(i)
        if modified:
            FunctionTestError.fail(
                "Input arrays have been modified during forward.\n"
                f"Indices of modified inputs: {', '.join(str(i) for i in modified)}\n"
                f"Input array shapes and dtypes: {_props(inputs)}\n"
            )
        self.check_forward_outputs(tuple(v.array for v in outputs), expected)

    def run_test_backward(self, backend_config):
        """Check backprop through ``forward`` against numerical gradients."""
        self._begin("test_backward", self.skip_backward_test, backend_config)

        def f(*args):
            return self._forward(args, backend_config)

        def check():
            inputs = self._generate_inputs()
            grad_outputs = self._generate_grad_outputs(self._forward_expected(inputs))
            inputs = self._to_noncontiguous_as_needed(backend_config.get_array(inputs))
            grad_outputs = self._to_noncontiguous_as_needed(backend_config.get_array(grad_outputs))
            with FunctionTestError.raise_if_fail("backward is not implemented correctly"):
                gradient_check.check_backward(
                    f,
                    inputs,
                    grad_outputs,
                    dtype=numpy.float64,
                    detect_nondifferentiable=self.dodge_nondifferentiable,
                    **self.check_backward_options,
                )

        _dodging(check, self.dodge_nondifferentiable)

    def run_test_double_backward(self, backend_config):
        """Check the gradients of the gradients of ``forward`` against numerical ones."""
        self._begin("test_double_backward", self.skip_double_backward_test, backend_config)

        def f(*args):
            return self._forward(args, backend_config)

        def check():
            inputs = self._generate_inputs()
            grad_outputs = self._generate_grad_outputs(self._forward_expected(inputs))
            grad_grad_inputs = [
                g
                for g in self._generate_grad_grad_inputs(inputs)
                if g is None or g.dtype.kind == "f"
            ]
            send = backend_config.get_array
            inputs = self._to_noncontiguous_as_needed(send(inputs))
            grad_outputs = self._to_noncontiguous_as_needed(send(grad_outputs))
            grad_grad_inputs = self._to_noncontiguous_as_needed(send(grad_grad_inputs))
            with (
                backend_config,
                FunctionTestError.raise_if_fail("double backward is not implemented correctly"),
            ):
                gradient_check.check_double_backward(
                    f,
                    inputs,
                    grad_outputs,
                    grad_grad_inputs,
                    dtype=numpy.float64,
                    detect_nondifferentiable=self.dodge_nondifferentiable,
                    **self.check_double_backward_options,
                )

        _dodging(check, self.dodge_nondifferentiable)


class FunctionTestCase(FunctionTestBase, unittest.TestCase):
    """Base of a function's tests: define ``generate_inputs``, ``forward``, ``forward_expected``.

    ``forward(inputs, device)`` applies the function to a tuple of Variables
    and returns a tuple of Variables; ``forward_expected(inputs)`` computes
    the outputs from NumPy arrays; ``generate_inputs()`` returns a tuple of
    NumPy arrays. Optional: ``before_test``, ``generate_grad_outputs``,
    ``generate_grad_grad_inputs``, ``check_forward_outputs``. Attributes:
    ``skip_forward_test``, ``skip_backward_test``,
    ``skip_double_backward_test``, ``dodge_nondifferentiable`` (resample the
    inputs while the numerical gradient finds a non-differentiable point),
    ``contiguous`` (None: non-contiguous arrays; ``'C'``: C-contiguous), and
    the ``check_*_options`` dicts, set in ``setUp``, passed to
    :func:`assert_allclose`, ``check_backward`` and ``check_double_backward``.
    """

    def test_forward(self, backend_config):
        """Check the forward computation."""
        self.run_test_forward(backend_config)

    def test_backward(self, backend_config):
        """Check the backward computation."""
        self.run_test_backward(backend_config)

    def test_double_backward(self, backend_config):
        """Check the double-backward computation."""
        self.run_test_double_backward(backend_config)


def _check_generated_initializer(init):
    if isinstance(init, InitializerArgument):
        init = init.expected_initializer
    elif init is None:
        raise ValueError(
            "A None initializer must be wrapped in a InitializerArgument "
            "along with the expected initializer fallen back to."
        )
    _check_initializer_like(init)


def _argument_value(init):
    return init.argument_value if isinstance(init, InitializerArgument) else init


def _expected_initializer(init):
    from dbr.core import initializers

    if isinstance(init, InitializerArgument):
        init = init.expected_initializer
    return initializers._get_initializer(init)


def _link_params(link, names):
    params = []
    for name in names:
        param = getattr(link, name, None)
        if param is None:
            LinkTestError.fail(f"Link does not have a parameter named '{name}'.")
        params.append(param)
    return params


class _LinkTestBase(_ContiguityMixin):
    backend_config = None
    param_names = ()

    def before_test(self, test_name):
        """Called before each test; raise SkipTest here to skip."""

    def generate_params(self):
        """One initializer-like per initializer argument of the link, as a tuple."""
        raise NotImplementedError("generate_params is not implemented.")

    def generate_inputs(self):
        """The inputs, a tuple of NumPy arrays."""
        raise NotImplementedError("generate_inputs is not implemented.")

    def create_link(self, initializers):
        """Build the link under test from ``initializers``."""
        raise NotImplementedError("create_link is not implemented.")

    def forward(self, link, inputs, device):
        """Call ``link`` on ``inputs`` (Variables); return a tuple of Variables."""
        outputs = link(*inputs)
        return outputs if isinstance(outputs, tuple) else (outputs,)

    def check_forward_outputs(self, outputs, expected_outputs):
        """Compare outputs with the expected ones; raise LinkTestError."""
        _check_arrays_equal(outputs, expected_outputs, LinkTestError, **self.check_forward_options)

    def _generate_params(self):
        inits = self.generate_params()
        if not isinstance(inits, (tuple, list)):
            raise TypeError("`generate_params` must return a tuple or a list.")
        for init in inits:
            _check_generated_initializer(init)
        return inits

    def _generate_inputs(self):
        inputs = self.generate_inputs()
        _check_array_types(inputs, "generate_inputs")
        return inputs

    def _create_link(self, initializers, backend_config):
        link = self.create_link(initializers)
        if not isinstance(link, Link):
            raise TypeError("`create_link` must return a chainer.Link object.")
        link.to_device(backend_config.device)
        return link

    def _forward(self, link, inputs, backend_config):
        with backend_config:
            outputs = self.forward(link, inputs, backend_config.device)
        _check_variable_types(outputs, backend_config.device, "forward", LinkTestError)
        return outputs

    def _create_initialized_link(self, inits, backend_config):
        link = self._create_link([_argument_value(i) for i in inits], backend_config)
        inputs = self._generate_inputs()
        inputs = self._to_noncontiguous_as_needed(backend_config.get_array(inputs))
        outputs = self._forward(link, tuple(Variable(x) for x in inputs), backend_config)
        link.cleargrads()
        return link, inputs, [v.array for v in outputs]


class LinkTestCase(_LinkTestBase, unittest.TestCase):
    """Base of a link's forward and backward tests.

    Implement ``generate_params`` (initializer-likes for the link's
    constructor), ``create_link(initializers)``, ``generate_inputs`` and
    ``forward_expected(link, inputs)`` (on the CPU, from NumPy arrays);
    ``forward(link, inputs, device)`` calls the link by default. ``param_names``
    lists the parameters whose gradients ``test_backward`` checks. Attributes
    as in :class:`FunctionTestCase` (``skip_forward_test``,
    ``skip_backward_test``, ``dodge_nondifferentiable``, ``contiguous``,
    ``check_forward_options``, ``check_backward_options``).
    """

    check_forward_options = None
    check_backward_options = None
    skip_forward_test = False
    skip_backward_test = False
    dodge_nondifferentiable = False

    def __init__(self, *args, **kwargs):
        self.check_forward_options = {}
        self.check_backward_options = {}
        super().__init__(*args, **kwargs)

    def forward_expected(self, link, inputs):
        """The expected outputs of ``link`` (on the CPU) for ``inputs`` (NumPy arrays)."""
        raise NotImplementedError("forward_expected() is not implemented.")

    def generate_grad_outputs(self, outputs_template):
        """Output gradients shaped like ``outputs_template``: uniform in [-1, 1] by default."""
        return _random_like(outputs_template)

    def test_forward(self, backend_config):
        """Check the link's forward computation against ``forward_expected``."""
        if self.skip_forward_test:
            raise unittest.SkipTest("skip_forward_test is set")
        self.backend_config = backend_config
        self.before_test("test_forward")
        link = self._create_link(self._generate_params(), backend_config)
        inputs_np = self._generate_inputs()
        inputs = self._to_noncontiguous_as_needed(backend_config.get_array(inputs_np))
        outputs = self._forward(link, tuple(Variable(x) for x in inputs), backend_config)
        actual = tuple(v.array for v in outputs)
        link.to_device(_backend.cpu)
        expected = self.forward_expected(link, inputs_np)
        _check_array_types(expected, "forward_expected")
        self.check_forward_outputs(actual, expected)

    def test_backward(self, backend_config):
        """Check the gradients of the inputs and of ``param_names`` against numerical ones."""
        if self.skip_backward_test:
            raise unittest.SkipTest("skip_backward_test is set")
        self.backend_config = backend_config
        self.before_test("test_backward")

        def check():
            inits = self._generate_params()
            link, inputs, outputs = self._create_initialized_link(inits, backend_config)
            params = [p.array for p in _link_params(link, self.param_names)]
            outputs = [_backend.cpu.send(y) for y in outputs]
            grad_outputs = self.generate_grad_outputs(tuple(outputs))
            _check_array_types(grad_outputs, "generate_grad_outputs", allow_none=True)
            grad_outputs = backend_config.get_array(grad_outputs)
            inputs = self._to_noncontiguous_as_needed(inputs)
            params = self._to_noncontiguous_as_needed(params)
            grad_outputs = self._to_noncontiguous_as_needed(grad_outputs)
            forward_link, _, _ = self._create_initialized_link(inits, backend_config)
            n_inputs = len(inputs)

            def f(*xs):
                with forward_link.init_scope():
                    for name, p in zip(self.param_names, xs[n_inputs:]):
                        setattr(forward_link, name, p)
                return self._forward(forward_link, xs[:n_inputs], backend_config)

            with LinkTestError.raise_if_fail("backward is not implemented correctly"):
                gradient_check.check_backward(
                    f,
                    tuple(inputs) + tuple(params),
                    grad_outputs,
                    dtype=numpy.float64,
                    detect_nondifferentiable=self.dodge_nondifferentiable,
                    **self.check_backward_options,
                )

        _dodging(check, self.dodge_nondifferentiable)


class LinkInitializersTestCase(_LinkTestBase, unittest.TestCase):
    """Base of tests that a link initializes its parameters as its initializer arguments say.

    Implement ``generate_params``, ``create_link``, ``generate_inputs`` and
    ``get_initializers``: one list of initializer-likes per initializer
    argument (an :class:`InitializerArgument` pairs an argument such as None
    with the initializer expected); each is tested in turn, the other arguments
    taken from ``generate_params``, comparing the parameter named in
    ``param_names`` with what the initializer writes.
    """

    check_initializers_options = None

    def __init__(self, *args, **kwargs):
        self.check_initializers_options = {}
        super().__init__(*args, **kwargs)

    def get_initializers(self):
        """A tuple with, per initializer argument, the initializer-likes to test."""
        raise NotImplementedError("get_initializers is not implemented.")

    def test_initializers(self, backend_config):
        """Check each initializer of :meth:`get_initializers` against the link's parameter."""
        self.backend_config = backend_config
        self.before_test("test_initializers")
        candidates = self.get_initializers()
        if not isinstance(candidates, (tuple, list)):
            raise TypeError("`get_initializers` must return a tuple or a list.")
        for inits in candidates:
            if not isinstance(inits, (tuple, list)):
                raise TypeError(
                    "`get_initializers` must return a tuple or a list of tuples or lists."
                )
            for init in inits:
                _check_generated_initializer(init)
        for i, inits in enumerate(candidates):
            chosen = list(self._generate_params())
            for init in inits:
                chosen[i] = init
                self._check_one_initializer(i, chosen, backend_config)

    def _check_one_initializer(self, i, inits, backend_config):
        link, _, _ = self._create_initialized_link(inits, backend_config)
        actual = _backend.cpu.send(_link_params(link, self.param_names)[i].array)
        expected = numpy.empty_like(actual)
        _expected_initializer(inits[i])(expected)
        _check_arrays_equal(
            (expected,), (actual,), LinkTestError, **self.check_initializers_options
        )
