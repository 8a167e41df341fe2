import io
import os
import re

import pytest

from dbr.training.extensions.progress_bar import ProgressBar


def lines(text):
    return [line for line in re.split("[\r\n]", text) if line]


def test_epoch_length_progress(tmp_path, make_trainer):
    trainer, _ = make_trainer(tmp_path, (3, "epoch"), batch=2)  # 4 iterations per epoch, 12 in all
    out = io.StringIO()
    trainer.extend(ProgressBar(update_interval=3, bar_length=20, out=out))
    trainer.run()
    text = out.getvalue()
    assert text.endswith("\n")
    shown = lines(text)
    # First draw at iteration 1, then every 3 iterations, then the final state.
    assert [re.search(r"\| (\d+) iter,", line).group(1) for line in shown] == [
        "1", "3", "6", "9", "12", "12"
    ]  # fmt: skip
    assert shown[0].startswith("total [#...................]   8.33% | this epoch  25.00% |")
    assert "| 6 iter, 1 epoch / 3 epochs |" in shown[2]
    assert "this epoch  50.00%" in shown[2]
    assert shown[-1].startswith("total [####################] 100.00% |")
    assert "| 12 iter, 3 epoch / 3 epochs |" in shown[-1]
    speed = re.search(r"\| ([0-9.e+]+) iters/sec \| Estimated time to finish: (\S+)", shown[-1])
    assert speed is not None and float(speed.group(1)) > 0
    assert speed.group(2).startswith("0:00:00")


def test_iteration_length_from_argument(tmp_path, make_trainer):
    trainer, _ = make_trainer(tmp_path, (5, "iteration"), batch=2)
    out = io.StringIO()
    trainer.extend(ProgressBar(training_length=(10, "iteration"), update_interval=100, out=out))
    trainer.run()
    shown = lines(out.getvalue())
    assert "| 1 iter, 0 epoch / 10 iterations |" in shown[0]
    assert shown[0].startswith(
        "total [#####.............................................]  10.00%"
    )
    assert "| 5 iter, 1 epoch / 10 iterations |" in shown[-1]
    assert " 50.00% | this epoch  25.00% |" in shown[-1]


def test_bad_arguments():
    with pytest.raises(ValueError, match="ProgressBar: expected training_length to be a"):
        ProgressBar(training_length=(10, "minute"))
    with pytest.raises(ValueError, match="ProgressBar: expected update_interval to be a positive"):
        ProgressBar(update_interval=0)
    with pytest.raises(ValueError, match="ProgressBar: expected bar_length to be a positive"):
        ProgressBar(bar_length=-1)
    with pytest.raises(TypeError, match="ProgressBar: expected out to be a text stream"):
        ProgressBar(out=3)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("columns, with_bar", [(80, True), (70, False)])
def test_a_narrow_terminal_gets_a_line_that_fits_with_speed_and_time_left(
    tmp_path, make_trainer, monkeypatch, columns, with_bar
):
    monkeypatch.setattr("shutil.get_terminal_size", lambda *a: os.terminal_size((columns, 24)))
    trainer, _ = make_trainer(tmp_path, (3, "epoch"), batch=2)
    out = _Terminal()
    trainer.extend(ProgressBar(update_interval=3, out=out))
    trainer.run()
    shown = lines(out.getvalue())
    assert len(shown) == 6
    for line in shown:
        assert len(line) < columns, line
        assert re.search(
            r"\d+ iter \| epoch \d/3 \(\d+%\) \| ([0-9.e+]+|\?) it/s \| \S+ left\s*$", line
        )
    assert shown[0].startswith("  8.3% ")
    assert shown[-1].startswith("100.0% [####" if with_bar else "100.0% 12 iter | epoch 3/3 (")


def test_a_wide_terminal_gets_chainers_line(tmp_path, make_trainer, monkeypatch):
    monkeypatch.setattr("shutil.get_terminal_size", lambda *a: os.terminal_size((200, 24)))
    trainer, _ = make_trainer(tmp_path, (3, "epoch"), batch=2)
    out = _Terminal()
    trainer.extend(ProgressBar(update_interval=3, out=out))
    trainer.run()
    shown = lines(out.getvalue())
    assert all(line.startswith("total [") and "Estimated time to finish" in line for line in shown)


class _UnsizedTerminal(_Terminal):
    """A terminal whose descriptor reports no size (0x0), as a pseudo-terminal nobody sized."""

    def fileno(self):
        return 1


def test_a_terminal_that_reports_no_size_gets_the_line_fitted_to_columns(
    tmp_path, make_trainer, monkeypatch
):
    # On sys.stdout tqdm asks os.get_terminal_size(fileno) itself: with 0x0 it drew nothing.
    monkeypatch.setattr("os.get_terminal_size", lambda *a: os.terminal_size((0, 0)))
    monkeypatch.setattr("shutil.get_terminal_size", lambda *a: os.terminal_size((80, 24)))
    out = _UnsizedTerminal()
    monkeypatch.setattr("sys.stdout", out)
    trainer, _ = make_trainer(tmp_path, (3, "epoch"), batch=2)
    trainer.extend(ProgressBar(update_interval=3))
    trainer.run()
    shown = lines(out.getvalue())
    assert len(shown) == 6
    assert all(len(line) < 80 and line.rstrip().endswith(" left") for line in shown), shown
