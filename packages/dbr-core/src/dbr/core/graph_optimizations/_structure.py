"""The nesting of a static chain's arguments and outputs, with the arrays taken out.

``flatten`` turns nested tuples, lists and dicts of Variables, arrays and
other values into a list of the Variables and arrays (the leaves) and a
hashable template; ``rebuild`` puts other leaves into the same nesting. The
template of the arguments is what a schedule is looked up by: each leaf's
array type, shape, dtype and device, whether a Variable requires grad, and
the other values themselves.
"""

from dbr.core import backend
from dbr.core.variable import Variable

VARIABLE = "Variable"
ARRAY = "array"


def flatten(obj, leaves, what):
    """Append the leaves of ``obj`` to ``leaves`` and return its template.

    Args:
        obj: the arguments (or outputs) to take apart.
        leaves (list): receives the Variables and arrays, in order.
        what (str): ``"argument"`` or ``"output"``, for errors.

    Raises:
        TypeError: a value that is neither a leaf, a container nor hashable.
    """
    if isinstance(obj, Variable):
        leaves.append(obj)
        data = obj._data
        return (VARIABLE, type(data), data.shape, data.dtype, _device(data), obj._requires_grad)
    if isinstance(obj, backend.get_array_types()):
        leaves.append(obj)
        return (ARRAY, type(obj), obj.shape, obj.dtype, _device(obj))
    kind = type(obj)
    if kind is tuple or kind is list:
        return (kind, tuple([flatten(x, leaves, what) for x in obj]))
    if kind is dict:
        return (kind, tuple([(k, flatten(v, leaves, what)) for k, v in obj.items()]))
    try:
        hash(obj)
    except TypeError:
        raise TypeError(
            f"static_graph: an {what} of a static chain must be a Variable, an array, a "
            f"tuple, list or dict of them, or a hashable value; got {kind.__name__}"
        ) from None
    return ("=", obj)


def rebuild(template, leaves):
    """``template``'s nesting with the next values of the iterator ``leaves`` as its leaves.

    A leaf that was an array is given as an array (a Variable's ``array``).
    """
    tag = template[0]
    if tag == VARIABLE:
        return next(leaves)
    if tag == ARRAY:
        leaf = next(leaves)
        return leaf._data if isinstance(leaf, Variable) else leaf
    if tag is tuple or tag is list:
        return tag([rebuild(t, leaves) for t in template[1]])
    if tag is dict:
        return {k: rebuild(t, leaves) for k, t in template[1]}
    return template[1]


def _device(array):
    # NumPy 2 arrays say "cpu"; CuPy's name their GPU; NumPy 1's have none.
    return str(getattr(array, "device", ""))
