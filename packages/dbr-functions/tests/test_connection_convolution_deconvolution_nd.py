"""convolution_nd and deconvolution_nd (and their 1-d and 3-d forms) as one family.

Each is checked against its own float64 loop (``ConvolutionCase`` in
fixtures/families.py: a convolution gathers each output from filter taps, a
deconvolution scatters each input through them); the shapes, options, bad
input and the harness are shared.
"""

import contextlib
import pathlib
import re
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, testing, using_config
from dbr.core.testing import bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions import _tuning
from dbr.functions.connection import _im2col
from dbr.functions.connection import convolution_nd as convolution_module
from dbr.functions.connection.convolution_nd import convolution_1d, convolution_3d, convolution_nd
from dbr.functions.connection.deconvolution_nd import (
    deconvolution_1d,
    deconvolution_3d,
    deconvolution_nd,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


CONVOLUTION_CASES = [
    {"x_shape": (2, 3, 7), "w_shape": (2, 3, 3)},
    {"x_shape": (2, 2, 8), "w_shape": (3, 2, 2), "stride": 3, "pad": 1, "cover_all": True},
    {"x_shape": (1, 4, 9), "w_shape": (2, 2, 3), "dilate": 2, "groups": 2, "pad": 2},
    {"x_shape": (2, 2, 4, 5), "w_shape": (3, 2, 2, 3), "stride": (2, 1), "pad": (1, 0)},
    {"x_shape": (1, 2, 4, 3, 5), "w_shape": (2, 2, 2, 2, 3), "pad": (0, 1, 1)},
    {
        "x_shape": (2, 2, 5, 4, 3),
        "w_shape": (2, 1, 2, 2, 1),
        "stride": (2, 3, 1),
        "dilate": (1, 2, 1),
        "groups": 2,
        "cover_all": True,
    },
]

DECONVOLUTION_CASES = [
    {"x_shape": (2, 3, 4), "w_shape": (3, 2, 3)},
    {"x_shape": (2, 2, 3), "w_shape": (2, 3, 2), "stride": 3, "pad": 1, "outsize": 7},
    {"x_shape": (1, 4, 4), "w_shape": (4, 1, 3), "dilate": 2, "groups": 2, "pad": 1},
    {"x_shape": (1, 2, 2, 3, 2), "w_shape": (2, 2, 2, 2, 3), "stride": (2, 1, 2)},
    {
        "x_shape": (2, 2, 2, 2, 3),
        "w_shape": (2, 1, 2, 3, 1),
        "stride": (2, 3, 1),
        "pad": (0, 1, 0),
        "dilate": (1, 2, 1),
        "groups": 2,
        "outsize": (5, 5, 3),
    },
]

# kind: (the functions by number of spatial axes, the options beyond stride/pad/dilate/groups)
KINDS = {
    "convolution": ({1: convolution_1d, 3: convolution_3d}, convolution_nd, "cover_all"),
    "deconvolution": ({1: deconvolution_1d, 3: deconvolution_3d}, deconvolution_nd, "outsize"),
}


def _cases(kind, cases):
    return testing.product_dict(
        [{"kind": kind, **case} for case in cases],
        [{"nobias": False}, {"nobias": True}],
        [{"dtype": d} for d in FLOATS],
    )


@testing.parameterize(
    *_cases("convolution", CONVOLUTION_CASES), *_cases("deconvolution", DECONVOLUTION_CASES)
)
class TestConvolutionDeconvolutionND(families.ConvolutionCase):
    def _function_options(self):
        extra = KINDS[self.kind][2]
        return {
            "stride": self.stride,
            "pad": self.pad,
            extra: getattr(self, extra),
            "dilate": self.dilate,
            "groups": self.groups,
        }

    def apply(self, x, W, b):
        by_ndim, general, _ = KINDS[self.kind]
        function = by_ndim.get(len(self.x_shape) - 2, general)
        options = self._function_options()
        # Bit for bit only on deterministic cuDNN engines: others may sum in another order.
        deterministic = self.kind == "deconvolution"
        with (
            using_config("cudnn_deterministic", True)
            if deterministic
            else contextlib.nullcontext()
        ):
            y = function(x, W, b, **options)
            testing.assert_allclose(y, general(x, W, b, **options), atol=0, rtol=0)
        return y


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "options"),
    [
        ((2, 3, 7), (2, 3, 3), {"stride": 2, "cover_all": True}),
        ((1, 2, 5, 4, 6), (3, 2, 2, 3, 2), {"stride": (2, 1, 3), "pad": (1, 0, 1)}),
        ((1, 4, 5, 4, 6), (2, 2, 2, 2, 2), {"dilate": 2, "groups": 2, "cover_all": True}),
    ],
)
def test_deconvolution_is_the_transpose_of_convolution(x_shape, w_shape, options):
    families.check_transpose(convolution_nd, deconvolution_nd, x_shape, w_shape, options)


ONE_PRODUCT_CASES = [case for case in CONVOLUTION_CASES if case.get("groups", 1) == 1] + [
    # LeNet-5's second convolution: over the size that takes one product by default.
    {"x_shape": (4, 20, 12, 12), "w_shape": (50, 20, 5, 5)},
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", ONE_PRODUCT_CASES)
def test_the_filter_gradient_as_one_product_gives_the_sum_of_per_example_ones(
    monkeypatch, case, dtype
):
    # Ungrouped convolutions with large per-example products take the filter
    # gradient as one product over the block's windows; forced both ways, the
    # results agree to float rounding.
    nd = len(case["x_shape"]) - 2
    options = [
        _im2col.as_tuple(case.get(name, default), nd, name, "test")
        for name, default in (("stride", 1), ("pad", 0), ("dilate", 1))
    ]
    cover_all = (case.get("cover_all", False),) * nd
    rng = numpy.random.default_rng(0)
    x = rng.uniform(-1, 1, case["x_shape"]).astype(dtype)
    W = rng.uniform(-1, 1, case["w_shape"]).astype(dtype)
    y = convolution_module.convolve(x, W, None, *options, 1, cover_all)
    gy = rng.uniform(-1, 1, y.shape).astype(y.dtype)
    ksize = case["w_shape"][2:]
    results = {}
    for name, threshold in (("per_example", float("inf")), ("one", -1)):
        monkeypatch.setattr(_tuning, "FILTER_GRAD_ONE_PRODUCT_MIN", threshold)
        results[name] = convolution_module.convolve_grad_w(x, gy, ksize, *options, 1, cover_all)
    expected, one = results["per_example"], results["one"]
    assert one.shape == expected.shape == case["w_shape"] and one.dtype == expected.dtype
    rtol = 1e-12 if dtype == numpy.float64 else 1e-5
    numpy.testing.assert_allclose(one, expected, rtol=rtol, atol=rtol * abs(expected).max())
    if case["w_shape"][0] == 50:
        monkeypatch.setattr(_tuning, "FILTER_GRAD_ONE_PRODUCT_MIN", 1_000_000)
        assert convolution_module._one_product(numpy, 1, 50, 500, 64)
        assert not convolution_module._one_product(numpy, 1, 20, 25, 576)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "options"),
    [
        ((5, 20, 12, 12), (50, 20, 5, 5), {}),
        ((3, 4, 6, 5), (6, 2, 3, 2), {"pad": (1, 0), "groups": 2}),
        ((3, 2, 5, 4, 4), (3, 2, 2, 3, 2), {"pad": 1, "dilate": (1, 2, 1)}),
    ],
)
def test_blocks_of_one_example_give_the_whole_batch_convolution_and_gradients(
    monkeypatch, x_shape, w_shape, options
):
    rng = numpy.random.default_rng(0)
    x = rng.uniform(-1, 1, x_shape)
    W = rng.uniform(-1, 1, w_shape)
    b = rng.uniform(-1, 1, w_shape[0])

    def run():
        xv, Wv, bv = Variable(x), Variable(W), Variable(b)
        y = convolution_nd(xv, Wv, bv, **options)
        y.grad = numpy.cos(numpy.arange(y.size)).reshape(y.shape)
        y.backward()
        return y.array, xv.grad, Wv.grad, bv.grad

    whole = run()
    monkeypatch.setattr(_tuning, "CONV_BATCH_BLOCK_BYTES", 1)
    for a, b in zip(whole, run(), strict=True):
        numpy.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12 * abs(a).max())


X_OPTIONS = numpy.ones((1, 2, 3, 3, 3), numpy.float32)
W_OPTIONS = numpy.ones((2, 2, 2, 2, 2), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            function,
            (numpy.ones(x_shape, numpy.float32), numpy.ones(w_shape, numpy.float32)),
            {},
            InvalidType,
            (label, expect),
        )
        for function, x_shape, w_shape, label, expect in [
            (convolution_1d, (2, 3, 4), (1, 3, 2, 2), "Convolution1D", "W.ndim == 3"),
            (convolution_nd, (2, 3), (1, 3), "ConvolutionND", "x.ndim == 3"),
            (convolution_nd, (2, 3, 4, 4, 4), (1, 3, 2, 2), "ConvolutionND", "W.ndim == 5"),
            (
                convolution_nd,
                (2, 3, 4),
                (1, 2, 2),
                "ConvolutionND",
                "x.shape[1] == W.shape[1] * 1",
            ),
            (convolution_nd, (2, 3, 4), (1, 3, 5), "ConvolutionND", "a positive output size"),
            (deconvolution_3d, (2, 3, 4, 4, 4), (3, 1, 2, 2), "Deconvolution3D", "W.ndim == 5"),
            (
                deconvolution_nd,
                (2, 3, 4),
                (2, 1, 2),
                "DeconvolutionND",
                "x.shape[1] == W.shape[0]",
            ),
        ]
    ]
    + [
        # the 1-d and 3-d wrappers' x of another rank is a ValueError, as in Chainer
        (
            function,
            (numpy.ones(x_shape, numpy.float32), numpy.ones(w_shape, numpy.float32)),
            {},
            ValueError,
            f"{function.__name__}: expected x with {nd} spatial axes (x.ndim == {nd + 2}), "
            f"got x.shape == {x_shape}",
        )
        for function, nd, x_shape, w_shape in [
            (convolution_1d, 1, (2, 3, 4, 4), (1, 3, 2)),
            (convolution_3d, 3, (2, 3, 4, 4), (1, 3, 2, 2)),
            (deconvolution_1d, 1, (2, 3, 4, 4), (3, 1, 2)),
            (deconvolution_3d, 3, (2, 3, 4, 4), (3, 1, 2, 2, 2)),
        ]
    ]
    + [
        (function, (X_OPTIONS, W_OPTIONS), kwargs, error, message)
        for function, kwargs, error, message in [
            (
                convolution_nd,
                {"stride": (1, 1)},
                ValueError,
                "convolution_nd: stride must be an int or a sequence of 3 ints",
            ),
            (
                convolution_nd,
                {"pad": (0, -1, 0)},
                ValueError,
                "convolution_nd: pad must be >= 0, got (0, -1, 0)",
            ),
            (
                convolution_3d,
                {"dilate": "2"},
                TypeError,
                "convolution_3d: dilate must be an int or a sequence of ints",
            ),
            (
                convolution_3d,
                {"groups": -2},
                ValueError,
                "convolution_3d: groups must be >= 1, got -2",
            ),
            (
                deconvolution_3d,
                {"outsize": (4, 4)},
                ValueError,
                "deconvolution_3d: outsize must be an int or a sequence of 3 ints",
            ),
            (
                deconvolution_nd,
                {"dilate": (1, 0, 1)},
                ValueError,
                "deconvolution_nd: dilate must be >= 1",
            ),
        ]
    ]
)


def test_convolution_1d_option_length():
    x = numpy.ones((1, 2, 5), numpy.float32)
    with pytest.raises(
        ValueError,
        match=re.escape("convolution_1d: stride must be an int or a sequence of 1 ints"),
    ):
        convolution_1d(x, numpy.ones((1, 2, 2), numpy.float32), stride=(1, 1))
    y = convolution_1d(x, numpy.ones((1, 2, 2), numpy.float32), stride=(2,), pad=[1])
    testing.assert_allclose(y, numpy.array([[[2.0, 4.0, 4.0]]]), atol=0, rtol=0)
