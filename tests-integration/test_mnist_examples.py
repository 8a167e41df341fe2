"""The MNIST examples on the real MNIST files: the Trainer MLP and the hand-written loop."""

import re
import time

import pytest
from conftest import load_example


def test_train_mnist_smoke(mnist, tmp_path):
    pytest.importorskip("matplotlib", reason="PlotReport needs dbr-training[plot]")
    example = load_example("mnist/train_mnist.py")
    accuracy = example.main(["--test", "--epoch", "2", "--out", str(tmp_path)])
    # 500 training images, 10 updates: far above chance (0.1) already.
    assert 0.3 < accuracy <= 1.0
    for name in ("log", "loss.png", "accuracy.png", "snapshot_iter_10"):
        assert (tmp_path / name).is_file(), name


def test_train_mnist_resumes_from_its_snapshot(mnist, tmp_path):
    example = load_example("mnist/train_mnist.py")
    common = ["--test", "--noplot", "--unit", "50"]
    example.main([*common, "--epoch", "1", "--out", str(tmp_path / "first")])
    accuracy = example.main(
        [
            *common,
            "--epoch",
            "2",
            "--out",
            str(tmp_path / "second"),
            "--resume",
            str(tmp_path / "first" / "snapshot_iter_5"),
        ]
    )
    log = (tmp_path / "second" / "log").read_text()
    assert '"epoch": 1' in log and '"epoch": 2' in log and '"iteration": 10' in log
    assert 0.0 < accuracy <= 1.0


def test_mnist_mlp_with_trainer_reaches_97_percent_in_two_epochs(mnist, tmp_path, report_figure):
    example = load_example("mnist/train_mnist.py")
    start = time.perf_counter()
    accuracy = example.main(["--epoch", "2", "--noplot", "--out", str(tmp_path)])
    report_figure("MNIST MLP 784-1000-1000-10, test accuracy after 2 epochs", accuracy)
    report_figure("MNIST MLP 2 epochs, seconds", round(time.perf_counter() - start, 1))
    assert accuracy >= 0.97


def test_custom_loop_smoke_and_the_reloaded_model_scores_the_same(mnist, tmp_path, capfd):
    example = load_example("mnist/train_mnist_custom_loop.py")
    accuracy = example.main(["--test", "--epoch", "2", "--out", str(tmp_path)])
    out, err = capfd.readouterr()
    assert "epoch 1" in err and "epoch 2" in err and "images" in err, err  # the progress bars
    assert (tmp_path / "mlp.model").is_file() and (tmp_path / "mlp.state").is_file()

    trained = re.findall(r"^epoch 2: .*test loss ([0-9.]+), accuracy ([0-9.]+)$", out, re.M)
    reloaded = re.findall(
        r"^model reloaded from .*: test loss ([0-9.]+), accuracy ([0-9.]+)$", out, re.M
    )
    assert len(trained) == 1 and len(reloaded) == 1, out
    # 200 test images: accuracies are multiples of 1/200, exact at four decimals.
    assert reloaded == trained
    assert float(reloaded[0][1]) == pytest.approx(accuracy, abs=5e-5)
    assert 0.3 < accuracy <= 1.0
