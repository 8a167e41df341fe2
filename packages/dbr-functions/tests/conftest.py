"""Reference code that several test files share, offered as fixtures.

They are fixtures rather than a helper module because the tests run with
``--import-mode=importlib``, which puts no test folder on ``sys.path``.

``convolution_loops``: float64 loop references for the convolution and
deconvolution tests (any number of spatial axes, groups, dilation), the
number of windows along an axis (also for the im2col tests) and the inputs
those tests draw.

``pooling_checks``: runs a pooling function over a whole batch and in blocks
of one image, and over an empty batch.

``roi_boxes``: the regions of interest and the bin edges that the ROI pooling
and ROI align tests share, from ``fixtures/roi_boxes.py`` (which
``fixtures/make_roi_functions.py`` also reads).
"""

import importlib.util
import itertools
import pathlib
import types

import numpy
import pytest

from dbr.core import Variable
from dbr.functions.connection import _im2col


def _axes(value, nd):
    """``value`` (an int or a sequence) as a tuple of ``nd`` ints."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * nd


def _in_float64(x, W, stride, pad, dilate):
    """``x`` and ``W`` in float64, and the options as one int per spatial axis."""
    nd = x.ndim - 2
    options = (_axes(v, nd) for v in (stride, pad, dilate))
    return (x.astype(numpy.float64), W.astype(numpy.float64), *options)


def _n_windows(size, k, s, p, d, cover_all):
    # Windows wholly inside the padded input; with cover_all, one more when the
    # last of them stops short of its end.
    length = size + 2 * p
    extent = (k - 1) * d + 1
    count = 0
    while count * s + extent <= length:
        count += 1
    if cover_all and (count - 1) * s + extent < length:
        count += 1
    return count


def _convolution_loop(x, W, b, stride, pad, dilate, groups=1, cover_all=False):
    """Direct N-d convolution by loops over output positions and filter taps, in float64.

    ``stride``, ``pad`` and ``dilate`` are ints or one value per spatial axis.
    """
    x, W, stride, pad, dilate = _in_float64(x, W, stride, pad, dilate)
    n, c_in = x.shape[:2]
    c_out = W.shape[0]
    ksize = W.shape[2:]
    spatial = x.shape[2:]
    nd = len(spatial)
    outs = tuple(
        _n_windows(spatial[i], ksize[i], stride[i], pad[i], dilate[i], cover_all)
        for i in range(nd)
    )
    y = numpy.zeros((n, c_out) + outs)
    cg = c_in // groups
    og = c_out // groups
    for o in range(c_out):
        g = o // og
        for out in itertools.product(*[range(v) for v in outs]):
            for tap in itertools.product(*[range(v) for v in ksize]):
                pos = tuple(out[i] * stride[i] + tap[i] * dilate[i] - pad[i] for i in range(nd))
                if all(0 <= pos[i] < spatial[i] for i in range(nd)):
                    patch = x[(slice(None), slice(g * cg, (g + 1) * cg)) + pos]
                    y[(slice(None), o) + out] += patch @ W[(o, slice(None)) + tap]
    if b is not None:
        y += b.astype(numpy.float64).reshape((c_out,) + (1,) * nd)
    return y


def _deconvolution_loop(x, W, b, stride, pad, dilate, groups=1, outsize=None):
    """Deconvolution by scattering every input element through every filter tap, in float64.

    ``stride``, ``pad``, ``dilate`` and ``outsize`` are ints or one value per
    spatial axis; ``outsize=None`` is the size the other options imply.
    """
    x, W, stride, pad, dilate = _in_float64(x, W, stride, pad, dilate)
    n, c_in = x.shape[:2]
    og = W.shape[1]
    ksize = W.shape[2:]
    in_size = x.shape[2:]
    nd = len(in_size)
    if outsize is None:
        outsize = tuple(
            stride[i] * (in_size[i] - 1) + (ksize[i] - 1) * dilate[i] + 1 - 2 * pad[i]
            for i in range(nd)
        )
    outsize = _axes(outsize, nd)
    y = numpy.zeros((n, og * groups) + outsize)
    cg = c_in // groups
    for c in range(c_in):
        g = c // cg
        for pos in itertools.product(*[range(v) for v in in_size]):
            for tap in itertools.product(*[range(v) for v in ksize]):
                out = tuple(pos[i] * stride[i] + tap[i] * dilate[i] - pad[i] for i in range(nd))
                if all(0 <= out[i] < outsize[i] for i in range(nd)):
                    value = x[(slice(None), c) + pos][:, None] * W[(c, slice(None)) + tap]
                    y[(slice(None), slice(g * og, (g + 1) * og)) + out] += value
    if b is not None:
        y += b.astype(numpy.float64).reshape((-1,) + (1,) * nd)
    return y


def _convolution_inputs(x_shape, w_shape, bias_size, dtype):
    """``(x, W)`` drawn from U(-1, 1), then ``b`` of ``bias_size`` unless it is None."""
    x = numpy.random.uniform(-1, 1, x_shape).astype(dtype)
    W = numpy.random.uniform(-1, 1, w_shape).astype(dtype)
    if bias_size is None:
        return x, W
    return x, W, numpy.random.uniform(-1, 1, bias_size).astype(dtype)


@pytest.fixture(scope="session")
def convolution_loops():
    """``convolution``, ``deconvolution`` (float64 loop references), ``n_windows``, ``inputs``."""
    return types.SimpleNamespace(
        n_windows=_n_windows,
        convolution=_convolution_loop,
        deconvolution=_deconvolution_loop,
        inputs=_convolution_inputs,
    )


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
        self._monkeypatch.setattr(_im2col, "_CPU_BLOCK_BYTES", 1)
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
