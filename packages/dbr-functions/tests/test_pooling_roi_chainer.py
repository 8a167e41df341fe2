"""Every ROI function against Chainer 7.8.1 on half-integer and out-of-image boxes.

tests/fixtures/make_roi_functions.py wrote the outputs and input gradients
of Chainer's CPU code (which rounds scaled corners to even and computes bin
edges in float64) into tests/fixtures/roi_functions.npz; see its docstring
for the cases and for the output gradients zeroed where Chainer's
roi_pooling_2d backward is wrong.
"""

import os

import numpy
import pytest

from dbr.core import Variable
from dbr.functions.pooling.roi_average_align_2d import roi_average_align_2d
from dbr.functions.pooling.roi_average_pooling_2d import roi_average_pooling_2d
from dbr.functions.pooling.roi_max_align_2d import roi_max_align_2d
from dbr.functions.pooling.roi_max_pooling_2d import roi_max_pooling_2d
from dbr.functions.pooling.roi_pooling_2d import roi_pooling_2d

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "roi_functions.npz")

FUNCTIONS = {
    "roi_pooling_2d": roi_pooling_2d,
    "roi_max_pooling_2d": roi_max_pooling_2d,
    "roi_average_pooling_2d": roi_average_pooling_2d,
    "roi_max_align_2d": roi_max_align_2d,
    "roi_average_align_2d": roi_average_align_2d,
}


def _cases():
    with numpy.load(FIXTURE) as f:
        return sorted({key.rsplit("/", 1)[0] for key in f.files})


CASES = _cases()


def test_every_roi_function_has_cases():
    assert {case.split("/")[0] for case in CASES} == set(FUNCTIONS)


@pytest.mark.parametrize("case", CASES)
def test_matches_chainer(case):
    with numpy.load(FIXTURE) as f:
        fields = {key.rsplit("/", 1)[1]: f[key] for key in f.files if key.startswith(case + "/")}
    name = case.split("/")[0]
    outh, outw, spatial_scale, ratio_h, ratio_w = fields["options"].tolist()
    outh, outw = int(outh), int(outw)
    x = Variable(fields["x"])
    if name == "roi_pooling_2d":
        y = roi_pooling_2d(x, fields["rois"], outh, outw, spatial_scale)
    else:
        args = (x, fields["rois"], fields["roi_indices"], (outh, outw), spatial_scale)
        if name.endswith("align_2d"):
            args += ((int(ratio_h) or None, int(ratio_w) or None),)
        y = FUNCTIONS[name](*args)
    # Chainer interpolates float32 maps in float64 on the CPU; dbr in float32.
    tol = 1e-5 if x.dtype == numpy.float32 else 1e-12
    assert y.dtype == fields["y"].dtype
    numpy.testing.assert_allclose(y.array, fields["y"], rtol=tol, atol=tol)
    y.grad = fields["gy"]
    y.backward()
    numpy.testing.assert_allclose(x.grad, fields["gx"], rtol=tol, atol=tol)
