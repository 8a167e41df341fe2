"""Reference code that several test files share, offered as fixtures.

They are fixtures rather than a helper module because the tests run with
``--import-mode=importlib``, which puts no test folder on ``sys.path``.

``convolution_loops``: the float64 loop references of ``fixtures/families.py``
for the convolution and deconvolution tests (any number of spatial axes,
groups, dilation), the number of windows along an axis (also for the im2col
tests) and the inputs those tests draw.

``keep_numpy_random_state``: restores NumPy's global random state after a
test (the noise tests draw from it).

``pooling_checks``: runs a pooling function over a whole batch and in blocks
of one image, and over an empty batch.

``roi_boxes``: the regions of interest and the bin edges that the ROI pooling
and ROI align tests share, from ``fixtures/roi_boxes.py`` (which
``fixtures/make_roi_functions.py`` also reads).
"""

import importlib.util
import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable
from dbr.core.testing.distinct_bad_inputs import pytest_collection_modifyitems  # noqa: F401
from dbr.core.testing.seeding import numpy_seeded_per_test  # noqa: F401
from dbr.functions import _tuning

_FAMILIES = runpy.run_path(str(pathlib.Path(__file__).parent / "fixtures" / "families.py"))


@pytest.fixture(scope="session")
def convolution_loops():
    """``convolution``, ``deconvolution`` (float64 loop references), ``n_windows``, ``inputs``."""
    return types.SimpleNamespace(
        n_windows=_FAMILIES["n_windows"],
        convolution=_FAMILIES["convolution_loop"],
        deconvolution=_FAMILIES["deconvolution_loop"],
        inputs=_FAMILIES["convolution_inputs"],
    )


@pytest.fixture
def keep_numpy_random_state():
    """NumPy's global random state, restored after the test."""
    state = numpy.random.get_state()
    yield
    numpy.random.set_state(state)


def _load_fixture_module(name):
    path = pathlib.Path(__file__).parent / "fixtures" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"dbr_functions_tests_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def roi_boxes():
    """The module ``fixtures/roi_boxes.py``: shared regions and ROI pooling bin edges."""
    return _load_fixture_module("roi_boxes")


class PoolingChecks:
    """Batch checks that the n-d pooling and unpooling tests share."""

    def __init__(self, monkeypatch):
        self._monkeypatch = monkeypatch

    def blocked_like_whole(self, function, x, gy, rtol):
        """``function`` gives the same results on the whole batch ``x`` and in blocks of one image.

        ``function(x)`` returns a tuple whose first item is the output, which
        gets the gradient ``gy``; its items and ``x``'s gradient are compared,
        within ``rtol`` (0: exactly).
        """

        def run():
            xv = Variable(x)
            outputs = function(xv)
            outputs[0].grad = gy
            outputs[0].backward()
            return [getattr(o, "array", o) for o in outputs] + [xv.grad]

        whole = run()
        self._monkeypatch.setattr(_tuning, "CONV_BATCH_BLOCK_BYTES", 1)
        for a, b in zip(whole, run(), strict=True):
            if rtol:
                numpy.testing.assert_allclose(a, b, rtol=rtol, atol=0)
            else:
                numpy.testing.assert_array_equal(a, b)

    @staticmethod
    def empty_batch(function, x_shape, y_shape, dtype=numpy.float32):
        """``function`` maps an empty batch of ``x_shape`` to ``y_shape`` and back."""
        x = Variable(numpy.zeros(x_shape, dtype))
        y = function(x)
        assert y.shape == y_shape
        y.grad = numpy.zeros(y.shape, dtype)
        y.backward()
        assert x.grad.shape == x_shape


@pytest.fixture
def pooling_checks(monkeypatch):
    """A :class:`PoolingChecks` whose block-size change ``monkeypatch`` undoes."""
    return PoolingChecks(monkeypatch)
