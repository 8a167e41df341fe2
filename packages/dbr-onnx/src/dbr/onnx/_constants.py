"""Find folded constants that are in fact computed from the inputs outside the graph.

Export folds every value that no recorded FunctionNode computes from the
inputs or parameters into a constant. That is right for a value made from
shapes or fixed numbers (an ``xp.arange``, a mask), and silently wrong for
one computed from an input's array (``Variable(xp.exp(x.array))``, a function
that makes no graph node): the exported model would hold the example input's
result forever. The same holds for a number a function is built with
(``h - float(h.array.mean())`` builds ``AddConstant`` with the mean, which
its converter writes into the graph). To tell them apart, the forward runs a
second time under the same hook on perturbed inputs, and a folded value or a
function's attribute that differs between the two runs is reported.
"""

import collections
import warnings

import numpy

from dbr.core import Link, Variable, backend
from dbr.core.configuration import using_config
from dbr.onnx._graph import _Recorder, to_numpy


class DataDependentConstantError(ValueError):
    """Raised when a value export would write as a constant depends on the inputs.

    The value is an array folded into a constant, or a number (or array) that
    a function in the graph is built with.
    """


# A folded value: input ``index`` of ``func``, the ``order``-th function recorded.
Folded = collections.namedtuple("Folded", "order index func node array")

# An attribute that is not a number, string, slice, array or sequence of them: not compared.
_UNCOMPARED = object()


class Recorder(_Recorder):
    """A :class:`_Recorder` that also keeps each function's attributes as its forward begins.

    Taken before ``forward`` runs, the attributes are what the function was
    built with (the numbers and arrays its converter writes into the graph),
    not what its forward computes.

    Args:
        model: the exported model; its links' persistent arrays (statistics
            that a training-mode forward updates in place) are not kept.
    """

    def __init__(self, model):
        super().__init__()
        self.attributes = {}
        self._skipped = {id(array) for array, _ in _persistent_arrays(model, copy=False)}

    def forward_preprocess(self, function, in_data):
        super().forward_preprocess(function, in_data)
        self.attributes[id(function)] = {
            name: _frozen(value, self._skipped) for name, value in vars(function).items()
        }


def _frozen(value, skipped):
    """``value`` as it is now, for comparison with the second run's (copies of arrays)."""
    if value is None or value is Ellipsis or isinstance(value, (int, float, complex, str)):
        return value
    if isinstance(value, numpy.generic):
        return value if value.dtype.kind in "biufcmMU" else _UNCOMPARED
    if isinstance(value, slice):
        return slice(*(_frozen(v, skipped) for v in (value.start, value.stop, value.step)))
    if isinstance(value, (tuple, list)):
        return tuple(_frozen(v, skipped) for v in value)
    if isinstance(value, backend.get_array_types()):
        if id(value) in skipped or value.dtype.kind not in "biufc":
            return _UNCOMPARED
        return numpy.array(to_numpy(value), copy=True)
    return _UNCOMPARED


def _checked(value):
    """Whether a :func:`_frozen` value holds a number or an array, something to compare."""
    if isinstance(value, tuple):
        return any(_checked(v) for v in value)
    if isinstance(value, slice):
        return _checked((value.start, value.stop, value.step))
    return isinstance(value, (int, float, complex, numpy.generic, numpy.ndarray))


def _same(a, b):
    if a is _UNCOMPARED or b is _UNCOMPARED:
        return True
    if isinstance(a, numpy.ndarray) or isinstance(b, numpy.ndarray):
        return (
            isinstance(a, numpy.ndarray)
            and isinstance(b, numpy.ndarray)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and numpy.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        )
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (
            isinstance(a, tuple)
            and isinstance(b, tuple)
            and len(a) == len(b)
            and all(_same(x, y) for x, y in zip(a, b))
        )
    if isinstance(a, slice) or isinstance(b, slice):
        return (
            isinstance(a, slice)
            and isinstance(b, slice)
            and _same((a.start, a.stop, a.step), (b.start, b.stop, b.step))
        )
    if a is None or b is None:
        return a is b
    try:
        return bool(a == b) or bool(a != a and b != b)  # NaN on both runs is the same value
    except (TypeError, ValueError):
        return True  # values that do not compare are not the numbers looked for


def model_for_second_run(model):
    """What the second forward calls: a copy of a Link sharing its arrays, else ``model``.

    The model's own state stays as one forward leaves it.

    Made before the first forward, so that a stateful link (an LSTM keeping
    its last state) starts both runs from the same state.
    """
    if isinstance(model, Link):
        return model.copy("share")
    return model


def check(folded, converted, recorder, model, second, args, call_of, train):
    """Raise :class:`DataDependentConstantError` if a constant written changes with the inputs.

    The constants are the ``folded`` values and the attributes of the
    ``converted`` functions (as :class:`Recorder` kept them).

    Args:
        folded (list of Folded): the values the graph folds.
        converted (list of FunctionNode): the functions written to the graph.
        recorder (Recorder): the first run's recorder.
        model: the exported model, after its first forward.
        second: :func:`model_for_second_run`'s copy of it.
        args: the example inputs as given to export.
        call_of (callable): ``call_of(args)`` is ``(variables, call)`` as
            export's ``_wrap_args`` returns them.
        train (bool): the mode of the first run.
    """
    attributes = recorder.attributes
    converted = [f for f in converted if _checked(tuple(attributes[id(f)].values()))]
    if not folded and not converted:
        return
    _share_initialized_params(model, second)
    rng = numpy.random.default_rng(0)
    first = sorted(recorder.records.values(), key=lambda r: r[0])
    for shift_floats, perturb_integers in ((True, True), (True, False), (False, False)):
        perturbed = _perturbed_args(args, rng, shift_floats, perturb_integers)
        try:
            again, again_attributes = _run(second, model, perturbed, call_of, train)
        except Exception:  # the model may reject the perturbed values
            continue
        break
    else:
        warnings.warn(
            "export: the forward failed on perturbed inputs, so the values folded into "
            "constants and the numbers functions were built with could not be checked to be "
            "independent of the inputs",
            UserWarning,
            stacklevel=3,
        )
        return
    if len(again) != len(first) or any(type(a[1]) is not type(b[1]) for a, b in zip(first, again)):
        return  # the forward took another path: export documents that it exports the one taken
    for f in folded:
        other = to_numpy(again[f.order][2][f.index])
        value = to_numpy(f.array)
        if other.shape != value.shape or not numpy.array_equal(
            value, other, equal_nan=value.dtype.kind in "fc"
        ):
            raise DataDependentConstantError(_message(f))
    for func in converted:
        order = recorder.records[id(func)][0]
        before = attributes[id(func)]
        after = again_attributes[id(again[order][1])]
        for name, value in before.items():
            if not _same(value, after.get(name, _UNCOMPARED)):
                raise DataDependentConstantError(
                    _attribute_message(func, name, value, after[name])
                )


def _message(f):
    cls = type(f.func)
    creator = f.node.creator_node
    origin = (
        ""
        if creator is None
        else f", the output of {creator.label} whose inputs are all such values"
    )
    return (
        f"export: input {f.index} of {f.func.label} (FunctionNode {cls.__module__}."
        f"{cls.__qualname__}), an array of shape {tuple(f.array.shape)} and dtype "
        f"{f.array.dtype}{origin}, is computed outside the graph (on .array, with xp, or by a "
        "function that records no FunctionNode), so it would be folded into a constant; "
        "but it depends on the inputs: a second forward on perturbed inputs changed it. "
        "Nothing was written. Compute it with differentiable dbr.functions, or wrap the "
        "computation with dbr.onnx.replace_func.as_funcnode('Name') and pass "
        "external_converters={'Name': converter} to export"
    )


def _shown(value):
    if value is _UNCOMPARED:
        return "..."
    if isinstance(value, numpy.ndarray):
        if value.size <= 8:
            return f"array({value.tolist()}, dtype={value.dtype})"
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, tuple):
        return f"({', '.join(_shown(v) for v in value)}{',' if len(value) == 1 else ''})"
    if isinstance(value, numpy.generic):
        return repr(value.item())
    return repr(value)


def _attribute_message(func, name, first, second):
    cls = type(func)
    before, after = _shown(first), _shown(second)
    change = f"changed it from {before} to {after}"
    if before == after:  # arrays too large to show
        change = f"changed the values of {before}"
    return (
        f"export: the attribute {name} of {func.label} (FunctionNode {cls.__module__}."
        f"{cls.__qualname__}) is a value computed outside the graph (a number read off "
        ".array, such as float(h.array.mean()), or an array made with xp), which the "
        "converter writes into the ONNX graph as a constant; but it depends on the inputs: "
        f"a second forward on perturbed inputs {change}. Nothing was written. Compute it "
        "with differentiable dbr.functions on the Variable (F.mean, F.max, F.sqrt, ... then "
        "F.broadcast_to), or wrap the computation with "
        "dbr.onnx.replace_func.as_funcnode('Name') and pass "
        "external_converters={'Name': converter} to export"
    )


def _share_initialized_params(model, second):
    """Give ``second`` the arrays of parameters that the first forward initialized."""
    if second is model or not isinstance(model, Link):
        return
    originals = dict(model.namedparams())
    for path, param in second.namedparams():
        if param.array is None and path in originals and originals[path].array is not None:
            param.array = originals[path].array


def _perturbed(x, rng, shift_floats, perturb_integers):
    array = x.array if isinstance(x, Variable) else x
    a = to_numpy(array)
    if a.dtype.kind == "f" and shift_floats:
        # Offsets of 1 to 2 in magnitude move every floor/ceil/round and flip many signs.
        offset = rng.uniform(1.0, 2.0, a.shape) * rng.choice((-1.0, 1.0), a.shape)
        out = (a + offset).astype(a.dtype)
    elif a.dtype.kind == "f":
        # For a model that rejects those: 1-2% more keeps signs, zeros and small integer parts.
        out = (a * rng.uniform(1.01, 1.02, a.shape)).astype(a.dtype)
    elif a.dtype.kind in "iu" and a.size and perturb_integers:
        # Stay within the values seen (ids in a vocabulary); leave negatives (ignore labels).
        top = int(a.max()) + 1
        out = numpy.where(a >= 0, (a.astype(numpy.int64) + 1) % top, a).astype(a.dtype)
    else:
        out = a
    out = backend.get_array_module(array).asarray(out)
    if isinstance(x, Variable):
        return Variable(out, requires_grad=x.requires_grad)
    return out


def _perturbed_args(args, rng, shift_floats, perturb_integers):
    if isinstance(args, (list, tuple)):
        return type(args)(_perturbed(a, rng, shift_floats, perturb_integers) for a in args)
    if isinstance(args, dict):
        return {k: _perturbed(a, rng, shift_floats, perturb_integers) for k, a in args.items()}
    return _perturbed(args, rng, shift_floats, perturb_integers)


def _run(second, model, args, call_of, train):
    """The second forward's records in the order applied, and its functions' attributes.

    The model's persistent arrays are left as the first forward left them.
    """
    saved = _persistent_arrays(model)
    recorder = Recorder(model)
    _, call = call_of(args)
    try:
        with warnings.catch_warnings(), numpy.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            with (
                using_config("train", train),
                using_config("enable_backprop", True),
                recorder,
            ):
                call(second)
    finally:
        for array, value in saved:
            backend.copyto(array, value)
    return sorted(recorder.records.values(), key=lambda r: r[0]), recorder.attributes


def _persistent_arrays(model, copy=True):
    """``(array, copy)`` of each persistent array of ``model`` (statistics a forward updates).

    With ``copy=False`` the second item is None.
    """
    if not isinstance(model, Link):
        return []
    arrays = backend.get_array_types()
    saved = []
    for link in model.links():
        for name in link._persistent:
            value = getattr(link, name, None)
            if isinstance(value, arrays):
                saved.append((value, value.copy() if copy else None))
    return saved
