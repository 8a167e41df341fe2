"""dbr.gpu.cudnn's Chainer flags: version() and should_use_cudnn_tensor_core(dtype)."""

import numpy
import pytest

from dbr.core import using_config
from dbr.gpu import cudnn


def test_version_is_minus_one_without_cudnn_else_positive():
    if cudnn.available():
        assert cudnn.version() > 0
    else:
        assert cudnn.version() == -1


@pytest.mark.parametrize(("mode", "expected"), [("always", True), ("never", False)])
def test_tensor_core_modes_answer_as_chainer(mode, expected):
    with using_config("use_cudnn_tensor_core", mode):
        assert cudnn.should_use_cudnn_tensor_core(numpy.float16) is expected
        assert cudnn.should_use_cudnn_tensor_core(numpy.float32) is expected


def test_tensor_core_auto_needs_float16_and_cudnn():
    assert cudnn.should_use_cudnn_tensor_core(numpy.float32) is False
    if not cudnn.available():
        assert cudnn.should_use_cudnn_tensor_core(numpy.float16) is False


def test_tensor_core_rejects_unknown_mode():
    with (
        using_config("use_cudnn_tensor_core", "maybe"),
        pytest.raises(ValueError, match="use_cudnn_tensor_core must be.*'maybe'"),
    ):
        cudnn.should_use_cudnn_tensor_core(numpy.float16)
