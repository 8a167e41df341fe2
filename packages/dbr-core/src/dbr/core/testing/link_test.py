"""LinkTestCase: a test declares a link, its inputs and the reference forward; the harness checks.

A test class subclasses :class:`LinkTestCase` (its name starting with
``Test``) and implements ``create_link``, ``generate_inputs`` and
``forward_expected``. The harness provides two pytest tests, each run on
``'@numpy'`` and on ``'@cupy:0'`` (marked ``gpu``; skipped unless dbr.gpu and
a GPU are available):

- ``test_forward``: the link, built on the CPU and copied to the device, is
  called on the inputs; its outputs are compared with ``forward_expected``
  (given the CPU link, so that it can read the parameters as NumPy arrays);
- ``test_backward``: :func:`~dbr.core.gradient_check.check_backward` with a
  float64 numerical gradient, over the inputs and the parameters named by
  ``param_names``.

A class that sets ``skip_round_trip_test = False`` or
``skip_copy_modes_test = False`` also gets, run on the CPU only:

- ``test_round_trip``: the link saved with ``save_npz`` and loaded into a
  second ``create_link()`` gives equal parameters, persistent values and
  outputs (:func:`~dbr.core.testing.link_checks.check_round_trip`);
- ``test_copy_modes``: ``copy('share')``, ``copy('copy')`` and
  ``copy('init')`` of the link
  (:func:`~dbr.core.testing.link_checks.check_copy_modes`).

Everything else (tolerances, non-contiguous inputs, seeding, the
``bad_inputs`` table, :func:`~dbr.core.testing.parameterize`) works as in
:class:`~dbr.core.testing.FunctionTestCase`.
"""

import contextlib

import numpy

from dbr.core.configuration import using_config
from dbr.core.testing.function_test import FunctionTestCase
from dbr.core.testing.link_checks import check_copy_modes, check_round_trip
from dbr.core.variable import Variable

__all__ = ["LinkTestCase"]


class LinkTestCase(FunctionTestCase):
    """Base class of declarative tests of links.

    Implement:

    - ``create_link()`` → the Link under test, built on the CPU (NumPy's
      global random state is seeded per test, so random initializers
      reproduce);
    - ``generate_inputs()`` → tuple of NumPy arrays (the positional inputs);
    - ``forward_expected(link, inputs)`` → tuple of NumPy arrays, computed
      with NumPy from ``inputs`` and the parameters of ``link`` (on the CPU).

    Optionally override ``forward(link, inputs, device)`` → tuple of
    Variables (default ``(link(*inputs),)``), and the hooks of
    FunctionTestCase (``generate_grad_outputs``, ``before_test``, ...).

    Attributes:
        param_names: the parameters (paths as ``namedparams`` gives them,
            e.g. ``'/W'``) whose gradients ``test_backward`` checks; None for
            every parameter, ``()`` for none.
        no_grads: one flag per input, True where the input's gradient is not
            checked (``check_backward``'s ``no_grads``); None checks every
            floating input.

    Further attributes are FunctionTestCase's (``dtype``,
    ``check_forward_options``, ``check_backward_options``, ``skip_*_test``,
    ``contiguous``, ...); there is no double-backward test.
    ``skip_round_trip_test`` and ``skip_copy_modes_test`` are True unless a
    class sets them False, which adds those tests (``test_copy_modes`` needs
    a random initializer for some parameter, as ``copy('init')`` must change
    it); set True per variant, the test is reported as skipped.

    Example::

        class TestLinear(LinkTestCase):
            dtype = numpy.float32

            def create_link(self):
                return dbr.links.Linear(3, 2)

            def generate_inputs(self):
                return (numpy.random.uniform(-1, 1, (4, 3)).astype(self.dtype),)

            def forward_expected(self, link, inputs):
                return (inputs[0] @ link.W.array.T + link.b.array,)
    """

    param_names = None
    no_grads = None
    test_double_backward = None
    skip_round_trip_test = True
    skip_copy_modes_test = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for kind in ("round_trip", "copy_modes"):
            declared = cls.__dict__.get(f"skip_{kind}_test")
            if declared is not None:
                test = None if declared else getattr(LinkTestCase, f"_test_{kind}")
                setattr(cls, f"test_{kind}", test)

    # -- what a test declares ---------------------------------------------------
    def create_link(self):
        """Return the link under test, built on the CPU."""
        raise NotImplementedError(f"{type(self).__name__} must implement create_link()")

    def forward(self, link, inputs, device):
        """Call ``link`` on ``inputs`` (Variables on ``device``); return a tuple of Variables."""
        return (link(*inputs),)

    def forward_expected(self, link, inputs):
        """Return the expected outputs of the CPU ``link`` on ``inputs`` as NumPy arrays."""
        raise NotImplementedError(f"{type(self).__name__} must implement forward_expected()")

    # -- the tests a class asks for -------------------------------------------------
    def _test_round_trip(self):
        """Save the link, load it into a second ``create_link()``; compare them (CPU)."""
        device = self._start("round_trip", "@numpy")
        inputs = tuple(
            [
                None if x is None else Variable(x, requires_grad=x.dtype.kind == "f")
                for x in self._generate_inputs()
            ]
        )
        with self._context("test_round_trip", device, "C-contiguous"):
            check_round_trip(
                self._cpu_link,
                self.create_link(),
                inputs,
                lambda link, xs: self.forward(link, xs, device),
            )

    def _test_copy_modes(self):
        """Check ``copy('share')``, ``copy('copy')`` and ``copy('init')`` of the link (CPU).

        Under ``using_config('dtype', dtype)`` when the class sets a floating
        ``dtype``, as the link is built: ``copy('init')`` draws the arrays of
        initializers without a dtype of their own in the configured one.
        """
        device = self._start("copy_modes", "@numpy")
        dtype = None if self.dtype is None else numpy.dtype(self.dtype)
        configured = (
            using_config("dtype", dtype)
            if dtype is not None and dtype.kind == "f"
            else contextlib.nullcontext()
        )
        with self._context("test_copy_modes", device, "C-contiguous"), configured:
            check_copy_modes(self._cpu_link)

    # -- machinery ------------------------------------------------------------------
    def _start(self, kind, device_spec):
        device = super()._start(kind, device_spec)
        self._cpu_link = self.create_link()
        self._device_link = self._cpu_link.copy("copy").to_device(device)
        return device

    def _forward_expected(self, inputs):
        copies = tuple([None if x is None else x.copy() for x in inputs])
        expected = self.forward_expected(self._cpu_link, copies)
        if not isinstance(expected, tuple):
            raise TypeError(
                f"{type(self).__name__}.forward_expected must return a tuple of "
                f"arrays, got {type(expected).__name__}"
            )
        return tuple([numpy.asarray(e) for e in expected])

    def _call(self, inputs, device):
        with device:
            return self.forward(self._device_link, inputs, device)

    def _params(self):
        named = dict(self._device_link.namedparams())
        if self.param_names is None:
            return tuple(named.values())
        missing = [name for name in self.param_names if name not in named]
        if missing:
            raise ValueError(
                f"{type(self).__name__}: expected param_names among {sorted(named)}, "
                f"got {missing!r}"
            )
        return tuple(named[name] for name in self.param_names)

    def _gradient_options(self, kind, inputs):
        options = super()._gradient_options(kind, inputs)
        self._device_link.cleargrads()
        options["params"] = self._params()
        if self.no_grads is not None:
            options["no_grads"] = list(self.no_grads)
        return options
