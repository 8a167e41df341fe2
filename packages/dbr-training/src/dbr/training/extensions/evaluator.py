"""Evaluator: run a model over a validation set and report the means of what it reports."""

import copy
import sys
import warnings

import tqdm

from dbr.core import (
    DictSummary,
    Link,
    Reporter,
    backend,
    get_current_reporter,
    no_backprop_mode,
    report,
    report_scope,
    using_config,
)
from dbr.datasets import call_converter, concat_examples
from dbr.training import extension


class Evaluator(extension.Extension):
    """Trainer extension evaluating a model on a validation set.

    At each call it sweeps the main iterator once (after ``reset()``), feeds
    every converted batch to ``eval_func`` (the main target when None) in
    test mode (``config.train = False``) without building a graph, and
    collects what the function reports into a :class:`~dbr.core.DictSummary`.
    The means are reported to the trainer under ``'<name>/<observer>/<key>'``:
    registered in a trainer under its default name ``'validation'``, a loss
    reported by the main target gives ``'validation/main/loss'``.

    A converted batch is passed to ``eval_func`` as positional arguments when
    it is a tuple, as keyword arguments when it is a dict, and as one
    argument otherwise.

    Args:
        iterator: the validation iterator (give it ``repeat=False`` so that a
            sweep ends), or a dict of iterators with a ``'main'`` entry.
        target (Link or dict of Links): the model, or a dict of models with a
            ``'main'`` entry; each target and its sublinks are registered as
            observers (``'main'``, ``'main/predictor'``, ...).
        converter: called as ``converter(batch, device)``; default
            :func:`~dbr.datasets.concat_examples`.
        device: a device specifier, or None to leave the arrays where the
            converter puts them.
        eval_hook: called as ``eval_hook(evaluator)`` at the start of each
            evaluation, or None.
        eval_func: the function evaluated on each batch; the main target when None.
        progress_bar (bool): show a tqdm bar on ``sys.stdout`` while
            evaluating (keyword only; False by default).

    Attributes:
        converter, device, eval_hook, eval_func: as given (``device`` as a
            :class:`~dbr.core.backend.Device` or None).
    """

    trigger = 1, "epoch"
    default_name = "validation"
    priority = extension.PRIORITY_WRITER
    name = None

    def __init__(
        self,
        iterator,
        target,
        converter=concat_examples,
        device=None,
        eval_hook=None,
        eval_func=None,
        *,
        progress_bar=False,
    ):
        who = type(self).__name__
        if iterator is None:
            raise TypeError(
                f"{who}: expected iterator to be an iterator or a dict of iterators with a "
                f"'main' entry, got None"
            )
        iterators = dict(iterator) if isinstance(iterator, dict) else {"main": iterator}
        if "main" not in iterators:
            raise ValueError(
                f"{who}: a dict of iterators must have a 'main' entry, got the keys "
                f"{sorted(iterators)}"
            )
        if target is None:
            raise TypeError(
                f"{who}: expected target to be a Link or a dict of Links with a 'main' entry, "
                f"got None; pass the model to evaluate"
            )
        if isinstance(target, Link):
            targets = {"main": target}
        elif isinstance(target, dict):
            targets = dict(target)
        else:
            raise TypeError(
                f"{who}: expected target to be a Link or a dict of Links, got "
                f"{type(target).__name__}"
            )
        for name, link in targets.items():
            if not isinstance(link, Link):
                raise TypeError(
                    f"{who}: expected target {name!r} to be a Link, got {type(link).__name__}"
                )
        for argname, value in (
            ("converter", converter),
            ("eval_hook", eval_hook),
            ("eval_func", eval_func),
        ):
            if value is not None and not callable(value):
                raise TypeError(
                    f"{who}: expected {argname} to be callable, got {type(value).__name__}"
                )
        if converter is None:
            raise TypeError(f"{who}: expected converter to be callable, got None")
        for name, it in iterators.items():
            if getattr(it, "repeat", False) is True:
                warnings.warn(
                    f"{who}: iterator {name!r} has repeat=True, so a sweep over it may never "
                    f"end; create validation iterators with repeat=False",
                    stacklevel=2,
                )
        self._iterators = iterators
        self._targets = targets
        self.converter = converter
        self.device = None if device is None else backend.get_device(device)
        self.eval_hook = eval_hook
        self.eval_func = eval_func
        self._progress_bar = bool(progress_bar)

    def get_iterator(self, name):
        """Return the iterator registered under ``name``."""
        return self._iterators[name]

    def get_all_iterators(self):
        """Return a dict of all iterators."""
        return dict(self._iterators)

    def get_target(self, name):
        """Return the target registered under ``name``."""
        return self._targets[name]

    def get_all_targets(self):
        """Return a dict of all targets."""
        return dict(self._targets)

    def _make_reporter(self, prefix):
        reporter = Reporter()
        for name, target in self._targets.items():
            reporter.add_observer(prefix + name, target)
            reporter.add_observers(prefix + name, target.namedlinks(skipself=True))
        return reporter

    def __call__(self, trainer=None):
        """Evaluate, report the results to the current reporter and return them.

        The keys are prefixed by the extension's name (``'validation/'``
        once registered in a trainer; no prefix while ``name`` is None).

        Returns:
            dict: the mean of every reported value, by prefixed key.
        """
        prefix = "" if self.name is None else self.name + "/"
        with self._make_reporter(prefix), using_config("train", False):
            result = self.evaluate()
        report(result)
        return result

    def evaluate(self):
        """Sweep the main iterator once and return the means of the reported values.

        It calls ``eval_hook``, rewinds the iterator with ``reset()`` (or
        works on a shallow copy of an iterator that has no ``reset``), and
        runs ``eval_func`` on every batch with ``config.train = False`` and
        backprop disabled. Values are reported to the current reporter (the
        one :meth:`__call__` sets up, in which the targets are registered as
        ``'main'``, ``'main/<sublink>'``, ..., or the caller's own, as in
        Chainer) into a fresh observation per batch; called with no current
        reporter, it makes one in which the targets are registered.

        Returns:
            dict: ``{key: mean}`` of the values reported during the sweep.

        Raises:
            KeyError: there is no ``eval_func`` and no target named ``'main'``.
        """
        iterator = self._iterators["main"]
        eval_func = self.eval_func
        if eval_func is None:
            if "main" not in self._targets:
                raise KeyError(
                    f"{type(self).__name__}.evaluate: without eval_func, the targets must have "
                    f"a 'main' entry, got the keys {sorted(self._targets)}"
                )
            eval_func = self._targets["main"]
        if self.eval_hook is not None:
            self.eval_hook(self)
        if hasattr(iterator, "reset"):
            iterator.reset()
            it = iterator
        else:
            it = copy.copy(iterator)
        try:
            reporter = get_current_reporter()
        except IndexError:
            reporter = self._make_reporter("")

        bar = _make_progress_bar(it) if self._progress_bar else None
        summary = DictSummary()
        with reporter, using_config("train", False), no_backprop_mode():
            for batch in it:
                observation = {}
                with report_scope(observation):
                    in_arrays = call_converter(self.converter, batch, self.device)
                    if isinstance(in_arrays, tuple):
                        eval_func(*in_arrays)
                    elif isinstance(in_arrays, dict):
                        eval_func(**in_arrays)
                    else:
                        eval_func(in_arrays)
                summary.add(observation)
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()
        return summary.compute_mean()

    def finalize(self):
        """Finalize every iterator (release their workers, if any)."""
        for iterator in self._iterators.values():
            finalize = getattr(iterator, "finalize", None)
            if finalize is not None:
                finalize()


def _make_progress_bar(iterator):
    total = None
    dataset = getattr(iterator, "dataset", None)
    batch_size = getattr(iterator, "batch_size", None)
    if dataset is not None and batch_size:
        total = -(-len(dataset) // batch_size)
    return tqdm.tqdm(total=total, desc="validation", unit="iters", file=sys.stdout, leave=False)
