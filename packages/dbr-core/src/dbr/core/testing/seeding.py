"""A pytest fixture that seeds NumPy's global generator for every test.

Tests that draw from ``numpy.random`` (random inputs, random initializers,
the random directions of :func:`~dbr.core.gradient_check.check_backward`)
then see the same numbers whichever tests ran before them, in whatever order
and process (``pytest -n``), so a failure reproduces and a test that passes
here passes in CI. Register it by importing it into a ``conftest.py``::

    from dbr.core.testing.seeding import numpy_seeded_per_test  # noqa: F401
"""

import zlib

import numpy

from dbr.core.testing._pytest import require_pytest

pytest = require_pytest()

__all__ = ["numpy_seeded_per_test"]


@pytest.fixture(autouse=True)
def numpy_seeded_per_test(request):
    """Seed ``numpy.random`` from the test's id for the test; restore the state after.

    The seed is the CRC-32 of the test file's name and the test's name
    (``test_x.py::TestCase::test_y[param]``), so it does not depend on the
    directory pytest runs from.
    """
    state = numpy.random.get_state()
    test_id = request.node.nodeid.split("::", 1)[-1]
    numpy.random.seed(zlib.crc32(f"{request.node.path.name}::{test_id}".encode()))
    yield
    numpy.random.set_state(state)
