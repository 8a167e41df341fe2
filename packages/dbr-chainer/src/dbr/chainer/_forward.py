"""Forwarding modules: a Chainer module name whose attributes are dbr's own objects."""


def forward(namespace, target, elsewhere=None):
    """Return ``(__getattr__, __dir__)`` making a module forward missing names to ``target``.

    An attribute the forwarding module does not define itself is looked up on
    ``target`` (or, for the names in ``elsewhere``, on the module given there)
    the first time it is asked for, then kept in the module, so that
    ``dbr.chainer.functions.relu is dbr.functions.relu``. Dunder names other
    than ``__all__`` are never forwarded: a forwarded ``__path__`` would make
    the import system load dbr's submodules a second time under Chainer's name.

    Args:
        namespace (dict): the forwarding module's ``globals()``.
        target (module): the dbr module whose names it exposes.
        elsewhere (dict): ``{name: module}`` for names that dbr keeps in another module.

    Returns:
        The module-level ``__getattr__`` and ``__dir__`` functions (PEP 562).
    """
    module_name = namespace["__name__"]
    elsewhere = dict(elsewhere or {})

    def __getattr__(name):
        if name.startswith("__") and name != "__all__":
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        source = elsewhere.get(name, target)
        try:
            value = getattr(source, name)
        except AttributeError:
            raise AttributeError(
                f"module {module_name!r} has no attribute {name!r}: "
                f"{source.__name__} does not define {name!r}"
            ) from None
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(dir(target)) | set(elsewhere))

    return __getattr__, __dir__
