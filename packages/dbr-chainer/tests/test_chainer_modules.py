"""Chainer's smaller modules and names under dbr.chainer: utils, backends, training, stand-ins."""

import subprocess
import sys
import warnings

import numpy
import pytest

import dbr.chainer as chainer
import dbr.training


@pytest.mark.parametrize(
    "statement",
    [
        "from dbr.chainer.utils import conv, argument, collections_abc, array, type_check",
        "from dbr.chainer.utils.conv import get_conv_outsize",
        "from dbr.chainer.utils.argument import parse_kwargs",
        "from dbr.chainer.backends import intel64, _cpu",
        "from dbr.chainer.training import util, trainer, updater",
        "from dbr.chainer import memory_layouts, serializer, types",
        "from dbr.chainer.datasets import image_dataset; import importlib.util; "
        "assert image_dataset.available is (importlib.util.find_spec('PIL') is not None)",
        "import dbr.chainer.distributions.utils",
        "from dbr.chainer.graph_optimizations.static_graph import static_graph, ScheduleManager; "
        "from dbr.chainer.graph_optimizations.static_graph_utilities import static_code; "
        "import dbr.core; assert static_graph is dbr.core.static_graph; "
        "assert static_code is dbr.core.static_code; "
        "assert dbr.chainer.config.use_static_graph is True",
    ],
)
def test_import_statements(statement):
    subprocess.run([sys.executable, "-c", statement], check=True)


def test_intel64_answers_as_chainer_without_ideep():
    from dbr.chainer.backends import intel64

    assert intel64.is_ideep_available() is False
    assert intel64.should_use_ideep(">=auto") is False
    assert intel64.inputs_all_ready((numpy.zeros((2, 3)),)) is False
    assert intel64.ideep is None
    assert not isinstance(numpy.zeros(2), intel64.mdarray)
    with pytest.raises(RuntimeError, match="iDeep is not available"):
        intel64.check_ideep_available()


def test_chainerx_device_stand_in():
    assert not isinstance(chainer.get_device("@numpy"), chainer.backend.ChainerxDevice)
    assert chainer.backend.ChainerxDevice.from_array(numpy.zeros(2)) is None
    with pytest.raises(RuntimeError, match="ChainerxDevice: cannot make a ChainerX device"):
        chainer.backend.ChainerxDevice("native:0")


def test_device_supported_array_types():
    assert chainer.get_device("@numpy").supported_array_types == (numpy.ndarray,)


def test_memory_layouts_and_types():
    assert chainer.memory_layouts.CUDNN_CHANNEL_FIRST_X is None
    assert chainer.memory_layouts.CUDNN_CHANNEL_LAST_W == "CUDNN_CHANNEL_LAST_W"
    assert chainer.types.Shape == tuple[int, ...]
    assert isinstance(chainer.types.DeviceSpec.__args__, tuple)


def test_experimental_warns_unless_disabled(monkeypatch):
    assert chainer.disable_experimental_feature_warning is False
    with pytest.warns(FutureWarning, match="f is experimental"):
        chainer.utils.experimental("f")
    monkeypatch.setattr(chainer, "disable_experimental_feature_warning", True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chainer.utils.experimental("f")
    with pytest.raises(TypeError, match="experimental: expected api_name to be a str, got int"):
        chainer.utils.experimental(1)


def test_distributions_utils_modified_xlogx():
    from dbr.core.gradient_check import check_backward, check_double_backward

    xlogx = chainer.distributions.utils._modified_xlogx
    x = numpy.array([0.0, 0.5, 2.0])
    numpy.testing.assert_allclose(xlogx(x).array, [0.0, 0.5 * numpy.log(0.5), 2 * numpy.log(2)])
    x = numpy.random.default_rng(0).uniform(0.1, 1, (2, 3))
    gy, ggx = numpy.ones((2, 3)), numpy.ones((2, 3))
    check_backward(xlogx, x, gy)
    check_double_backward(xlogx, x, gy, ggx)
    with pytest.raises(chainer.utils.type_check.InvalidType, match="in: XLogX"):
        xlogx(numpy.ones(2, numpy.int64))
    x = chainer.Variable(numpy.array([0.0, 0.5]))
    y = chainer.functions.sum(xlogx(x))
    with pytest.warns(RuntimeWarning, match="xlogx: the gradient of x log x at x = 0"):
        y.backward()
    numpy.testing.assert_allclose(x.grad, [0.0, 1 + numpy.log(0.5)])


def test_training_updater_is_chainers_old_module_of_the_updaters():
    assert chainer.training.updater.Updater is dbr.training.updaters.Updater
    assert chainer.training.updater.ParallelUpdater is dbr.training.ParallelUpdater
