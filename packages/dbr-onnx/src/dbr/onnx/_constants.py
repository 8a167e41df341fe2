"""Find folded constants that are in fact computed from the inputs outside the graph.

Export folds every value that no recorded FunctionNode computes from the
inputs or parameters into a constant. That is right for a value made from
shapes or fixed numbers (an ``xp.arange``, a mask), and silently wrong for
one computed from an input's array (``Variable(xp.exp(x.array))``, a function
that makes no graph node): the exported model would hold the example input's
result forever. To tell them apart, the forward runs a second time under the
same hook on perturbed inputs, and a folded value that differs between the
two runs is reported.
"""

import collections
import warnings

import numpy

from dbr.core import Link, Variable, backend
from dbr.core.configuration import using_config
from dbr.onnx._graph import _Recorder, to_numpy


class DataDependentConstantError(ValueError):
    """Raised when a value export would fold into a constant depends on the inputs."""


# A folded value: input ``index`` of ``func``, the ``order``-th function recorded.
Folded = collections.namedtuple("Folded", "order index func node array")


def model_for_second_run(model):
    """What the second forward calls: a copy of a Link sharing its arrays, else ``model``.

    The model's own state stays as one forward leaves it.

    Made before the first forward, so that a stateful link (an LSTM keeping
    its last state) starts both runs from the same state.
    """
    if isinstance(model, Link):
        return model.copy("share")
    return model


def check(folded, records, model, second, args, call_of, train):
    """Raise :class:`DataDependentConstantError` if a ``folded`` value changes with the inputs.

    Args:
        folded (list of Folded): the values the graph folds.
        records (dict): the first run's records (``_Recorder.records``).
        model: the exported model, after its first forward.
        second: :func:`model_for_second_run`'s copy of it.
        args: the example inputs as given to export.
        call_of (callable): ``call_of(args)`` is ``(variables, call)`` as
            export's ``_wrap_args`` returns them.
        train (bool): the mode of the first run.
    """
    if not folded:
        return
    _share_initialized_params(model, second)
    rng = numpy.random.default_rng(0)
    first = sorted(records.values(), key=lambda r: r[0])
    for perturb_integers in (True, False):
        perturbed = _perturbed_args(args, rng, perturb_integers)
        try:
            again = _run(second, model, perturbed, call_of, train)
        except Exception:  # the model may reject the perturbed values
            continue
        break
    else:
        warnings.warn(
            "export: the forward failed on perturbed inputs, so the values folded into "
            "constants could not be checked to be independent of the inputs",
            UserWarning,
            stacklevel=3,
        )
        return
    if len(again) != len(first) or any(a[1].label != b[1].label for a, b in zip(first, again)):
        return  # the forward took another path: export documents that it exports the one taken
    for f in folded:
        other = to_numpy(again[f.order][2][f.index])
        value = to_numpy(f.array)
        if other.shape != value.shape or not numpy.array_equal(
            value, other, equal_nan=value.dtype.kind in "fc"
        ):
            raise DataDependentConstantError(_message(f))


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


def _share_initialized_params(model, second):
    """Give ``second`` the arrays of parameters that the first forward initialized."""
    if second is model or not isinstance(model, Link):
        return
    originals = dict(model.namedparams())
    for path, param in second.namedparams():
        if param.array is None and path in originals and originals[path].array is not None:
            param.array = originals[path].array


def _perturbed(x, rng, perturb_integers):
    array = x.array if isinstance(x, Variable) else x
    a = to_numpy(array)
    if a.dtype.kind == "f":
        # Offsets of 1 to 2 in magnitude move every floor/ceil/round and flip many signs.
        offset = rng.uniform(1.0, 2.0, a.shape) * rng.choice((-1.0, 1.0), a.shape)
        out = (a + offset).astype(a.dtype)
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


def _perturbed_args(args, rng, perturb_integers):
    if isinstance(args, (list, tuple)):
        return type(args)(_perturbed(a, rng, perturb_integers) for a in args)
    if isinstance(args, dict):
        return {k: _perturbed(a, rng, perturb_integers) for k, a in args.items()}
    return _perturbed(args, rng, perturb_integers)


def _run(second, model, args, call_of, train):
    """The second forward's records in the order applied; the model's persistents are kept."""
    saved = _persistent_arrays(model)
    recorder = _Recorder()
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
    return sorted(recorder.records.values(), key=lambda r: r[0])


def _persistent_arrays(model):
    """``(array, copy)`` of each persistent array of ``model`` (statistics a forward updates)."""
    if not isinstance(model, Link):
        return []
    arrays = backend.get_array_types()
    saved = []
    for link in model.links():
        for name in link._persistent:
            value = getattr(link, name, None)
            if isinstance(value, arrays):
                saved.append((value, value.copy()))
    return saved
