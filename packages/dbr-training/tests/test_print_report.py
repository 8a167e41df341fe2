import io

import numpy as np
import pytest

from dbr.core.serializers import load_npz, save_npz
from dbr.training.extensions.log_report import LogReport
from dbr.training.extensions.print_report import PrintReport


def fixed_log(entry):
    entry["elapsed_time"] = 12.5


def test_printed_table(tmp_path, make_trainer):
    trainer, _ = make_trainer(tmp_path)
    losses = []
    trainer.extend(
        lambda t: losses.append(float(t.observation["main/loss"].array)),
        name="rec",
        priority=1000,
    )
    trainer.extend(LogReport(postprocess=fixed_log))
    out = io.StringIO()
    entries = ["epoch", "iteration", "main/loss", "validation/main/accuracy", "elapsed_time"]
    trainer.extend(PrintReport(entries, out=out))
    trainer.run()

    mean1 = np.mean(losses[0:2])
    mean2 = np.mean(losses[2:4])
    header = "epoch       iteration   main/loss   validation/main/accuracy  elapsed_time\n"
    blank = " " * 24 + "  "
    row1 = f"\033[J1           2           {mean1:<10g}  {blank}12.5          \n"
    row2 = f"\033[J2           4           {mean2:<10g}  {blank}12.5          \n"
    assert out.getvalue() == header + row1 + row2


def test_own_log_report_instance_and_serialize(tmp_path, make_trainer):
    trainer, _ = make_trainer(tmp_path, stop=(4, "iteration"))
    out = io.StringIO()
    log_report = LogReport(trigger=(2, "iteration"), log_name=None, postprocess=fixed_log)
    trainer.extend(PrintReport(["iteration", "elapsed_time"], log_report=log_report, out=out))
    trainer.run()
    assert out.getvalue() == (
        "iteration   elapsed_time\n"
        "\033[J2           12.5          \n"
        "\033[J4           12.5          \n"
    )
    assert len(log_report.log) == 2
    calls = []

    class Recorder:
        def __getitem__(self, key):
            calls.append(key)
            return self

        def __call__(self, key, value):
            return value

    PrintReport(["a"], log_report=log_report).serialize(Recorder())
    assert calls[0] == "_log_report"


def test_bad_arguments():
    with pytest.raises(TypeError, match="PrintReport: expected entries to be a list of str"):
        PrintReport("epoch")
    with pytest.raises(TypeError, match="PrintReport: expected every entry to be a str"):
        PrintReport(["epoch", 1])
    with pytest.raises(TypeError, match="PrintReport: expected log_report to be a str"):
        PrintReport(["epoch"], log_report=3)
    with pytest.raises(TypeError, match="PrintReport: expected out to be a text stream"):
        PrintReport(["epoch"], out=3)


def test_default_stream_is_stdout_at_write_time(monkeypatch):
    import sys

    report = PrintReport(["epoch"])
    redirected = io.StringIO()
    monkeypatch.setattr(sys, "stdout", redirected)
    assert report._out is redirected


def run_and_snapshot(tmp_path, make_trainer):
    trainer, _ = make_trainer(tmp_path, stop=(4, "iteration"))
    trainer.extend(LogReport(trigger=(2, "iteration"), postprocess=fixed_log))
    trainer.extend(PrintReport(["iteration", "elapsed_time"], out=io.StringIO()))
    trainer.run()
    path = tmp_path / "snapshot.npz"
    save_npz(str(path), trainer)
    return path


def resume(tmp_path, path, make_trainer):
    resumed, _ = make_trainer(tmp_path, stop=(6, "iteration"))
    resumed.extend(LogReport(trigger=(2, "iteration"), postprocess=fixed_log))
    out = io.StringIO()
    resumed.extend(PrintReport(["iteration", "elapsed_time"], out=out))
    load_npz(str(path), resumed)
    resumed.run()
    return out.getvalue()


def test_resumed_run_does_not_print_the_restored_lines_again(tmp_path, make_trainer):
    path = run_and_snapshot(tmp_path, make_trainer)
    with np.load(path) as npz:
        assert int(npz["extensions/PrintReport/_log_len"]) == 2
    assert (
        resume(tmp_path, path, make_trainer)
        == "iteration   elapsed_time\n\033[J6           12.5          \n"
    )


def test_snapshot_without_the_printed_count_prints_the_restored_lines_as_chainer(
    tmp_path, make_trainer
):
    path = run_and_snapshot(tmp_path, make_trainer)
    with np.load(path) as npz:
        arrays = {k: npz[k] for k in npz.files if k != "extensions/PrintReport/_log_len"}
    np.savez(path, **arrays)
    assert resume(tmp_path, path, make_trainer) == (
        "iteration   elapsed_time\n"
        "\033[J2           12.5          \n"
        "\033[J4           12.5          \n"
        "\033[J6           12.5          \n"
    )


def test_a_misspelt_extension_gets_a_suggestion():
    from dbr.training import extensions

    with pytest.raises(AttributeError, match=r"PrintReprot'; did you mean 'PrintReport'\?"):
        _ = extensions.PrintReprot
