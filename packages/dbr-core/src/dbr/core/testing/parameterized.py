"""Parameterized test classes for plain pytest.

``parameterize(*dicts)`` is a class decorator. Each dict is a set of class
attributes; every test method of the class runs once per dict, with the
attributes set on the test instance before the test runs. It works
through pytest itself: the decorator adds an autouse fixture to the class
and parametrizes it indirectly with ``pytest.mark.parametrize``, so the
variants show up as test ids (``TestAdd::test_forward[dtype=float16,...]``)
and can be selected with ``-k``. Decorating a class twice, or decorating a
subclass of a decorated class, runs the product of the parameter sets.

::

    @parameterize(*product({'dtype': [numpy.float16, numpy.float32],
                            'shape': [(3, 2), ()]}))
    class TestRelu:
        def test_shape(self):
            x = numpy.zeros(self.shape, self.dtype)
            ...
"""

import itertools

import numpy

__all__ = ["parameterize", "product", "product_dict"]

_counter = itertools.count()

FIXTURE_PREFIX = "_dbr_parameterize_"
"""How the name of the fixture that sets one :func:`parameterize` call's attributes starts."""


def _dicts_for_key(key, values):
    names = [name.strip() for name in key.split(",")]
    dicts = []
    for value in values:
        if len(names) == 1:
            dicts.append({names[0]: value})
            continue
        value = tuple(value)
        if len(value) != len(names):
            raise ValueError(
                f"product: key {key!r} names {len(names)} attributes but the "
                f"value {value!r} has {len(value)} elements"
            )
        dicts.append(dict(zip(names, value)))
    return dicts


def product_dict(*parameters):
    """Return the merged dicts of the cartesian product of lists of dicts.

    >>> product_dict([{'a': 1}, {'a': 2}], [{'b': 3}])
    [{'a': 1, 'b': 3}, {'a': 2, 'b': 3}]
    """
    for i, dicts in enumerate(parameters):
        if not all(isinstance(d, dict) for d in dicts):
            raise TypeError(f"product_dict: expected argument {i} to be a list of dicts")
    return [
        {k: v for d in combination for k, v in d.items()}
        for combination in itertools.product(*parameters)
    ]


def product(parameter):
    """Return the cartesian product of parameter values as a list of dicts.

    Args:
        parameter: either a dict mapping an attribute name to a list of
            values (a key ``'a,b'`` takes a list of pairs and sets both
            attributes), or a list of lists of dicts, whose product is
            merged as by :func:`product_dict`.

    >>> product({'a': [1, 2], 'b': ['x']})
    [{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'x'}]
    >>> product({'shape,axis': [((2, 3), 0), ((4,), -1)]})
    [{'shape': (2, 3), 'axis': 0}, {'shape': (4,), 'axis': -1}]
    """
    if isinstance(parameter, dict):
        return product_dict(*[_dicts_for_key(k, v) for k, v in parameter.items()])
    if isinstance(parameter, list):
        if not all(isinstance(dicts, list) for dicts in parameter):
            raise TypeError("product: expected a dict or a list of lists of dicts")
        return product_dict(*parameter)
    raise TypeError(
        f"product: expected a dict or a list of lists of dicts, got {type(parameter).__name__}"
    )


def _format_value(value):
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, numpy.dtype):
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float, tuple, list, type(None), slice, type(Ellipsis))):
        return repr(value).replace(" ", "")
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    if isinstance(value, numpy.ndarray):
        return f"array{value.shape}".replace(" ", "")
    return type(value).__name__


def _test_id(params):
    return ",".join(f"{k}={_format_value(v)}" for k, v in params.items())


def parameterize(*params):
    """Class decorator running every test of the class once per dict of attributes.

    Args:
        *params (dict): one dict of class attributes per variant, e.g. from
            :func:`product`.

    Returns:
        The decorated class (the same class, with an autouse fixture that sets
        the attributes and a ``pytest.mark.parametrize`` over ``params``).
    """
    import pytest

    if not params:
        raise ValueError("parameterize: expected at least one dict of attributes")
    for i, p in enumerate(params):
        if not isinstance(p, dict) or not all(isinstance(k, str) for k in p):
            raise TypeError(
                f"parameterize: expected argument {i} to be a dict with str keys, got {p!r}"
            )
    name = f"{FIXTURE_PREFIX}{next(_counter)}"

    @pytest.fixture(autouse=True, name=name)
    def set_attributes(self, request):
        for key, value in request.param.items():
            setattr(self, key, value)

    def decorate(cls):
        if not isinstance(cls, type):
            raise TypeError(f"parameterize: expected to decorate a class, got {cls!r}")
        setattr(cls, name, set_attributes)
        mark = pytest.mark.parametrize(
            name, list(params), indirect=True, ids=[_test_id(p) for p in params]
        )
        return mark(cls)

    return decorate
