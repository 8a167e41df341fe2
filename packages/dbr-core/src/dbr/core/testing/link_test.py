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

Everything else (tolerances, non-contiguous inputs, seeding, the
``bad_inputs`` table, :func:`~dbr.core.testing.parameterize`) works as in
:class:`~dbr.core.testing.FunctionTestCase`.
"""

import numpy

from dbr.core.testing.function_test import FunctionTestCase

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
