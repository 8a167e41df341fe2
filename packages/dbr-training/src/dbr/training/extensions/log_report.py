"""LogReport: accumulate the reported values and write their means to a JSON log."""

import contextlib
import json
import os
import re
import string

from dbr.core import DictSummary
from dbr.core.serializers import Serializer, write_atomically
from dbr.training import extension
from dbr.training.triggers import get_trigger


def _write_text_atomically(directory, filename, text):
    """Write ``text`` to ``directory/filename`` atomically; return the path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, filename)

    def write(tmp):
        with open(tmp, "w") as f:
            f.write(text)

    write_atomically(path, write)
    return path


def _temporaries_pattern(filename):
    """A regex of the temporary names write_atomically gives the files ``filename`` names.

    ``filename`` may be a format template; each field matches any text.
    """
    parts = []
    for literal, field, _spec, _conversion in string.Formatter().parse(filename):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append(".+")
    # write_atomically's temporary of "name" is ".name.<16 lowercase hex digits>.tmp".
    return re.compile(r"\." + "".join(parts) + r"\.[0-9a-f]{16}\.tmp", re.DOTALL)


def _remove_stale_temporaries(directory, filename):
    """Remove from ``directory`` the temporaries of ``filename`` that a killed run left."""
    folder, name = os.path.split(filename)
    if "{" in folder:
        return  # a folder chosen per entry: nothing to scan until it is known
    try:
        pattern = _temporaries_pattern(name)
    except ValueError:
        return  # not a valid template: writing the log will say so
    with contextlib.suppress(OSError), os.scandir(os.path.join(directory, folder)) as entries:
        for entry in entries:
            if pattern.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(entry.path)


class LogReport(extension.Extension):
    """Trainer extension accumulating observations and writing their means to a log file.

    It is called at every iteration (its own trigger stays ``(1,
    'iteration')``) and adds the trainer's observation to a
    :class:`~dbr.core.DictSummary`. When ``trigger`` fires, or when it is
    called before training (registered with ``call_before_training=True``:
    the values reported then, e.g. a pre-training evaluation, become an entry
    of their own with epoch 0 and iteration 0), it appends a dict
    of the mean of every accumulated key, plus ``'epoch'`` (int),
    ``'iteration'`` (int) and ``'elapsed_time'`` (float, seconds,
    :attr:`Trainer.elapsed_time`), to :attr:`log`, writes the whole log to
    ``trainer.out/filename`` as a JSON list (indent 4, written atomically) and
    starts a fresh summary.

    Args:
        keys (iterable of str): the observation keys to accumulate; None
            (default) accumulates every scalar entry.
        trigger: when to emit a log line (a trigger or a ``(period, unit)``
            tuple); ``(1, 'epoch')`` by default.
        postprocess: callable receiving each new log dict before it is
            stored and written; it may modify the dict in place.
        filename (str): name of the log file in ``trainer.out``; a format
            string receiving the new log dict (``'log_{iteration}'``). None
            (default) means ``log_name``.
        log_name (str): the older name of ``filename`` (keyword only),
            ``'log'`` by default; None with ``filename`` None writes no file.
    """

    def __init__(
        self, keys=None, trigger=(1, "epoch"), postprocess=None, filename=None, *, log_name="log"
    ):
        if isinstance(keys, str):
            raise TypeError(
                f"LogReport: expected keys to be an iterable of str or None, got the str {keys!r}"
            )
        if keys is not None:
            keys = list(keys)
            for key in keys:
                if not isinstance(key, str):
                    raise TypeError(
                        f"LogReport: expected every key to be a str, got {key!r} "
                        f"({type(key).__name__})"
                    )
        if postprocess is not None and not callable(postprocess):
            raise TypeError(
                f"LogReport: expected postprocess to be callable or None, got "
                f"{type(postprocess).__name__}"
            )
        if filename is None:
            filename = log_name
        if filename is not None and not isinstance(filename, str):
            raise TypeError(
                f"LogReport: expected filename to be a str or None, got {type(filename).__name__}"
            )
        self._keys = keys
        self._trigger = get_trigger(trigger)
        self._postprocess = postprocess
        self._log_name = filename
        self._log = []
        self._summary = DictSummary()

    def initialize(self, trainer):
        """Remove the temporary log files that a run killed mid-write left in ``trainer.out``.

        Only the names of this report's temporaries are removed
        (``.log.<16 hex digits>.tmp`` for the file ``log``; for a template
        such as ``log_{iteration}``, those of every file it names).
        """
        if self._log_name is not None:
            _remove_stale_temporaries(trainer.out, self._log_name)

    def __call__(self, trainer):
        """Accumulate ``trainer.observation``; emit a log line when the trigger fires."""
        observation = trainer.observation
        if self._keys is None:
            self._summary.add(observation)
        else:
            self._summary.add({k: observation[k] for k in self._keys if k in observation})

        if not (trainer.is_before_training or self._trigger(trainer)):
            return
        entry = {name: float(value) for name, value in self._summary.compute_mean().items()}
        updater = trainer.updater
        entry["epoch"] = updater.epoch
        entry["iteration"] = updater.iteration
        entry["elapsed_time"] = trainer.elapsed_time
        if self._postprocess is not None:
            self._postprocess(entry)
        self._log.append(entry)
        if self._log_name is not None:
            _write_text_atomically(
                trainer.out, self._log_name.format(**entry), json.dumps(self._log, indent=4)
            )
        self._summary = DictSummary()

    @property
    def log(self):
        """The list of log dicts emitted so far (the same list object every time)."""
        return self._log

    def serialize(self, serializer):
        """Save or load the trigger state, the running summary and the log.

        The log is stored as JSON text under ``_log``, the summary under
        ``_summary/`` and the trigger under ``_trigger/`` (Chainer's keys), so
        a resumed run continues the same log file.
        """
        if hasattr(self._trigger, "serialize"):
            self._trigger.serialize(serializer["_trigger"])
        self._summary.serialize(serializer["_summary"])
        if isinstance(serializer, Serializer):
            serializer("_log", json.dumps(self._log))
        else:
            text = serializer("_log", "")
            if text:
                self._log[:] = json.loads(text)
