"""``parameterize``: one generated test class per set of class attributes."""

import functools
import itertools
import types
import unittest

import numpy

from dbr.chainer.testing import _bundle

__all__ = [
    "from_pytest_parameterize",
    "parameterize",
    "parameterize_pytest",
    "product",
    "product_dict",
]

_VALUE_MAXLEN = 100
_PARAMS_MAXLEN = 5000


def _shorten(text, maxlen):
    if len(text) <= maxlen:
        return text
    head = (maxlen - 3) // 2
    tail = maxlen - 3 - head
    return text[:head] + "..." + text[len(text) - tail :]


_LEGACY_PRINT = {"legacy": "1.25"} if int(numpy.__version__.split(".")[0]) >= 2 else {}


def _value_str(value):
    if value is numpy.bool_:
        return "bool_"
    name = getattr(value, "__name__", None)
    if isinstance(name, str):
        return name
    with numpy.printoptions(**_LEGACY_PRINT):
        return repr(value)


def class_name(base_name, index, param):
    """The name of the class generated for ``param``: ``Base_param_<index>_{k=v, ...}``.

    Keys are sorted; a value is its ``__name__`` if it has one (classes,
    functions, modules), else its ``repr`` as NumPy 1 prints it, so that names
    do not depend on the NumPy version; each is shortened to 100 characters and
    the whole list to 5000 by eliding the middle.
    """
    items = ", ".join(
        f"{k}={_shorten(_value_str(v), _VALUE_MAXLEN)}" for k, v in sorted(param.items())
    )
    return f"{base_name}_param_{index}_{{{_shorten(items, _PARAMS_MAXLEN)}}}"


def _as_member(value):
    if isinstance(value, types.FunctionType):

        def call_unbound(self, *args, **kwargs):
            return value(*args, **kwargs)

        return call_unbound
    return value


def _reraise_with_params(error, base, method, param):
    lines = [
        "Parameterized test failed.",
        "",
        f"Base test method: {base.__name__}.{method.__name__}",
        "Test parameters:",
    ]
    lines += [f"  {k}: {v}" for k, v in sorted(param.items())]
    message = "\n".join(lines) + f"\n\n(caused by)\n{type(error).__name__}: {error}\n"
    try:
        replacement = type(error)(message)
    except Exception:
        raise error from None
    raise replacement from error


def _variants(base, params):
    for index, param in enumerate(params):

        def wrap(method, param=param):
            @functools.wraps(method)
            def run(self, *args, **kwargs):
                try:
                    return method(self, *args, **kwargs)
                except unittest.SkipTest:
                    raise
                except Exception as e:
                    _reraise_with_params(e, base, method, param)

            return run

        def __str__(self, param=param):
            return f"{base.__str__(self)}  parameter: {param}"

        members = {"__str__": __str__}
        members.update((k, _as_member(v)) for k, v in sorted(param.items()))
        yield class_name(base.__name__, index, param), members, wrap


def parameterize(*params):
    """Class decorator generating one test class per dict of class attributes.

    For each ``params[i]``, a subclass named ``Base_param_<i>_{k=v, ...}`` with
    those attributes (a plain function becomes a method that ignores ``self``)
    is defined in the class's module; the decorator returns the generated
    classes as a bundle, so the undecorated class is not collected. Works on
    ``unittest.TestCase`` classes and plain pytest classes; decorators stack,
    each expanding the classes the one below generated. An exception from a
    test is re-raised as the same type with the parameters in its message.
    """
    return _bundle.make_decorator(lambda base: _variants(base, params))


def _values_to_dicts(names, values):
    if not isinstance(names, str):
        raise TypeError(f"names must be a comma-separated str, got {names!r}")
    if not isinstance(values, (tuple, list)):
        raise TypeError(f"values must be a tuple or a list, got {values!r}")
    keys = names.split(",")
    dicts = []
    for value in values:
        if len(keys) == 1:
            dicts.append({keys[0]: value})
            continue
        if not isinstance(value, (tuple, list)) or len(value) != len(keys):
            raise ValueError(f"expected {len(keys)} values for {names!r}, got {value!r}")
        dicts.append(dict(zip(keys, value)))
    return dicts


def from_pytest_parameterize(names, values):
    """The dicts of ``pytest.mark.parametrize``-style ``names`` (``'a,b'``) and ``values``."""
    return _values_to_dicts(names, values)


def parameterize_pytest(names, values):
    """:func:`parameterize` taking ``pytest.mark.parametrize``'s ``names`` and ``values``."""
    return parameterize(*from_pytest_parameterize(names, values))


def product(parameter):
    """The cartesian product of parameter values, as a list of dicts.

    ``parameter`` is either a dict from a name (or comma-separated names, whose
    values are tuples) to a list of values, taken in sorted key order, or a
    list of lists of dicts, merged as by :func:`product_dict`.
    """
    if isinstance(parameter, dict):
        return product_dict(
            *[_values_to_dicts(names, values) for names, values in sorted(parameter.items())]
        )
    if isinstance(parameter, list):
        if not all(isinstance(dicts, list) for dicts in parameter) or not all(
            isinstance(d, dict) for dicts in parameter for d in dicts
        ):
            raise TypeError("parameter must be list of lists of dicts")
        return product_dict(*parameter)
    raise TypeError(f"parameter must be either dict or list. Actual: {type(parameter)}")


def product_dict(*parameters):
    """Merge one dict from each list, for every combination (later keys win)."""
    return [
        {k: v for d in dicts for k, v in d.items()} for dicts in itertools.product(*parameters)
    ]


_product_dict_orig = product_dict


def _pairwise_product_dict(*parameters):
    """A subset of :func:`product_dict`'s combinations covering every pair of choices."""
    if len(parameters) <= 2:
        return _product_dict_orig(*parameters)
    lists = [list(dicts) for dicts in parameters]
    return [
        {k: v for i, dicts in zip(index, lists) for k, v in dicts[i].items()}
        for index in sorted(_pairwise_indices([len(dicts) for dicts in lists]))
    ]


def _pairwise_indices(shape):
    rng = numpy.random.RandomState(seed=0)
    axes = list(itertools.combinations(range(len(shape)), 2))
    uncovered = {(i, j): set(itertools.product(range(shape[i]), range(shape[j]))) for i, j in axes}
    candidates = list(itertools.product(*[range(n) for n in shape]))
    rng.shuffle(candidates)
    for index in candidates:
        hit = False
        for i, j in axes:
            pair = (index[i], index[j])
            if pair in uncovered[(i, j)]:
                uncovered[(i, j)].remove(pair)
                hit = True
        if hit:
            yield index
