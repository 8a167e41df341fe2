import importlib.util

import numpy
import pytest

from dbr.core import Variable, backend
from dbr.core.backend import (
    CpuDevice,
    Device,
    cpu,
    get_array_module,
    get_device,
    get_device_from_array,
    to_cpu,
    to_device,
)

no_gpu_plugin = pytest.mark.skipif(
    importlib.util.find_spec("dbr.gpu") is not None, reason="dbr.gpu is installed"
)


@pytest.mark.parametrize("spec", ["@numpy", "numpy", "cpu", -1, numpy.int64(-3), numpy])
def test_get_device_cpu_specs(spec):
    device = get_device(spec)
    assert device is cpu
    assert isinstance(device, CpuDevice)
    assert device.xp is numpy
    assert device.name == "@numpy"
    assert str(device) == "@numpy"


@pytest.mark.parametrize("spec", ["-1", "-3", " -1\n"])
def test_negative_numeric_strings_are_the_cpu(spec):
    # Chainer parses a string spec with int() first: examples pass --device '-1'.
    assert get_device(spec) is cpu


@pytest.mark.parametrize(
    ("spec", "expected"), [("0", "@cupy:0"), ("2", "@cupy:2"), (3, "@cupy:3")]
)
def test_non_negative_numeric_strings_and_ints_are_that_gpu(monkeypatch, spec, expected):
    asked = []
    monkeypatch.setitem(backend._device_resolvers, "@cupy", lambda s: asked.append(s) or cpu)
    get_device(spec)
    assert asked == [expected]


def test_get_device_passes_a_device_through():
    class Custom(Device):
        name = "@custom"
        xp = numpy

    custom = Custom()
    assert get_device(custom) is custom
    assert get_device(cpu) is cpu


@no_gpu_plugin
@pytest.mark.parametrize("spec", ["@cupy:0", "@cupy", 0, 1, "0", "1"])
def test_gpu_specs_without_dbr_gpu_name_the_package_and_the_install_command(spec):
    with pytest.raises(RuntimeError) as info:
        get_device(spec)
    message = str(info.value)
    assert "dbr.gpu" in message
    assert "pip install 'dbr-gpu[cuda12]'" in message


@pytest.mark.parametrize("spec", ["@tpu:0", "gpu", "", "@numpy:1"])
def test_unknown_string_specs_name_the_spec(spec):
    with pytest.raises(ValueError) as info:
        get_device(spec)
    assert repr(spec) in str(info.value)
    assert "'@numpy'" in str(info.value)


@pytest.mark.parametrize("spec", [None, 1.5, True, object()])
def test_non_device_specs_are_rejected(spec):
    with pytest.raises(ValueError, match="get_device: expected a device specifier"):
        get_device(spec)


def test_devices_compare_by_name():
    assert CpuDevice() == cpu
    assert hash(CpuDevice()) == hash(cpu)
    assert cpu != "@numpy"
    assert repr(cpu) == "<CpuDevice @numpy>"


def test_get_array_module_on_arrays_variables_scalars_and_none():
    a = numpy.ones(2, numpy.float32)
    assert get_array_module(a) is numpy
    assert get_array_module(Variable(a)) is numpy
    assert get_array_module(Variable(None)) is numpy
    assert get_array_module(numpy.float32(1.0), 1, 2.5, True, None) is numpy
    assert get_array_module() is numpy
    assert get_array_module(a, Variable(a), 3) is numpy


def test_get_array_module_follows_a_registered_array_type(monkeypatch):
    class FakeArray:
        pass

    fake_xp = object()
    monkeypatch.setitem(backend._array_types, FakeArray, (fake_xp, lambda a: cpu))
    assert get_array_module(numpy.ones(1), FakeArray()) is fake_xp
    assert get_array_module(Variable.from_array(FakeArray(), False)) is fake_xp
    assert FakeArray in backend.get_array_types()


def test_get_device_from_array():
    a = numpy.ones(2)
    assert get_device_from_array(a) is cpu
    assert get_device_from_array(numpy.float64(1.0)) is cpu
    assert get_device_from_array(Variable(a)) is cpu
    assert get_device_from_array(None) is cpu


def test_get_device_from_several_arrays_is_the_first_off_the_cpu(monkeypatch):
    class FakeArray:
        def __init__(self, device):
            self.device = device

    fake_device = object()
    other_device = object()
    monkeypatch.setitem(backend._array_types, FakeArray, (object(), lambda a: a.device))
    a = numpy.ones(2)
    assert get_device_from_array() is cpu
    assert get_device_from_array(a, numpy.float32(1.0), None) is cpu
    assert get_device_from_array(a, FakeArray(fake_device)) is fake_device
    assert get_device_from_array(FakeArray(other_device), FakeArray(fake_device)) is other_device
    fake = Variable.from_array(FakeArray(fake_device), False)
    assert get_device_from_array(Variable(a), fake) is fake_device


def test_send_and_to_device_handle_nested_containers():
    a = numpy.arange(3)
    sent = to_device("@numpy", {"a": a, "pair": (a, [a, None])})
    assert sent["a"] is a
    assert isinstance(sent["pair"], tuple) and isinstance(sent["pair"][1], list)
    assert sent["pair"][1][0] is a and sent["pair"][1][1] is None
    assert to_device(None, a) is a
    assert to_cpu([a])[0] is a
    numpy.testing.assert_array_equal(cpu.send([1, 2]), numpy.array([1, 2]))


def test_copyto_copies_in_place():
    dst = numpy.zeros(3, numpy.float32)
    backend.copyto(dst, numpy.arange(3, dtype=numpy.float32))
    numpy.testing.assert_array_equal(dst, [0.0, 1.0, 2.0])


def test_cpu_device_use_and_context():
    with cpu as device:
        assert device is cpu
    assert cpu.use() is None
    assert cpu.is_array_supported(numpy.ones(1))
    assert not cpu.is_array_supported([1.0])


def test_supported_array_types_are_the_device_array_modules_ndarray():
    assert cpu.supported_array_types == (numpy.ndarray,)
    assert isinstance(numpy.zeros(2), get_device("@numpy").supported_array_types)

    class NoModule(backend.Device):
        name = "@nothing"

    with pytest.raises(
        NotImplementedError,
        match=r"NoModule\.supported_array_types: the device has no array module",
    ):
        _ = NoModule().supported_array_types
