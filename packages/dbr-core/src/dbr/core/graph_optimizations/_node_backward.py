"""A recorded node's backward, replayed on arrays once two recordings of it agree.

A FunctionNode's ``backward`` works on Variables and applies other
FunctionNodes (``LinearGradWeight``, ``ReLUGrad``...). A replay of a static
schedule calls it the way dbr's engine does, until it has seen the same
backward twice: then it replays the gradient nodes' ``forward`` methods on
arrays, with no Variable and no Python code of the ``backward`` itself.

A recording is replayable only when every array it reads is accounted for:
an output gradient, a retained input or output of the node, an attribute
the node's forward set, or an output of an earlier gradient node. A
gradient node may hold such an array or attribute (``ReLUGrad(y)``), the
node itself, constants of the node's class and plain values; anything else
(an array computed by the backward's own code, a Variable) keeps that node
on the Variable path for good, as does a second recording that differs from
the first. Either way the gradients are the same bits: the gradient nodes
run the same ``forward`` on the same arrays. A backward whose own code
writes into an array it was given or got from a gradient node (seen by
comparing copies while recording) stays on the Variable path too.
"""

import numpy

from dbr.core import backend
from dbr.core._backprop import _requested
from dbr.core.graph_optimizations import _checks
from dbr.core.graph_optimizations._recording import Recorder, current_recorder
from dbr.core.variable import Variable

_new_variable = Variable.from_array
# A backward plan also bakes dtypes, NumPy scalars and types (the forward's fingerprint does
# not compare them; see _checks).
_PLAIN = (*_checks._PLAIN, numpy.dtype, numpy.generic, type)
_FIRST = "first"  # one recording seen, waiting for the second to agree
_REFUSED = "refused"  # not replayable on arrays: the Variable path for good
_MISSING = object()
_ONE_GRADIENT = (False,)
_NODE = -1  # a gradient node's attribute that holds the recorded node itself

# Where a replay's array comes from: an output gradient, a retained input or output of
# the node, an attribute its forward set (an array, or an object such as a pooling's
# window geometry).
GRAD, RETAINED_INPUT, RETAINED_OUTPUT, ATTRIBUTE = "gy", "in", "out", "attr"


class NodeBackward:
    """The backward of one recorded node in a schedule's backward plan.

    Args:
        func: the recorded FunctionNode.
        indexes (tuple): the input indexes whose gradients the plan asks for.
        shared (dict): the plans of the schedule's other nodes, shared where
            they are the same (a recurrent chain's hundred ``tanh`` backwards).
    """

    __slots__ = ("func", "indexes", "new", "_plans", "_single", "_shared")

    def __init__(self, func, indexes, shared):
        self.func = func
        self.indexes = indexes
        self._shared = shared  # the schedule's plans by what they do (see _shared)
        self._plans = {}  # which output gradients are None -> plan or recording state
        self._single = None  # the plan for a single output's gradient, once there is one
        self.new = None  # the ``new`` of the plan that gave the last gradients, if any

    def gradients(self, gys, on_arrays):
        """The gradient arrays (or None) of the inputs at ``indexes``, from ``gys`` (arrays).

        ``on_arrays`` says whether a replay on arrays is allowed now (no
        hook and no debug mode would miss the gradient nodes' applications).
        Afterwards ``new`` says which of them are new arrays that nothing
        else holds (see ``ArrayPlan``), or is None when none is.
        """
        plan = self._single
        if plan is not None and on_arrays:
            gxs = plan.run(self.func, gys)
            if gxs is not None:
                self.new = plan.new
                return gxs
        self.new = None
        # A schedule passes a single output's gradient only when there is one.
        pattern = _ONE_GRADIENT if len(gys) == 1 else tuple([gy is None for gy in gys])
        plan = self._plans.get(pattern)
        if type(plan) is ArrayPlan:
            if on_arrays:
                gxs = plan.run(self.func, gys)
                if gxs is not None:
                    self.new = plan.new
                    return gxs
        elif plan is not _REFUSED and on_arrays and current_recorder() is None:
            return self._record(pattern, plan, gys)
        return _arrays(self._backward(gys))

    def _backward(self, gys):
        func = self.func
        gxs = func.backward(
            self.indexes, tuple([None if gy is None else _new_variable(gy, False) for gy in gys])
        )
        if len(gxs) != len(self.indexes):
            gxs = _requested(func, self.indexes, gxs)
        return gxs

    def _record(self, pattern, before, gys):
        func = self.func
        attributes = dict(vars(func))  # as the forward left them
        given = [*gys, *[func.inputs[i].data for i in func._input_indexes_to_retain or ()]]
        given.extend(func._retained_output_data or ())
        given.extend(attributes.values())
        given = [x for x in given if isinstance(x, backend.get_array_types())]
        with _WriteWatchingRecorder(given) as recorder:
            gxs = _arrays(self._backward(gys))
        plan = ArrayPlan.build(func, attributes, gys, gxs, recorder.steps)
        if plan is not None and not recorder.unwritten():
            plan = None  # the backward's own code wrote into an array: not replayable
        if plan is None:
            self._plans[pattern] = _REFUSED
        elif before is None:
            self._plans[pattern] = (_FIRST, plan.fingerprint)
        elif before[1] == plan.fingerprint:
            for node, *_ in plan.steps:
                node.__dict__.clear()  # between replays a gradient node holds nothing
            plan = _shared(self._shared, type(func), plan)
            self._plans[pattern] = plan
            if pattern is _ONE_GRADIENT:
                self._single = plan
        else:
            self._plans[pattern] = _REFUSED
        return gxs


def _shared(plans, func_type, plan):
    """The plan in ``plans`` that does what ``plan`` does, else ``plan``, now kept there.

    Plans that read the same sources and bake in the same values are one
    object with one set of gradient nodes (emptied between replays), so that
    a schedule's many like nodes keep few objects in memory and in cache.
    """
    key = (
        func_type,
        plan.fingerprint,
        tuple([(n, _typed(v)) for n, v in plan.assumed]),
        plan.kinds,
    )
    try:
        return plans.setdefault(key, plan)
    except TypeError:  # a baked value that cannot be a key (a list)
        return plan


class _WriteWatchingRecorder(Recorder):
    """A Recorder that also sees whether code between the recorded steps writes into arrays.

    It keeps copies of the arrays the backward was given and of each step's
    outputs; before each step and at the end they must still be equal. A
    recorded step may write into its inputs (a replay does the same): the
    copies are taken again after it.
    """

    def __init__(self, given):
        super().__init__()
        self._copies = [(x, x.copy()) for x in given]
        self._written = False

    def forward_preprocess(self, function, in_data):
        if not self._states and not self.unwritten():
            self._written = True
        super().forward_preprocess(function, in_data)

    def forward_outputs(self, function, in_data, outputs):
        if not self._states:
            self._copies = [(x, x.copy()) for x, _ in self._copies]
            self._copies.extend((y, y.copy()) for y in outputs)
        super().forward_outputs(function, in_data, outputs)

    def unwritten(self):
        """Whether no code but the recorded steps wrote into a watched array."""
        return not self._written and _unchanged(self._copies)


def _unchanged(pairs):
    """Whether each array of ``(array, copy)`` pairs still equals its copy (NaN equal to NaN)."""
    for array, copy in pairs:
        xp = backend.get_array_module(array)
        if array.shape != copy.shape or not bool(
            xp.array_equal(array, copy, equal_nan=array.dtype.kind in "fc")
        ):
            return False
    return True


class ArrayPlan:
    """The gradient nodes one backward applied, over numbered arrays.

    A gradient node's plain arguments (a normalizer, an axis) are baked in
    as recorded. Where they come from the node's own attributes, which its
    forward may set from the data (a count of labels not ignored), the plan
    holds only while the node's attributes look as recorded: the same names,
    the same plain values, and an array or object where there was one. Each
    replay compares them, and takes the Variable path where one differs.

    Attributes:
        sources (tuple): ``(kind, key)`` of each array the replay starts from.
        steps (tuple): ``(node, forward, state, attribute slots, input slots)``;
            a gradient node's ``__dict__`` is empty between replays.
        grads (tuple): the slot of each gradient returned (None where None).
        names (frozenset): the node's attribute names.
        assumed (tuple): ``(name, value)`` of its plain attributes.
        kinds (tuple): ``(name, type)`` of its other attributes.
        writes (tuple): ``(name, value)`` the backward set on the node (a
            cache it drops), set again after each replay.
        new (tuple or None): for each gradient returned, whether it is an array
            that its gradient node allocated (see ``FunctionNode._new_outputs``)
            and that no other step reads nor the plan returns twice, so that the
            schedule may add later gradients into it; None when none is.
        fingerprint (tuple): what a second recording must share with the first.
    """

    __slots__ = (
        "sources", "steps", "grads", "names", "assumed", "kinds", "writes", "new", "fingerprint"
    )  # fmt: skip

    @classmethod
    def build(cls, func, attributes, gys, gxs, steps):
        """The plan of one recorded backward, or None when it cannot be replayed on arrays.

        ``attributes`` is the node's ``__dict__`` as the backward found it.
        """
        writes = _writes(func, attributes)
        if writes is None:
            return None
        slot_of = {}
        sources = _sources(func, attributes, gys, slot_of)
        constants = {id(v) for klass in type(func).__mro__ for v in vars(klass).values()}
        n_slots = len(sources)
        plan_steps = []
        prints = []
        allocated = set()  # slots of outputs that their gradient node allocated
        read = set()  # slots that a step reads or holds
        for step in steps:
            ins = []
            for x in step.inputs:
                slot = slot_of.get(id(x))
                if slot is None:
                    return None
                ins.append(slot)
            state = {}
            held = []
            for name, value in step.state.items():
                if value is func:
                    state[name] = None
                    held.append((name, _NODE))
                elif id(value) in slot_of:
                    state[name] = None
                    held.append((name, slot_of[id(value)]))
                elif is_plain(value) or id(value) in constants:
                    state[name] = value
                else:
                    return None
            read.update(ins)
            read.update(h for _, h in held)
            new_outputs = step.func._new_outputs
            for y in step.outputs:
                if new_outputs:
                    allocated.add(n_slots)
                slot_of[id(y)] = n_slots
                n_slots += 1
            node = step.func
            plan_steps.append((node, node.forward, state, tuple(held), tuple(ins)))
            baked = tuple(
                sorted(
                    (k, _typed(v) if is_plain(v) else ("constant", id(v)))
                    for k, v in state.items()
                )
            )
            prints.append((type(node), tuple(ins), tuple(held), len(step.outputs), baked))
        grads = []
        for gx in gxs:
            slot = None if gx is None else slot_of.get(id(gx))
            if gx is not None and slot is None:
                return None
            grads.append(slot)
        new = tuple([s in allocated and s not in read and grads.count(s) == 1 for s in grads])
        plan = cls()
        plan.new = new if any(new) else None
        plan.fingerprint = (tuple(sources), tuple(prints), tuple(grads), writes)
        plan.sources, plan.steps, plan.grads = _pruned(sources, plan_steps, grads)
        plan.names = frozenset(attributes)
        plan.assumed = tuple([(n, v) for n, v in attributes.items() if is_plain(v)])
        plan.kinds = tuple([(n, type(v)) for n, v in attributes.items() if not is_plain(v)])
        plan.writes = writes
        return plan

    def run(self, func, gys):
        """The gradient arrays of a replay, from its output gradients ``gys``; None when
        ``func``'s attributes differ from the recorded ones (the Variable path's turn).
        """
        d = func.__dict__
        if d.keys() != self.names:
            return None
        for name, value in self.assumed:
            now = d[name]
            if now is not value and (type(now) is not type(value) or now != value):
                return None
        for name, kind in self.kinds:
            if type(d[name]) is not kind:
                return None
        vals = []
        for kind, key in self.sources:
            if kind == GRAD:
                vals.append(gys[key])
            elif kind == RETAINED_OUTPUT:
                vals.append(func._retained_output_data[key])
            elif kind == RETAINED_INPUT:
                vals.append(func.inputs[key].data)
            else:
                vals.append(d[key])
        for node, forward, state, held, ins in self.steps:
            nd = node.__dict__
            if state is not None:
                nd.update(state)
            for name, slot in held:
                nd[name] = func if slot == _NODE else vals[slot]
            if len(ins) == 1:
                vals.extend(forward((vals[ins[0]],)))
            else:
                vals.extend(forward(tuple([vals[i] for i in ins])))
            # What the gradient node kept goes with this backward, as its node would.
            nd.clear()
        for name, value in self.writes:
            d[name] = value
        return [None if s is None else vals[s] for s in self.grads]


def _writes(func, attributes):
    """``(name, value)`` of the plain attributes the backward set on ``func``, or None where
    it set anything else or removed one."""
    writes = []
    now = vars(func)
    for name, value in now.items():
        if attributes.get(name, _MISSING) is not value:
            if not is_plain(value):
                return None
            writes.append((name, value))
    if any(name not in now for name in attributes):
        return None
    return tuple(writes)


def _sources(func, attributes, gys, slot_of):
    """``(kind, key, also)`` of each array a recorded backward could read, numbered in
    ``slot_of`` (id -> slot); ``also`` lists other sources of the same array."""
    sources = []
    for key, gy in enumerate(gys):
        _add_source(slot_of, sources, gy, GRAD, key)
    for i in func._input_indexes_to_retain or ():
        _add_source(slot_of, sources, func.inputs[i].data, RETAINED_INPUT, i)
    for k, y in enumerate(func._retained_output_data or ()):
        _add_source(slot_of, sources, y, RETAINED_OUTPUT, k)
    for name, value in attributes.items():
        if not is_plain(value):  # an array, or an object the forward made (a window geometry)
            _add_source(slot_of, sources, value, ATTRIBUTE, name)
    return sources


def _pruned(sources, steps, grads):
    """``sources``, ``steps`` and ``grads`` with only the sources something reads, renumbered."""
    used = {s for _, _, _, held, ins in steps for s in (*ins, *[h for _, h in held])}
    used.update(s for s in grads if s is not None)
    kept = [k for k in range(len(sources)) if k in used]
    new_slot = {old: new for new, old in enumerate(kept)}
    new_slot[_NODE] = _NODE
    shift = len(sources) - len(kept)

    def renumber(slot):
        return new_slot[slot] if slot < len(sources) else slot - shift

    steps = tuple([
        (node, forward, state or None, tuple([(n, renumber(h)) for n, h in held]),
         tuple([renumber(i) for i in ins]))
        for node, forward, state, held, ins in steps
    ])  # fmt: skip
    return (
        tuple([sources[k][:2] for k in kept]),
        steps,
        tuple([None if s is None else renumber(s) for s in grads]),
    )


def _add_source(slot_of, sources, array, kind, key):
    # An array seen as two sources (a retained output kept as an attribute too) is read
    # from the first; the second recording must see the same sharing.
    if array is None:
        return
    slot = slot_of.get(id(array))
    if slot is not None:
        first_kind, first_key, shared = sources[slot]
        sources[slot] = (first_kind, first_key, (*shared, (kind, key)))
        return
    slot_of[id(array)] = len(sources)
    sources.append((kind, key, ()))


def _typed(value):
    """A plain value with its types, for comparing and keying: 1 and 1.0 are equal, and a
    plan recorded with one must not serve the other."""
    if type(value) in (tuple, list):
        return type(value), tuple([_typed(v) for v in value])
    return type(value), value


def is_plain(value):
    """Whether ``value`` is a plain value (a number, string, dtype, type, None or a tuple or
    list of them) that a plan may bake in."""
    if type(value) in (tuple, list):
        return all(is_plain(v) for v in value)
    return isinstance(value, _PLAIN)


def _arrays(gxs):
    return [gx._data if isinstance(gx, Variable) else gx for gx in gxs]
