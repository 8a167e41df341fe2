import pathlib
import runpy
import types

import numpy

from dbr.core import testing
from dbr.core.testing import bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.connection.dilated_convolution_2d import dilated_convolution_2d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


@testing.parameterize(
    *testing.product_dict(
        [
            {"x_shape": (2, 3, 7, 6), "w_shape": (2, 3, 3, 2), "dilate": 2},
            {"x_shape": (1, 2, 8, 9), "w_shape": (3, 2, 2, 3), "dilate": (3, 2), "pad": (2, 1)},
            {
                "x_shape": (2, 2, 9, 8),
                "w_shape": (2, 2, 2, 2),
                "stride": (2, 3),
                "dilate": (2, 1),
                "cover_all": True,
            },
            {"x_shape": (2, 2, 5, 5), "w_shape": (2, 2, 3, 3), "dilate": 1, "pad": 1},
        ],
        [{"nobias": False}, {"nobias": True}],
        [{"dtype": d} for d in FLOATS],
    )
)
class TestDilatedConvolution2D(families.ConvolutionCase):
    def apply(self, x, W, b):
        return dilated_convolution_2d(
            x, W, b, self.stride, self.pad, self.dilate, cover_all=self.cover_all
        )


_DILATED_X = numpy.ones((1, 2, 5, 5), numpy.float32)
_DILATED_W = numpy.ones((1, 2, 3, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (_DILATED_X, _DILATED_W),
            {"dilate": 3},
            InvalidType,
            ("DilatedConvolution2D", "a positive output size"),
        ),
        ((_DILATED_X[0], _DILATED_W), InvalidType, "x.ndim == 4"),
        (
            (_DILATED_X, _DILATED_W),
            {"dilate": 0},
            ValueError,
            "dilated_convolution_2d: dilate must be >= 1",
        ),
    ],
    function=dilated_convolution_2d,
)
