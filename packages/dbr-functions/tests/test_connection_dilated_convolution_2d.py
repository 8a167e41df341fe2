import re

import numpy
import pytest

from dbr.core import testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.connection.dilated_convolution_2d import dilated_convolution_2d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


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
class TestDilatedConvolution2D(FunctionTestCase):
    stride = 1
    pad = 0
    cover_all = False

    @pytest.fixture(autouse=True)
    def _loops(self, convolution_loops):
        self.loops = convolution_loops

    def generate_inputs(self):
        bias_size = None if self.nobias else self.w_shape[0]
        return self.loops.inputs(self.x_shape, self.w_shape, bias_size, self.dtype)

    def forward(self, inputs, device):
        x, W = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        y = dilated_convolution_2d(
            x, W, b, self.stride, self.pad, self.dilate, cover_all=self.cover_all
        )
        return (y,)

    def forward_expected(self, inputs):
        x, W = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        y = self.loops.convolution(
            x, W, b, self.stride, self.pad, self.dilate, cover_all=self.cover_all
        )
        return (y.astype(self.dtype),)


def test_bad_input():
    x = numpy.ones((1, 2, 5, 5), numpy.float32)
    W = numpy.ones((1, 2, 3, 3), numpy.float32)
    with pytest.raises(InvalidType) as info:
        dilated_convolution_2d(x, W, dilate=3)
    assert "DilatedConvolution2D" in str(info.value)
    assert "a positive output size" in str(info.value)
    with pytest.raises(InvalidType, match=re.escape("x.ndim == 4")):
        dilated_convolution_2d(x[0], W)
    with pytest.raises(ValueError, match=re.escape("dilated_convolution_2d: dilate must be >= 1")):
        dilated_convolution_2d(x, W, dilate=0)
