"""Fixtures that several dbr-core test files share.

They are fixtures rather than a helper module because the tests run with
``--import-mode=importlib``, which puts no test folder on ``sys.path``.
"""

import numpy
import pytest

from dbr.core import FunctionNode, Variable
from dbr.core.testing.seeding import numpy_seeded_per_test  # noqa: F401


@pytest.fixture
def seeded(request):
    """NumPy's global generator seeded with the module's ``NUMPY_SEED`` (0 unless set).

    The generator's state is restored afterwards.
    """
    state = numpy.random.get_state()
    numpy.random.seed(getattr(request.module, "NUMPY_SEED", 0))
    yield
    numpy.random.set_state(state)


class DetachedSquare(FunctionNode):
    """``x ** 2`` whose (first-order correct) backward is built outside the graph."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        return (inputs[0] * inputs[0],)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        return (Variable(2 * x.array * grad_outputs[0].array),)


@pytest.fixture
def detached_square():
    """The :class:`DetachedSquare` node class, which double-backward checks must reject."""
    return DetachedSquare
