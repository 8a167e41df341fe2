import io
import json
import math
import threading

import numpy
import pytest

from dbr.core import Variable, using_config
from dbr.core.reporter import (
    DictSummary,
    Reporter,
    Summary,
    get_current_reporter,
    report,
    report_scope,
)
from dbr.core.serializers import (
    DeserializationError,
    DictionarySerializer,
    NpzDeserializer,
    load_npz,
    save_npz,
)


class FakeChain:
    """A Chain-like object: namedlinks(skipself=True) yields ('/l1', l1), ('/l1/sub', sub)."""

    def __init__(self):
        self.l1 = object()
        self.sub = object()

    def namedlinks(self, skipself=False):
        if not skipself:
            yield "/", self
        yield "/l1", self.l1
        yield "/l1/sub", self.sub


class TestReporter:
    def test_report_without_observer_uses_the_keys(self):
        reporter = Reporter()
        reporter.report({"x": 1, "y": 2.5})
        assert reporter.observation == {"x": 1, "y": 2.5}

    def test_observer_name_prefixes_the_keys(self):
        reporter = Reporter()
        model = object()
        reporter.add_observer("main", model)
        reporter.report({"loss": 0.5, "accuracy": 1.0}, model)
        assert reporter.observation == {"main/loss": 0.5, "main/accuracy": 1.0}

    def test_add_observers_with_a_chain(self):
        reporter = Reporter()
        chain = FakeChain()
        reporter.add_observer("main", chain)
        reporter.add_observers("main", chain.namedlinks(skipself=True))
        reporter.report({"a": 1}, chain)
        reporter.report({"b": 2}, chain.l1)
        reporter.report({"c": 3}, chain.sub)
        assert reporter.observation == {"main/a": 1, "main/l1/b": 2, "main/l1/sub/c": 3}

    def test_observers_are_told_apart_by_identity(self):
        class AlwaysEqual:
            def __eq__(self, other):
                return True

            __hash__ = object.__hash__

        a, b = AlwaysEqual(), AlwaysEqual()
        reporter = Reporter()
        reporter.add_observer("a", a)
        reporter.add_observer("b", b)
        reporter.report({"x": 1}, b)
        assert reporter.observation == {"b/x": 1}

    def test_unregistered_observer(self):
        reporter = Reporter()
        with pytest.raises(
            KeyError, match="Reporter.report: the observer object at .* is not registered"
        ):
            reporter.report({"x": 1}, object())

    def test_scope_swaps_the_observation_and_makes_it_current(self):
        reporter = Reporter()
        outer = reporter.observation
        observation = {}
        with reporter.scope(observation):
            assert get_current_reporter() is reporter
            report({"x": 1})
        assert observation == {"x": 1}
        assert reporter.observation is outer and outer == {}
        with pytest.raises(IndexError):
            get_current_reporter()

    def test_scope_restores_after_an_exception(self):
        reporter = Reporter()
        outer = reporter.observation
        with pytest.raises(RuntimeError), reporter.scope({}):
            raise RuntimeError
        assert reporter.observation is outer
        with pytest.raises(IndexError):
            get_current_reporter()

    def test_with_statement_stacks_reporters(self):
        first, second = Reporter(), Reporter()
        with first as entered:
            assert entered is first
            with second:
                assert get_current_reporter() is second
                report({"x": 1})
            assert get_current_reporter() is first
            report({"y": 2})
        assert second.observation == {"x": 1}
        assert first.observation == {"y": 2}


class TestModuleFunctions:
    def test_report_without_a_reporter_does_nothing(self):
        report({"x": 1})
        report({"x": 1}, object())

    def test_get_current_reporter_without_one(self):
        with pytest.raises(IndexError, match="get_current_reporter: no reporter is current"):
            get_current_reporter()

    def test_report_scope(self):
        reporter = Reporter()
        with reporter:
            report({"a": 1})
            observation = {}
            with report_scope(observation):
                report({"b": 2})
            report({"c": 3})
            with pytest.raises(RuntimeError), report_scope({}):
                raise RuntimeError
            report({"d": 4})
        assert observation == {"b": 2}
        assert reporter.observation == {"a": 1, "c": 3, "d": 4}

    def test_report_scope_without_a_reporter(self):
        with pytest.raises(IndexError), report_scope({}):
            pass

    def test_reporters_are_per_thread(self):
        seen = []

        def other_thread():
            try:
                get_current_reporter()
                seen.append("found")
            except IndexError:
                seen.append("none")
            report({"from_thread": 1})

        reporter = Reporter()
        with reporter:
            thread = threading.Thread(target=other_thread)
            thread.start()
            thread.join()
            assert get_current_reporter() is reporter
        assert seen == ["none"]
        assert reporter.observation == {}


class TestVariablesAndGraph:
    def make(self):
        x = Variable(numpy.array([1.0, 2.0], numpy.float32))
        return x, (x * 2).reshape(2)

    def test_reported_variable_is_cut_from_the_graph(self):
        x, y = self.make()
        creator = y.creator
        observation = {}
        with Reporter().scope(observation):
            report({"y": y})
        stored = observation["y"]
        assert isinstance(stored, Variable) and stored is not y
        assert stored.creator is None
        assert stored.array is y.array
        assert y.creator is creator
        y.grad = numpy.ones(2, numpy.float32)
        y.backward()
        numpy.testing.assert_array_equal(x.grad, [2, 2])

    def test_keep_graph_on_report(self):
        x, y = self.make()
        observation = {}
        with using_config("keep_graph_on_report", True), Reporter().scope(observation):
            report({"y": y})
        assert observation["y"] is y
        assert observation["y"].creator is not None

    def test_non_variables_are_stored_as_is(self):
        array = numpy.zeros(3)
        observation = {}
        with Reporter().scope(observation):
            report({"a": array, "s": "text"})
        assert observation["a"] is array and observation["s"] == "text"


class TestSummary:
    def test_mean_and_std(self):
        values = [1.0, 2.0, 4.0, 7.0]
        s = Summary()
        for v in values:
            s.add(v)
        assert s.compute_mean() == pytest.approx(3.5)
        mean, std = s.make_statistics()
        assert mean == pytest.approx(3.5)
        assert std == pytest.approx(float(numpy.std(values)))

    def test_weights(self):
        s = Summary()
        s.add(1.0, weight=3)
        s.add(5.0, weight=1)
        assert s.compute_mean() == pytest.approx(2.0)
        assert s.make_statistics()[1] == pytest.approx(math.sqrt(3.0))

    def test_accepts_numpy_scalars_0d_size1_arrays_and_variables(self):
        s = Summary()
        s.add(numpy.float32(1.0))
        s.add(numpy.array(2, dtype=numpy.int32))
        s.add(numpy.array([3.0]))
        s.add(Variable(numpy.array(6.0, numpy.float16)), weight=numpy.array(2))
        assert s.compute_mean() == pytest.approx((1 + 2 + 3 + 12) / 5)

    def test_float32_values_are_summed_in_float64(self):
        s = Summary()
        for _ in range(10):
            s.add(numpy.float32(0.1))
        assert isinstance(s.compute_mean(), float)
        assert s.compute_mean() == pytest.approx(float(numpy.float32(0.1)), rel=1e-15)

    def test_rounding_never_gives_a_nan_std(self):
        s = Summary()
        for _ in range(3):
            s.add(0.1)
        assert s.make_statistics()[1] == 0.0

    def test_bad_values(self):
        with pytest.raises(ValueError, match=r"Summary.add: value must be a scalar, .*\(2,\)"):
            Summary().add(numpy.zeros(2))
        with pytest.raises(TypeError, match="Summary.add: weight must be a number"):
            Summary().add(1.0, weight="heavy")

    def test_empty_mean(self):
        with pytest.raises(ZeroDivisionError, match="Summary.compute_mean: no value"):
            Summary().compute_mean()

    def test_serialize_keys(self):
        s = Summary()
        s.add(2.0)
        s.add(4.0)
        d = DictionarySerializer()
        s.serialize(d)
        assert {k: v[()] for k, v in d.target.items()} == {"_x": 6.0, "_x2": 20.0, "_n": 2}
        assert d.target["_n"].dtype == numpy.int64

    @pytest.mark.parametrize("weight", [1, 0.5, 0.25])
    def test_serialize_round_trip(self, weight):
        s = Summary()
        s.add(2.0, weight=weight)
        s.add(4.0, weight=weight)
        d = DictionarySerializer()
        s.serialize(d)
        loaded = Summary()
        loaded.serialize(NpzDeserializer(d.target))
        assert loaded.make_statistics() == s.make_statistics()
        assert loaded._n == s._n

    def test_loaded_integral_count_stays_an_int(self):
        # Chainer loads _n into an int and refuses a float64 file, so an integral count is
        # kept as an int whether it was stored as int64 or float64.
        for stored in (numpy.asarray(3), numpy.asarray(3.0)):
            loaded = Summary()
            loaded.serialize(
                NpzDeserializer(
                    {"_x": numpy.asarray(1.0), "_x2": numpy.asarray(1.0), "_n": stored}
                )
            )
            assert type(loaded._n) is int and loaded._n == 3
            d = DictionarySerializer()
            loaded.serialize(d)
            assert d.target["_n"].dtype == numpy.int64


class TestDictSummary:
    def test_scalar_entries_and_weights(self):
        d = DictSummary()
        d.add({"a": 1.0, "b": Variable(numpy.array(2.0, numpy.float32)), "c": numpy.array([3])})
        d.add({"a": (3.0, 3), "b": (numpy.float64(4.0), Variable(numpy.array(1.0)))})
        mean = d.compute_mean()
        assert mean == pytest.approx({"a": 2.5, "b": 3.0, "c": 3.0})

    def test_other_entries_are_ignored(self):
        d = DictSummary()
        d.add({"s": "text", "n": None, "v": numpy.zeros(3), "l": [1.0], "x": 1.0})
        assert list(d.compute_mean()) == ["x"]

    def test_non_scalar_weight(self):
        with pytest.raises(
            ValueError, match="DictSummary.add: the weight of 'a' must be a scalar"
        ):
            DictSummary().add({"a": (1.0, numpy.ones(2))})

    def test_make_statistics_names(self):
        d = DictSummary()
        d.add({"loss": 1.0})
        d.add({"loss": 3.0})
        stats = d.make_statistics()
        assert stats == pytest.approx({"loss": 2.0, "loss.std": 1.0})

    def filled(self):
        d = DictSummary()
        d.add({"main/loss": 1.0, "main/accuracy": 0.5})
        d.add({"main/loss": 3.0, "main/accuracy": 1.0})
        return d

    def test_serialize_keys_follow_chainer(self):
        s = DictionarySerializer()
        self.filled().serialize(s)
        assert set(s.target) == {"_names"} | {
            f"_summaries/{i}/{k}" for i in (0, 1) for k in ("_x", "_x2", "_n")
        }
        assert json.loads(str(s.target["_names"][()])) == ["main/loss", "main/accuracy"]
        assert s.target["_summaries/0/_x"][()] == 4.0

    def test_round_trip_through_a_strict_npz_load(self):
        buf = io.BytesIO()
        save_npz(buf, self.filled())
        buf.seek(0)
        loaded = DictSummary()
        loaded.add({"stale": 1.0})
        load_npz(buf, loaded)
        assert loaded.make_statistics() == self.filled().make_statistics()

    def test_failed_load_leaves_it_untouched(self):
        buf = io.BytesIO()
        save_npz(
            buf,
            {
                "_names": json.dumps(["a", "b"]),
                "_summaries/0/_x": 1.0,
                "_summaries/0/_x2": 1.0,
                "_summaries/0/_n": 1,
            },
        )
        buf.seek(0)
        loaded = DictSummary()
        loaded.add({"kept": 5.0})
        with pytest.raises(DeserializationError) as info:
            load_npz(buf, loaded)
        assert info.value.missing == [f"_summaries/1/{k}" for k in ("_x", "_x2", "_n")]
        assert loaded.compute_mean() == {"kept": 5.0}

    def test_non_strict_load_without_names_keeps_the_summaries(self):
        loaded = DictSummary()
        loaded.add({"kept": 5.0})
        NpzDeserializer({}, strict=False).load(loaded)
        assert loaded.compute_mean() == {"kept": 5.0}
