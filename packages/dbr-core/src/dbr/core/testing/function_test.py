"""FunctionTestCase: a test declares inputs, forward and expected outputs; the harness checks.

A test class subclasses :class:`FunctionTestCase` (its name starting with
``Test`` so that pytest collects it) and implements ``generate_inputs``,
``forward`` and ``forward_expected``. The harness provides three pytest
tests, each run on ``'@numpy'`` and on ``'@cupy:0'`` (marked ``gpu``;
skipped unless dbr.gpu and a GPU are available):

- ``test_forward``: the outputs of ``forward`` against ``forward_expected``
  (count, device, shape, dtype, values), and the inputs left unmodified;
- ``test_backward``: :func:`~dbr.core.gradient_check.check_backward` with a
  float64 numerical gradient;
- ``test_double_backward``:
  :func:`~dbr.core.gradient_check.check_double_backward`.

A class that overrides ``bad_inputs`` also gets ``test_bad_input``: every
row of its table (the arguments of one call of ``function`` and the error
it must raise, with fragments of its message) is checked on the CPU. Under
:func:`~dbr.core.testing.parameterize` it runs once per parameter set, or,
with ``dbr.core.testing.distinct_bad_inputs`` registered in a
``conftest.py``, once per distinct table.

Each runs with C-contiguous inputs and, unless ``contiguous = 'C'``, again
with non-contiguous ones. Tolerances default to
:func:`~dbr.core.testing.tolerances` for the class's ``dtype``. Random
numbers are seeded per test, so a failure reproduces. Combine with
:func:`~dbr.core.testing.parameterize` to run a class for several dtypes or
shapes. Packages using it register the ``gpu`` marker in their pytest
configuration (``markers = ["gpu: needs a CUDA device"]``).
"""

import contextlib
import zlib

import numpy

from dbr.core import backend
from dbr.core.configuration import no_backprop_mode
from dbr.core.gradient_check import (
    NondifferentiableError,
    check_backward,
    check_double_backward,
)
from dbr.core.testing._pytest import require_pytest
from dbr.core.testing.array import assert_allclose, tolerances
from dbr.core.testing.bad_input import check_bad_input
from dbr.core.testing.devices import DEVICES, get_test_device
from dbr.core.variable import Variable

pytest = require_pytest()

__all__ = ["FunctionTestCase"]

_DODGE_ATTEMPTS = 20


def _as_noncontiguous(a):
    """Return a copy of ``a`` whose last axis has stride 2 (0-d arrays are returned as is)."""
    if a.ndim == 0:
        return a
    xp = backend.get_array_module(a)
    buffer = xp.empty(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    if a.dtype.kind in "fc":
        buffer.fill(numpy.nan)
    view = buffer[..., ::2]
    view[...] = a
    return view


def _uniform_like(templates):
    return tuple(
        [
            None
            if t is None
            else numpy.asarray(numpy.random.uniform(-1, 1, t.shape)).astype(t.dtype)
            for t in templates
        ]
    )


class FunctionTestCase:
    """Base class of declarative tests of differentiable functions.

    Implement:

    - ``generate_inputs()`` → tuple of NumPy arrays (the inputs, on the CPU);
    - ``forward(inputs, device)`` → tuple of Variables, computed with dbr
      from ``inputs`` (a tuple of Variables on ``device``);
    - ``forward_expected(inputs)`` → tuple of NumPy arrays, the reference
      computed with NumPy from the CPU inputs.

    Optionally override ``generate_grad_outputs(outputs_template)`` (one
    array per output; default uniform in [-1, 1)),
    ``generate_grad_grad_inputs(inputs_template)`` (one array per floating
    input; default uniform in [-1, 1)) and ``before_test(test_name)``.

    To check that bad input is refused, set ``function`` (the callable under
    test, wrapped in ``staticmethod``) and override ``bad_inputs()`` to return
    a table of rows ``(args, error, fragment)`` or ``(args, kwargs, error,
    fragment)``: ``function(*args, **kwargs)`` must raise ``error`` (a type)
    with ``fragment`` (a string, or a tuple of strings) in its message. A row
    ``(other_function, args, kwargs, error, fragment)`` calls a function of
    its own (a sibling such as ``fliplr`` beside ``flip``); see
    :func:`~dbr.core.testing.check_bad_input`.

    Class attributes (or ones set by :func:`~dbr.core.testing.parameterize`)
    tune the tests.

    Attributes:
        dtype: the floating dtype whose default tolerances apply; otherwise
            the least precise floating dtype among the inputs is used.
        check_forward_options (dict): overrides for ``assert_allclose``.
        check_backward_options (dict): overrides for ``check_backward``.
        check_double_backward_options (dict): overrides for
            ``check_double_backward``.
        skip_forward_test (bool): no forward test: set on the class, the test
            is not generated (a function without gradients has no gradient
            tests to skip); set per variant (by ``parameterize`` or in
            ``before_test``), it is reported as skipped.
            ``skip_backward_test`` and ``skip_double_backward_test`` likewise
            for the gradient tests.
        forward_test_cpu_only (str or None): a reason why ``forward_expected``
            holds on the CPU only (e.g. it replays NumPy's random stream, which
            CuPy's differs from); the forward test then skips on other devices
            with that reason, while the gradient tests still run there.
        dodge_nondifferentiable (bool): draw new inputs when the numerical
            gradient detects a non-differentiable point.
        numerical_grad_dtype: the dtype of the numerical gradient (float64).
        test_device: the Device the running test uses, set before any hook
            is called; ``forward_expected`` can replay that device's random
            stream with it (``self.test_device.xp.random``).
        contiguous: ``'C'`` for C-contiguous inputs only; None to test
            non-contiguous inputs too.

    Example::

        @testing.parameterize(*testing.product({"dtype": [numpy.float16, numpy.float32]}))
        class TestSquare(FunctionTestCase):
            def generate_inputs(self):
                return (numpy.random.uniform(-1, 1, (3, 2)).astype(self.dtype),)

            def forward(self, inputs, device):
                return (inputs[0] * inputs[0],)

            def forward_expected(self, inputs):
                return (inputs[0] * inputs[0],)
    """

    dtype = None
    check_forward_options = None
    check_backward_options = None
    check_double_backward_options = None
    skip_forward_test = False
    skip_backward_test = False
    skip_double_backward_test = False
    forward_test_cpu_only = None
    dodge_nondifferentiable = False
    numerical_grad_dtype = numpy.float64
    contiguous = None
    test_device = None
    function = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for kind in ("forward", "backward", "double_backward"):
            declared = cls.__dict__.get(f"skip_{kind}_test")
            name = f"test_{kind}"
            if declared is True:
                setattr(cls, name, None)
            elif declared is False and getattr(cls, name) is None:
                inherited = (vars(base).get(name) for base in cls.__mro__[1:])
                setattr(cls, name, next((t for t in inherited if t is not None), None))
        if cls.bad_inputs is not FunctionTestCase.bad_inputs and "test_bad_input" not in vars(cls):
            cls.test_bad_input = FunctionTestCase._test_bad_input

    # -- what a test declares ---------------------------------------------------
    def generate_inputs(self):
        """Return the inputs as a tuple of NumPy arrays."""
        raise NotImplementedError(f"{type(self).__name__} must implement generate_inputs()")

    def forward(self, inputs, device):
        """Apply the function under test to ``inputs`` (Variables); return a tuple of Variables."""
        raise NotImplementedError(f"{type(self).__name__} must implement forward()")

    def forward_expected(self, inputs):
        """Return the expected outputs for ``inputs`` (NumPy arrays) as NumPy arrays."""
        raise NotImplementedError(f"{type(self).__name__} must implement forward_expected()")

    def generate_grad_outputs(self, outputs_template):
        """Return one output gradient per output (NumPy arrays like ``outputs_template``)."""
        return _uniform_like(outputs_template)

    def generate_grad_grad_inputs(self, inputs_template):
        """Return one second-order gradient per floating input (``inputs_template``)."""
        return _uniform_like(inputs_template)

    def before_test(self, test_name):
        """Called at the start of each test with its name ('test_forward', ...)."""

    def bad_inputs(self):
        """Return rows ``(args[, kwargs], error, fragment)`` that ``function`` must refuse."""
        return ()

    # -- the tests ------------------------------------------------------------------
    @pytest.fixture(autouse=True)
    def _dbr_seed_random(self, request):
        state = numpy.random.get_state()
        numpy.random.seed(zlib.crc32(f"{type(self).__qualname__}::{request.node.name}".encode()))
        yield
        numpy.random.set_state(state)

    @pytest.mark.parametrize("device_spec", DEVICES)
    def test_forward(self, device_spec):
        """Check the outputs of ``forward`` against ``forward_expected``."""
        device = self._start("forward", device_spec)
        inputs = self._generate_inputs()
        expected = self._forward_expected(inputs)
        options = self._options("forward", inputs)
        for layout in self._layouts():
            with self._context("test_forward", device, layout):
                dev_inputs = self._send(inputs, device, layout)
                originals = [None if x is None else backend.to_cpu(x).copy() for x in dev_inputs]
                outputs = self._forward(dev_inputs, device)
                self._check_outputs(outputs, expected, device, options)
                for i, (x, original) in enumerate(zip(dev_inputs, originals)):
                    if x is not None and not numpy.array_equal(
                        backend.to_cpu(x), original, equal_nan=True
                    ):
                        raise AssertionError(f"forward modified input {i} in place")

    @pytest.mark.parametrize("device_spec", DEVICES)
    def test_backward(self, device_spec):
        """Check the gradients of ``forward`` with ``check_backward``."""
        device = self._start("backward", device_spec)
        for layout in self._layouts():
            with self._context("test_backward", device, layout):
                self._dodging(self._check_backward_once, device, layout)

    @pytest.mark.parametrize("device_spec", DEVICES)
    def test_double_backward(self, device_spec):
        """Check the second-order gradients of ``forward`` with ``check_double_backward``."""
        device = self._start("double_backward", device_spec)
        for layout in self._layouts():
            with self._context("test_double_backward", device, layout):
                self._dodging(self._check_double_backward_once, device, layout)

    def _check_backward_once(self, device, layout):
        inputs = self._generate_inputs()
        dev_inputs = self._send(inputs, device, layout)
        grad_outputs = self._grad_outputs(dev_inputs, device)
        check_backward(
            self._function(device),
            dev_inputs,
            self._send(grad_outputs, device, layout),
            **self._gradient_options("backward", inputs),
        )

    def _check_double_backward_once(self, device, layout):
        inputs = self._generate_inputs()
        dev_inputs = self._send(inputs, device, layout)
        grad_outputs = self._grad_outputs(dev_inputs, device)
        floating = tuple([x for x in inputs if x is not None and x.dtype.kind == "f"])
        grad_grad_inputs = self._checked_arrays(
            self.generate_grad_grad_inputs(floating), floating, "generate_grad_grad_inputs"
        )
        check_double_backward(
            self._function(device),
            dev_inputs,
            self._send(grad_outputs, device, layout),
            self._send(grad_grad_inputs, device, layout),
            **self._gradient_options("double_backward", inputs),
        )

    def _test_bad_input(self):
        """Check that ``function`` raises each row's error, naming each fragment."""
        rows = list(self.bad_inputs())
        if not rows:
            raise TypeError(f"{type(self).__name__}.bad_inputs returned no rows")
        for i, row in enumerate(rows):
            check_bad_input(row, self.function, where=f"{type(self).__name__}: bad input row {i}")

    # -- machinery ------------------------------------------------------------------
    def _start(self, kind, device_spec):
        if getattr(self, f"skip_{kind}_test"):
            pytest.skip(f"{type(self).__name__}: skip_{kind}_test is set")
        device = get_test_device(device_spec)
        self.test_device = device
        if kind == "forward" and self.forward_test_cpu_only and device is not backend.cpu:
            pytest.skip(f"{type(self).__name__} on {device}: {self.forward_test_cpu_only}")
        self.before_test(f"test_{kind}")
        return device

    def _layouts(self):
        if self.contiguous == "C":
            return ("C-contiguous",)
        if self.contiguous is None:
            return ("C-contiguous", "non-contiguous")
        raise ValueError(
            f"{type(self).__name__}: expected contiguous to be 'C' or None, "
            f"got {self.contiguous!r}"
        )

    @contextlib.contextmanager
    def _context(self, test_name, device, layout):
        try:
            yield
        except AssertionError as e:
            raise AssertionError(
                f"{type(self).__name__}.{test_name} on {device} with {layout} "
                f"inputs (dtype={self._dtype_name()}):\n{e}"
            ) from None

    def _dtype_name(self):
        return "None" if self.dtype is None else numpy.dtype(self.dtype).name

    def _generate_inputs(self):
        inputs = self.generate_inputs()
        if not isinstance(inputs, tuple):
            raise TypeError(
                f"{type(self).__name__}.generate_inputs must return a tuple of "
                f"arrays, got {type(inputs).__name__}"
            )
        for i, x in enumerate(inputs):
            if x is not None and not isinstance(x, numpy.ndarray):
                raise TypeError(
                    f"{type(self).__name__}.generate_inputs must return NumPy "
                    f"arrays, got {type(x).__name__} as input {i}"
                )
        return inputs

    def _forward_expected(self, inputs):
        expected = self.forward_expected(tuple([None if x is None else x.copy() for x in inputs]))
        if not isinstance(expected, tuple):
            raise TypeError(
                f"{type(self).__name__}.forward_expected must return a tuple of "
                f"arrays, got {type(expected).__name__}"
            )
        return tuple([numpy.asarray(e) for e in expected])

    def _send(self, arrays, device, layout):
        sent = []
        for a in arrays:
            if a is not None:
                a = device.xp.array(device.send(a), copy=True)
                if layout == "non-contiguous":
                    a = _as_noncontiguous(a)
            sent.append(a)
        return tuple(sent)

    def _call(self, inputs, device):
        with device:
            return self.forward(inputs, device)

    def _forward(self, arrays, device):
        inputs = tuple(
            [None if x is None else Variable(x, requires_grad=x.dtype.kind == "f") for x in arrays]
        )
        outputs = self._call(inputs, device)
        if not isinstance(outputs, tuple) or not all(isinstance(y, Variable) for y in outputs):
            got = (
                type(outputs).__name__
                if not isinstance(outputs, tuple)
                else "(" + ", ".join(type(y).__name__ for y in outputs) + ")"
            )
            raise TypeError(
                f"{type(self).__name__}.forward must return a tuple of Variables, got {got}"
            )
        return outputs

    def _function(self, device):
        def f(*inputs):
            outputs = self._call(inputs, device)
            if not isinstance(outputs, tuple):
                raise TypeError(
                    f"{type(self).__name__}.forward must return a tuple of "
                    f"Variables, got {type(outputs).__name__}"
                )
            return outputs

        return f

    def _check_outputs(self, outputs, expected, device, options):
        if len(outputs) != len(expected):
            raise AssertionError(
                f"forward returned {len(outputs)} outputs, forward_expected {len(expected)}"
            )
        for i, (y, e) in enumerate(zip(outputs, expected)):
            array = y.array
            if backend.get_device_from_array(array) != device:
                raise AssertionError(
                    f"output {i} is on {backend.get_device_from_array(array)}, expected {device}"
                )
            if array.shape != e.shape or array.dtype != e.dtype:
                raise AssertionError(
                    f"output {i} has shape {array.shape} and dtype "
                    f"{array.dtype}; forward_expected gives shape {e.shape} "
                    f"and dtype {e.dtype}"
                )
            try:
                assert_allclose(array, e, **options)
            except AssertionError as err:
                raise AssertionError(f"output {i} differs from forward_expected:\n{err}") from None

    def _grad_outputs(self, dev_inputs, device):
        with no_backprop_mode():
            outputs = self._forward(dev_inputs, device)
        templates = tuple([backend.to_cpu(y.array) for y in outputs])
        return self._checked_arrays(
            self.generate_grad_outputs(templates), templates, "generate_grad_outputs"
        )

    def _checked_arrays(self, arrays, templates, method):
        if not isinstance(arrays, tuple) or len(arrays) != len(templates):
            raise TypeError(
                f"{type(self).__name__}.{method} must return a tuple of "
                f"{len(templates)} arrays, got {arrays!r}"
            )
        for i, (a, t) in enumerate(zip(arrays, templates)):
            if a is not None and (
                not isinstance(a, numpy.ndarray) or a.shape != t.shape or a.dtype != t.dtype
            ):
                raise TypeError(
                    f"{type(self).__name__}.{method}: expected element {i} to be "
                    f"a NumPy array of shape {t.shape} and dtype {t.dtype}, got "
                    f"{type(a).__name__} {getattr(a, 'shape', '')} "
                    f"{getattr(a, 'dtype', '')}"
                )
        return arrays

    def _tolerance_dtype(self, inputs):
        if self.dtype is not None and numpy.dtype(self.dtype).kind == "f":
            return numpy.dtype(self.dtype)
        floating = [x.dtype for x in inputs if x is not None and x.dtype.kind == "f"]
        return min(floating, key=lambda d: d.itemsize) if floating else numpy.dtype("float64")

    def _options(self, kind, inputs):
        options = tolerances(self._tolerance_dtype(inputs), kind)
        options.update(getattr(self, f"check_{kind}_options") or {})
        return options

    def _gradient_options(self, kind, inputs):
        return {
            "dtype": self.numerical_grad_dtype,
            "detect_nondifferentiable": self.dodge_nondifferentiable,
            **self._options(kind, inputs),
        }

    def _dodging(self, check, *args):
        if not self.dodge_nondifferentiable:
            check(*args)
            return
        for _ in range(_DODGE_ATTEMPTS):
            try:
                check(*args)
                return
            except NondifferentiableError:
                continue
        raise AssertionError(
            f"{type(self).__name__}: generate_inputs gave a non-differentiable "
            f"point {_DODGE_ATTEMPTS} times in a row"
        )
