import io
import threading
import time
import types

import numpy
import pytest

from dbr.core import FunctionNode, Variable, backend, ops
from dbr.core.configuration import global_config
from dbr.core.function_hook import FunctionHook, get_function_hooks
from dbr.core.function_hooks import PrintHook, TimerHook


def f32(*values):
    return numpy.array(values, dtype=numpy.float32)


class RecordingHook(FunctionHook):
    name = "RecordingHook"

    def __init__(self, name=None):
        if name is not None:
            self.name = name
        self.events = []

    def added(self, function=None):
        self.events.append(("added", function))

    def deleted(self, function=None):
        self.events.append(("deleted", function))

    def forward_preprocess(self, function, in_data):
        self.events.append(("forward_preprocess", type(function).__name__, in_data))

    def forward_postprocess(self, function, in_data):
        self.events.append(("forward_postprocess", type(function).__name__, in_data))

    def backward_preprocess(self, function, in_data, out_grad):
        self.events.append(("backward_preprocess", type(function).__name__, in_data, out_grad))

    def backward_postprocess(self, function, in_data, out_grad):
        self.events.append(("backward_postprocess", type(function).__name__, in_data, out_grad))

    def kinds(self):
        return [(e[0], e[1]) for e in self.events]


# -- FunctionHook ---------------------------------------------------------------


def test_base_hook_callbacks_are_noops_and_name_is_chainers():
    hook = FunctionHook()
    assert FunctionHook.name == "FunctionHook"
    x = f32(1.0)
    assert hook.added() is None
    assert hook.deleted(None) is None
    assert hook.forward_preprocess(None, (x,)) is None
    assert hook.forward_postprocess(None, (x,)) is None
    assert hook.backward_preprocess(None, (x,), (x,)) is None
    assert hook.backward_postprocess(None, (x,), (x,)) is None
    with hook:
        y = ops.sum(Variable(f32(1.0, 2.0)) * 2.0)
        y.backward()
    assert y.array == 6.0


def test_with_registers_in_this_thread_and_calls_added_and_deleted():
    hook = RecordingHook()
    assert "RecordingHook" not in get_function_hooks()
    with hook as entered:
        assert entered is hook
        assert get_function_hooks()["RecordingHook"] is hook
        assert hook.events == [("added", None)]
    assert "RecordingHook" not in get_function_hooks()
    assert hook.events == [("added", None), ("deleted", None)]


def test_get_function_hooks_is_read_only():
    with RecordingHook():
        hooks = get_function_hooks()
        with pytest.raises(TypeError):
            hooks["other"] = FunctionHook()
        with pytest.raises(TypeError):
            del hooks["RecordingHook"]
    assert "RecordingHook" not in get_function_hooks()


def test_a_second_hook_of_the_same_name_is_refused():
    first, second = RecordingHook(), RecordingHook()
    with first:
        with pytest.raises(KeyError, match="RecordingHook"), second:
            pass
        assert get_function_hooks()["RecordingHook"] is first
        assert second.events == []
    assert "RecordingHook" not in get_function_hooks()


def test_the_hook_is_unregistered_when_the_block_raises():
    hook = RecordingHook()
    with pytest.raises(ZeroDivisionError), hook:
        1 / 0  # noqa: B018
    assert "RecordingHook" not in get_function_hooks()
    assert hook.events[-1] == ("deleted", None)


def test_nested_hooks_with_different_names_both_run_and_unwind():
    outer, inner = RecordingHook("outer"), RecordingHook("inner")
    with outer:
        with inner:
            assert set(get_function_hooks()) >= {"outer", "inner"}
            ops.neg(Variable(f32(1.0)))
        ops.neg(Variable(f32(1.0)))
        assert "inner" not in get_function_hooks()
    forward = ("forward_preprocess", "Neg")
    assert outer.kinds().count(forward) == 2
    assert inner.kinds().count(forward) == 1


def test_forward_callbacks_get_the_function_and_its_input_arrays():
    hook = RecordingHook()
    a, b = f32(1.0, 2.0), f32(3.0, 4.0)
    with hook:
        ops.mul(Variable(a), Variable(b))
    pre, post = hook.events[1], hook.events[2]
    assert pre[:2] == ("forward_preprocess", "Mul")
    assert post[:2] == ("forward_postprocess", "Mul")
    assert pre[2][0] is a and pre[2][1] is b
    assert post[2][0] is a and post[2][1] is b


def test_backward_callbacks_get_retained_inputs_and_output_gradients():
    hook = RecordingHook()
    a = Variable(f32(1.0, 2.0))
    b = Variable(f32(3.0, 4.0))
    y = ops.mul(a, b) * 5.0
    y.grad = f32(1.0, 10.0)
    with hook:
        y.backward()
    backward_events = [e for e in hook.events if e[0].startswith("backward")]
    assert [e[:2] for e in backward_events] == [
        ("backward_preprocess", "MulConstant"),
        ("backward_postprocess", "MulConstant"),
        ("backward_preprocess", "Mul"),
        ("backward_postprocess", "Mul"),
    ]
    # MulConstant retains nothing: its input is reported as None.
    assert backward_events[0][2] == (None,)
    numpy.testing.assert_array_equal(backward_events[0][3][0], f32(1.0, 10.0))
    in_data, out_grad = backward_events[2][2], backward_events[2][3]
    assert in_data[0] is a.array and in_data[1] is b.array
    numpy.testing.assert_array_equal(out_grad[0], f32(5.0, 50.0))
    # Mul's backward runs a MulGrad forward, which the hook sees nested in its backward.
    kinds = hook.kinds()
    start, stop = (
        kinds.index(("backward_preprocess", "Mul")),
        kinds.index(("backward_postprocess", "Mul")),
    )
    assert ("forward_preprocess", "MulGrad") in kinds[start:stop]


def test_hooks_registered_in_one_thread_do_not_run_in_another():
    hook = RecordingHook()
    seen_in_thread = []

    def work():
        seen_in_thread.append(dict(get_function_hooks()))
        ops.neg(Variable(f32(1.0)))

    with hook:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    assert seen_in_thread == [{}]
    assert hook.kinds() == [("added", None), ("deleted", None)]


def test_after_exit_the_thread_sees_later_global_hooks_again():
    hook = RecordingHook("global")
    with RecordingHook("local"):
        pass
    inherited = global_config._function_hooks
    global_config._function_hooks = {"global": hook}
    try:
        assert get_function_hooks() == {"global": hook}
        ops.neg(Variable(f32(1.0)))
    finally:
        global_config._function_hooks = inherited
    assert ("forward_preprocess", "Neg") in hook.kinds()
    assert dict(get_function_hooks()) == {}


def test_local_hook_runs_only_on_its_node():
    hook = RecordingHook()
    x = Variable(f32(1.0, 2.0))
    node = ops.arithmetic.Neg()
    node.add_hook(hook)
    assert hook.events == [("added", node)]
    y = node.apply((x,))[0]
    ops.neg(x)
    y.grad = f32(1.0, 1.0)
    y.backward()
    assert [k for k in hook.kinds() if k[0] != "added"] == [
        ("forward_preprocess", "Neg"),
        ("forward_postprocess", "Neg"),
        ("backward_preprocess", "Neg"),
        ("backward_postprocess", "Neg"),
    ]
    node.delete_hook("RecordingHook")
    assert hook.events[-1] == ("deleted", node)


# -- TimerHook ------------------------------------------------------------------


class FakeClock:
    """A perf_counter that only moves when a test advances it."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(time, "perf_counter", fake)
    return fake


class Sleep(FunctionNode):
    """Advances the fake clock by ``before``, runs ``inner`` nodes, then by ``after``."""

    def __init__(self, clock, before, after=0.0, inner=(), label="Sleep"):
        self.clock = clock
        self.before = before
        self.after = after
        self.inner = inner
        self._label = label

    @property
    def label(self):
        return self._label

    def forward(self, inputs):
        self.clock.now += self.before
        for node in self.inner:
            node.apply(inputs)
        self.clock.now += self.after
        return (inputs[0].copy(),)

    def backward(self, indexes, grad_outputs):
        self.clock.now += 100.0
        return grad_outputs


class Failing(FunctionNode):
    def __init__(self, clock):
        self.clock = clock

    def forward(self, inputs):
        self.clock.now += 1000.0
        raise ArithmeticError("forward failed")


def test_timer_records_label_and_seconds_of_each_forward_and_backward(clock):
    x = Variable(f32(1.0))
    with TimerHook() as hook:
        y = Sleep(clock, 2.0, label="A").apply((x,))[0]
        z = Sleep(clock, 0.5, label="B").apply((y,))[0]
        z.grad = f32(1.0)
        z.backward()
    assert hook.call_history == [("A", 2.0), ("B", 0.5), ("B", 100.0), ("A", 100.0)]
    assert hook.total_time() == 202.5


def test_timer_subtracts_nested_calls_from_the_enclosing_one(clock):
    inner = Sleep(clock, 2.0, label="Inner")
    outer = Sleep(clock, 1.0, after=4.0, inner=(inner,), label="Outer")
    with TimerHook() as hook:
        outer.apply((Variable(f32(1.0)),))
    assert hook.call_history == [("Inner", 2.0), ("Outer", 5.0)]
    assert hook.total_time() == 7.0
    assert hook.summary() == {
        "Inner": {"elapsed_time": 2.0, "occurrence": 1},
        "Outer": {"elapsed_time": 5.0, "occurrence": 1},
    }


def test_timer_drops_the_frame_of_a_forward_that_raised(clock):
    x = Variable(f32(1.0))
    with TimerHook() as hook:
        with pytest.raises(ArithmeticError):
            Failing(clock).apply((x,))
        Sleep(clock, 3.0).apply((x,))
    assert hook.call_history == [("Sleep", 3.0)]
    assert hook.total_time() == 3.0


class Catching(FunctionNode):
    """Runs a failing node inside its forward, catches the error, then runs ``after``."""

    def __init__(self, clock, after):
        self.clock = clock
        self.after = after

    def forward(self, inputs):
        with pytest.raises(ArithmeticError):
            Failing(self.clock).apply(inputs)
        self.after.apply(inputs)
        return (inputs[0].copy(),)


def test_timer_keeps_nesting_right_after_a_caught_nested_failure(clock):
    with TimerHook() as hook:
        Catching(clock, Sleep(clock, 2.0)).apply((Variable(f32(1.0)),))
    assert hook.call_history == [("Sleep", 2.0), ("Catching", 1000.0)]
    assert hook.total_time() == 1002.0


def test_timer_summary_sums_time_and_counts_calls_in_first_call_order(clock):
    x = Variable(f32(1.0))
    with TimerHook() as hook:
        Sleep(clock, 1.0, label="B").apply((x,))
        Sleep(clock, 2.0, label="A").apply((x,))
        Sleep(clock, 3.0, label="B").apply((x,))
    summary = hook.summary()
    assert list(summary) == ["B", "A"]
    assert summary["B"] == {"elapsed_time": 4.0, "occurrence": 2}
    assert summary["A"] == {"elapsed_time": 2.0, "occurrence": 1}


def test_timer_print_report_auto_units_and_alignment(clock):
    x = Variable(f32(1.0))
    with TimerHook() as hook:
        Sleep(clock, 1.5, label="LinearFunction").apply((x,))
        Sleep(clock, 0.25, label="ReLU").apply((x,))
        Sleep(clock, 0.25, label="ReLU").apply((x,))
        Sleep(clock, 2.5e-6, label="Tiny").apply((x,))
        Sleep(clock, 0.0, label="Zero").apply((x,))
    out = io.StringIO()
    hook.print_report(file=out)
    assert out.getvalue().splitlines() == [
        "  FunctionName  ElapsedTime  Occurrence",
        "LinearFunction      1.50sec           1",
        "          ReLU     500.00ms           2",
        "          Tiny       2.50us           1",
        "          Zero       0.00ns           1",
    ]


def test_timer_print_report_fixed_unit_and_stdout_default(clock, capsys):
    with TimerHook() as hook:
        Sleep(clock, 1.5).apply((Variable(f32(1.0)),))
    hook.print_report(unit="ms")
    assert capsys.readouterr().out.splitlines() == [
        "FunctionName  ElapsedTime  Occurrence",
        "       Sleep    1500.00ms           1",
    ]


def test_timer_print_report_rejects_an_unknown_unit():
    with pytest.raises(ValueError, match=r"TimerHook\.print_report.*unit.*'min'"):
        TimerHook().print_report(unit="min")


def test_timer_measures_real_time_on_numpy():
    x = Variable(numpy.ones((200, 200), numpy.float32))
    with TimerHook() as hook:
        y = ops.sum(ops.matmul(x, x))
        y.backward()
    labels = [label for label, _ in hook.call_history]
    # Entries appear as calls finish: Sum's backward after the SumGrad forward it runs,
    # MatMul's backward after its two MatMul forwards.
    assert labels == ["MatMul", "Sum", "SumGrad", "Sum"] + ["MatMul"] * 3
    assert all(isinstance(s, float) and s >= 0.0 for _, s in hook.call_history)
    assert hook.total_time() > 0.0
    assert hook.total_time() == pytest.approx(sum(s for _, s in hook.call_history))


class FakeGpuArray:
    """An array type registered with a fake module whose CUDA events tick a counter."""

    def __init__(self):
        self.shape = ()
        self.dtype = numpy.dtype(numpy.float32)


def _fake_cuda_module(log):
    ticks = [0.0]

    class Event:
        def record(self):
            ticks[0] += 250.0  # milliseconds
            self.time = ticks[0]
            log.append("record")

        def synchronize(self):
            log.append("synchronize")

    def get_elapsed_time(start, stop):
        log.append("elapsed")
        return stop.time - start.time

    return types.SimpleNamespace(
        __name__="fakecupy",
        cuda=types.SimpleNamespace(Event=Event, get_elapsed_time=get_elapsed_time),
    )


def test_timer_uses_cuda_events_for_arrays_of_a_gpu_module(monkeypatch):
    log = []
    xp = _fake_cuda_module(log)
    monkeypatch.setitem(backend._array_types, FakeGpuArray, (xp, lambda a: backend.cpu))
    node = Sleep(None, 0.0, label="GpuOp")
    hook = TimerHook()
    hook.forward_preprocess(node, (FakeGpuArray(),))
    hook.forward_postprocess(node, (FakeGpuArray(),))
    hook.backward_preprocess(node, (None,), (FakeGpuArray(),))
    hook.backward_postprocess(node, (None,), (FakeGpuArray(),))
    assert log == ["record", "record", "synchronize", "elapsed"] * 2
    assert hook.call_history == [("GpuOp", 0.25), ("GpuOp", 0.25)]
    assert hook.total_time() == 0.5


# -- PrintHook ------------------------------------------------------------------


def stats(array):
    return f"- statistics: mean={array.mean():.8f}, std={array.std():.8f}"


def test_print_hook_forward_prints_label_and_each_input():
    out = io.StringIO()
    a = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    b = numpy.full((2, 3), 2.0, numpy.float32)
    with PrintHook(file=out):
        ops.mul(Variable(a), Variable(b))
    lines = out.getvalue().splitlines()
    assert lines[0] == "function\t_ * _"
    assert lines[1] == "input data"
    assert lines.count("- shape: (2, 3)") == 2
    assert lines.count("- dtype: float32") == 2
    assert stats(a) in lines and stats(b) in lines
    assert lines.index(stats(a)) < lines.index(stats(b))
    assert "output gradient" not in lines


def test_print_hook_backward_prints_output_gradients_and_removed_inputs():
    x = Variable(f32(1.0, 2.0, 3.0))
    y = x * 2.0
    y.grad = f32(4.0, 5.0, 6.0)
    out = io.StringIO()
    with PrintHook(file=out):
        y.backward()
    lines = out.getvalue().splitlines()
    assert lines[:3] == ["function\t_ * 2.0", "input data", "(removed)"]
    assert lines[3] == "output gradient"
    assert stats(f32(4.0, 5.0, 6.0)) in lines[4:]
    assert "- shape: (3,)" in lines[4:]


def test_print_hook_end_and_flush_options():
    class Stream(io.StringIO):
        flushes = 0

        def flush(self):
            self.flushes += 1
            super().flush()

    out = Stream()
    with PrintHook(end="|", file=out):
        ops.neg(Variable(f32(1.0)))
        ops.neg(Variable(f32(1.0)))
    assert out.getvalue().startswith("function\t__neg__|input data|<variable")
    assert "\n" in out.getvalue()  # inside the multi-line variable description
    assert not out.getvalue().endswith("\n")
    assert out.flushes == 2

    quiet = Stream()
    with PrintHook(file=quiet, flush=False):
        ops.neg(Variable(f32(1.0)))
    assert quiet.flushes == 0
    assert quiet.getvalue().startswith("function\t__neg__\n")


def test_print_hook_writes_to_the_current_stdout_by_default(capsys):
    with PrintHook():
        ops.neg(Variable(f32(1.0)))
    assert capsys.readouterr().out.startswith("function\t__neg__\ninput data\n")


def test_print_hook_sep_is_deprecated():
    with pytest.warns(DeprecationWarning, match="sep"):
        hook = PrintHook(sep=" ")
    assert hook.sep == " "
    assert PrintHook.name == "PrintHook"
    assert TimerHook.name == "TimerHook"
