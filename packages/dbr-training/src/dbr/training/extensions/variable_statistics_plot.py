"""VariableStatisticsPlot: plot running statistics of parameters' data and gradients."""

import numbers
import os

import numpy

from dbr.core import Link, Variable, backend
from dbr.training.extension import Extension
from dbr.training.extensions._matplotlib import plotting_available
from dbr.training.extensions.plot_report import _save_figure
from dbr.training.triggers import get_trigger

_DEFAULT_PERCENTILES = (0, 0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87, 100)


def _collect_variables(targets):
    if isinstance(targets, Variable):
        return [targets]
    if isinstance(targets, Link):
        return list(targets.params(include_uninit=True))
    if isinstance(targets, (list, tuple)):
        return [v for t in targets for v in _collect_variables(t)]
    raise TypeError(
        "VariableStatisticsPlot: expected targets to be a Variable, a Link or a list of them, "
        f"got {type(targets).__name__}"
    )


class Reservoir:
    """A uniform random sample of at most ``size`` arrays from a stream (reservoir sampling).

    Each added array keeps its index in the stream; :meth:`get_data` returns
    the sample sorted by index.

    Args:
        size (int): the most arrays kept (at least 1).
        data_shape (tuple of int): the shape of each array.
        dtype: the dtype they are stored in.
    """

    def __init__(self, size, data_shape, dtype=numpy.float32):
        if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
            raise ValueError(f"Reservoir: expected size to be a positive int, got {size!r}")
        self.data = numpy.zeros((size, *data_shape), dtype=dtype)
        self.idxs = numpy.zeros((size,), dtype=numpy.int64)
        self.counter = 0
        self._rng = numpy.random.default_rng()

    def add(self, x, idx=None):
        """Offer ``x`` (of ``data_shape``) with its index ``idx`` (the count so far if None)."""
        if numpy.shape(x) != self.data.shape[1:]:
            raise ValueError(
                f"Reservoir.add: expected x of shape {self.data.shape[1:]}, got {numpy.shape(x)}"
            )
        if idx is None:
            idx = self.counter
        size = len(self.idxs)
        slot = self.counter if self.counter < size else int(self._rng.integers(self.counter + 1))
        if slot < size:
            self.data[slot] = backend.to_cpu(x)
            self.idxs[slot] = idx
        self.counter += 1

    def get_data(self):
        """Return ``(idxs, data)``: the sample's indices, increasing, and its arrays in order."""
        n = min(self.counter, len(self.idxs))
        order = numpy.argsort(self.idxs[:n], kind="stable")
        return self.idxs[:n][order], self.data[:n][order]


class Statistician:
    """Computes the mean, standard deviation and percentiles of arrays.

    Args:
        collect_mean (bool): compute the mean (key ``'mean'``).
        collect_std (bool): compute the standard deviation (key ``'std'``).
        percentile_sigmas (sequence of float): the percentiles, in [0, 100],
            to compute (key ``'percentile'``); empty for none.
    """

    def __init__(self, collect_mean, collect_std, percentile_sigmas):
        self.collect_mean = bool(collect_mean)
        self.collect_std = bool(collect_std)
        self.percentile_sigmas = tuple(percentile_sigmas)
        if any(not 0 <= p <= 100 for p in self.percentile_sigmas):
            raise ValueError(
                f"Statistician: expected percentile_sigmas in [0, 100], got {percentile_sigmas!r}"
            )

    def __call__(self, x, axis=0, dtype=None, xp=None):
        """Return ``{'mean': ..., 'std': ..., 'percentile': ...}`` (the collected ones) of ``x``.

        Args:
            x (array): the values, NumPy or CuPy.
            axis (None, int or tuple of int): the axes reduced (all if None).
            dtype: the dtype the statistics are computed in (``x``'s if None).
            xp: the array module of ``x`` (found from ``x`` if None).

        Returns:
            dict: arrays of the statistics; the percentiles are stacked along a
            new first axis, one per ``percentile_sigmas``.
        """
        xp = backend.get_array_module(x) if xp is None else xp
        if dtype is not None:
            x = x.astype(dtype, copy=False)
        out = {}
        if self.collect_mean:
            out["mean"] = x.mean(axis=axis)
        if self.collect_std:
            out["std"] = x.std(axis=axis)
        if self.percentile_sigmas:
            q = xp.asarray(self.percentile_sigmas, dtype=x.dtype)
            out["percentile"] = xp.percentile(x, q, axis=axis).astype(x.dtype, copy=False)
        return out


class VariableStatisticsPlot(Extension):
    """Trainer extension that plots statistics of variables' values and gradients.

    At every call (default trigger ``(1, 'iteration')``) the extension
    gathers all elements of the target variables (every parameter of a
    Link), separately for their data and their gradients, and computes their
    mean, standard deviation and the given percentiles. These rows, indexed by
    the iteration, are kept in a fixed-size reservoir sample (older rows are
    dropped uniformly at random once ``max_sample_size`` rows were seen).
    When its own ``trigger`` fires, it draws the sample (one column of axes
    for data, one for gradients; mean with a std error bar on top,
    percentile bands below) and writes the image to
    ``<trainer.out>/<filename>`` atomically. A statistic with nothing to
    measure (no gradient yet, uninitialized parameters) is recorded as NaN.

    Args:
        targets (Variable, Link, or list of them): the variables to watch.
        max_sample_size (int): the number of rows the reservoir keeps.
        report_data (bool): whether to compute and plot the statistics of the
            variables' data.
        report_grad (bool): whether to compute and plot those of the gradients.
        plot_mean (bool): whether to compute and plot the mean.
        plot_std (bool): whether to compute and plot the standard deviation.
        percentile_sigmas (float or tuple of float): the percentiles to plot,
            each in [0, 100] (by default those of -inf, -3, -2, -1, 0, 1, 2, 3
            and +inf standard deviations of a normal distribution); an empty
            tuple plots none.
        trigger: when to write the image: a trigger or a ``(period, unit)``
            tuple; default ``(1, 'epoch')``.
        filename (str): the image file name under the trainer's output
            directory (``'statistics.png'``); ``file_name`` is accepted as
            an alias, as in Chainer.
        figsize (tuple of float): Matplotlib's figure size in inches, or None.
        marker (str): the Matplotlib marker of the points, or None.
        grid (bool): whether to draw the axes grids.

    Without matplotlib (the extra ``dbr-training[plot]``) it warns once and
    plots nothing, as in Chainer.

    Raises:
        TypeError: an argument has the wrong type, or an unknown keyword is given.
        ValueError: no variable is found in ``targets``, nothing is left to
            compute or plot, ``max_sample_size`` is below 1, or a percentile
            lies outside [0, 100].
    """

    def __init__(
        self,
        targets,
        max_sample_size=1000,
        report_data=True,
        report_grad=True,
        plot_mean=True,
        plot_std=True,
        percentile_sigmas=_DEFAULT_PERCENTILES,
        trigger=(1, "epoch"),
        filename=None,
        figsize=None,
        marker=None,
        grid=True,
        **kwargs,
    ):
        who = "VariableStatisticsPlot"
        file_name = kwargs.pop("file_name", None)
        if kwargs:
            raise TypeError(f"{who}: unexpected keyword argument(s) {', '.join(sorted(kwargs))}")
        if filename is None:
            filename = "statistics.png" if file_name is None else file_name
        if not isinstance(filename, str) or not filename:
            raise TypeError(f"{who}: expected filename to be a non-empty str, got {filename!r}")
        variables = _collect_variables(targets)
        if not variables:
            raise ValueError(f"{who}: expected at least one variable in targets, got none")
        if (
            isinstance(max_sample_size, bool)
            or not isinstance(max_sample_size, numbers.Integral)
            or max_sample_size < 1
        ):
            raise ValueError(
                f"{who}: expected max_sample_size to be an int >= 1, got {max_sample_size!r}"
            )
        if isinstance(percentile_sigmas, numbers.Real):
            percentile_sigmas = (percentile_sigmas,)
        elif percentile_sigmas is None:
            percentile_sigmas = ()
        percentiles = tuple(percentile_sigmas)
        if not all(
            isinstance(p, numbers.Real) and not isinstance(p, bool) and 0 <= p <= 100
            for p in percentiles
        ):
            raise ValueError(
                f"{who}: expected percentile_sigmas in [0, 100], got {percentile_sigmas!r}"
            )
        if not (plot_mean or plot_std or percentiles):
            raise ValueError(
                f"{who}: nothing to plot: plot_mean and plot_std are False and "
                "percentile_sigmas is empty"
            )
        keys = [k for k, on in (("data", report_data), ("grad", report_grad)) if on]
        if not keys:
            raise ValueError(f"{who}: nothing to plot: report_data and report_grad are False")
        trigger = get_trigger(trigger)
        self._available = plotting_available("VariableStatisticsPlot")

        self._vars = variables
        self._keys = keys
        self._plot_mean = bool(plot_mean)
        self._plot_std = bool(plot_std)
        self._percentiles = percentiles
        self._trigger = trigger
        self._filename = filename
        self._figsize = figsize
        self._marker = marker
        self._grid = grid
        n_stats = int(self._plot_mean) + int(self._plot_std) + len(percentiles)
        self._samples = Reservoir(int(max_sample_size), (len(keys), n_stats))
        self._statistician = Statistician(self._plot_mean, self._plot_std, percentiles)

    @staticmethod
    def available():
        """Return whether matplotlib can be imported (the ``plot`` extra); warn if not."""
        return plotting_available("VariableStatisticsPlot")

    def __call__(self, trainer):
        """Record the statistics of this iteration; when the trigger fires, save the plot."""
        rows = [self._statistics(key) for key in self._keys]
        self._samples.add(numpy.stack(rows), trainer.updater.iteration)
        if self._trigger(trainer) and self._available:
            self._plot(os.path.join(trainer.out, self._filename))

    def _statistics(self, key):
        arrays = []
        for var in self._vars:
            x = var.array if key == "data" else var.grad
            if x is not None:
                arrays.append(x.ravel())
        n_stats = self._samples.data.shape[-1]
        if not arrays:
            return numpy.full(n_stats, numpy.nan, dtype=numpy.float32)
        xp = backend.get_array_module(arrays[0])
        x = xp.concatenate(arrays)
        if x.dtype.itemsize < 4 or x.dtype.kind != "f":
            x = x.astype(numpy.float32)
        stats = self._statistician(x, axis=None, xp=xp)
        rows = [stats[k][None] for k in ("mean", "std") if k in stats]
        if "percentile" in stats:
            rows.append(stats["percentile"])
        return numpy.asarray(backend.to_cpu(xp.concatenate(rows)), dtype=numpy.float32)

    def _plot(self, path):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        idxs, data = self._samples.get_data()
        has_moments = self._plot_mean or self._plot_std
        nrows = int(has_moments) + int(bool(self._percentiles))
        figure = Figure(figsize=self._figsize)
        FigureCanvasAgg(figure)
        axes = figure.subplots(nrows, len(self._keys), sharex=True, squeeze=False)
        offset = int(self._plot_mean) + int(self._plot_std)
        n_pct = len(self._percentiles)
        for col, key in enumerate(self._keys):
            axes[0, col].set_title(key)
            row = 0
            if has_moments:
                ax = axes[row, col]
                if self._plot_mean and self._plot_std:
                    ax.errorbar(
                        idxs,
                        data[:, col, 0],
                        data[:, col, 1],
                        color="C0",
                        ecolor=(0.12, 0.47, 0.71, 0.2),
                        label="mean, std",
                        marker=self._marker,
                    )
                else:
                    label = "mean" if self._plot_mean else "std"
                    ax.plot(idxs, data[:, col, 0], color="C0", label=label, marker=self._marker)
                row += 1
            if n_pct:
                ax = axes[row, col]
                for i in range(n_pct // 2):
                    ax.fill_between(
                        idxs,
                        data[:, col, offset + i],
                        data[:, col, offset + n_pct - 1 - i],
                        color="C0",
                        alpha=0.2,
                        linewidth=0,
                        label="_nolegend_" if n_pct % 2 or i else "percentile",
                    )
                if n_pct % 2:
                    ax.plot(
                        idxs,
                        data[:, col, offset + n_pct // 2],
                        color="C0",
                        label="percentile",
                        marker=self._marker,
                    )
            axes[-1, col].set_xlabel("iteration")
        for ax in axes.ravel():
            ax.legend()
            if self._grid:
                ax.grid()
                ax.set_axisbelow(True)
        _save_figure(figure, path)
