"""Tests of VariableStatisticsPlot: the recorded statistics, the PNG output, bad input."""

import os
import sys

import numpy
import pytest

from dbr.core import Chain, Parameter, Variable

matplotlib = pytest.importorskip(
    "matplotlib", reason="VariableStatisticsPlot needs matplotlib (extra 'plot')"
)

from dbr.training.extensions.variable_statistics_plot import (  # noqa: E402
    Reservoir,
    Statistician,
    VariableStatisticsPlot,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PERCENTILES = (0, 0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87, 100)


class _Model(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(numpy.arange(12, dtype=numpy.float32).reshape(3, 4))
            self.b = Parameter(numpy.array([-1.0, 5.0], dtype=numpy.float32))
            self.lazy = Parameter()


def _every(n):
    return lambda trainer: trainer.updater.iteration % n == 0


def _check_png(path):
    content = path.read_bytes()
    assert content[:8] == PNG_SIGNATURE
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 50 and image.shape[1] > 50
    return content


def _reference_row(values, percentiles=PERCENTILES):
    values = numpy.asarray(values, dtype=numpy.float64)
    return numpy.concatenate(
        [[values.mean(), values.std()], numpy.percentile(values, percentiles)]
    )


def test_defaults_and_signature():
    ext = VariableStatisticsPlot(Variable(numpy.zeros(3, dtype=numpy.float32)))
    assert ext.trigger == (1, "iteration")
    assert ext.default_name == "VariableStatisticsPlot"
    assert VariableStatisticsPlot.available() is True


def test_statistics_of_data_and_grads_of_a_link(tmp_path, output_trainer):
    model = _Model()
    model.cleargrads()  # as training does: a never-cleared lazy parameter has no valid grad
    ext = VariableStatisticsPlot(model, trigger=_every(2))
    trainer = output_trainer(tmp_path)
    rng = numpy.random.default_rng(0)
    expected = []
    for it in (1, 2, 3):
        trainer.updater.iteration = it
        model.W.grad = rng.standard_normal((3, 4)).astype(numpy.float32)
        model.b.grad = None if it == 1 else rng.standard_normal(2).astype(numpy.float32)
        model.W.array += 1.0
        data = numpy.concatenate([model.W.array.ravel(), model.b.array])
        grads = [model.W.grad.ravel()] + ([] if model.b.grad is None else [model.b.grad])
        expected.append([_reference_row(data), _reference_row(numpy.concatenate(grads))])
        ext(trainer)
    idxs, rows = ext._samples.get_data()
    assert idxs.tolist() == [1, 2, 3]
    numpy.testing.assert_allclose(rows, numpy.array(expected), rtol=1e-5, atol=1e-6)
    _check_png(tmp_path / "statistics.png")
    assert os.listdir(tmp_path) == ["statistics.png"]


def test_missing_grads_are_nan_and_options_select_columns(tmp_path, output_trainer):
    v = Variable(numpy.array([1.0, 2.0, 3.0, 10.0], dtype=numpy.float32))
    ext = VariableStatisticsPlot(
        [v], plot_mean=False, percentile_sigmas=50, trigger=_every(1), filename="s.png"
    )
    trainer = output_trainer(tmp_path)
    trainer.updater.iteration = 1
    ext(trainer)
    _, rows = ext._samples.get_data()
    assert rows.shape == (1, 2, 2)
    numpy.testing.assert_allclose(rows[0, 0], [numpy.std([1, 2, 3, 10]), 2.5], rtol=1e-6)
    assert numpy.isnan(rows[0, 1]).all()
    _check_png(tmp_path / "s.png")


def test_the_image_changes_with_the_data(tmp_path, output_trainer):
    contents = []
    for run, scale in enumerate((1.0, 1.0, 3.0)):
        v = Variable(numpy.linspace(-1, 1, 20).astype(numpy.float32))
        ext = VariableStatisticsPlot(v, report_grad=False, trigger=_every(3))
        trainer = output_trainer(tmp_path / str(run))
        for it in (1, 2, 3):
            trainer.updater.iteration = it
            v.array *= scale * it
            ext(trainer)
        contents.append(_check_png(tmp_path / str(run) / "statistics.png"))
    assert contents[0] == contents[1]
    assert contents[0] != contents[2]


def test_reservoir_keeps_at_most_max_sample_size_rows(tmp_path, output_trainer):
    v = Variable(numpy.ones(4, dtype=numpy.float32))
    ext = VariableStatisticsPlot(v, max_sample_size=5, report_grad=False, trigger=None)
    trainer = output_trainer(tmp_path)
    for it in range(1, 51):
        trainer.updater.iteration = it
        v.array[...] = it
        ext(trainer)
    idxs, rows = ext._samples.get_data()
    assert len(idxs) == 5 and len(set(idxs.tolist())) == 5
    assert idxs.tolist() == sorted(idxs.tolist())
    numpy.testing.assert_array_equal(rows[:, 0, 0], idxs.astype(numpy.float32))
    assert os.listdir(tmp_path) == []


def test_without_matplotlib_it_warns_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    expected = r'VariableStatisticsPlot: matplotlib is not installed.*"dbr-training\[plot\]"'
    with pytest.warns(UserWarning, match=expected):
        assert VariableStatisticsPlot.available() is False
    with pytest.warns(UserWarning, match=expected):
        VariableStatisticsPlot(Variable(numpy.zeros(2, dtype=numpy.float32)))


def test_bad_arguments():
    v = Variable(numpy.zeros(2, dtype=numpy.float32))
    with pytest.raises(ValueError, match="VariableStatisticsPlot: expected at least one variable"):
        VariableStatisticsPlot([])
    with pytest.raises(TypeError, match="VariableStatisticsPlot: expected targets to be a Var"):
        VariableStatisticsPlot(numpy.zeros(2))
    with pytest.raises(ValueError, match="VariableStatisticsPlot: nothing to plot"):
        VariableStatisticsPlot(v, plot_mean=False, plot_std=False, percentile_sigmas=())
    with pytest.raises(ValueError, match="VariableStatisticsPlot: nothing to plot"):
        VariableStatisticsPlot(v, report_data=False, report_grad=False)
    with pytest.raises(ValueError, match=r"expected percentile_sigmas in \[0, 100\]"):
        VariableStatisticsPlot(v, percentile_sigmas=(50, 101))
    with pytest.raises(ValueError, match="expected max_sample_size to be an int >= 1, got 0"):
        VariableStatisticsPlot(v, max_sample_size=0)


def test_reservoir_keeps_a_sorted_sample_of_at_most_size_arrays():
    reservoir = Reservoir(size=5, data_shape=(2, 3))
    xs = [numpy.full((2, 3), i, numpy.float32) for i in range(20)]
    for x in xs:
        reservoir.add(x)
    idxs, data = reservoir.get_data()
    assert idxs.shape == (5,) and data.shape == (5, 2, 3)
    assert list(idxs) == sorted(idxs)
    for i, d in zip(idxs, data):
        numpy.testing.assert_array_equal(d, xs[i])


def test_reservoir_keeps_every_array_below_its_size_and_the_given_indices():
    reservoir = Reservoir(size=4, data_shape=(), dtype=numpy.float64)
    reservoir.add(numpy.float64(1.5), idx=10)
    reservoir.add(numpy.float64(2.5), idx=3)
    idxs, data = reservoir.get_data()
    assert list(idxs) == [3, 10] and list(data) == [2.5, 1.5]
    assert data.dtype == numpy.float64


def test_reservoir_refuses_bad_arguments():
    with pytest.raises(ValueError, match="Reservoir: expected size to be a positive int, got 0"):
        Reservoir(size=0, data_shape=(1,))
    with pytest.raises(ValueError, match=r"Reservoir.add: expected x of shape \(2,\), got \(3,\)"):
        Reservoir(size=1, data_shape=(2,)).add(numpy.zeros(3))


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_statistician_mean_std_and_percentiles(dtype):
    x = numpy.random.default_rng(0).uniform(-1, 1, (2, 7, 3)).astype(dtype)
    stats = Statistician(True, True, (0.0, 50.0, 100.0))(x, axis=None)
    assert all(s.dtype == dtype for s in stats.values())
    numpy.testing.assert_allclose(stats["mean"], x.mean(), rtol=1e-6)
    numpy.testing.assert_allclose(stats["std"], x.std(), rtol=1e-6)
    numpy.testing.assert_allclose(stats["percentile"], [x.min(), numpy.median(x), x.max()])
    by_axis = Statistician(False, False, (50.0,))(x, axis=1, dtype=numpy.float64)
    assert set(by_axis) == {"percentile"} and by_axis["percentile"].shape == (1, 2, 3)


def test_statistician_refuses_percentiles_outside_0_100():
    with pytest.raises(
        ValueError, match=r"Statistician: expected percentile_sigmas in \[0, 100\], got \(101,\)"
    ):
        Statistician(True, True, (101,))
