"""Forwarding modules: a Chainer module name whose attributes are dbr's own objects."""

import importlib
import importlib.abc
import importlib.util
import sys
import types

from dbr.core.utils import missing_attribute

_MISSING = object()


def forward(namespace, target, elsewhere=None):
    """Return ``(__getattr__, __dir__)`` making a module forward missing names to ``target``.

    An attribute the forwarding module does not define itself is looked up on
    ``target`` (or, for the names in ``elsewhere``, on the module given there)
    the first time it is asked for, then kept in the module, so that
    ``dbr.chainer.functions.relu is dbr.functions.relu``. Dunder names other
    than ``__all__`` are never forwarded: a forwarded ``__path__`` would make
    the import system load dbr's submodules a second time under Chainer's name.
    In a forwarding package (one with its own ``__path__``, see
    :func:`mirror_submodules`), a name that ``target`` lacks or that names a
    module is the package's submodule of that name, when there is one.

    Args:
        namespace (dict): the forwarding module's ``globals()``.
        target (module): the dbr module whose names it exposes.
        elsewhere (dict): ``{name: module}`` for names that dbr keeps in another module;
            the module may be given by its name, then imported when the name is first asked for.

    Returns:
        The module-level ``__getattr__`` and ``__dir__`` functions (PEP 562).
    """
    module_name = namespace["__name__"]
    elsewhere = dict(elsewhere or {})

    def __getattr__(name):
        if name.startswith("__") and name != "__all__":
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        source = elsewhere.get(name, target)
        if isinstance(source, str):
            source = importlib.import_module(source)
        value = getattr(source, name, _MISSING)
        if "__path__" in namespace and (value is _MISSING or isinstance(value, types.ModuleType)):
            # A package mirroring dbr's (mirror_submodules): a submodule is the mirror's.
            try:
                value = importlib.import_module(f"{module_name}.{name}")
            except ModuleNotFoundError as e:
                if e.name != f"{module_name}.{name}":
                    raise
        if value is _MISSING:
            suggestion = str(missing_attribute(module_name, name, __dir__())).partition("; ")[2]
            raise AttributeError(
                f"module {module_name!r} has no attribute {name!r}: "
                f"{source.__name__} does not define {name!r}"
                + (f"; {suggestion}" if suggestion else "")
            )
        namespace[name] = value
        return value

    def __dir__():
        forwarded = {n for n in dir(target) if not n.startswith("__") or n == "__all__"}
        return sorted(set(namespace) | forwarded | set(elsewhere))

    return __getattr__, __dir__


def mirror_submodules(namespace, target_name, renames=None, root=None):
    """Make the forwarding module a package whose submodules are dbr's own modules.

    After this, ``import <module>.<sub>.<leaf>`` (the forwarding module's name
    followed by a path under ``target_name``) gives dbr's module object itself,
    ``sys.modules['dbr.chainer.functions.math.einsum'] is dbr.functions.math.einsum``,
    so that ``mock.patch('dbr.chainer.functions.math.minmax.max')`` patches
    what dbr calls. A dbr package on the way (``dbr.chainer.functions.math``) is
    a new forwarding module over dbr's package instead, so that importing a
    renamed submodule never sets an attribute on dbr's own package.

    Chainer names most modules after the function or link they define; where
    dbr keeps that object in a module of another name (Chainer's
    ``functions.math.ceil`` is dbr's ``functions.math.rounding``), the module
    defining ``root``'s attribute of the leaf's name is the one given.

    Args:
        namespace (dict): the forwarding module's ``globals()``; it gets ``__path__``.
        target_name (str): the dbr module mirrored, e.g. ``"dbr.functions"``.
        renames (dict): ``{chainer_path: dbr_module_name}`` for the other Chainer
            modules that dbr keeps under another name; ``chainer_path`` is
            relative to the forwarding module (``"math.basic_math"``).
        root (str): the dbr module whose attributes name the modules above;
            ``target_name`` when not given.
    """
    prefix = namespace["__name__"]
    _MirrorFinder.install()
    _MirrorFinder.prefixes[prefix] = (target_name, root or target_name)
    for path, dbr_name in (renames or {}).items():
        _MirrorFinder.renames[f"{prefix}.{path}"] = dbr_name
    # A module with ``__path__`` is a package: its submodules are searched for,
    # and the finder below answers before any search of the (empty) path.
    namespace["__path__"] = []


class _MirrorLoader(importlib.abc.Loader):
    """Loads a mirrored name as dbr's module, or as a new forwarding package over it."""

    def __init__(self, target, root):
        self.target = target
        self.root = root
        self.target_spec = target.__spec__

    def create_module(self, spec):
        if spec.submodule_search_locations is None:
            return self.target
        module = types.ModuleType(spec.name, self.target.__doc__)
        module.__getattr__, module.__dir__ = forward(module.__dict__, self.target)
        return module

    def exec_module(self, module):
        if module is self.target:
            # The import system gave dbr's module the mirror's spec; give its own back.
            module.__spec__ = self.target_spec
        else:
            mirror_submodules(module.__dict__, self.target.__name__, root=self.root)


class _MirrorFinder(importlib.abc.MetaPathFinder):
    """Finds the ``dbr.chainer`` names that mirror dbr modules (see :func:`mirror_submodules`)."""

    prefixes = {}  # mirroring package: (the dbr package it mirrors, the root dbr module)
    renames = {}

    @classmethod
    def install(cls):
        if cls not in sys.meta_path:
            # First, so that the path finder never loads a second copy of a dbr file.
            sys.meta_path.insert(0, cls)

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        parent, _, leaf = fullname.rpartition(".")
        if parent not in cls.prefixes:
            return None
        package, root = cls.prefixes[parent]
        module = _import_if_exists(cls.renames.get(fullname, f"{package}.{leaf}"))
        if module is None and package != root:
            defined_in = getattr(
                getattr(importlib.import_module(root), leaf, None), "__module__", None
            )
            # In the same category, or outside the mirrored library (dbr.core.ops):
            # ``functions.math.sigmoid`` is no module of Chainer's.
            if defined_in is not None and (
                defined_in.startswith(f"{package}.") or not defined_in.startswith(f"{root}.")
            ):
                module = importlib.import_module(defined_in)
        if module is None:
            return None
        loader = _MirrorLoader(module, root)
        return importlib.util.spec_from_loader(
            fullname, loader, is_package=hasattr(module, "__path__")
        )


def _import_if_exists(name):
    """Import the module ``name``, or return None when it does not exist (its own imports must)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name is not None and (name == e.name or name.startswith(f"{e.name}.")):
            return None
        raise
