"""Converters on every test device, against the CPU result, and their GPU-free CPU path."""

import importlib.util
import subprocess
import sys
import textwrap

import numpy
import pytest

from dbr.core import backend
from dbr.core.testing import DEVICES, get_test_device
from dbr.datasets.convert import ConcatWithAsyncTransfer, concat_examples, to_device


def _batches(rng):
    return {
        "arrays": ([rng.uniform(size=(2, 3)).astype(numpy.float32) for _ in range(4)], None),
        "tuples": ([(rng.uniform(size=3), numpy.int32(i)) for i in range(3)], None),
        "dicts": ([{"x": rng.uniform(size=2), "t": i} for i in range(3)], None),
        "padding": ([numpy.ones((1, 3), numpy.int32), numpy.full((2, 1), 2, numpy.int32)], -1),
        "padding-per-field": (
            [(numpy.ones(1), numpy.ones(2)), (numpy.ones(2), numpy.ones(1))],
            (0, 9),
        ),
    }


def _assert_on_device_and_equal(actual, expected, device):
    if isinstance(expected, tuple):
        assert type(actual) is tuple
        for a, e in zip(actual, expected, strict=True):
            _assert_on_device_and_equal(a, e, device)
    elif isinstance(expected, dict):
        assert type(actual) is dict
        assert actual.keys() == expected.keys()
        for key in expected:
            _assert_on_device_and_equal(actual[key], expected[key], device)
    else:
        assert backend.get_device_from_array(actual) == device
        host = backend.to_cpu(actual)
        assert host.dtype == expected.dtype and host.shape == expected.shape
        numpy.testing.assert_array_equal(host, expected)


def _numbers_as_numpy(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_numbers_as_numpy(v) for v in x)
    if isinstance(x, dict):
        return {k: _numbers_as_numpy(v) for k, v in x.items()}
    return x if isinstance(x, numpy.ndarray) else numpy.asarray(x)[()]


@pytest.mark.parametrize("device_spec", DEVICES)
@pytest.mark.parametrize("kind", sorted(_batches(numpy.random.RandomState(0))))
def test_concat_examples_to_device(kind, device_spec):
    device = get_test_device(device_spec)
    batch, padding = _batches(numpy.random.RandomState(0))[kind]
    expected = concat_examples(batch, padding=padding)
    _assert_on_device_and_equal(concat_examples(batch, device, padding), expected, device)
    _assert_on_device_and_equal(concat_examples(batch, device_spec, padding), expected, device)
    # Device.send takes arrays and NumPy scalars only (a Python int raises on a GPU, as
    # in Chainer), so the examples' plain numbers become NumPy scalars first.
    on_device = to_device(device, _numbers_as_numpy(batch))
    _assert_on_device_and_equal(concat_examples(on_device, padding=padding), expected, device)
    _assert_on_device_and_equal(to_device(device_spec, expected), expected, device)


def _async_batches(step):
    """Batches of tuples, the last one smaller, so that buffers are both reused and replaced."""
    size = 5 if step < 4 else 3
    return [(numpy.full((2, 3), step * 10 + i, numpy.float32), step + i) for i in range(size)]


@pytest.mark.parametrize("device_spec", DEVICES)
@pytest.mark.parametrize("with_compute_stream", [False, True])
def test_concat_with_async_transfer(with_compute_stream, device_spec):
    device = get_test_device(device_spec)
    gpu = device.xp is not numpy
    compute_stream = (
        device.xp.cuda.Stream(non_blocking=True) if gpu and with_compute_stream else None
    )
    convert = ConcatWithAsyncTransfer(compute_stream=compute_stream)
    results = []
    for step in range(5):
        batch = _async_batches(step)
        x, t = convert(batch, device)
        if compute_stream is not None:
            compute_stream.synchronize()
        expected_x, expected_t = concat_examples(batch)
        _assert_on_device_and_equal((x, t), (expected_x, expected_t), device)
        results.append((x, t))
    if gpu:
        pointers = [[a.data.ptr for a in result] for result in results]
        # Two buffers per field, in turn: a result shares memory with the one two calls before.
        assert pointers[2] == pointers[0] and pointers[3] == pointers[1]
        assert pointers[1][0] != pointers[0][0] and pointers[1][1] != pointers[0][1]


@pytest.mark.parametrize("device_spec", DEVICES)
def test_concat_with_async_transfer_dicts_and_padding(device_spec):
    device = get_test_device(device_spec)
    convert = ConcatWithAsyncTransfer()
    for step in range(3):
        batch = [{"x": numpy.arange(i + 1 + step, dtype=numpy.float64), "t": i} for i in range(3)]
        expected = concat_examples(batch, padding={"x": -1, "t": 0})
        result = convert(batch, device, padding={"x": -1, "t": 0})
        _assert_on_device_and_equal(result, expected, device)


def _gpu_unusable_reason():
    if importlib.util.find_spec("dbr.gpu") is None:
        return None
    import dbr.gpu

    return dbr.gpu.unavailable_reason


def test_async_transfer_without_a_usable_gpu_names_what_is_missing():
    reason = _gpu_unusable_reason()
    if reason is None:
        pytest.skip("dbr.gpu is not installed, or a GPU is usable")
    with pytest.raises(RuntimeError, match=r"^ConcatWithAsyncTransfer: .*CUDA GPU through CuPy"):
        ConcatWithAsyncTransfer()([numpy.ones(2)], "@cupy:0")
    with pytest.raises(RuntimeError, match=r"device '@cupy:0' needs a CUDA GPU through CuPy"):
        concat_examples([numpy.ones(2)], "@cupy:0")


def _run_python(code):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_without_dbr_gpu_a_gpu_device_names_the_package():
    out = _run_python(
        """
        import sys
        sys.modules["dbr.gpu"] = None  # as if dbr-gpu were not installed
        import numpy
        from dbr.datasets.convert import ConcatWithAsyncTransfer, concat_examples
        for convert in (ConcatWithAsyncTransfer(), concat_examples):
            try:
                convert([numpy.ones(2)], "@cupy:0")
            except RuntimeError as e:
                print(e)
        """
    )
    lines = out.splitlines()
    assert len(lines) == 2, out
    assert lines[0].startswith("ConcatWithAsyncTransfer: device '@cupy:0' needs the dbr.gpu")
    assert lines[1].startswith("device '@cupy:0' needs the dbr.gpu package")
    assert all("pip install 'dbr-gpu[cuda12]'" in line for line in lines)


def test_cpu_path_imports_neither_dbr_gpu_nor_cupy():
    out = _run_python(
        """
        import sys
        import numpy
        from dbr.datasets.convert import (
            ConcatWithAsyncTransfer, call_converter, concat_examples, to_device,
        )
        batch = [(numpy.ones(2) * i, i) for i in range(3)]
        concat_examples(batch)
        concat_examples(batch, "@numpy", padding=0)
        concat_examples(batch, -1)
        call_converter(concat_examples, batch, "@numpy")
        convert = ConcatWithAsyncTransfer()
        convert(batch, "@numpy")
        convert(batch, "@numpy")
        to_device("@numpy", batch)
        print("dbr.gpu" in sys.modules, "cupy" in sys.modules)
        """
    )
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize("device_spec", DEVICES)
def test_to_device_of_a_python_number(device_spec):
    device = get_test_device(device_spec)
    if device.xp is numpy:
        assert to_device(device, {"t": 3})["t"] == 3
    else:
        with pytest.raises(TypeError, match="@cupy:0: can send only NumPy or CuPy arrays.*int"):
            to_device(device, {"t": 3})
