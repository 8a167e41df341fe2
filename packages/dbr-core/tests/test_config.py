import threading

import numpy
import pytest

from dbr.core import Variable, ops
from dbr.core.configuration import (
    config,
    force_backprop_mode,
    global_config,
    no_backprop_mode,
    using_config,
)


def run_in_thread(work):
    result = []
    errors = []

    def target():
        try:
            result.append(work())
        except BaseException as e:  # re-raised in the calling thread
            errors.append(e)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]


@pytest.fixture
def global_train():
    """Restore global_config.train after a test changes it."""
    old = global_config.train
    yield
    global_config.train = old


def test_defaults():
    assert config.train is True
    assert config.enable_backprop is True
    assert config.type_check is True
    assert config.debug is False
    assert config.dtype == numpy.dtype(numpy.float32)
    assert isinstance(config.dtype, numpy.dtype)
    assert config.use_cudnn == "auto"
    assert config.keep_graph_on_report is False


def test_a_value_set_in_one_thread_does_not_leak_into_another():
    def work():
        config.train = False
        return config.train

    assert run_in_thread(work) is False
    assert config.train is True
    with using_config("train", False):
        assert run_in_thread(lambda: config.train) is True
        assert config.train is False


def test_global_changes_are_seen_by_threads_that_do_not_override(global_train):
    started, proceed = threading.Event(), threading.Event()
    seen = {}

    def overriding():
        with using_config("train", True):
            started.set()
            proceed.wait()
            seen["overriding"] = config.train

    thread = threading.Thread(target=overriding)
    thread.start()
    started.wait()
    global_config.train = False
    proceed.set()
    thread.join()
    assert seen["overriding"] is True
    assert config.train is False
    assert run_in_thread(lambda: config.train) is False


def test_using_config_restores_the_previous_value():
    with using_config("train", False):
        assert config.train is False
        with using_config("train", True):
            assert config.train is True
        assert config.train is False
    assert config.train is True


def test_using_config_restores_on_exceptions():
    with pytest.raises(KeyError), using_config("debug", True):
        assert config.debug is True
        raise KeyError("boom")
    assert config.debug is False
    with using_config("train", False):
        with pytest.raises(KeyError), using_config("train", True):
            raise KeyError("boom")
        assert config.train is False


def test_using_config_after_restoring_falls_back_to_later_global_values(global_train):
    with using_config("train", True):
        pass
    global_config.train = False
    assert config.train is False


def test_using_config_can_add_a_new_entry():
    with using_config("my_flag", 3):
        assert config.my_flag == 3
    assert not hasattr(config, "my_flag")


def test_dtype_is_normalised_and_must_be_floating():
    with using_config("dtype", "float16"):
        assert config.dtype == numpy.dtype(numpy.float16)
        assert isinstance(config.dtype, numpy.dtype)
    with (
        pytest.raises(ValueError, match=r"config\.dtype.*floating.*int32"),
        using_config("dtype", numpy.int32),
    ):
        pass
    assert config.dtype == numpy.dtype(numpy.float32)


def test_global_config_rejects_unknown_names():
    with pytest.raises(AttributeError, match="no_such_entry"):
        global_config.no_such_entry  # noqa: B018


def test_no_backprop_mode_records_no_graph():
    x = Variable(numpy.ones(3, numpy.float32))
    with no_backprop_mode():
        assert config.enable_backprop is False
        y = x * 2.0
        z = ops.sum(y)
    assert config.enable_backprop is True
    assert y.creator is None and y.creator_node is None
    assert z.creator is None
    numpy.testing.assert_array_equal(y.array, [2.0, 2.0, 2.0])
    assert (x * 2.0).creator is not None


def test_force_backprop_mode_inside_no_backprop_mode():
    x = Variable(numpy.array([1.0, 2.0], numpy.float32))
    with no_backprop_mode():
        with force_backprop_mode():
            assert config.enable_backprop is True
            y = x * x
        z = x * x
        assert config.enable_backprop is False
    assert y.creator is not None and z.creator is None
    ops.sum(y).backward()
    numpy.testing.assert_array_equal(x.grad, [2.0, 4.0])


def test_show_lists_public_entries():
    text = config.show(return_text=True)
    names = [line.split()[0] for line in text.splitlines()]
    assert names == sorted(names)
    assert {"train", "enable_backprop", "debug", "dtype", "type_check"} <= set(names)
    assert not any(name.startswith("_") for name in names)


def test_get_dtype_returns_the_given_dtype_or_config_dtype():
    from dbr.core import get_dtype

    assert get_dtype() == numpy.float32 and isinstance(get_dtype(), numpy.dtype)
    with using_config("dtype", numpy.float16):
        assert get_dtype() == numpy.dtype(numpy.float16)
        assert get_dtype(map_mixed16=numpy.float32) == numpy.dtype(numpy.float16)
        assert get_dtype("float64") == numpy.dtype(numpy.float64)
    assert get_dtype(numpy.int32) == numpy.dtype(numpy.int32)
    assert get_dtype(dtype="f8", map_mixed16="f2") == numpy.dtype(numpy.float64)


def test_mixed16_is_a_config_dtype_that_get_dtype_maps():
    import copy
    import pickle

    from dbr.core import get_dtype, mixed16

    assert repr(mixed16) == "dtype('mixed16')"
    assert numpy.dtype(mixed16) == numpy.float16
    assert pickle.loads(pickle.dumps(mixed16)) is mixed16 and copy.deepcopy(mixed16) is mixed16
    with using_config("dtype", mixed16):
        assert config.dtype is mixed16
        assert get_dtype() == numpy.float16
        assert get_dtype(map_mixed16=numpy.float32) == numpy.float32
        assert get_dtype(numpy.float64, map_mixed16=numpy.float32) == numpy.float64
        assert run_in_thread(lambda: config.dtype) == numpy.float32
    assert config.dtype == numpy.float32
    assert get_dtype(mixed16) == numpy.float16
    assert get_dtype(mixed16, map_mixed16="f4") == numpy.float32
    assert isinstance(get_dtype(mixed16, map_mixed16="f4"), numpy.dtype)


def test_global_config_dtype_accepts_mixed16_and_refuses_non_floats():
    from dbr.core import mixed16

    old = global_config.dtype
    try:
        global_config.dtype = mixed16
        assert run_in_thread(lambda: config.dtype) is mixed16
    finally:
        global_config.dtype = old
    with pytest.raises(ValueError, match="config.dtype: expected a floating dtype or mixed16"):
        global_config.dtype = numpy.int32


@pytest.mark.parametrize("kwargs", [{"dtype": "nodtype"}, {"map_mixed16": "nodtype"}])
def test_get_dtype_rejects_what_is_no_dtype(kwargs):
    from dbr.core import get_dtype

    name = next(iter(kwargs))
    with pytest.raises(TypeError, match=f"get_dtype: expected {name} to be a NumPy dtype"):
        get_dtype(**kwargs)


def test_cpu_threads_defaults_to_none_and_is_listed():
    assert config.cpu_threads is None
    assert "cpu_threads" in config.show(return_text=True).split()
