import numpy as np
import pytest

from dbr.training.extensions.parameter_statistics import ParameterStatistics

PERCENTILES = (0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87)


def reference_stats(array):
    a = array.ravel().astype(np.float64)
    stats = {
        "mean": a.mean(),
        "std": a.std(),
        "min": a.min(),
        "max": a.max(),
        "zeros": float(np.sum(a == 0)),
    }
    for i, q in enumerate(PERCENTILES):
        stats[f"percentile/{i}"] = np.percentile(a, q)
    return stats


def test_keys_and_values_over_an_interval(tmp_path, make_trainer):
    trainer, model = make_trainer(tmp_path, stop=(4, "iteration"))
    snapshots = []
    trainer.extend(
        lambda t: snapshots.append(
            {
                "W": (model.W.array.copy(), model.W.grad.copy()),
                "b": (model.b.array.copy(), model.b.grad.copy()),
            }
        ),
        name="snap",
        priority=1000,
    )
    trainer.extend(ParameterStatistics(model, prefix="stats", trigger=(2, "iteration")))
    reports = []
    trainer.extend(lambda t: reports.append(dict(t.observation)), name="rec")
    trainer.run()

    assert len(reports) == 4
    assert not any(k.startswith("stats/") for k in reports[0])
    for report_index, window in ((1, snapshots[0:2]), (3, snapshots[2:4])):
        observed = {k: v for k, v in reports[report_index].items() if k.startswith("stats/")}
        expected = {}
        for pname in ("W", "b"):
            for attr_index, attr in enumerate(("data", "grad")):
                per_iter = [reference_stats(s[pname][attr_index]) for s in window]
                for stat in per_iter[0]:
                    key = f"stats/None/{pname}/{attr}/{stat}"
                    expected[key] = np.mean([p[stat] for p in per_iter])
        assert set(observed) == set(expected)
        for key, value in expected.items():
            assert float(observed[key]) == pytest.approx(value, rel=1e-5, abs=1e-7), key


def data_statistics_with_nan_bias(trainer, model, ext):
    """Run ``ext`` for one iteration with ``model.b`` set to NaN first; its ``/data/`` reports."""
    reports = []
    trainer.extend(ext)
    trainer.extend(lambda t: reports.append(dict(t.observation)), name="rec")

    def poison(t):
        model.b.array[...] = np.nan

    trainer.extend(poison, name="poison", priority=1000)
    trainer.run()
    return {k: v for k, v in reports[0].items() if "/data/" in k}


def test_options_custom_statistics_and_nan(tmp_path, make_trainer):
    trainer, model = make_trainer(tmp_path, stop=(1, "iteration"))
    model.name = "model"
    ext = ParameterStatistics(
        [model], statistics={"absmax": lambda x: np.abs(x).max()}, report_grads=False,
        trigger=(1, "iteration"), skip_nan_params=True,
    )  # fmt: skip
    ext.register_statistics("first", lambda x: x[0])
    observed = data_statistics_with_nan_bias(trainer, model, ext)
    assert set(observed) == {
        "model/W/data/absmax", "model/W/data/first", "model/b/data/absmax", "model/b/data/first"
    }  # fmt: skip
    assert observed["model/W/data/absmax"] == pytest.approx(np.abs(model.W.array).max())
    assert observed["model/W/data/first"] == pytest.approx(model.W.array[0, 0])
    assert np.isnan(observed["model/b/data/absmax"]) and np.isnan(observed["model/b/data/first"])


def test_nan_array_gives_one_nan_per_statistic_without_suffixes(tmp_path, make_trainer):
    # As in Chainer: a skipped (NaN) array is not passed to the statistics, so a
    # multi-valued one (percentile) reports a single NaN under its bare key.
    trainer, model = make_trainer(tmp_path, stop=(1, "iteration"))
    model.name = "model"
    calls = []

    def quartiles(x):
        calls.append(x.size)
        return np.percentile(x, [25, 75])

    ext = ParameterStatistics(
        [model], statistics={"q": quartiles}, report_grads=False, trigger=(1, "iteration"),
        skip_nan_params=True,
    )  # fmt: skip
    observed = data_statistics_with_nan_bias(trainer, model, ext)
    assert set(observed) == {"model/W/data/q/0", "model/W/data/q/1", "model/b/data/q"}
    assert np.isnan(observed["model/b/data/q"])
    assert calls == [model.W.size]


def test_bad_arguments(make_trainer):
    with pytest.raises(TypeError, match="ParameterStatistics: expected links to be a Link"):
        ParameterStatistics("model")
    with pytest.raises(ValueError, match="statistics to be a dict, 'default' or None, got 'all'"):
        ParameterStatistics(make_trainer.Model(), statistics="all")
    with pytest.raises(TypeError, match="statistic 'x' must be callable"):
        ParameterStatistics(make_trainer.Model(), statistics={"x": 1})
