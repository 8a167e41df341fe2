"""Concrete function hooks: :class:`TimerHook` (profiling) and :class:`PrintHook` (tracing).

Both derive from :class:`dbr.core.function_hook.FunctionHook`; use one as a
context manager to apply it to every function called in the ``with`` block.
"""

from dbr.core.function_hooks.print_hook import PrintHook
from dbr.core.function_hooks.timer import TimerHook

__all__ = ["PrintHook", "TimerHook"]
