"""The CPU block splitting and thread pool of dbr.functions._cpu, and the functions that use it.

Every result with the pool on (small thresholds, several threads) must equal the
result without it bit for bit: the split only changes which thread computes a row.
"""

import os
import signal
import threading
import time

import numpy
import pytest

import dbr.functions as F
from dbr.core import Variable, grad, using_config
from dbr.core.testing import bad_input_test
from dbr.functions import _cpu, _tuning
from dbr.functions.connection import _im2col


@pytest.fixture
def split_everything(monkeypatch):
    """Thresholds so low that every array in these tests is split into many blocks."""
    monkeypatch.setattr(_tuning, "MIN_PARALLEL_SIZE", 1)
    monkeypatch.setattr(_tuning, "CACHE_BLOCK_SIZE", 7)
    monkeypatch.setattr(_tuning, "WINDOW_PARALLEL_SIZE", 1)


def test_cpu_threads_follows_config_then_omp_num_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert _cpu.cpu_threads() == 3
    with using_config("cpu_threads", 1):
        assert _cpu.cpu_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    assert _cpu.cpu_threads() >= 1


def _cpu_threads_under(value):
    with using_config("cpu_threads", value):
        return _cpu.cpu_threads()


test_bad_input = bad_input_test(
    [
        (
            (value,),
            ValueError,
            f"config.cpu_threads: expected None or a positive int, got {value!r}",
        )
        for value in [0, -2, 1.5, "2", True]
    ],
    function=_cpu_threads_under,
)


def test_blockwise_uses_the_pool_and_covers_every_row_once(split_everything):
    seen = set()

    def body(out, x):
        seen.add(threading.get_ident())
        out += x

    x = numpy.arange(60.0).reshape(20, 3)
    out = numpy.zeros_like(x)
    with using_config("cpu_threads", 3):
        assert _cpu.blockwise(body, out, x) is out
    numpy.testing.assert_array_equal(out, x)
    assert len(seen) > 1


def test_blockwise_runs_small_arrays_in_one_call_on_the_caller():
    calls = []
    x = numpy.ones((4, 4))
    with using_config("cpu_threads", 4):
        _cpu.blockwise(lambda out, a: calls.append((threading.get_ident(), out.shape)), x, x)
    assert calls == [(threading.get_ident(), (4, 4))]


def test_blockwise_switched_off_runs_on_the_caller(split_everything):
    seen = set()
    x = numpy.ones((20, 3))
    with using_config("cpu_threads", 1):
        _cpu.blockwise(lambda out, a: seen.add(threading.get_ident()), x, x)
    assert seen == {threading.get_ident()}


def test_blockwise_raises_what_a_worker_raised(split_everything):
    caller = threading.get_ident()

    def body(out, x):
        if threading.get_ident() != caller:
            raise ArithmeticError("in a worker")

    x = numpy.arange(20.0).reshape(20, 1)
    with using_config("cpu_threads", 2), pytest.raises(ArithmeticError, match="in a worker"):
        _cpu.blockwise(body, x.copy(), x)


def test_blockwise_workers_keep_the_callers_errstate(split_everything):
    x = numpy.full((20, 2), 1e30, numpy.float32)
    out = numpy.empty_like(x)
    with (
        using_config("cpu_threads", 2),
        numpy.errstate(over="raise"),
        pytest.raises(FloatingPointError),
    ):
        _cpu.blockwise(lambda o, a: numpy.multiply(a, a, out=o), out, x)


def _assert_same_split_or_not(run, threads):
    """``run()``'s arrays at ``threads`` threads equal (bits and dtypes) those at one."""
    with using_config("cpu_threads", 1):
        expected = run()
    with using_config("cpu_threads", threads):
        actual = run()
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype
        numpy.testing.assert_array_equal(a, e)


def _forward_backward(f, x, gy=None):
    v = Variable(x)
    y = f(v)
    y.grad = numpy.ones_like(y.array) if gy is None else gy
    y.backward()
    return y.array, v.grad


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh"])
@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
def test_activations_are_the_same_split_or_not(split_everything, name, dtype):
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((33, 5, 3)).astype(dtype)
    gy = rng.standard_normal(x.shape).astype(dtype)
    f = getattr(F, name)
    _assert_same_split_or_not(lambda: _forward_backward(f, x, gy), 3)


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh"])
def test_double_backward_is_the_same_split_or_not(split_everything, name):
    rng = numpy.random.default_rng(1)
    x = rng.standard_normal((17, 4))
    f = getattr(F, name)

    def second_order():
        v = Variable(x)
        (gx,) = grad([F.sum(f(v) ** 2)], [v], enable_double_backprop=True)
        (ggx,) = grad([F.sum(gx * gx)], [v])
        return gx.array, ggx.array

    _assert_same_split_or_not(second_order, 2)


@pytest.mark.parametrize(
    "options",
    [
        {"stride": 1, "pad": 0},
        {"stride": 1, "pad": 2},
        {"stride": 2, "pad": 1},
        {"stride": 1, "pad": 1, "dilate": 2},
    ],
)
def test_convolution_is_the_same_split_or_not(split_everything, options):
    rng = numpy.random.default_rng(2)
    x = rng.standard_normal((6, 4, 9, 8)).astype(numpy.float32)
    W = rng.standard_normal((5, 4, 3, 3)).astype(numpy.float32)
    b = rng.standard_normal(5).astype(numpy.float32)

    def run():
        vx, vw, vb = Variable(x), Variable(W), Variable(b)
        y = F.convolution_2d(vx, vw, vb, **options)
        y.grad = numpy.cos(numpy.arange(y.size, dtype=numpy.float32)).reshape(y.shape)
        y.backward()
        return y.array, vx.grad, vw.grad, vb.grad

    _assert_same_split_or_not(run, 3)


def test_im2col_and_col2im_are_the_same_split_or_not(split_everything):
    x = numpy.random.default_rng(3).standard_normal((5, 2, 7, 6))
    col = _im2col.im2col_nd(x, 3, 2, 1)

    def run():
        return _im2col.im2col_nd(x, 3, 2, 1), _im2col.col2im_nd(col, 2, 1, (7, 6))

    _assert_same_split_or_not(run, 4)


@pytest.mark.parametrize("reduce", ["mean", "no"])
@pytest.mark.parametrize("shape", [(23, 9), (11, 6, 3)])
def test_softmax_cross_entropy_is_the_same_split_or_not(split_everything, reduce, shape):
    rng = numpy.random.default_rng(4)
    x = rng.standard_normal(shape).astype(numpy.float32)
    t = rng.integers(0, shape[1], (shape[0],) + shape[2:]).astype(numpy.int32)

    def run():
        v = Variable(x)
        loss = F.softmax_cross_entropy(v, t, reduce=reduce)
        loss.grad = numpy.ones_like(loss.array)
        loss.backward()
        return loss.array, v.grad

    _assert_same_split_or_not(run, 3)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_gets_a_pool_of_its_own(split_everything):
    x = numpy.arange(40.0).reshape(20, 2)
    with using_config("cpu_threads", 2):
        _cpu.blockwise(lambda o, a: numpy.copyto(o, a), numpy.empty_like(x), x)
        pid = os.fork()
        if pid == 0:
            out = numpy.empty_like(x)
            _cpu.blockwise(lambda o, a: numpy.copyto(o, a), out, x)
            os._exit(0 if numpy.array_equal(out, x) else 1)
    # A child that waits on its parent's (absent) pool threads would hang: give up after 30 s.
    deadline = time.monotonic() + 30
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if done[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung in blockwise")
    assert os.waitstatus_to_exitcode(done[1]) == 0


def test_blockwise_from_threads_with_different_thread_counts(split_everything):
    x = numpy.arange(400.0).reshape(200, 2)
    errors = []

    def worker(threads):
        try:
            with using_config("cpu_threads", threads):
                for _ in range(20):
                    out = _cpu.blockwise(lambda o, a: numpy.copyto(o, a), numpy.empty_like(x), x)
                    numpy.testing.assert_array_equal(out, x)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in (2, 3, 4, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []


def test_a_body_that_splits_again_runs_serially(split_everything):
    x = numpy.arange(40.0).reshape(20, 2)

    def inner(o, a):
        numpy.copyto(o, a)

    def outer(o, a):
        _cpu.blockwise(inner, o, a)

    # Each thread's half is split again; waiting on the pool from its only worker would hang.
    with using_config("cpu_threads", 2):
        out = _cpu.blockwise(outer, numpy.empty_like(x), x, cache_blocks=False)
    numpy.testing.assert_array_equal(out, x)
