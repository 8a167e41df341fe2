"""Static graphs: record a chain's forward once, replay it on arrays afterwards.

:func:`static_graph` marks a Chain's forward whose functions are the same on
every call with the same input shapes; the first calls run define-by-run
and are recorded, later ones replay the recorded functions without building
Variables or a graph, and give the same arrays. :func:`static_code` marks
Python code inside such a forward that must run on every call.
:class:`ScheduleManager` holds a chain's schedules.
"""

from dbr.core.graph_optimizations._decorators import static_code, static_graph
from dbr.core.graph_optimizations._manager import ScheduleManager

__all__ = ["ScheduleManager", "static_code", "static_graph"]
