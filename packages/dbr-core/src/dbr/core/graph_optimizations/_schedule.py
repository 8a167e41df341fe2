"""A static schedule: a recorded forward, replayed on arrays, and its backward.

The forward plan is a list of steps over numbered slots: each slot holds one
array of an iteration (an argument, a parameter, a baked constant or an
output of a step), found by the identity of the arrays seen while
recording. A replay fills the argument and parameter slots and runs each
recorded FunctionNode's ``forward`` on its input slots, with no Variable,
no graph and no type check. The recorded graph stays: a replay puts the new
arrays where each node retains them, so the nodes' own ``backward``
methods can run as they would have define-by-run (and, once recorded
twice, their gradient functions on arrays: see ``_node_backward``). The
backward plan lists the nodes in the order dbr's engine would run them and
sums the gradients the way it does, so that both give the same bits.

In a graph, a replay is one :class:`ScheduleNode`, whose inputs are the
chain's arguments and the parameters the schedule reads.
"""

import heapq
import weakref
from typing import NamedTuple

from dbr.core import backend
from dbr.core._backprop import _add_arrays
from dbr.core.configuration import config, using_config
from dbr.core.function_node import FunctionNode
from dbr.core.graph_optimizations._node_backward import NodeBackward, is_plain
from dbr.core.graph_optimizations._recording import CodeStep, code_outputs
from dbr.core.variable import Variable

_new_variable = Variable.from_array


class PlanStep(NamedTuple):
    """One step of a forward plan, over slot numbers.

    Attributes:
        func: the FunctionNode replayed, or None for a static_code call.
        forward: its ``forward`` method, or the CodeStep of a static_code call.
        state (dict or None): the node's ``__dict__`` before its forward.
        ins (tuple): the slots it reads.
        outs (tuple): the slots it writes.
        retain_in (tuple): ``(node, input index)`` of each input it retains.
        retain_out (tuple or None): the output indexes it retains.
        code (tuple or None): a static_code call's argument and keyword slots.
        free (tuple): the slots that no later step reads, dropped after it.
    """

    func: object
    forward: object
    state: dict
    ins: tuple
    outs: tuple
    retain_in: tuple
    retain_out: tuple
    code: tuple
    free: tuple = ()


class Schedule:
    """The forward and backward plans recorded from one call of a static chain.

    Args:
        steps: the Recorder's steps.
        arg_arrays (list): the arrays of the call's flattened arguments.
        arg_nodes (list): the graph nodes of those arguments while recording
            (None where an argument was an array or never reached a function).
        params (list): the chain's Parameters.
        out_arrays (list): the arrays of the flattened outputs.
        out_nodes (list): their graph nodes (None where there is none).
        with_graph (bool): whether the recording built a graph (backprop was on).
        shared_plans (dict or None): backward plans that the schedules of one
            chain share where they are the same (see ``_node_backward``).
    """

    def __init__(
        self,
        steps,
        arg_arrays,
        arg_nodes,
        params,
        out_arrays,
        out_nodes,
        with_graph,
        shared_plans=None,
    ):
        self.generation = 0
        self.node_ref = None
        self.backward_done = True
        self._template = []
        slot_of = {}
        self._arg_slots = [self._map(slot_of, a) for a in arg_arrays]
        param_slot = {}
        for p in params:
            if p.array is not None:
                param_slot[id(p)] = self._map(slot_of, p.array)
        self.steps = [self._forward_step(step, slot_of) for step in steps]
        self._out_slots = [self._slot(slot_of, a) for a in out_arrays]
        read = {s for step in self.steps for s in step.ins} | set(self._out_slots)
        self.params = [p for p in params if param_slot.get(id(p)) in read]
        self._param_slots = [param_slot[id(p)] for p in self.params]
        self._input_slots = self._arg_slots + self._param_slots
        self.steps = _with_slots_to_free(self.steps, set(self._out_slots))
        params_nodes = {id(p.node) for p in params}
        # Parameters' nodes are shared by every schedule and graph: they keep their data.
        self._retaining_nodes = [
            node
            for step in self.steps
            for node, _ in step.retain_in
            if id(node) not in params_nodes
        ]
        self._retaining_funcs = [step.func for step in self.steps if step.retain_out is not None]
        self._funcs = [step.func for step in self.steps if step.func is not None]
        # The functions whose forward kept more than plain values (a dropout's mask, an LSTM's
        # gates): their state goes back after backward; the others' waits for the next replay.
        self._keeping = [
            (step.func.__dict__, step.state)
            for step in self.steps
            if step.func is not None and not _keeps_only_plain_values(step.func)
        ]
        self.with_graph = with_graph
        if with_graph:
            self._plan_backward(arg_nodes, out_nodes, {} if shared_plans is None else shared_plans)

    # -- forward ----------------------------------------------------------------
    def _map(self, slot_of, array):
        self._template.append(None)
        slot = len(self._template) - 1
        slot_of[id(array)] = slot
        return slot

    def _slot(self, slot_of, array):
        slot = slot_of.get(id(array))
        if slot is None:
            # Neither computed here nor an input: a constant, baked in as recorded.
            self._template.append(array)
            slot = slot_of[id(array)] = len(self._template) - 1
        return slot

    def _forward_step(self, step, slot_of):
        if type(step) is CodeStep:
            args = [self._slot(slot_of, _array_of(a)) if _is_array(a) else None for a in step.args]
            kwargs = {
                k: self._slot(slot_of, _array_of(v))
                for k, v in step.kwargs.items()
                if _is_array(v)
            }
            outs = tuple([self._map(slot_of, y) for y in step.outputs])
            reads = tuple([s for s in args if s is not None]) + tuple(kwargs.values())
            return PlanStep(None, step, None, reads, outs, (), None, (args, kwargs))
        func = step.func
        ins = tuple([self._slot(slot_of, x) for x in step.inputs])
        outs = tuple([self._map(slot_of, y) for y in step.outputs])
        retain_in = ()
        retain_out = None
        if func.inputs is not None:
            indexes = func._input_indexes_to_retain or ()
            retain_in = tuple([(func.inputs[i], i) for i in indexes])
            retain_out = func._output_indexes_to_retain
        return PlanStep(func, func.forward, step.state, ins, outs, retain_in, retain_out, None)

    def forward(self, inputs, record_graph):
        """Replay the forward on ``inputs`` (argument arrays, then parameter arrays).

        Returns:
            tuple: the output arrays.
        """
        self.generation += 1
        vals = self._template.copy()
        for slot, x in zip(self._input_slots, inputs):
            vals[slot] = x
        for func, forward, state, ins, outs, retain_in, retain_out, code, free in self.steps:
            if func is None:
                _run_code(forward, code, vals, outs)
                for slot in free:
                    vals[slot] = None
                continue
            d = func.__dict__
            d.clear()
            d.update(state)
            if len(ins) == 1:
                xs = (vals[ins[0]],)
            elif len(ins) == 2:
                xs = (vals[ins[0]], vals[ins[1]])
            else:
                xs = tuple([vals[i] for i in ins])
            ys = forward(xs)
            if len(outs) == 1:
                vals[outs[0]] = ys[0]
            else:
                for o, y in zip(outs, ys):
                    vals[o] = y
            if record_graph:
                for node, i in retain_in:
                    node.data = xs[i]
                if retain_out is not None:
                    _retain_outputs(func, ys, retain_out)
            # An array no later step reads goes now, as define-by-run drops it.
            for slot in free:
                vals[slot] = None
        outputs = tuple([vals[s] for s in self._out_slots])
        if record_graph:
            self.backward_done = False
        else:
            self.release()
        return outputs

    # -- backward ---------------------------------------------------------------
    def _plan_backward(self, arg_nodes, out_nodes, shared):
        gslot_of = {}
        nodes = []

        def gslot(node):
            if node is None:
                return None
            s = gslot_of.get(node)
            if s is None:
                s = gslot_of[node] = len(nodes)
                nodes.append(node)
            return s

        entries = []
        creator = {}
        for func in self._funcs:
            if func.inputs is None:
                continue
            indexes = tuple([i for i, x in enumerate(func.inputs) if x.requires_grad])
            if not indexes:
                continue
            outs = tuple([gslot(ref()) for ref in func.outputs])
            ins = tuple([gslot(func.inputs[i]) for i in indexes])
            for s in outs:
                if s is not None:
                    creator[s] = len(entries)
            entries.append((NodeBackward(func, indexes, shared), outs, ins))
        self._out_gslots = [gslot(n) for n in out_nodes]
        leaves = list(arg_nodes) + [p.node for p in self.params]
        self._input_gslots = [None if n is None else gslot_of.get(n) for n in leaves]
        self._nodes = nodes  # the recorded graph stays alive with the schedule
        self._backward = [entries[i] for i in _engine_order(entries, creator, self._out_gslots)]
        self._n_gslots = len(nodes)

    def backward(self, target_input_indexes, grad_outputs, grad_inputs, owned_inputs):
        """The gradients of the inputs at ``target_input_indexes``, added to ``grad_inputs``.

        ``grad_inputs`` are the sums so far of those inputs' gradients (None
        where there is none) and ``owned_inputs`` says which of them are
        buffers of dbr's engine, which may be added to in place: each
        contribution is added as soon as it is computed, in the order and
        with the arithmetic of define-by-run, and no more memory.

        Returns:
            tuple: the sums, and for each whether it is a buffer the engine may
            add to in place.
        """
        grads = [None] * self._n_gslots  # arrays
        owned = {}  # slot -> the sum there, when it may be added to in place
        gslots = self._input_gslots
        passed = {}  # input k -> its sum, which no recorded function adds to
        given = {}  # slot -> the engine's Variable of the sum there, while it is the same
        for k, (i, own) in enumerate(zip(target_input_indexes, owned_inputs)):
            s = gslots[i]
            var = grad_inputs[k]
            if s is None:
                passed[k] = var
            elif var is not None:
                grads[s] = var._data
                given[s] = var
                if own:
                    owned[s] = grads[s]
            if type(grad_inputs) is list:
                grad_inputs[k] = None  # the engine's list: a replaced sum is freed at once
        for s, gy in zip(self._out_gslots, grad_outputs):
            if gy is not None and s is not None:
                old = grads[s]
                grads[s] = gy._data if old is None else _add_arrays(old, gy._data)
        cfg = config
        on_arrays = not (cfg._function_hooks or cfg.debug)
        with using_config("enable_backprop", False):
            for node_backward, outs, ins in self._backward:
                if len(outs) == 1:
                    s = outs[0]
                    gy = grads[s]
                    if gy is None:
                        continue
                    grads[s] = None
                    if owned:
                        owned.pop(s, None)
                    gys = (gy,)
                else:
                    gys = []
                    for s in outs:
                        gy = None
                        if s is not None:
                            gy = grads[s]
                            grads[s] = None
                            owned.pop(s, None)
                        gys.append(gy)
                    if all(gy is None for gy in gys):
                        continue
                    gys = tuple(gys)
                gxs = node_backward.gradients(gys, on_arrays)
                for s, gx in zip(ins, gxs):
                    if gx is None:
                        continue
                    old = grads[s]
                    if old is None:
                        grads[s] = gx
                    elif owned.get(s) is old and gx.dtype == old.dtype and gx.shape == old.shape:
                        old += gx
                    else:
                        grads[s] = owned[s] = _add_arrays(old, gx)
                        if given:
                            given.pop(s, None)  # a replaced sum is freed at once
                new = node_backward.new
                if new is not None:
                    for s, gx, is_new in zip(ins, gxs, new):
                        if is_new and grads[s] is gx:
                            owned[s] = gx  # a first gradient that later ones are added into
        self.release()
        sums = []
        owned_sums = []
        for k, i in enumerate(target_input_indexes):
            if k in passed:
                sums.append(passed[k])
                owned_sums.append(owned_inputs[k])
                continue
            s = gslots[i]
            g = grads[s]
            var = given.get(s)
            if g is None:
                sums.append(None)
            elif var is not None and var._data is g:
                sums.append(var)  # the sum the engine gave, added to in place (or unchanged)
            else:
                sums.append(_new_variable(g, False))
            owned_sums.append(g is not None and owned.get(s) is g)
        return tuple(sums), tuple(owned_sums)

    def graph_nodes(self):
        """Every node of the recorded graph: the recorded functions' inputs and live outputs."""
        nodes = {}
        for func in self._funcs:
            for node in func.inputs or ():
                nodes[id(node)] = node
            for ref in func.outputs or ():
                node = ref()
                if node is not None:
                    nodes[id(node)] = node
        return list(nodes.values())

    def release(self):
        """Drop what the last replay kept for backward (after it, or when unused).

        The retained arrays go, and each function's state returns to what it
        was before its forward (a dropout's mask, an LSTM's gates), as
        define-by-run frees the functions with their graph.
        """
        for node in self._retaining_nodes:
            node.data = None
        for func in self._retaining_funcs:
            func._retained_output_data = None
        for d, state in self._keeping:
            d.clear()
            d.update(state)
        self.backward_done = True

    def is_free(self):
        """Whether a new call may replay this schedule (its last graph is done with)."""
        if self.backward_done:
            return True
        node = None if self.node_ref is None else self.node_ref()
        return node is None


class ScheduleNode(FunctionNode):
    """One replay of a :class:`Schedule` in a graph: inputs are arguments and parameters.

    Args:
        schedule: the Schedule.
        outputs (tuple or None): output arrays already computed (the
            recording call's), returned by the first forward instead of a replay.
    """

    _generation = None  # the schedule's generation this node's forward saw
    _cut = False  # unchain_backward passed through it

    def __init__(self, schedule, outputs=None):
        self.schedule = schedule
        self._computed = outputs

    @property
    def label(self):
        """``StaticSchedule``."""
        return "StaticSchedule"

    def forward(self, inputs):
        """Replay the schedule (or return the recording call's outputs)."""
        schedule = self.schedule
        outputs = self._computed
        if outputs is None:
            outputs = schedule.forward(inputs, config.enable_backprop and schedule.with_graph)
        else:
            self._computed = None
            schedule.backward_done = False
        self._generation = schedule.generation
        schedule.node_ref = weakref.ref(self)
        return outputs

    def cut_inner_graph(self):
        """Cut the recorded graph behind this call (``unchain_backward`` passed through it).

        As define-by-run's ``unchain_backward`` cuts every link behind the
        Variable it is called on, no gradient flows through this call
        afterwards, also from its other outputs (a recurrent state).
        """
        self._cut = True

    _accumulates_in_place = True

    def backward(self, target_input_indexes, grad_outputs):
        """The gradients of the inputs at ``target_input_indexes``."""
        n = len(target_input_indexes)
        return self._backward_accumulate_in_place(
            target_input_indexes, grad_outputs, (None,) * n, (False,) * n
        )[0]

    def backward_accumulate(self, target_input_indexes, grad_outputs, grad_inputs):
        """The gradients of the inputs at ``target_input_indexes`` added to ``grad_inputs``."""
        n = len(target_input_indexes)
        return self._backward_accumulate_in_place(
            target_input_indexes, grad_outputs, grad_inputs, (False,) * n
        )[0]

    def _backward_accumulate_in_place(self, indexes, grad_outputs, sums, owned):
        # dbr's engine calls this (see FunctionNode._accumulates_in_place): each gradient is
        # added to the engine's sums as define-by-run adds it, in place where the engine
        # owns the sum. Once the graph behind this call is cut, the sums come back unchanged.
        if self._cut:
            return tuple(sums), tuple(owned)
        schedule = self.schedule
        if config.enable_backprop:
            raise RuntimeError(
                "static_graph: the backward of a static chain cannot be recorded "
                "(enable_double_backprop); decorate it with "
                "@static_graph(enable_double_backprop=True) to run it define-by-run"
            )
        if schedule.generation != self._generation or schedule.backward_done:
            raise RuntimeError(
                "static_graph: this output's schedule was replayed again, or its backward "
                "already ran, after it was computed; run backward once per call, before "
                "the chain's next call with the same input shapes"
            )
        return schedule.backward(indexes, grad_outputs, sums, owned)


def _keeps_only_plain_values(func):
    """Whether ``func``'s forward left nothing but plain values on it (as recorded)."""
    return all(
        name == "_retained_output_data" or is_plain(value) for name, value in vars(func).items()
    )


def _with_slots_to_free(steps, kept):
    """``steps`` with the slots that no later step reads (nor the outputs) as their ``free``."""
    last = {}
    for i, step in enumerate(steps):
        for slot in (*step.ins, *step.outs):
            last[slot] = i
    free = [[] for _ in steps]
    for slot, i in last.items():
        if slot not in kept:
            free[i].append(slot)
    return [step._replace(free=tuple(f)) for step, f in zip(steps, free)]


def _engine_order(entries, creator, seeds):
    """The order dbr's engine would run ``entries``: decreasing rank, then first reached."""
    heap = []
    pushed = set()
    counter = 0
    for s in seeds:
        e = creator.get(s)
        if e is not None and e not in pushed:
            pushed.add(e)
            heapq.heappush(heap, (-entries[e][0].func.rank, counter, e))
            counter += 1
    order = []
    while heap:
        e = heapq.heappop(heap)[2]
        order.append(e)
        for s in entries[e][2]:
            c = creator.get(s)
            if c is not None and c not in pushed:
                pushed.add(c)
                heapq.heappush(heap, (-entries[c][0].func.rank, counter, c))
                counter += 1
    return order


def _retain_outputs(func, ys, indexes):
    func._retained_output_data = (
        ys if len(ys) == 1 == len(indexes) else tuple([ys[i] for i in indexes])
    )
    outputs = func.outputs
    for i in indexes:
        node = outputs[i]()
        if node is not None:
            node.data = ys[i]


def _run_code(step, resolved, vals, outs):
    slots, kwslots = resolved
    args = [a if s is None else _like(a, vals[s]) for a, s in zip(step.args, slots)]
    kwargs = dict(step.kwargs)
    for k, s in kwslots.items():
        kwargs[k] = _like(kwargs[k], vals[s])
    for o, y in zip(outs, code_outputs(step.func, step.func(*args, **kwargs))):
        vals[o] = y


def _is_array(value):
    return isinstance(value, (Variable, *backend.get_array_types()))


def _array_of(value):
    return value.array if isinstance(value, Variable) else value


def _like(recorded, array):
    # A Variable argument is given again as a Variable, an array as an array.
    return _new_variable(array, False) if isinstance(recorded, Variable) else array
