"""Trainer: the training loop that runs an updater and its extensions."""

import contextlib
import os
import sys
import time
import traceback
import warnings

from dbr.core import Reporter, memory
from dbr.core.serializers import Deserializer, stored_keys
from dbr.training.extension import PRIORITY_READER
from dbr.training.triggers._trigger_util import get_trigger

_get_time = time.perf_counter


class _ExtensionEntry:
    __slots__ = ("extension", "trigger", "priority", "call_before_training")

    def __init__(self, extension, trigger, priority, call_before_training):
        self.extension = extension
        self.trigger = trigger
        self.priority = priority
        self.call_before_training = call_before_training


def _stored_extension_state(stored, group, extensions):
    """Split the stored keys under ``group/``: the registered names that have state there,
    and the keys (relative to ``group/``) of extensions that are not registered.
    """
    prefix = group + "/"
    held, orphans = set(), []
    for key in sorted(stored):
        if not key.startswith(prefix):
            continue
        rest = key[len(prefix) :]
        # Extension names may contain '/': an exact registered prefix decides the owner.
        owner = next((n for n in extensions if rest.startswith(n + "/") or rest == n), None)
        if owner is None:
            orphans.append(rest)
        else:
            held.add(owner)
    return held, orphans


def _print_exception(headline, exc, tb):
    print(f"{headline}: {exc}", file=sys.stderr)
    print("Traceback (most recent call last):", file=sys.stderr)
    traceback.print_tb(tb, file=sys.stderr)


class Trainer:
    """The standard training loop.

    Until ``stop_trigger`` fires, each iteration calls ``updater.update()``
    inside ``reporter.scope(observation)`` with a fresh ``observation`` dict,
    then calls, in order of decreasing priority (registration order among
    equal priorities), every extension whose trigger fires. Values reported
    during the iteration (``dbr.core.report``) land in ``observation``, under
    'main/...' for the main optimizer's target and '<name>/...' for the other
    optimizers' targets and their child links.

    Args:
        updater: the :class:`~dbr.training.updaters.updater.Updater`.
        stop_trigger: when to stop: a trigger, a ``(period, unit)`` tuple
            such as ``(20, 'epoch')``, or None (never stop by itself).
        out (str): the output directory, created by :meth:`run` if missing.
        extensions: extensions to register with :meth:`extend` under their
            default settings.

    Attributes:
        updater: the updater.
        stop_trigger: the stop trigger (a trigger object).
        out (str): the output directory.
        observation (dict): the values reported in the current iteration.
        reporter (dbr.core.Reporter): the reporter, with the optimizers'
            targets registered as observers.
    """

    def __init__(self, updater, stop_trigger=None, out="result", extensions=None):
        if not isinstance(out, (str, os.PathLike)):
            raise TypeError(f"Trainer: out must be a path (str), got {type(out).__name__}")
        for attr in ("update", "get_all_optimizers", "iteration"):
            if not hasattr(updater, attr):
                raise TypeError(
                    f"Trainer: updater must be an Updater (with update(), "
                    f"get_all_optimizers() and iteration), got {type(updater).__name__} "
                    f"without {attr!r}"
                )
        self.updater = updater
        self.stop_trigger = get_trigger(stop_trigger)
        self.observation = {}
        self.out = out

        reporter = Reporter()
        for name, optimizer in updater.get_all_optimizers().items():
            reporter.add_observer(name, optimizer.target)
            reporter.add_observers(name, optimizer.target.namedlinks(skipself=True))
        self.reporter = reporter

        self._done = False
        self._extensions = {}
        self._start_at = None
        self._snapshot_elapsed_time = 0.0
        self._final_elapsed_time = None

        updater.connect_trainer(self)
        for extension in extensions or ():
            self.extend(extension)

    @property
    def is_before_training(self):
        """Whether no update has been done yet (``updater.iteration == 0``)."""
        return self.updater.iteration == 0

    @property
    def elapsed_time(self):
        """Seconds of training so far, including those of the runs a snapshot was resumed from.

        Raises:
            RuntimeError: :meth:`run` has not been started.
        """
        if self._done:
            return self._final_elapsed_time
        if self._start_at is None:
            raise RuntimeError(
                "Trainer.elapsed_time: training has not been started yet; call run() first"
            )
        return _get_time() - self._start_at + self._snapshot_elapsed_time

    def extend(
        self,
        extension,
        name=None,
        trigger=None,
        priority=None,
        *,
        call_before_training=False,
        **kwargs,
    ):
        """Register an extension.

        Args:
            extension: a callable ``extension(trainer)``, usually an
                :class:`~dbr.training.extension.Extension` or a function
                decorated with :func:`~dbr.training.extension.make_extension`.
            name (str): the name; defaults to ``extension.name``, then
                ``extension.default_name``, then ``extension.__name__``. A name
                already taken gets a suffix: 'name_1', 'name_2', ...; the name
                finally used is written to ``extension.name``.
            trigger: when to call it; defaults to ``extension.trigger``, then
                ``(1, 'iteration')``. Anything :func:`get_trigger` accepts.
            priority (int): defaults to ``extension.priority``, then
                :data:`~dbr.training.extension.PRIORITY_READER`.
            call_before_training (bool): also call it once at the start of
                :meth:`run`, before the first update.

        Raises:
            TypeError: ``extension`` is not callable, no name can be found, or
                an unexpected keyword argument is given.
            ValueError: the name is 'training' or ``invoke_before_training`` is given.
        """
        if "invoke_before_training" in kwargs:
            raise ValueError(
                "Trainer.extend: invoke_before_training was removed in Chainer v2; use "
                "call_before_training=True or the extension's initialize() instead"
            )
        if kwargs:
            raise TypeError(
                f"Trainer.extend: unexpected keyword argument(s) {', '.join(sorted(kwargs))}"
            )
        if not callable(extension):
            raise TypeError(
                f"Trainer.extend: expected a callable extension(trainer), "
                f"got {type(extension).__name__}"
            )
        if name is None:
            for attr in ("name", "default_name", "__name__"):
                name = getattr(extension, attr, None)
                if name is not None:
                    break
            else:
                raise TypeError(
                    f"Trainer.extend: no name is given for the extension "
                    f"{type(extension).__name__} and it has no name, default_name or __name__"
                )
        if name == "training":
            raise ValueError("Trainer.extend: the name 'training' is reserved for the trainer")
        if trigger is None:
            trigger = getattr(extension, "trigger", (1, "iteration"))
        trigger = get_trigger(trigger)
        if priority is None:
            priority = getattr(extension, "priority", PRIORITY_READER)

        unique = name
        ordinal = 0
        while unique in self._extensions:
            ordinal += 1
            unique = f"{name}_{ordinal}"
        # A bound method cannot take the attribute; it is registered under ``unique`` anyway.
        with contextlib.suppress(AttributeError, TypeError):
            extension.name = unique
        self._extensions[unique] = _ExtensionEntry(
            extension, trigger, priority, call_before_training
        )

    def get_extension(self, name):
        """Return the extension registered under ``name``.

        Raises:
            ValueError: no extension has that name.
        """
        entry = self._extensions.get(name)
        if entry is None:
            raise ValueError(
                f"Trainer.get_extension: extension {name!r} not found; registered: "
                f"{list(self._extensions)}"
            )
        return entry.extension

    def run(self, show_loop_exception_msg=True):
        """Run the training loop until the stop trigger fires.

        At the start, ``initialize(trainer)`` of every extension that has it
        (except those whose trigger says it has ``finished``) is called, then,
        when no update has been done yet (:attr:`is_before_training`; not in a
        run resumed from a snapshot), the extensions registered with
        ``call_before_training``. At the end,
        also when the loop raised, ``finalize()`` of every extension and the
        updater's ``finalize()`` are called. When the loop raises an
        Exception, every extension's ``on_error(trainer, exc, tb)`` is called
        (exceptions from these are printed and ignored) and the exception is
        re-raised.

        The run keeps the memory of freed arrays in the process for the next
        iterations (:func:`dbr.core.memory.keep_freed_memory`, a setting of the
        whole process) unless ``DBR_KEEP_FREED_MEMORY`` is ``0``.

        Args:
            show_loop_exception_msg (bool): print the exception and its
                traceback to stderr before finalizing, so that a finalizer
                that hangs does not hide it.

        Raises:
            RuntimeError: the trainer has already completed a run.
        """
        if self._done:
            raise RuntimeError(
                "Trainer.run: this trainer has already finished its run; a trainer "
                "cannot run its training loop twice (make a new Trainer, or load a "
                "snapshot into one)"
            )
        os.makedirs(self.out, exist_ok=True)
        memory.keep_freed_memory()

        entries = sorted(self._extensions.values(), key=lambda entry: -entry.priority)
        self._start_at = _get_time()

        for entry in entries:
            initialize = getattr(entry.extension, "initialize", None)
            if initialize and not getattr(entry.trigger, "finished", False):
                initialize(self)

        update = self.updater.update
        reporter = self.reporter
        stop_trigger = self.stop_trigger
        completed = False
        try:
            if self.is_before_training:
                self.observation = {}
                with reporter.scope(self.observation):
                    for entry in entries:
                        if entry.call_before_training:
                            entry.extension(self)

            while not stop_trigger(self):
                self.observation = {}
                with reporter.scope(self.observation):
                    update()
                    for entry in entries:
                        if entry.trigger(self):
                            entry.extension(self)
            completed = True
        except Exception as e:
            tb = e.__traceback__
            if show_loop_exception_msg:
                _print_exception("Exception in main training loop", e, tb)
                print(
                    "Will finalize trainer extensions and updater before reraising the exception.",
                    file=sys.stderr,
                )
            for entry in entries:
                on_error = getattr(entry.extension, "on_error", None)
                if on_error:
                    try:
                        on_error(self, e, tb)
                    except Exception as handler_error:
                        _print_exception(
                            "Exception in error handler",
                            handler_error,
                            handler_error.__traceback__,
                        )
            raise
        finally:
            self._finalize(entries, raising=not completed)

        self._final_elapsed_time = self.elapsed_time
        self._done = True

    def _finalize(self, entries, raising):
        """Finalize every extension and the updater, even if one of them raises.

        The first finalizer error is raised after all have run, unless the loop
        is already raising (then it is printed, like every further one).
        """
        finalizers = [getattr(entry.extension, "finalize", None) for entry in entries]
        finalizers.append(self.updater.finalize)
        first_error = None
        for finalize in finalizers:
            if not finalize:
                continue
            try:
                finalize()
            except Exception as e:
                if first_error is None:
                    first_error = e
                if raising or first_error is not e:
                    _print_exception("Exception in finalizer", e, e.__traceback__)
        if first_error is not None and not raising:
            raise first_error

    def _serialize_extensions(self, serializer):
        stored = stored_keys(serializer) if isinstance(serializer, Deserializer) else None
        skipped = []
        for group, attr in (("extensions", "extension"), ("extension_triggers", "trigger")):
            child = serializer[group]
            if stored is None:
                held, orphans = self._extensions, ()
            else:
                held, orphans = _stored_extension_state(stored, group, self._extensions)
            for name, entry in self._extensions.items():
                part = getattr(entry, attr)
                if name in held and hasattr(part, "serialize"):
                    part.serialize(child[name])
            # Requested (and dropped) so that the loader accepts them as read.
            for key in orphans:
                child(key, None)
            skipped.extend(f"{group}/{key}" for key in orphans)
        if skipped and not serializer.dry_run:
            names = sorted({key.split("/")[1] for key in skipped})
            warnings.warn(
                f"Trainer.serialize: skipped the stored state of extension(s) "
                f"{', '.join(map(repr, names))}, which this trainer does not have: "
                f"{', '.join(map(repr, skipped))}",
                stacklevel=2,
            )

    def serialize(self, serializer):
        """Save or load the trainer's state.

        Keys: the updater under 'updater', the stop trigger under
        'stop_trigger' (when it has ``serialize``), each extension under
        'extensions/<name>' and each extension's trigger under
        'extension_triggers/<name>' (when they have ``serialize``), and the
        elapsed time under '_snapshot_elapsed_time' (a resumed run's
        :attr:`elapsed_time` continues from it).

        Loading from a file (``load_npz``, ``load_hdf5``) resumes a trainer
        whose extensions differ from those of the trainer that was saved, as
        Chainer does: the stored state of extensions that this trainer does
        not have is skipped, with one warning naming it, and an extension
        (or trigger) whose state the file lacks starts fresh, as if it had
        been added after loading. The updater's keys (model, optimizers,
        iterators) and the stop trigger's stay strict.
        """
        self.updater.serialize(serializer["updater"])
        if hasattr(self.stop_trigger, "serialize"):
            self.stop_trigger.serialize(serializer["stop_trigger"])
        self._serialize_extensions(serializer)
        if isinstance(serializer, Deserializer):
            elapsed = serializer("_snapshot_elapsed_time", 0.0)
            if not serializer.dry_run:
                self._snapshot_elapsed_time = float(elapsed)
        else:
            elapsed = self._snapshot_elapsed_time if self._start_at is None else self.elapsed_time
            serializer("_snapshot_elapsed_time", float(elapsed))
