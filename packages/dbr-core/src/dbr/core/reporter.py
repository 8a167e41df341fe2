"""Reporting observed values (losses, accuracies, statistics) and summarizing them.

Code anywhere in a model calls :func:`report` with a dict of values; the
current :class:`Reporter` of the thread (made current with ``with reporter:``
or :meth:`Reporter.scope`) stores them in its ``observation`` dict, under
names prefixed by the reporting object's registered name ('main/loss'). With
no current reporter, :func:`report` does nothing. :class:`Summary` and
:class:`DictSummary` accumulate reported scalars into means and standard
deviations.
"""

import collections
import contextlib
import copy
import json
import math
import threading

import numpy

from dbr.core import backend
from dbr.core.configuration import config
from dbr.core.serializers.base import Serializer
from dbr.core.variable import Variable

_local = threading.local()


def _reporters():
    try:
        return _local.reporters
    except AttributeError:
        _local.reporters = []
        return _local.reporters


class Reporter:
    """An object to which observed values are reported.

    Values reported with an observer (any object registered with
    :meth:`add_observer`) are stored under ``'<observer name>/<key>'``;
    others under their own key. A reported :class:`~dbr.core.Variable` is
    stored as a copy cut from the graph, so that the observation does not keep
    the graph alive, unless ``config.keep_graph_on_report`` is True.

    Attributes:
        observation: the dict that reported values are written to.

    >>> reporter = Reporter()
    >>> model = object()
    >>> reporter.add_observer('main', model)
    >>> observation = {}
    >>> with reporter.scope(observation):
    ...     report({'loss': 0.5}, model)
    >>> observation
    {'main/loss': 0.5}
    """

    def __init__(self):
        self._observer_names = {}
        self.observation = {}

    def __enter__(self):
        """Make this reporter current in this thread (the previous one comes back on exit)."""
        _reporters().append(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _reporters().pop()

    @contextlib.contextmanager
    def scope(self, observation):
        """Make this reporter current and write reported values to ``observation`` in a block."""
        old = self.observation
        self.observation = observation
        self.__enter__()
        try:
            yield
        finally:
            self.__exit__(None, None, None)
            self.observation = old

    def add_observer(self, name, observer):
        """Register ``observer`` (told apart by identity, not equality) under ``name``."""
        self._observer_names[id(observer)] = name

    def add_observers(self, prefix, observers):
        """Register each ``(name, observer)`` pair under ``prefix + name``.

        For example ``add_observers('main', model.namedlinks(skipself=True))``
        registers the link at '/l1' as 'main/l1'.
        """
        for name, observer in observers:
            self._observer_names[id(observer)] = prefix + name

    def report(self, values, observer=None):
        """Write ``values`` (a dict) to the observation, keys prefixed by the observer's name.

        Raises:
            KeyError: ``observer`` is given but was never registered.
        """
        if not config.keep_graph_on_report:
            values = {k: _cut_from_graph(v) for k, v in values.items()}
        if observer is None:
            self.observation.update(values)
            return
        name = self._observer_names.get(id(observer))
        if name is None:
            raise KeyError(
                f"Reporter.report: the observer {type(observer).__name__} at {id(observer):#x} "
                f"is not registered; register it with add_observer or add_observers"
            )
        for key, value in values.items():
            self.observation[f"{name}/{key}"] = value


def _cut_from_graph(value):
    if isinstance(value, Variable):
        value = copy.copy(value)
        value.unchain()
    return value


def get_current_reporter():
    """Return the current reporter of this thread.

    Raises:
        IndexError: no reporter is current.
    """
    reporters = _reporters()
    if not reporters:
        raise IndexError(
            "get_current_reporter: no reporter is current in this thread; make one current "
            "with `with reporter:` or `with reporter.scope(observation):`"
        )
    return reporters[-1]


def report(values, observer=None):
    """Report ``values`` (a dict) to the current reporter; do nothing if there is none.

    Args:
        values: names to observed values (scalars, arrays or Variables).
        observer: the reporting object, registered to the reporter; its name
            prefixes the keys ('main/loss').
    """
    reporters = _reporters()
    if reporters:
        reporters[-1].report(values, observer)


@contextlib.contextmanager
def report_scope(observation):
    """Write values reported in a ``with`` block to ``observation`` (the current reporter's)."""
    current = get_current_reporter()
    old = current.observation
    current.observation = observation
    try:
        yield
    finally:
        current.observation = old


def _as_scalar(value, who, what):
    """A Python number for host values; a 0-d float64 device array for others (no sync)."""
    if isinstance(value, Variable):
        value = value.array
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        if value.size != 1:
            raise ValueError(
                f"{who}: {what} must be a scalar, got an array of shape {value.shape}"
            )
        return value.item()
    size = getattr(value, "size", None)
    if size is None:
        raise TypeError(f"{who}: {what} must be a number or array, got {type(value).__name__}")
    if size != 1:
        raise ValueError(f"{who}: {what} must be a scalar, got an array of shape {value.shape}")
    return value.reshape(()).astype(numpy.float64)


class Summary:
    """Running mean and standard deviation of a sequence of (weighted) scalars.

    Sums are kept in float64: as Python floats for host values, as 0-d device
    arrays for device values (so adding never synchronizes with the device).
    """

    def __init__(self):
        self._x = 0.0
        self._x2 = 0.0
        self._n = 0

    def add(self, value, weight=1):
        """Add ``value`` (a number, a size-1 array or a Variable) with ``weight``."""
        value = _as_scalar(value, "Summary.add", "value")
        weight = _as_scalar(weight, "Summary.add", "weight")
        if isinstance(value, int):
            value = float(value)
        self._x += weight * value
        self._x2 += weight * value * value
        self._n += weight

    def compute_mean(self):
        """Return the weighted mean of the values added so far."""
        x, n = self._x, self._n
        if isinstance(n, (int, float)) and n == 0:
            raise ZeroDivisionError("Summary.compute_mean: no value has been added")
        return x / n

    def make_statistics(self):
        """Return ``(mean, std)`` of the values added so far (population std)."""
        mean = self.compute_mean()
        var = self._x2 / self._n - mean * mean
        if isinstance(var, float):
            return mean, math.sqrt(max(var, 0.0))
        xp = backend.get_array_module(var)
        return mean, xp.sqrt(xp.maximum(var, 0.0))

    def serialize(self, serializer):
        """Save or load the running sums under Chainer's keys ``_x``, ``_x2`` and ``_n``."""
        self._x = serializer("_x", self._x)
        self._x2 = serializer("_x2", self._x2)
        if isinstance(serializer, Serializer) or not isinstance(self._n, (int, float)):
            self._n = serializer("_n", self._n)
            return
        # The count is an int, or a float once weights were floats: accept either stored type.
        n = serializer("_n", float(self._n))
        if not getattr(serializer, "dry_run", False):
            self._n = int(n) if n.is_integer() else n


class DictSummary:
    """Running means and standard deviations of the scalar entries of a sequence of dicts."""

    def __init__(self):
        self._summaries = collections.defaultdict(Summary)

    def add(self, d):
        """Add the scalar entries of dict ``d``.

        An entry may be a number, a 0-d or size-1 array, a Variable of one, or
        a ``(value, weight)`` tuple; other entries (strings, larger arrays,
        None, ...) are ignored, as in Chainer.

        Raises:
            ValueError: a tuple's weight is not a scalar.
        """
        summaries = self._summaries
        for key, value in d.items():
            weight = 1
            if isinstance(value, tuple):
                value, weight = value
                w = weight.array if isinstance(weight, Variable) else weight
                if not _is_scalar(w):
                    raise ValueError(
                        f"DictSummary.add: the weight of {key!r} must be a scalar, got "
                        f"{type(w).__name__} of shape {getattr(w, 'shape', None)}"
                    )
            if isinstance(value, Variable):
                value = value.array
            if _is_scalar(value):
                summaries[key].add(value, weight=weight)

    def compute_mean(self):
        """Return ``{name: mean}`` for every entry added."""
        return {name: summary.compute_mean() for name, summary in self._summaries.items()}

    def make_statistics(self):
        """Return ``{name: mean, name + '.std': std}`` for every entry added."""
        stats = {}
        for name, summary in self._summaries.items():
            stats[name], stats[name + ".std"] = summary.make_statistics()
        return stats

    def serialize(self, serializer):
        """Save or load the summaries under Chainer's keys.

        The names go to ``_names`` (a JSON list), the i-th summary to
        ``_summaries/<i>/``. Loading replaces every summary; with a
        non-strict load of a file that lacks ``_names``, nothing changes.
        """
        if isinstance(serializer, Serializer):
            names = list(self._summaries)
            serializer("_names", json.dumps(names))
            for index, name in enumerate(names):
                self._summaries[name].serialize(serializer["_summaries"][str(index)])
            return
        text = serializer("_names", "")
        if not text:
            return
        names = json.loads(text)
        summaries = collections.defaultdict(Summary)
        for index, name in enumerate(names):
            summaries[name].serialize(serializer["_summaries"][str(index)])
        if not getattr(serializer, "dry_run", False):
            self._summaries = summaries


def _is_scalar(value):
    if isinstance(value, (int, float, numpy.number, numpy.bool_)):
        return True
    dtype = getattr(value, "dtype", None)
    return getattr(value, "size", None) == 1 and dtype is not None and dtype.kind in "biuf"
