"""Unpooling, ROI pooling and Shape at the lowest and highest opset."""

import numpy
import pytest

import dbr.functions as F
import dbr.onnx
from dbr.onnx.replace_func import fake_as_funcnode

rng = numpy.random.default_rng(7)

# ONNX Runtime implements MaxRoiPool-1 only, not MaxRoiPool-22: opsets from 22 are checked by onnx.
ROI_OPSETS = (dbr.onnx.MINIMUM_OPSET_VERSION, min(21, dbr.onnx.maximum_opset_version()))


def rand(*shape, dtype=numpy.float32):
    return rng.uniform(-1, 1, shape).astype(dtype)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"ksize": 2},  # cover_all=True: the output is cropped at the end
        {"ksize": 2, "cover_all": False},
        {"ksize": 3, "stride": 2, "pad": 1, "cover_all": False},  # overlapping windows add up
        {"ksize": (2, 3), "stride": (1, 2), "cover_all": False},
        {"ksize": 2, "outsize": (9, 8), "cover_all": False},  # larger than the default
        {"ksize": 3, "stride": 2, "outsize": (8, 9)},
    ],
)
def test_unpooling_2d(tools, kwargs):
    model = tools.FunctionModel(lambda m, x: F.unpooling_2d(x, **kwargs))
    tools.check_export(model, [rand(2, 3, 4, 4)])


def test_unpooling_1d_and_3d(tools):
    model = tools.FunctionModel(
        lambda m, x, y: (F.unpooling_1d(x, 3, 2, cover_all=False), F.unpooling_3d(y, 2))
    )
    tools.check_export(model, [rand(2, 3, 5), rand(1, 2, 3, 2, 3)])


def test_roi_pooling_2d(tools):
    x = rand(2, 3, 12, 10)
    # (batch_index, x_min, y_min, x_max, y_max); values such that no corner rounds from a half
    rois = numpy.array(
        [
            [0, 1.2, 0.3, 7.8, 9.1],
            [1, 0.0, 2.2, 3.1, 4.4],
            [1, 5.3, 5.6, 18.7, 22.1],  # partly outside the map
            [0, 2.9, 3.3, 3.2, 3.4],  # a region of one pixel
        ],
        numpy.float32,
    )
    model = tools.FunctionModel(lambda m, x, r: F.roi_pooling_2d(x, r, 3, 2, 0.6))
    with pytest.warns(UserWarning, match="MaxRoiPool at opset (7|10); runtimes may differ"):
        proto = tools.check_export(model, [x, rois], opsets=(7, 10))
    assert [n.op_type for n in proto.graph.node] == ["MaxRoiPool"]


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64, numpy.float16])
def test_roi_pooling_2d_from_opset_11_is_dbr_bins_masked(tools, dtype):
    # Exact, and ONNX Runtime has no MaxRoiPool-22: from opset 11 the bins are in the graph.
    x = rand(2, 3, 12, 10).astype(dtype)
    rois = numpy.array(
        [
            [0, 1.2, 0.3, 7.8, 9.1],
            [1, 5.3, 5.6, 18.7, 22.1],  # partly outside the map
            [1, 30.0, 30.0, 40.0, 40.0],  # wholly outside: every bin empty, 0
            [0, 2.9, 3.3, 3.2, 3.4],  # a region of one pixel
        ],
        numpy.float32,
    )
    model = tools.FunctionModel(lambda m, x, r: F.roi_pooling_2d(x, r, 3, 2, 0.6))
    newest = dbr.onnx.maximum_opset_version()
    proto = tools.check_export(model, [x, rois], opsets=(11, 21, newest), atol=0, rtol=0)
    assert "MaxRoiPool" not in [n.op_type for n in proto.graph.node]
    assert not F.roi_pooling_2d(x, rois, 3, 2, 0.6).array[2].any()


def test_roi_pooling_2d_with_float64_rois(tools):
    x = rand(1, 2, 8, 8)
    rois = numpy.array([[0, 0.6, 1.3, 6.2, 7.1]], numpy.float64)
    model = tools.FunctionModel(lambda m, x, r: F.roi_pooling_2d(x, r, 2, 2, 1.0))
    with pytest.warns(UserWarning, match="MaxRoiPool"):
        proto = tools.check_export(model, [x, rois], opsets=(10,))
    assert "Cast" in [n.op_type for n in proto.graph.node]


def test_shape(tools):
    shape = fake_as_funcnode(lambda x: numpy.asarray(x.shape, numpy.int64), "Shape")
    model = tools.FunctionModel(lambda m, x: (F.relu(x), shape(x)))
    proto = tools.check_export(model, [rand(2, 3, 4)])
    assert "Shape" in [n.op_type for n in proto.graph.node]
