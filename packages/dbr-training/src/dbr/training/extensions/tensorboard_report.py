"""TensorBoardReport: write the means of reported values as TensorBoard scalar events."""

import os
import secrets

from dbr.core.reporter import DictSummary
from dbr.training.extension import Extension
from dbr.training.triggers import get_trigger

_MISSING_TENSORBOARDX = (
    "TensorBoardReport needs tensorboardX, which is not installed: "
    'pip install "dbr-training[tensorboard]"'
)


def _import_tensorboardx():
    try:
        import tensorboardX
    except ImportError as exc:
        raise ImportError(_MISSING_TENSORBOARDX) from exc
    return tensorboardX


class TensorBoardReport(Extension):
    """Trainer extension that logs reported values for TensorBoard (not in Chainer).

    At every call (default trigger ``(1, 'iteration')``) the extension adds
    the current observation (all scalar entries, or only ``entries``) to a
    :class:`~dbr.core.DictSummary`, like :class:`LogReport`. When its own
    ``trigger`` fires, it writes the mean of each key since the last firing
    as a scalar event (tag: the key, e.g. ``'main/loss'``; step: the
    iteration) through ``tensorboardX.SummaryWriter``, asks it to flush, and
    starts a new summary. The writer's own thread writes the events to the
    file, so they reach the disk shortly after (at the latest when
    :meth:`finalize` closes the writer). View them with
    ``tensorboard --logdir <log_dir>``.

    When the training resumes from a snapshot at iteration ``T``, the new
    writer is opened with ``purge_step=T + 1``, so that TensorBoard hides the
    events that the interrupted run wrote after its snapshot. Each writer
    gets its own event file, so a resumed run never overwrites an earlier one.
    The writer is closed by :meth:`finalize`.

    Args:
        entries (iterable of str): the keys to log. None logs every scalar
            entry of the observation.
        trigger: when to write the means: a trigger or a ``(period, unit)``
            tuple; default ``(1, 'epoch')``.
        log_dir (str): the directory of the event files. None:
            ``<trainer.out>/tensorboard``.

    Raises:
        ImportError: tensorboardX is not installed (extra ``dbr-training[tensorboard]``).
        TypeError: ``entries`` is not an iterable of str, or ``log_dir`` not a
            path.
    """

    def __init__(self, entries=None, trigger=(1, "epoch"), log_dir=None):
        if entries is not None:
            if isinstance(entries, str):
                entries = (entries,)
            entries = tuple(entries)
            if not all(isinstance(k, str) for k in entries):
                raise TypeError(
                    f"TensorBoardReport: expected entries to be str keys, got {entries!r}"
                )
        if log_dir is not None and not isinstance(log_dir, (str, os.PathLike)):
            raise TypeError(
                f"TensorBoardReport: expected log_dir to be a path or None, got {log_dir!r}"
            )
        trigger = get_trigger(trigger)
        self._tensorboardx = _import_tensorboardx()
        self._entries = entries
        self._trigger = trigger
        self._log_dir = log_dir
        self._summary = DictSummary()
        self._writer = None

    @property
    def log_dir(self):
        """The directory given to the constructor (None: ``<trainer.out>/tensorboard``)."""
        return self._log_dir

    def initialize(self, trainer):
        """Open the event file writer (with ``purge_step`` when resuming)."""
        self._open_writer(trainer)

    def __call__(self, trainer):
        """Accumulate the observation; when the trigger fires, write the means."""
        observation = trainer.observation
        if self._entries is None:
            self._summary.add(observation)
        else:
            self._summary.add({k: observation[k] for k in self._entries if k in observation})
        if not self._trigger(trainer):
            return
        writer = self._open_writer(trainer)
        step = trainer.updater.iteration
        for key, value in self._summary.compute_mean().items():
            writer.add_scalar(key, float(value), global_step=step)
        writer.flush()
        self._summary = DictSummary()

    def finalize(self):
        """Flush and close the event file writer."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def serialize(self, serializer):
        """Save or load the trigger state (``_trigger``) and the pending summary (``_summary``)."""
        if hasattr(self._trigger, "serialize"):
            self._trigger.serialize(serializer["_trigger"])
        self._summary.serialize(serializer["_summary"])

    def _open_writer(self, trainer):
        if self._writer is None:
            log_dir = self._log_dir
            if log_dir is None:
                log_dir = os.path.join(trainer.out, "tensorboard")
            iteration = trainer.updater.iteration
            self._writer = self._tensorboardx.SummaryWriter(
                logdir=os.fspath(log_dir),
                purge_step=iteration + 1 if iteration > 0 else None,
                filename_suffix=f".{os.getpid()}.{secrets.token_hex(4)}",
            )
        return self._writer
