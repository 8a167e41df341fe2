"""ProgressBar: a tqdm progress bar of the training, with speed and estimated time to finish."""

import datetime
import numbers
import shutil
import sys

import tqdm

from dbr.training import extension

_UNITS = ("iteration", "epoch")


class _TrainingBar(tqdm.tqdm):
    """A tqdm bar counting iterations, whose format also sees the training's epoch fields."""

    monitor_interval = 0  # no monitor thread: the extension decides when to refresh

    def __init__(self, *args, training_fields, **kwargs):
        self.training_fields = training_fields
        super().__init__(*args, **kwargs)

    @property
    def format_dict(self):
        fields = super().format_dict
        elapsed = fields["elapsed"]
        done = fields["n"] - fields.get("initial", 0)
        speed = fields["rate"] or (done / elapsed if elapsed > 0 and done > 0 else None)
        total = fields["total"]
        if speed and total is not None:
            eta = datetime.timedelta(seconds=max(total - fields["n"], 0) / speed)
            fields["speed"] = f"{speed:.5g}"
            fields["eta"] = str(eta)
            fields["eta_s"] = str(datetime.timedelta(seconds=round(eta.total_seconds())))
        else:
            fields["speed"] = "?"
            fields["eta"] = fields["eta_s"] = "?"
        if total is None:
            fields["percentage"] = 0.0
        fields.update(self.training_fields)
        return fields


class ProgressBar(extension.Extension):
    """Trainer extension showing the progress of the training with a tqdm bar.

    Every ``update_interval`` iterations (and at the end) it redraws one
    line, in Chainer's words::

        total [#########.........] 18.75% | this epoch  87.50% | 300 iter, 3 epoch / 16 epochs
        | 6.4023 iters/sec | Estimated time to finish: 0:00:40.613893

    (on one line): the progress over the whole training (measured in the
    unit of the training length; with an epoch length, the total number of
    iterations is estimated from the epoch size seen so far), over the
    current epoch, the iteration and epoch counts, the speed in iterations
    per second and the estimated remaining time. The line ends with a
    carriage return, so that a table printed by PrintReport replaces it.

    On a terminal narrower than that line, the line is shortened to fit
    (`` 18.8% [##......] 300 iter | epoch 3/16 (88%) | 6.4023 it/s | 0:00:41 left``,
    the bar taking what room is left), so that the speed and the time left
    stay visible; a stream that is not a terminal gets Chainer's line.

    Args:
        training_length (tuple): ``(length, unit)``, unit ``'iteration'`` or
            ``'epoch'``; None (default) asks the trainer's stop trigger
            (``get_training_length()``).
        update_interval (int): the number of iterations between redraws (100).
        bar_length (int): the width of the bar in characters (50).
        out: the text stream to write to (default None: ``sys.stdout`` as it is when
            the extension writes, so that a redirected stdout is honoured).
    """

    def __init__(self, training_length=None, update_interval=100, bar_length=50, out=None):
        if training_length is not None:
            _check_training_length("ProgressBar", training_length)
        for argname, value in (("update_interval", update_interval), ("bar_length", bar_length)):
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value <= 0:
                raise ValueError(
                    f"ProgressBar: expected {argname} to be a positive int, got {value!r}"
                )
        if out is not None and not hasattr(out, "write"):
            raise TypeError(
                f"ProgressBar: expected out to be a text stream with write(), got "
                f"{type(out).__name__}"
            )
        self._training_length = training_length
        self._update_interval = int(update_interval)
        self._bar_length = int(bar_length)
        self._stream = out
        self._bar = None
        self._updater = None

    @property
    def _out(self):
        return sys.stdout if self._stream is None else self._stream

    def __call__(self, trainer):
        """Count the iteration; redraw every ``update_interval`` iterations."""
        updater = trainer.updater
        if self._bar is None:
            self._start(trainer)
        elif updater.iteration % self._update_interval == 0:
            self._redraw()

    def _start(self, trainer):
        length = self._training_length
        if length is None:
            get_length = getattr(trainer.stop_trigger, "get_training_length", None)
            if get_length is None:
                raise TypeError(
                    f"ProgressBar: the stop trigger {trainer.stop_trigger!r} has no "
                    f"get_training_length(); pass training_length=(length, unit)"
                )
            length = _check_training_length("ProgressBar", tuple(get_length()))
        self._training_length = length
        self._updater = trainer.updater
        terminal = self._terminal_size()
        self._bar = _TrainingBar(
            training_fields=self._training_fields(),
            total=self._estimate_total(),
            initial=self._updater.iteration,
            file=self._out,
            bar_format=self._fitting_format(terminal),
            ascii=".#",
            mininterval=0,
            miniters=1,
            dynamic_ncols=False,
            unit="iter",
            **self._tqdm_size(terminal),
        )
        self._end_line()

    def _chainer_format(self, bar_width):
        length, unit = self._training_length
        return (
            f"total [{{bar:{bar_width}}}] {{percentage:6.2f}}% | "
            f"this epoch {{epoch_percentage:6.2f}}% | "
            f"{{n}} iter, {{epoch}} epoch / {length} {unit}s | "
            f"{{speed}} iters/sec | Estimated time to finish: {{eta}}"
        )

    def _short_format(self, bar_width):
        length, unit = self._training_length
        bar = f"[{{bar:{bar_width}}}] " if bar_width else ""
        if unit == "epoch":
            counts = f"{{n}} iter | epoch {{epoch}}/{length} ({{epoch_percentage:.0f}}%)"
        else:
            counts = f"{{n}}/{length} iter | epoch {{epoch}} ({{epoch_percentage:.0f}}%)"
        return f"{{percentage:5.1f}}% {bar}{counts} | {{speed}} it/s | {{eta_s}} left"

    def _terminal_size(self):
        """The size of the terminal written to (COLUMNS and LINES first); None if not one."""
        isatty = getattr(self._out, "isatty", None)
        if not (isatty and isatty()):
            return None
        return shutil.get_terminal_size()

    @staticmethod
    def _tqdm_size(terminal):
        # On sys.stdout tqdm asks the descriptor itself and draws nothing where a terminal
        # reports no size (a pseudo-terminal nobody sized, as ``script`` without a terminal
        # makes): give it the size the line was fitted to, in its convention (one less).
        if terminal is None:
            return {}
        return {"ncols": terminal.columns - 1, "nrows": terminal.lines - 1}

    def _fitting_format(self, terminal):
        """Chainer's layout, or on a terminal too narrow for it the short one, fitted."""
        if terminal is None:
            return self._chainer_format(self._bar_length)
        room = terminal.columns - 1
        if self._printed_width(self._chainer_format(self._bar_length)) <= room:
            return self._chainer_format(self._bar_length)
        spare = room - self._printed_width(self._short_format(0))
        return self._short_format(min(self._bar_length, spare - 3) if spare >= 13 else 0)

    def _printed_width(self, bar_format):
        """The length of a line in this layout, at a typical speed and time left."""
        length, _ = self._training_length
        fields = {
            "epoch": length, "epoch_percentage": 100.0, "speed": "10.000",
            "eta": "0:00:00.000000", "eta_s": "0:00:00",
        }  # fmt: skip
        total = self._estimate_total() or self._updater.iteration * 10 + 1000
        line = tqdm.tqdm.format_meter(total, total, 0, ascii=".#", bar_format=bar_format, **fields)
        return len(line)

    def _estimate_total(self):
        length, unit = self._training_length
        updater = self._updater
        if unit == "iteration":
            return length
        epoch_detail = float(updater.epoch_detail)
        if epoch_detail <= 0:
            return None
        return max(round(length * updater.iteration / epoch_detail), updater.iteration)

    def _training_fields(self):
        updater = self._updater
        return {
            "epoch": updater.epoch,
            "epoch_percentage": (float(updater.epoch_detail) - updater.epoch) * 100,
        }

    def _redraw(self):
        bar = self._bar
        bar.training_fields = self._training_fields()
        total = self._estimate_total()
        if total is not None:
            bar.total = total
        terminal = self._terminal_size()
        bar.bar_format = self._fitting_format(terminal)
        for name, value in self._tqdm_size(terminal).items():
            setattr(bar, name, value)
        done = self._updater.iteration - bar.n
        if done > 0:
            bar.update(done)
        else:
            bar.refresh()
        self._end_line()

    def _end_line(self):
        # Back to the line's start: a table row printed next overwrites the bar.
        self._out.write("\r")
        if hasattr(self._out, "flush"):
            self._out.flush()

    def finalize(self):
        """Draw the final state and close the bar (its last line stays)."""
        bar = self._bar
        if bar is None:
            return
        bar.training_fields = self._training_fields()
        total = self._estimate_total()
        if total is not None:
            bar.total = total
        bar.n = self._updater.iteration
        bar.close()
        self._bar = None


def _check_training_length(who, training_length):
    if (
        not isinstance(training_length, tuple)
        or len(training_length) != 2
        or training_length[1] not in _UNITS
        or not isinstance(training_length[0], numbers.Real)
        or isinstance(training_length[0], bool)
        or not training_length[0] > 0
    ):
        raise ValueError(
            f"{who}: expected training_length to be a (length, unit) tuple with a positive "
            f"length and unit 'iteration' or 'epoch', got {training_length!r}"
        )
    return training_length
