"""``chainer.testing``: Chainer v7's test helpers, for Chainer's tests and tests written like them.

- :func:`parameterize`, :func:`product`, :func:`product_dict`,
  :func:`parameterize_pytest`: one generated test class per parameter set,
  named as Chainer names them (``TestX_param_0_{dtype=float16, shape=(3, 2)}``).
- :func:`inject_backend_tests`, :class:`BackendConfig`: one class per backend.
- :mod:`attr` marks (``gpu``, ``cudnn``, ``multi_gpu``, ``ideep``, ``chainerx``,
  ``slow``), :mod:`condition` (``repeat``, ``retry``), :func:`fix_random`.
- :func:`assert_allclose`, :func:`assert_warns`, :func:`with_requires`,
  :func:`without_requires`, :func:`patch`, :func:`generate_matrix`,
  :func:`save_and_load_npz`, :func:`get_trainer_with_mock_updater`.
- :class:`FunctionTestCase`, :class:`LinkTestCase`,
  :class:`LinkInitializersTestCase`, :func:`unary_math_function_unittest`,
  :func:`distribution_unittest`.
- :func:`run_module`: the ``testing.run_module(__name__, __file__)`` line
  ending each Chainer test file.

pytest (and ``packaging``, for ``with_requires``) are imported only when a
helper needs them.
"""

import importlib

from dbr.chainer.testing import array, attr, backend, condition, helper, matrix, parameterized
from dbr.chainer.testing.array import assert_allclose
from dbr.chainer.testing.backend import BackendConfig, inject_backend_tests
from dbr.chainer.testing.helper import assert_warns, patch, with_requires, without_requires
from dbr.chainer.testing.matrix import generate_matrix
from dbr.chainer.testing.parameterized import (
    parameterize,
    parameterize_pytest,
    product,
    product_dict,
)
from dbr.chainer.testing.random import fix_random, generate_seed

__all__ = [
    "BackendConfig",
    "FunctionTestCase",
    "FunctionTestError",
    "InitializerArgument",
    "LinkInitializersTestCase",
    "LinkTestCase",
    "LinkTestError",
    "array",
    "assert_allclose",
    "assert_warns",
    "attr",
    "backend",
    "condition",
    "distribution_unittest",
    "fix_random",
    "generate_matrix",
    "generate_seed",
    "get_trainer_with_mock_updater",
    "helper",
    "inject_backend_tests",
    "matrix",
    "parameterize",
    "parameterize_pytest",
    "parameterized",
    "patch",
    "product",
    "product_dict",
    "run_module",
    "save_and_load",
    "save_and_load_hdf5",
    "save_and_load_npz",
    "unary_math_function_unittest",
    "with_requires",
    "without_requires",
]

_LAZY = {
    "FunctionTestCase": "function_link",
    "FunctionTestError": "function_link",
    "InitializerArgument": "function_link",
    "LinkInitializersTestCase": "function_link",
    "LinkTestCase": "function_link",
    "LinkTestError": "function_link",
    "distribution_unittest": "distribution_test",
    "get_trainer_with_mock_updater": "training",
    "save_and_load": "serializer",
    "save_and_load_hdf5": "serializer",
    "save_and_load_npz": "serializer",
    "unary_math_function_unittest": "unary_math_function_test",
}
_SUBMODULES = frozenset(
    {"distribution_test", "function_link", "random", "serializer", "training"}
    | {"unary_math_function_test"}
)


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)


def run_module(name, file):
    """Run pytest on ``file`` when ``name`` is ``'__main__'``; do nothing on import.

    Chainer's test files end with ``testing.run_module(__name__, __file__)``
    so that ``python test_x.py`` runs them.
    """
    if name == "__main__":
        import pytest

        pytest.main([file, "-vvs", "-x", "--pdb"])
