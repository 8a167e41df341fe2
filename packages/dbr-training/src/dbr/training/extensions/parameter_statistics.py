"""ParameterStatistics: report statistics of the parameters and gradients of links."""

import numpy

from dbr.core import DictSummary, Link, backend, report
from dbr.training import extension
from dbr.training.triggers import get_trigger

_PERCENTILE_SIGMAS = (0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87)


def _mean(x):
    return backend.get_array_module(x).mean(x)


def _std(x):
    return backend.get_array_module(x).std(x)


def _min(x):
    return backend.get_array_module(x).min(x)


def _max(x):
    return backend.get_array_module(x).max(x)


def _zeros(x):
    return backend.get_array_module(x).count_nonzero(x == 0)


def _percentiles(x):
    xp = backend.get_array_module(x)
    return xp.percentile(x, xp.asarray(_PERCENTILE_SIGMAS))


class ParameterStatistics(extension.Extension):
    """Trainer extension reporting statistics of the parameters and gradients of links.

    At every iteration it computes each statistic of each (flattened)
    parameter array and/or gradient of the given links and accumulates them;
    when ``trigger`` fires it reports their means over the interval and
    starts over. The keys follow Chainer's template
    ``'{prefix}/{link name}{param path}/{data|grad}/{statistic}'``, e.g.
    ``'main/l1/W/data/mean'`` for the link named ``'main'``; a root link
    without a name is named ``'None'`` (Chainer's behaviour); the prefix and
    its slash are left out when ``prefix`` is None. A statistic returning
    several values (``percentile``) gets one key per value, suffixed
    ``'/0'``, ``'/1'``, ...

    The default statistics are ``mean``, ``std``, ``min``, ``max``, ``zeros``
    (the number of zero elements) and ``percentile`` (the percentiles at
    0.13, 2.28, 15.87, 50, 84.13, 97.72 and 99.87: the median and +-1, 2, 3
    sigma of a normal distribution). Arrays that are not there yet (an
    uninitialized parameter, a gradient before the first backward) are
    skipped.

    Args:
        links (Link or list of Links): the links whose parameters are watched.
        statistics: a dict ``{name: function(array) -> scalar or 1-d array}``,
            ``'default'`` (the statistics above) or None (none; add some with
            :meth:`register_statistics`).
        report_params (bool): report statistics of the parameter values (``data``).
        report_grads (bool): report statistics of the gradients (``grad``).
        prefix (str): prefix of every key, or None.
        trigger: when to report (a trigger or a ``(period, unit)`` tuple);
            ``(1, 'epoch')`` by default.
        skip_nan_params (bool): report NaN for the statistics of an array
            containing NaN instead of computing them: one NaN per statistic,
            under its key without the ``'/0'``, ``'/1'``, ... suffixes (as
            in Chainer).
    """

    default_name = "parameter_statistics"
    priority = extension.PRIORITY_WRITER
    report_key_template = "{prefix}{link_name}{param_name}/{attr_name}/{function_name}"
    default_statistics = {
        "mean": _mean,
        "std": _std,
        "min": _min,
        "max": _max,
        "zeros": _zeros,
        "percentile": _percentiles,
    }

    def __init__(
        self,
        links,
        statistics="default",
        report_params=True,
        report_grads=True,
        prefix=None,
        trigger=(1, "epoch"),
        skip_nan_params=False,
    ):
        if not isinstance(links, (list, tuple)):
            links = (links,)
        for link in links:
            if not isinstance(link, Link):
                raise TypeError(
                    f"ParameterStatistics: expected links to be a Link or a list of Links, got "
                    f"an element of type {type(link).__name__}"
                )
        if statistics is None:
            statistics = {}
        elif isinstance(statistics, str):
            if statistics != "default":
                raise ValueError(
                    f"ParameterStatistics: expected statistics to be a dict, 'default' or None, "
                    f"got {statistics!r}"
                )
            statistics = self.default_statistics
        elif not isinstance(statistics, dict):
            raise TypeError(
                f"ParameterStatistics: expected statistics to be a dict, 'default' or None, got "
                f"{type(statistics).__name__}"
            )
        for name, function in statistics.items():
            if not callable(function):
                raise TypeError(
                    f"ParameterStatistics: statistic {name!r} must be callable, got "
                    f"{type(function).__name__}"
                )
        if prefix is not None and not isinstance(prefix, str):
            raise TypeError(
                f"ParameterStatistics: expected prefix to be a str or None, got "
                f"{type(prefix).__name__}"
            )
        self._links = tuple(links)
        self._statistics = dict(statistics)
        self._attrs = [
            name for name, on in (("data", report_params), ("grad", report_grads)) if on
        ]
        self._prefix = prefix
        self._trigger = get_trigger(trigger)
        self._summary = DictSummary()
        self._skip_nan_params = bool(skip_nan_params)

    def __call__(self, trainer):
        """Accumulate the statistics of this iteration; report their means when triggered."""
        prefix = self._prefix + "/" if self._prefix else ""
        statistics = {}
        for link in self._links:
            link_name = str(getattr(link, "name", None))
            for param_name, param in link.namedparams():
                for attr_name in self._attrs:
                    array = param.array if attr_name == "data" else param.grad
                    if array is None:
                        continue
                    array = array.ravel()
                    has_nan = self._skip_nan_params and bool(
                        backend.get_array_module(array).isnan(array).any()
                    )
                    for function_name, function in self._statistics.items():
                        key = self.report_key_template.format(
                            prefix=prefix,
                            link_name=link_name,
                            param_name=param_name,
                            attr_name=attr_name,
                            function_name=function_name,
                        )
                        if has_nan:
                            statistics[key] = numpy.nan
                            continue
                        value = function(array)
                        if getattr(value, "size", 1) > 1:
                            for i, v in enumerate(value):
                                statistics[f"{key}/{i}"] = v
                        else:
                            statistics[key] = value
        self._summary.add(statistics)
        if self._trigger(trainer):
            report(self._summary.compute_mean())
            self._summary = DictSummary()

    def register_statistics(self, name, function):
        """Add (or replace) the statistic ``name`` computed by ``function(array)``."""
        if not callable(function):
            raise TypeError(
                f"ParameterStatistics.register_statistics: expected function to be callable, "
                f"got {type(function).__name__}"
            )
        self._statistics[name] = function

    def serialize(self, serializer):
        """Save or load the trigger state (``_trigger/``) and the summary (``_summary/``)."""
        if hasattr(self._trigger, "serialize"):
            self._trigger.serialize(serializer["_trigger"])
        self._summary.serialize(serializer["_summary"])
