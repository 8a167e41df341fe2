"""ScheduleManager: a static chain's schedules by call signature, and when to record or replay.

A call's signature is what a schedule bakes in: each argument's array type,
shape, dtype, device and whether it requires grad, the other arguments'
values, ``config.train`` and ``config.enable_backprop``. The first call
with a signature runs define-by-run and is recorded; so is the second, and
the two recordings must apply the same functions to the same inputs (a
branch on a value shows here, and is refused); later calls replay. A
schedule whose graph still waits for its backward is not replayed again: a
chain called several times per iteration (once per time step, say) gets a
schedule per call.
"""

import weakref

from dbr.core.configuration import config
from dbr.core.graph_optimizations import _structure
from dbr.core.graph_optimizations._checks import (
    IDENTITY,
    changed_entries,
    changes,
    detach,
    fingerprint,
    state_held,
    state_written,
    watch_list,
    where,
)
from dbr.core.graph_optimizations._recording import Recorder
from dbr.core.graph_optimizations._schedule import Schedule, ScheduleNode
from dbr.core.variable import Variable, VariableNode


class ScheduleManager:
    """The static schedules of one chain (Chainer's ``chain.schedule_manager``).

    Args:
        minimize_cache_size (bool): drop every schedule when ``config.train``
            changes, as Chainer does, so that one mode's are kept at a time.
        verbosity_level (int): 1 or more prints a line when a call is recorded.
    """

    def __init__(self, minimize_cache_size=True, verbosity_level=0):
        self.minimize_cache_size = minimize_cache_size
        self.verbosity_level = verbosity_level
        self.schedules = {}
        self._first_recording = {}
        self._train = None
        self._watch = None
        self._volatile = set()  # (id(link.__dict__), name) that may change on every call
        self._shared_plans = {}  # backward plans, shared by the schedules where the same
        self._chain = None

    def __reduce__(self):
        # A copied or pickled chain starts with no schedules: they hold its graph.
        return type(self), (self.minimize_cache_size, self.verbosity_level)

    def __repr__(self):
        counts = [len(v) for v in self.schedules.values()]
        return f"<ScheduleManager: {len(counts)} signature(s), schedules per signature {counts}>"

    def clear(self):
        """Forget every schedule: the next calls record again."""
        self.schedules.clear()
        self._first_recording.clear()
        self._shared_plans.clear()
        self._watch = None

    def end_forward(self):
        """Let every schedule be replayed again, also one whose graph still waits for backward."""
        for schedules in self.schedules.values():
            for schedule in schedules:
                schedule.release()

    def owned_by(self, chain):
        """Whether this manager's schedules were recorded from ``chain`` (not its original)."""
        return self._chain is None or self._chain() is chain

    def call(self, forward, chain, args, kwargs):
        """Return ``forward(chain, *args, **kwargs)``, replayed or recorded."""
        self._chain = weakref.ref(chain)
        train = config.train
        if self.minimize_cache_size and train != self._train:
            self.clear()
        self._train = train
        leaves = []
        template = _structure.flatten((args, kwargs), leaves, "argument")
        held = state_held(chain)
        kept = tuple(
            [(path, name, _structure.flatten(v, leaves, "state")) for path, _, name, v in held]
        )
        key = (train, config.enable_backprop, template, kept)
        if self._watch is not None:
            self._check_watch(chain)
        schedules = self.schedules.get(key)
        if schedules is not None and key not in self._first_recording:
            for schedule in schedules:
                if schedule.is_free():
                    outputs = ScheduleNode(schedule).apply([*leaves, *schedule.params])
                    return _results(schedule, outputs)
        return self._record(forward, chain, template, key, leaves, held)

    def _record(self, forward, chain, template, key, leaves, held):
        if self.verbosity_level >= 1:
            print(f"static_graph: recording a call of {_name(chain, forward)}")
        lazy_initialization_allowed = self._watch is None
        before = watch_list(chain)
        inner = [_inner(x) for x in leaves]
        n_args = len(leaves) - len(held)
        inner_args, inner_kwargs = _structure.rebuild(template, iter(inner[:n_args]))
        for (_, d, name, _), var in zip(held, inner[n_args:]):
            d[name] = var  # the recorded graph starts from the state as from an argument
        try:
            with Recorder(lambda: watch_list(chain), changed_entries) as recorder:
                returned = forward(chain, *inner_args, **inner_kwargs)
        except BaseException:
            for _, d, name, var in held:
                d[name] = var
            raise
        state = state_written(chain, recorder.steps, held, inner[n_args:])
        self._volatile |= recorder.code_changes | {(id(d), name) for d, name, _ in state}
        changed = changes(before, self._volatile)
        if changed and not lazy_initialization_allowed:
            raise RuntimeError(
                f"static_graph: {_name(chain, forward)} changed "
                f"{where(changed[0], changed[1], changed[4])} from "
                f"{changed[2]!r} to {changed[3]!r}; a replay runs none of the forward's Python "
                "code, so such a change would happen only while recording: move it into a "
                "@static_code function or out of the static chain"
            )
        outs = []
        returned_template = _structure.flatten(returned, outs, "output")
        n_returned = len(outs)
        outs.extend(var for _, _, var in state)
        params = list(chain.params())
        with_graph = config.enable_backprop
        schedule = Schedule(
            recorder.steps,
            [_array(x) for x in inner],
            [x._node if isinstance(x, Variable) else None for x in inner],
            params,
            [_array(y) for y in outs],
            [y._node if isinstance(y, Variable) else None for y in outs],
            with_graph,
            self._shared_plans,
        )
        schedule.returned = returned_template
        schedule.n_returned = n_returned
        schedule.state = [(d, name) for d, name, _ in state]
        if with_graph:
            detach(schedule, params)
        self._keep(key, schedule, fingerprint(recorder.steps, schedule), chain, forward)
        self._watch = watch_list(chain, self._volatile)
        if not with_graph:
            return returned
        outputs = ScheduleNode(schedule, tuple([_array(y) for y in outs])).apply(
            [*leaves, *schedule.params]
        )
        return _results(schedule, outputs)

    def _keep(self, key, schedule, steps_fingerprint, chain, forward):
        schedules = self.schedules.setdefault(key, [])
        first = self._first_recording.pop(key, None)
        if not schedules:
            self._first_recording[key] = steps_fingerprint
        elif first is not None and first != steps_fingerprint:
            del self.schedules[key]
            step = next(
                (i for i, (a, b) in enumerate(zip(first, steps_fingerprint)) if a != b),
                min(len(first), len(steps_fingerprint)),
            )
            raise RuntimeError(
                f"static_graph: {_name(chain, forward)} applied other functions on its second "
                f"call than on its first (from step {step}: {_step_name(first, step)}, then "
                f"{_step_name(steps_fingerprint, step)}); a branch on the values of arrays "
                "cannot be replayed: remove @static_graph, or branch on arguments that are "
                "not arrays"
            )
        schedules.append(schedule)

    def _check_watch(self, chain):
        changed = changes(self._watch)
        if changed is None:
            return
        path, name, old, new, kind = changed
        if kind == IDENTITY:
            self.clear()  # a persistent array replaced (a snapshot loaded): record again
            return
        raise RuntimeError(
            f"static_graph: {where(path, name, kind)} changed from {old!r} to {new!r} after "
            f"{type(chain).__name__}'s schedules were recorded with the old value; call "
            "chain.schedule_manager.clear() after such a change to record them again"
        )


def _results(schedule, outputs):
    """The call's return value from a replay's outputs; the state outputs go to their links."""
    n = schedule.n_returned
    for (d, name), var in zip(schedule.state, outputs[n:]):
        d[name] = var
    return _structure.rebuild(schedule.returned, iter(outputs[:n]))


def _inner(leaf):
    """The argument the recording call gets: a new Variable on the same array, same rank."""
    if not isinstance(leaf, Variable):
        return leaf
    var = Variable.from_array(leaf._data, leaf._requires_grad)
    node = var._node = VariableNode(var, leaf._requires_grad)
    outer = leaf._node
    node.rank = 0 if outer is None else outer.rank
    return var


def _array(leaf):
    return leaf._data if isinstance(leaf, Variable) else leaf


def _name(chain, forward):
    return f"{type(chain).__name__}.{forward.__name__}"


def _step_name(steps_fingerprint, index):
    if index >= len(steps_fingerprint):
        return "the end"
    what = steps_fingerprint[index][0]
    return getattr(what, "__name__", repr(what))
