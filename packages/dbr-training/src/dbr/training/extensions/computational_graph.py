"""DumpGraph: write the computational graph of a reported Variable as Graphviz DOT."""

import os
import shutil
import subprocess

from dbr.core import Variable, config
from dbr.core.computational_graph import build_computational_graph
from dbr.training import extension
from dbr.training.extensions.log_report import _write_text_atomically

_VARIABLE_STYLE = {"shape": "octagon", "fillcolor": "#E0E0E0", "style": "filled"}
_FUNCTION_STYLE = {"shape": "record", "fillcolor": "#6495ED", "style": "filled"}


class DumpGraph(extension.Extension):
    """Trainer extension writing the graph of a reported Variable (once) in DOT.

    Reported Variables normally lose their graph (see
    ``config.keep_graph_on_report``). This extension turns that flag on in
    :meth:`initialize`; at its first call (the first iteration, with its
    default trigger) it builds the graph of ``trainer.observation[root_name]``
    with :func:`dbr.core.build_computational_graph`, writes its DOT text to
    ``trainer.out/filename`` (atomically), renders it to a PNG of the same
    stem when the Graphviz ``dot`` command is available, and restores the
    flag to its value before :meth:`initialize`. It never fires again.

    Args:
        root_name (str): the observation key of the Variable, e.g. ``'main/loss'``.
        filename (str): the output file name in ``trainer.out``; None means
            ``out_name``.
        variable_style (dict): DOT attributes of variable nodes; None gives
            octagons filled with ``#E0E0E0``.
        function_style (dict): DOT attributes of function nodes; None gives
            records filled with ``#6495ED``.
        out_name (str): the older name of ``filename`` (keyword only),
            ``'cg.dot'`` by default.

    Raises (when called):
        KeyError: nothing was reported under ``root_name``.
        TypeError: the value reported under ``root_name`` is not a Variable.
    """

    default_name = "dump_graph"

    def __init__(
        self,
        root_name,
        filename=None,
        variable_style=None,
        function_style=None,
        *,
        out_name="cg.dot",
    ):
        if not isinstance(root_name, str):
            raise TypeError(
                f"DumpGraph: expected root_name to be a str, got {type(root_name).__name__}"
            )
        if filename is None:
            filename = out_name
        if not isinstance(filename, str) or not filename:
            raise TypeError(
                f"DumpGraph: expected filename to be a non-empty str, got {filename!r}"
            )
        for argname, style in (
            ("variable_style", variable_style),
            ("function_style", function_style),
        ):
            if style is not None and not isinstance(style, dict):
                raise TypeError(
                    f"DumpGraph: expected {argname} to be a dict of DOT attributes or None, "
                    f"got {type(style).__name__}"
                )
        self._root_name = root_name
        self._filename = filename
        self._variable_style = _VARIABLE_STYLE if variable_style is None else variable_style
        self._function_style = _FUNCTION_STYLE if function_style is None else function_style
        self._original_flag = None
        self._flag_called = False

    def initialize(self, trainer):
        """Turn ``config.keep_graph_on_report`` on until the graph has been dumped."""
        if not self._flag_called:
            self._original_flag = config.keep_graph_on_report
            config.keep_graph_on_report = True

    def trigger(self, trainer):
        """Fire at the first call only."""
        if self._flag_called:
            return False
        self._flag_called = True
        return True

    def __call__(self, trainer):
        """Write the DOT file (and PNG) of the graph of the observed root Variable."""
        try:
            if self._root_name not in trainer.observation:
                raise KeyError(
                    f"DumpGraph: nothing was reported under {self._root_name!r}; observed keys: "
                    f"{sorted(trainer.observation)}"
                )
            var = trainer.observation[self._root_name]
            if not isinstance(var, Variable):
                raise TypeError(
                    f"DumpGraph: the value reported under {self._root_name!r} must be a "
                    f"Variable, got {type(var).__name__}"
                )
            dot = build_computational_graph(
                [var], variable_style=self._variable_style, function_style=self._function_style
            ).dump()
            path = _write_text_atomically(trainer.out, self._filename, dot)
            if shutil.which("dot") is not None:
                image = os.path.splitext(path)[0] + ".png"
                subprocess.run(
                    ["dot", "-Tpng", path, "-o", image], check=True, capture_output=True
                )
        finally:
            config.keep_graph_on_report = bool(self._original_flag)

    def serialize(self, serializer):
        """Save or load whether the graph was dumped and the flag to restore."""
        self._original_flag = serializer("_original_flag", bool(self._original_flag))
        self._flag_called = serializer("_flag_called", self._flag_called)


dump_graph = DumpGraph
