"""Recording a static chain's forward: every function applied at the top level, in order.

A :class:`Recorder` is a function hook: while it is registered it sees each
FunctionNode's state before its forward and its input and output arrays
after it. Functions applied inside another function's forward are part of
that forward and are not recorded. Calls of :func:`static_code` functions
are recorded too, as Python steps that a replay calls again.
"""

import threading
from typing import NamedTuple

from dbr.core import backend
from dbr.core.function_hook import FunctionHook
from dbr.core.variable import Variable

_local = threading.local()


class FunctionStep(NamedTuple):
    """One FunctionNode applied while recording: the node, its state and its arrays.

    Attributes:
        func: the FunctionNode (kept and replayed).
        state (dict): the node's ``__dict__`` as it was before its forward ran,
            so that a replay starts each forward from the same state (a
            dropout draws a new mask, a pooling keeps new indexes).
        inputs (tuple): the input arrays.
        outputs (tuple): the output arrays.
    """

    func: object
    state: dict
    inputs: tuple
    outputs: tuple


class CodeStep:
    """One call of a :func:`static_code` function while recording.

    Attributes:
        func: the function, called again on every replay.
        args (tuple), kwargs (dict): its arguments as given.
        outputs (tuple): the arrays it returned (empty when it returned None).
    """

    __slots__ = ("func", "args", "kwargs", "outputs")

    def __init__(self, func, args, kwargs, returned):
        self.func = func
        self.args = args
        self.kwargs = kwargs
        self.outputs = code_outputs(func, returned)


def code_outputs(func, returned):
    """The arrays a static_code function returned, as a tuple; refuse anything else."""
    if returned is None:
        return ()
    values = returned if isinstance(returned, (tuple, list)) else (returned,)
    arrays = []
    for value in values:
        if isinstance(value, Variable):
            value = value.array
        if not isinstance(value, backend.get_array_types()):
            raise TypeError(
                f"static_code: {getattr(func, '__name__', func)!r} must return None, an array "
                f"or a tuple of arrays, got {type(value).__name__}"
            )
        arrays.append(value)
    return tuple(arrays)


class Recorder(FunctionHook):
    """A function hook that records the top-level steps of a forward (see the module).

    Args:
        snapshot: a function returning what to compare around each
            static_code call (a watch list), or None.
        changed: a function giving the entries of such a snapshot that changed.
    """

    name = "dbr.static_graph.recorder"

    def __init__(self, snapshot=None, changed=None):
        self.steps = []
        self.code_changes = set()
        self._snapshot = snapshot
        self._changed = changed
        self._states = []
        self._last_state = None

    def __enter__(self):
        if getattr(_local, "recorder", None) is not None:
            raise RuntimeError("static_graph: a static chain is already being recorded")
        super().__enter__()
        _local.recorder = self
        return self

    def __exit__(self, *exc_info):
        _local.recorder = None
        super().__exit__(*exc_info)

    def forward_preprocess(self, function, in_data):
        self._states.append(dict(vars(function)))

    def forward_postprocess(self, function, in_data):
        self._last_state = self._states.pop()

    def forward_outputs(self, function, in_data, outputs):
        if not self._states:
            self.steps.append(FunctionStep(function, self._last_state, in_data, outputs))

    def call_code(self, func, args, kwargs):
        """Call a static_code function and record the call (functions it applies are not)."""
        self._states.append(None)  # what it applies belongs to it, as a nested forward
        before = None if self._snapshot is None else self._snapshot()
        try:
            returned = func(*args, **kwargs)
        finally:
            self._states.pop()
        if before is not None:
            # Attributes it changes are its side effects: they may change on every call.
            self.code_changes.update((id(e[1]), e[2]) for e in self._changed(before))
        if not self._states:
            self.steps.append(CodeStep(func, args, kwargs, returned))
        return returned


def current_recorder():
    """The Recorder recording in this thread, or None."""
    return getattr(_local, "recorder", None)
