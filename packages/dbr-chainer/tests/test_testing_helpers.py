"""dbr.chainer.testing's marks, repetition, seeding, backends and small helpers."""

import random
import sys
import unittest
import warnings

import numpy
import pytest

import dbr.chainer
from dbr.chainer import testing
from dbr.chainer.testing import attr, condition


def _marks(f):
    return {(m.name, m.args) for m in getattr(f, "pytestmark", [])}


def _f():
    pass


def test_attr_marks():
    def f():
        pass

    assert _marks(attr.gpu(f)) == {("gpu", ())}
    for name in ("cudnn", "slow", "ideep", "chainerx"):

        def g():
            pass

        assert _marks(getattr(attr, name)(g)) == {(name, ())}

    def h():
        pass

    assert _marks(attr.multi_gpu(2)(h)) == {("gpu", ()), ("multi_gpu", (2,))}


def test_multi_gpu_skips_over_the_limit(monkeypatch):
    monkeypatch.setenv("CHAINER_TEST_GPU_LIMIT", "1")

    def f():
        pass

    assert attr.multi_gpu(2)(f).__unittest_skip__

    def g():
        pass

    assert not getattr(attr.gpu(g), "__unittest_skip__", False)


class _Counting(unittest.TestCase):
    calls = []
    setups = 0

    def setUp(self):
        type(self).setups += 1

    def runTest(self):
        pass

    def flaky(self):
        _Counting.calls.append(len(_Counting.calls))
        if len(_Counting.calls) % 2:
            self.fail("odd call")

    def failing(self):
        _Counting.calls.append(0)
        self.fail("always")

    def skipping(self):
        _Counting.calls.append(0)
        pytest.skip("not here")


@pytest.fixture
def case():
    _Counting.calls = []
    _Counting.setups = 0
    return _Counting()


def test_retry_passes_after_a_failure(case):
    condition.retry(3)(_Counting.flaky)(case)
    assert len(_Counting.calls) == 2
    assert _Counting.setups == 2


def test_repeat_fails_with_the_first_error(case):
    with pytest.raises(AssertionError, match="first error message:(.|\n)*odd call"):
        condition.repeat(3)(_Counting.flaky)(case)
    assert len(_Counting.calls) == 1


def test_repeat_with_success_at_least_counts(case):
    with pytest.raises(AssertionError, match="Fail: 2, Success: 0"):
        condition.repeat_with_success_at_least(5, 4)(_Counting.failing)(case)
    with pytest.raises(AssertionError):
        condition.repeat_with_success_at_least(2, 3)


def test_pytest_skip_becomes_skiptest(case):
    with pytest.raises(unittest.SkipTest, match="not here"):
        condition.retry(5)(_Counting.skipping)(case)
    assert len(_Counting.calls) == 1


def test_fix_random_on_a_test_function_seeds_and_restores():
    numpy.random.seed(1)
    random.seed(1)
    outer = numpy.random.get_state()[1].copy()
    drawn = []

    @testing.fix_random()
    def test_draw(self):
        drawn.append((numpy.random.rand(), random.random(), testing.generate_seed()))

    test_draw(None)
    test_draw(None)
    assert drawn[0] == drawn[1]
    numpy.random.seed(100)
    assert drawn[0][0] == numpy.random.rand()
    numpy.random.seed(1)
    numpy.testing.assert_array_equal(numpy.random.get_state()[1], outer)
    with pytest.raises(AssertionError):
        testing.generate_seed()


def test_fix_random_on_a_class_wraps_setup_and_teardown():
    class Case(unittest.TestCase):
        def setUp(self):
            self.x = numpy.random.rand()

        def tearDown(self):
            pass

        def test_a(self):
            pass

    bundle = testing.fix_random()(Case)
    cls = bundle.cases[0].klass
    assert cls is Case
    values = []
    for _ in range(2):
        t = cls("test_a")
        t.setUp()
        values.append(t.x)
        t.tearDown()
    assert values[0] == values[1]


def test_backend_config_defaults_name_and_device():
    config = testing.BackendConfig({})
    assert config.xp is numpy
    assert config.device.name == "@numpy"
    assert config.get_func_str() == (
        "use_chainerx_false__chainerx_device_None__use_cuda_false__cuda_device_None__"
        "use_cudnn_never__cudnn_deterministic_false__autotune_false__"
        "cudnn_fast_batch_normalization_false__use_ideep_never"
    )
    assert repr(config).startswith("<BackendConfig use_chainerx=False chainerx_device=None")
    assert config.get_pytest_marks() == []
    x = numpy.ones(3)
    assert config.get_array(x) is x
    with pytest.raises(ValueError):
        testing.BackendConfig({"use_gpu": True})
    with pytest.raises(TypeError):
        testing.BackendConfig([])


def test_backend_config_cuda_marks_and_default_device():
    config = testing.BackendConfig({"use_cuda": True, "use_cudnn": "always"})
    assert config.cuda_device == 0
    assert "cuda_device_0__use_cudnn_always" in config.get_func_str()
    assert config.get_pytest_marks() == [attr.gpu, attr.cudnn]
    config = testing.BackendConfig({"use_cuda": True, "cuda_device": 1})
    assert len(config.get_pytest_marks()) == 2
    ideep = testing.BackendConfig({"use_ideep": "always"})
    assert ideep.get_pytest_marks() == [attr.ideep]


def test_backend_config_applies_configuration():
    config = testing.BackendConfig({"use_ideep": "always", "autotune": True})
    with config:
        assert dbr.chainer.config.use_ideep == "always"
        assert dbr.chainer.config.autotune is True
        assert dbr.chainer.config.use_cudnn == "never"
    assert dbr.chainer.config.autotune is False


def test_chainerx_configuration_skips():
    config = testing.BackendConfig({"use_chainerx": True, "chainerx_device": "native:0"})
    with pytest.raises(unittest.SkipTest):
        config.device  # noqa: B018

    class TestX(unittest.TestCase):
        def test_a(self, backend_config):
            pass

    bundle = testing.inject_backend_tests(
        None, [{"use_chainerx": True, "chainerx_device": "native:0"}]
    )(TestX)
    try:
        method = bundle.cases[0].klass.test_a
        assert {"chainerx", "skip"} <= {m.name for m in method.pytestmark}
    finally:
        delattr(sys.modules[__name__], bundle.cases[0].class_name)


def test_inject_backend_tests_with_method_names_keeps_the_others():
    class TestY(unittest.TestCase):
        def test_injected(self, backend_config):
            self.seen = backend_config

        def test_plain(self):
            pass

    bundle = testing.inject_backend_tests(["test_injected"], [{}])(TestY)
    try:
        plain, injected = (c.klass for c in bundle.cases)
        assert plain.__name__ == "TestY"
        assert plain.test_injected is None
        assert injected.test_plain is None
        t = injected("test_injected")
        t.test_injected()
        assert isinstance(t.seen, testing.BackendConfig)
    finally:
        for c in bundle.cases:
            delattr(sys.modules[__name__], c.class_name)
    with pytest.raises(TypeError):
        testing.inject_backend_tests("test_a", [{}])


def test_run_module(monkeypatch):
    calls = []
    monkeypatch.setattr(pytest, "main", lambda args: calls.append(args))
    testing.run_module("some.module", "/x/test_a.py")
    assert calls == []
    testing.run_module("__main__", "/x/test_a.py")
    assert calls and calls[0][0] == "/x/test_a.py"


def test_assert_warns():
    with testing.assert_warns(RuntimeWarning):
        warnings.warn("w", RuntimeWarning, stacklevel=1)
    with (
        pytest.raises(AssertionError, match="UserWarning not triggerred"),
        testing.assert_warns(UserWarning),
    ):
        warnings.warn("w", RuntimeWarning, stacklevel=1)


def test_with_requires_and_without_requires():
    assert not getattr(testing.with_requires("numpy>=1.0")(_f), "__unittest_skip__", False)

    def g():
        pass

    assert testing.with_requires("numpy<1.0")(g).__unittest_skip__

    def h():
        pass

    assert testing.with_requires("no-such-package-dbr")(h).__unittest_skip__

    def k():
        pass

    assert testing.without_requires("numpy")(k).__unittest_skip__


def test_patch_wraps_the_real_object():
    with testing.patch("numpy.linalg.norm") as mocked:
        assert numpy.linalg.norm(numpy.array([3.0, 4.0])) == 5.0
    assert mocked.call_count == 1


def test_generate_matrix():
    x = testing.generate_matrix((2, 4, 3), dtype=numpy.float32, singular_values=[3.0, 2.0, 1.0])
    assert x.shape == (2, 4, 3) and x.dtype == numpy.float32
    s = numpy.linalg.svd(x, compute_uv=False)
    numpy.testing.assert_allclose(s, [[3, 2, 1]] * 2, rtol=1e-5)
    with pytest.raises(TypeError):
        testing.generate_matrix((2, 2))
    with pytest.raises(ValueError):
        testing.generate_matrix((2, 2), singular_values=[1, -1])


def test_save_and_load_npz():
    class State:
        def __init__(self, value):
            self.value = value

        def serialize(self, serializer):
            self.value = serializer("value", self.value)

    dst = State(numpy.zeros(2))
    testing.save_and_load_npz(State(numpy.arange(2.0)), dst)
    numpy.testing.assert_array_equal(dst.value, [0.0, 1.0])


@pytest.mark.parametrize("iter_per_epoch", [0.5, 2])
def test_get_trainer_with_mock_updater(iter_per_epoch):
    trainer = testing.training.get_trainer_with_mock_updater((3, "epoch"), iter_per_epoch)
    seen = []
    trainer.extend(lambda t: seen.append(t.updater.epoch_detail))
    trainer.run()
    assert len(seen) == int(numpy.ceil(3 * iter_per_epoch))
    assert seen == [i / iter_per_epoch for i in range(1, len(seen) + 1)]


def test_assert_allclose_is_dbr_core_s():
    import dbr.core.testing

    assert testing.assert_allclose is dbr.core.testing.assert_allclose
