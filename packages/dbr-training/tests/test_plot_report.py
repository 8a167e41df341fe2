"""Tests of PlotReport: accumulated means, PNG output, resume, Agg-only rendering, bad input."""

import json
import os
import sys

import numpy
import pytest

from dbr.core import Variable
from dbr.core.serializers import DeserializationError, DictionarySerializer, NpzDeserializer
from dbr.training.extension import PRIORITY_READER

matplotlib = pytest.importorskip("matplotlib", reason="PlotReport needs matplotlib (extra 'plot')")

from dbr.training.extensions.plot_report import PlotReport  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class _Updater:
    def __init__(self, iters_per_epoch=4):
        self.iteration = 0
        self.iters_per_epoch = iters_per_epoch

    @property
    def epoch(self):
        return self.iteration // self.iters_per_epoch


class _Trainer:
    def __init__(self, out):
        self.updater = _Updater()
        self.out = str(out)
        self.observation = {}

    @property
    def is_before_training(self):
        return self.updater.iteration == 0


def _every(n):
    return lambda trainer: trainer.updater.iteration % n == 0


def _drive(ext, trainer, observations):
    for obs in observations:
        trainer.updater.iteration += 1
        trainer.observation = obs
        ext(trainer)


def _saved_data(ext, filename="plot.png"):
    target = {}
    ext.serialize(DictionarySerializer(target))
    return json.loads(str(target[f"_plot_{filename}"][()]))


def _check_png(path):
    with open(path, "rb") as f:
        content = f.read()
    assert content[:8] == PNG_SIGNATURE
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 50 and image.shape[1] > 50
    return content


def test_defaults_of_the_extension():
    ext = PlotReport(["main/loss"])
    assert ext.trigger == (1, "iteration")
    assert ext.priority == PRIORITY_READER
    assert ext.default_name == "PlotReport"
    assert PlotReport.available() is True


def test_means_between_triggers_are_plotted_against_the_iteration(tmp_path):
    ext = PlotReport(["main/loss", "main/acc"], trigger=_every(3))
    trainer = _Trainer(tmp_path)
    losses = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
    _drive(
        ext,
        trainer,
        [
            {"main/loss": Variable(numpy.array(v, dtype=numpy.float32)), "main/acc": v / 100}
            for v in losses
        ],
    )
    data = _saved_data(ext)
    numpy.testing.assert_allclose(data["main/loss"], [[3, 7 / 3], [6, 56 / 3]], rtol=1e-6)
    numpy.testing.assert_allclose(data["main/acc"], [[3, 0.07 / 3], [6, 0.56 / 3]], rtol=1e-12)
    _check_png(tmp_path / "plot.png")
    assert sorted(os.listdir(tmp_path)) == ["plot.png"]


def test_epoch_as_x_key_and_missing_keys(tmp_path):
    ext = PlotReport("main/loss", x_key="epoch", trigger=_every(4), filename="loss.png")
    trainer = _Trainer(tmp_path)
    _drive(ext, trainer, [{"main/loss": float(i)} for i in range(8)] + [{}] * 4)
    data = _saved_data(ext, "loss.png")
    assert data == {"main/loss": [[1, 1.5], [2, 5.5]]}
    _check_png(tmp_path / "loss.png")


def test_the_image_changes_with_the_data(tmp_path):
    contents = []
    for run, values in enumerate(
        ([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [4.0, 1.0, 3.0, 0.5])
    ):
        out = tmp_path / str(run)
        ext = PlotReport(["main/loss"], trigger=_every(1))
        _drive(ext, _Trainer(out), [{"main/loss": v} for v in values])
        contents.append(_check_png(out / "plot.png"))
    assert contents[0] == contents[1]
    assert contents[0] != contents[2]


def test_file_is_rewritten_at_each_trigger(tmp_path):
    ext = PlotReport(["main/loss"], trigger=_every(2))
    trainer = _Trainer(tmp_path)
    _drive(ext, trainer, [{"main/loss": 1.0}, {"main/loss": 2.0}])
    first = _check_png(tmp_path / "plot.png")
    _drive(ext, trainer, [{"main/loss": 5.0}])
    assert (tmp_path / "plot.png").read_bytes() == first
    _drive(ext, trainer, [{"main/loss": 0.1}])
    assert _check_png(tmp_path / "plot.png") != first


def test_nothing_is_written_without_data(tmp_path):
    ext = PlotReport(["validation/main/loss"], trigger=_every(1))
    _drive(ext, _Trainer(tmp_path), [{"main/loss": 1.0}] * 3)
    assert os.listdir(tmp_path) == []


def test_postprocess_gets_figure_axes_and_summary(tmp_path):
    calls = []

    def postprocess(figure, axes, summary):
        calls.append((figure, axes, summary.compute_mean()))
        axes.set_title("custom title")

    ext = PlotReport(["main/loss"], trigger=_every(2), postprocess=postprocess)
    _drive(ext, _Trainer(tmp_path), [{"main/loss": 1.0}, {"main/loss": 3.0}])
    assert len(calls) == 1
    figure, axes, means = calls[0]
    assert isinstance(figure, matplotlib.figure.Figure)
    assert axes.get_title() == "custom title"
    assert means == {"main/loss": pytest.approx(2.0)}


def test_resume_keeps_the_plotted_points(tmp_path):
    ext = PlotReport(["main/loss"], trigger=_every(2))
    trainer = _Trainer(tmp_path)
    _drive(ext, trainer, [{"main/loss": v} for v in (1.0, 3.0, 5.0, 7.0)])
    target = {}
    ext.serialize(DictionarySerializer(target))

    resumed = PlotReport(["main/loss"], trigger=_every(2))
    NpzDeserializer(target).load(resumed)
    _drive(resumed, trainer, [{"main/loss": v} for v in (9.0, 11.0)])
    assert _saved_data(resumed) == {"main/loss": [[2, 2.0], [4, 6.0], [6, 10.0]]}


def test_a_rejected_load_changes_nothing(tmp_path):
    ext = PlotReport(["main/loss"], trigger=_every(1))
    _drive(ext, _Trainer(tmp_path / "a"), [{"main/loss": 1.0}])
    target = {"unexpected": numpy.asarray(1)}
    ext.serialize(DictionarySerializer(target))
    other = PlotReport(["main/loss"], trigger=_every(1))
    _drive(other, _Trainer(tmp_path / "b"), [{"main/loss": 5.0}])
    with pytest.raises(DeserializationError, match="unexpected"):
        NpzDeserializer(target).load(other)
    assert _saved_data(other) == {"main/loss": [[1, 5.0]]}


def test_pyplot_and_the_global_backend_are_left_alone(tmp_path):
    backend = matplotlib.get_backend()
    had_pyplot = "matplotlib.pyplot" in sys.modules
    ext = PlotReport(["main/loss"], trigger=_every(1))
    _drive(ext, _Trainer(tmp_path), [{"main/loss": 1.0}])
    assert matplotlib.get_backend() == backend
    assert ("matplotlib.pyplot" in sys.modules) == had_pyplot


def test_file_name_alias_and_pdf_format(tmp_path):
    ext = PlotReport(["main/loss"], trigger=_every(1), file_name="loss.pdf")
    _drive(ext, _Trainer(tmp_path), [{"main/loss": 1.0}])
    assert (tmp_path / "loss.pdf").read_bytes()[:5] == b"%PDF-"


def test_without_matplotlib_it_warns_naming_the_extra_and_plots_nothing(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    expected = r'PlotReport: matplotlib is not installed.*pip install "dbr-training\[plot\]"'
    with pytest.warns(UserWarning, match=expected):
        assert PlotReport.available() is False
    with pytest.warns(UserWarning, match=expected):
        ext = PlotReport(["main/loss"], trigger=_every(1))
    _drive(ext, _Trainer(tmp_path), [{"main/loss": 1.0}, {"main/loss": 0.5}])
    assert os.listdir(tmp_path) == []
    assert [y for _, y in ext._data["main/loss"]] == [1.0, 0.5]


def test_bad_arguments():
    with pytest.raises(TypeError, match="PlotReport: expected y_keys to be str keys"):
        PlotReport([1])
    with pytest.raises(TypeError, match="PlotReport: expected x_key to be a str"):
        PlotReport(["a"], x_key=None)
    with pytest.raises(TypeError, match="PlotReport: unexpected keyword argument"):
        PlotReport(["a"], colour="red")
    with pytest.raises(TypeError, match="PlotReport: expected postprocess to be callable"):
        PlotReport(["a"], postprocess=3)


def test_with_the_real_trainer(tmp_path, make_trainer):
    trainer, _ = make_trainer(tmp_path, stop=(6, "iteration"), lr=0.05, batch=2)
    losses = []
    trainer.extend(lambda tr: losses.append(float(tr.observation["main/loss"].array)))
    ext = PlotReport(["main/loss"], x_key="epoch", trigger=(1, "epoch"))
    trainer.extend(ext)
    trainer.run()
    data = _saved_data(ext)
    numpy.testing.assert_allclose(data["main/loss"], [[1, numpy.mean(losses[:4])]], rtol=1e-12)
    _check_png(tmp_path / "plot.png")


def test_a_call_before_training_adds_a_point_at_zero(tmp_path):
    # Chainer 7.8.1: PlotReport registered with call_before_training=True
    # plots what was reported before the first update at x = 0.
    trainer = _Trainer(tmp_path)
    ext = PlotReport(["v"], x_key="epoch", trigger=lambda t: t.updater.iteration == 4)
    trainer.observation = {"v": 5.0}
    ext(trainer)
    assert _saved_data(ext) == {"v": [[0, 5.0]]}
    _check_png(tmp_path / "plot.png")
    _drive(ext, trainer, [{"v": 1.0}, {"v": 2.0}, {}, {"v": 3.0}])
    assert _saved_data(ext) == {"v": [[0, 5.0], [1, 2.0]]}
