"""PlotReport: plot reported values against the iteration or epoch into an image file."""

import json
import os

from dbr.core.reporter import DictSummary
from dbr.core.serializers import Deserializer, write_atomically
from dbr.training.extension import Extension
from dbr.training.extensions._matplotlib import plotting_available
from dbr.training.triggers import get_trigger


def _save_figure(figure, path, **savefig_kwargs):
    """Render ``figure`` into ``path`` atomically, in the format its extension names."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fmt = os.path.splitext(path)[1][1:].lower() or "png"
    write_atomically(path, lambda tmp: figure.savefig(tmp, format=fmt, **savefig_kwargs))


class PlotReport(Extension):
    """Trainer extension that plots reported values and saves the figure.

    At every call (default trigger ``(1, 'iteration')``) the extension adds
    the current observation's entries for ``y_keys`` to a
    :class:`~dbr.core.DictSummary`. When its own ``trigger`` fires, or when
    it is called before training (registered with
    ``call_before_training=True``: the values reported then get a point of
    their own at iteration 0 / epoch 0), it
    appends the mean of each key since the last firing, paired with the value
    of ``x_key`` (``'iteration'`` or ``'epoch'`` at that moment, or the mean
    of a reported key), to the key's series, draws every series on one axes
    (with Matplotlib's Agg renderer; the user's pyplot backend is neither
    used nor changed) and writes the figure to ``<trainer.out>/<filename>``
    atomically, then starts a new summary. Nothing is written while no
    series has a point.

    Args:
        y_keys (str or iterable of str): the reported keys to plot. None
            plots nothing.
        x_key (str): the key of the x axis: ``'iteration'`` (default),
            ``'epoch'``, or a reported key.
        trigger: when to add a point and write the figure: a trigger or a
            ``(period, unit)`` tuple; default ``(1, 'epoch')``.
        postprocess: None, or a callable ``postprocess(figure, axes,
            summary)`` called before the figure is saved (``summary`` is the
            :class:`~dbr.core.DictSummary` of the values just plotted); it may
            change the figure.
        filename (str): the image file name under the trainer's output
            directory; its extension picks the format (``'plot.png'``).
            ``file_name`` is accepted as an alias, as in Chainer.
        marker (str): the Matplotlib marker of the points (``'x'``); None
            draws lines only.
        grid (bool): whether to draw the axes grid.

    Without matplotlib (the extra ``dbr-training[plot]``) it warns once and
    plots nothing, as in Chainer; the values are still collected and saved
    with the trainer.

    Raises:
        TypeError: an argument has the wrong type, or an unknown keyword is given.
    """

    def __init__(
        self,
        y_keys,
        x_key="iteration",
        trigger=(1, "epoch"),
        postprocess=None,
        filename=None,
        marker="x",
        grid=True,
        **kwargs,
    ):
        file_name = kwargs.pop("file_name", None)
        if kwargs:
            raise TypeError(
                f"PlotReport: unexpected keyword argument(s) {', '.join(sorted(kwargs))}"
            )
        if filename is None:
            filename = "plot.png" if file_name is None else file_name
        if isinstance(y_keys, str):
            y_keys = (y_keys,)
        elif y_keys is not None:
            y_keys = tuple(y_keys)
            if not all(isinstance(k, str) for k in y_keys):
                raise TypeError(f"PlotReport: expected y_keys to be str keys, got {y_keys!r}")
        if not isinstance(x_key, str):
            raise TypeError(f"PlotReport: expected x_key to be a str, got {x_key!r}")
        if not isinstance(filename, str) or not filename:
            raise TypeError(
                f"PlotReport: expected filename to be a non-empty str, got {filename!r}"
            )
        if postprocess is not None and not callable(postprocess):
            raise TypeError(
                f"PlotReport: expected postprocess to be callable or None, got {postprocess!r}"
            )
        if marker is not None and not isinstance(marker, str):
            raise TypeError(f"PlotReport: expected marker to be a str or None, got {marker!r}")
        trigger = get_trigger(trigger)
        self._available = plotting_available("PlotReport")

        self._y_keys = y_keys
        self._x_key = x_key
        self._trigger = trigger
        self._postprocess = postprocess
        self._filename = filename
        self._marker = marker
        self._grid = grid
        self._data = {k: [] for k in y_keys or ()}
        self._summary = DictSummary()

    @staticmethod
    def available():
        """Return whether matplotlib can be imported (the ``plot`` extra); warn if not."""
        return plotting_available("PlotReport")

    def __call__(self, trainer):
        """Accumulate the observation; when the trigger fires, add a point and save the plot."""
        keys = self._y_keys or ()
        observation = trainer.observation
        wanted = set(keys)
        if self._x_key not in ("epoch", "iteration"):
            wanted.add(self._x_key)
        self._summary.add({k: observation[k] for k in wanted if k in observation})

        if not (trainer.is_before_training or self._trigger(trainer)):
            return
        stats = {k: float(v) for k, v in self._summary.compute_mean().items()}
        stats["epoch"] = trainer.updater.epoch
        stats["iteration"] = trainer.updater.iteration
        x = stats.get(self._x_key)
        if x is not None:
            for k in keys:
                if k in stats:
                    self._data[k].append((x, stats[k]))
        if self._available:
            self._plot(os.path.join(trainer.out, self._filename))
        self._summary = DictSummary()

    def serialize(self, serializer):
        """Save or load the plotted series, as JSON under ``_plot_<filename>`` (Chainer's key)."""
        key = f"_plot_{self._filename}"
        if not isinstance(serializer, Deserializer):
            serializer(key, json.dumps(self._data))
            return
        text = serializer(key, "")
        if serializer.dry_run or not text:
            return
        loaded = json.loads(text)
        self._data = {k: [tuple(p) for p in loaded.get(k, ())] for k in self._y_keys or ()}

    def _plot(self, path):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        figure = Figure()
        FigureCanvasAgg(figure)
        axes = figure.add_subplot(111)
        axes.set_xlabel(self._x_key)
        if self._grid:
            axes.grid()
        for k in self._y_keys or ():
            points = self._data[k]
            if points:
                xs, ys = zip(*points)
                axes.plot(xs, ys, marker=self._marker, label=k)
        if not axes.has_data():
            return
        if self._postprocess is not None:
            self._postprocess(figure, axes, self._summary)
        legend = axes.legend(bbox_to_anchor=(1.05, 1), loc="upper left", borderaxespad=0.0)
        _save_figure(figure, path, bbox_extra_artists=(legend,), bbox_inches="tight")
