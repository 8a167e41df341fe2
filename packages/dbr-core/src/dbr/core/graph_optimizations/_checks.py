"""What a static schedule bakes in, and the checks that refuse a replay that would be wrong.

- The chain's links' plain attributes (numbers, strings, flags: a dropout
  ratio, a BN ``N``) and their persistent arrays, watched between calls.
- The sequence of functions a recording applied, compared between the first
  two recordings of a signature.
- Variables a link holds besides its parameters (a stateful RNN link's ``c``
  and ``h``): state that a call reads like an argument and writes like a result.
"""

import weakref

from dbr.core.graph_optimizations._recording import CodeStep
from dbr.core.variable import Variable

_PLAIN = (bool, int, float, complex, str, bytes, type(None))
_COUNTED = ("_params", "_children")
_MISSING = object()


class _Gone:
    pass


_DEAD = weakref.ref(_Gone())  # a reference whose object is already gone


# How a watched attribute is compared: by value, by identity (a persistent array), or
# by its number of entries (a link's parameters and children).
VALUE, IDENTITY, COUNT = "value", "identity", "count"


def watch_list(chain, ignored=frozenset()):
    """``(path, link.__dict__, name, value, kind)`` of what a schedule bakes in.

    ``ignored`` holds ``(id(link.__dict__), name)`` pairs left out: attributes
    that :func:`static_code` functions change on every call.
    """
    watched = []
    for path, link in chain.namedlinks():
        d = vars(link)
        persistent = d.get("_persistent", ())
        for name, value in d.items():
            if (id(d), name) in ignored:
                continue
            if name in persistent and not isinstance(value, _PLAIN):
                watched.append((path, d, name, value, IDENTITY))
            elif type(value) in _PLAIN:
                watched.append((path, d, name, value, VALUE))
            elif name in _COUNTED:
                watched.append((path, d, name, len(value), COUNT))
    return watched


def changes(watched, ignored=frozenset()):
    """The first ``(path, name, old, new, kind)`` in ``watched`` that changed, or None.

    ``ignored`` holds ``(id(link.__dict__), name)`` pairs that may change.
    """
    for path, d, name, value, kind in changed_entries(watched):
        if (id(d), name) not in ignored:
            return path, name, value, _now(d, name, kind), kind
    return None


def changed_entries(watched):
    """The entries of ``watched`` whose attribute changed since."""
    changed = []
    for entry in watched:
        _, d, name, value, kind = entry
        now = _now(d, name, kind)
        if now is value or (kind != IDENTITY and type(now) is type(value) and now == value):
            continue
        changed.append(entry)
    return changed


def _now(d, name, kind):
    if kind == COUNT:
        return len(d.get(name, ()))
    return d.get(name, _MISSING)


def where(path, name, kind=VALUE):
    """An attribute as a message names it: ``/l1/ratio``, or the parameter count of a link."""
    if kind == COUNT:
        return f"the number of {name[1:]} of link {path!r}"
    return f"{path.rstrip('/')}/{name}" if path != "/" else f"/{name}"


def fingerprint(steps, schedule):
    """What two recordings of one signature must share: each step's function and wiring."""
    prints = []
    for step, plan in zip(steps, schedule.steps):
        if type(step) is CodeStep:
            prints.append((step.func, plan.ins, len(plan.outs)))
            continue
        state = tuple(sorted((k, v) for k, v in step.state.items() if _plain_value(v)))
        prints.append((type(step.func), plan.ins, len(plan.outs), state))
    return tuple(prints)


def _plain_value(value):
    if type(value) is tuple:
        return all(type(v) in _PLAIN for v in value)
    return type(value) in _PLAIN


def state_held(chain):
    """``(path, link.__dict__, name, Variable)`` of each Variable a link holds besides its
    parameters: state that a call reads as an argument (a stateful LSTM's ``c`` and ``h``)."""
    held = []
    for path, link in chain.namedlinks():
        d = vars(link)
        params = d.get("_params", ())
        for name, value in d.items():
            if isinstance(value, Variable) and name not in params:
                held.append((path, d, name, value))
    return held


def state_written(chain, steps, held, inner_state):
    """``(link.__dict__, name, Variable)`` of the state a recorded call left on its links.

    A Variable computed by the recorded functions is a result of the call,
    which every replay writes back; state the call did not change gets its
    Variable from before the call back.
    """
    computed = {id(y) for step in steps for y in step.outputs}
    given = {id(var): outer for (_, _, _, outer), var in zip(held, inner_state)}
    written = []
    for _, d, name, value in state_held(chain):
        if id(value) in given:
            d[name] = given[id(value)]
        elif id(value._data) in computed:
            written.append((d, name, value))
    return written


def detach(schedule, params):
    """Cut the recorded graph's nodes from their Variables (a kept one would read stale arrays).

    Parameters keep theirs: their arrays are the live ones.
    """
    keep = {id(p.node) for p in params}
    for node in schedule.graph_nodes():
        if id(node) not in keep:
            node._variable = _DEAD
