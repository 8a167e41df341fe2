"""Chainer v7 helpers kept in dbr.core: array types, compute mode, array utilities, warnings."""

import warnings

import numpy
import pytest

from dbr.core import Variable, backend, config, using_config, utils
from dbr.core.configuration import get_compute_mode


def test_cpu_array_types_and_compatibility():
    assert backend.get_cpu_array_types() == (numpy.ndarray,)
    assert backend.is_arrays_compatible([None, None])
    assert backend.is_arrays_compatible([numpy.zeros(1), numpy.zeros((2, 2))])
    assert not backend.is_arrays_compatible([numpy.zeros(1), 1.0])
    assert not backend.is_arrays_compatible([[1.0], numpy.zeros(1)])


def test_get_compute_mode_and_tensor_core_config():
    assert get_compute_mode() is None
    assert config.use_cudnn_tensor_core == "auto"
    assert config.warn_nondeterministic is False
    with using_config("compute_mode", "fast"):
        assert get_compute_mode() == "fast"
    assert get_compute_mode() is None


@pytest.mark.parametrize(
    ("shape", "target"),
    [((2, 3), (2, 3)), ((4, 2, 3), (2, 3)), ((4, 2, 3), (1, 3)), ((4, 2, 3), (2, 1)), ((2,), ())],
)
def test_sum_to_sums_the_broadcast_axes(shape, target):
    x = numpy.random.default_rng(0).standard_normal(shape)
    y = utils.sum_to(x, target)
    assert y.shape == target
    lead = len(shape) - len(target)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(target) if n == 1)
    numpy.testing.assert_allclose(y, x.sum(axes, keepdims=True).reshape(target) if axes else x)


def test_sum_to_returns_the_array_itself_for_its_own_shape_and_rejects_variables():
    x = numpy.zeros((2, 3))
    assert utils.sum_to(x, (2, 3)) is x
    with pytest.raises(TypeError, match="sum_to: expected an array, got a Variable"):
        utils.sum_to(Variable(numpy.zeros((2, 3))), (3,))


def test_deprecated_array_helpers():
    x = numpy.arange(6.0).reshape(2, 3)
    with pytest.warns(DeprecationWarning, match="as_vec is deprecated"):
        assert utils.as_vec(x).shape == (6,)
    with pytest.warns(DeprecationWarning, match="as_mat is deprecated"):
        assert utils.as_mat(x.reshape(2, 1, 3)).shape == (2, 3)
    with pytest.warns(DeprecationWarning):
        assert utils.as_mat(x) is x
    with pytest.warns(DeprecationWarning, match="empty_like is deprecated"):
        e = utils.empty_like(x)
    assert type(e) is numpy.ndarray and e.shape == x.shape and e.dtype == x.dtype


def test_nondeterministic_warns_only_when_asked():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        utils.nondeterministic("f")
    with (
        using_config("warn_nondeterministic", True),
        pytest.warns(RuntimeWarning, match="Source: scatter_add"),
    ):
        utils.nondeterministic("scatter_add")


def test_performance_warning_is_a_runtime_warning():
    assert issubclass(utils.PerformanceWarning, RuntimeWarning)
