"""dbr.chainer: Chainer v7's namespace over dbr, so that ``import dbr.chainer as chainer`` ports.

Every name is dbr's own object (``dbr.chainer.Variable is dbr.core.Variable``,
``dbr.chainer.functions.relu is dbr.functions.relu``), found the first time it
is asked for, so ``import dbr.chainer`` imports only dbr.core until a
submodule is used. The submodules are modules (``import dbr.chainer.functions
as F``, ``from dbr.chainer.training import extensions``):

- ``functions``, ``links`` (dbr.functions, dbr.links), packages whose
  submodules are dbr's (``functions.math.einsum``); ``distributions``
- ``optimizers``, ``optimizer_hooks``, ``optimizer``, ``training`` (with
  ``extensions``, ``triggers``, ``updaters``, ``updater``, ``extension``,
  ``trainer``, ``util``) from dbr.training
- ``datasets``, ``iterators``, ``dataset`` (with ``convert``, ``download``,
  ``iterator``, ``dataset_mixin``) from dbr.datasets
- ``initializers``, ``serializers``, ``serializer``, ``reporter``,
  ``configuration``, ``computational_graph``, ``gradient_check``, ``testing``,
  ``function_hooks``, ``link_hooks``, ``utils`` (``type_check``, ``argument``,
  ``array``; ``conv`` and ``conv_nd`` are dbr.functions.conv), ``backend``,
  ``variable``, ``link``, ``function``, ``function_node``, ``function_hook``,
  ``link_hook``, ``sequential`` from dbr.core
- ``basic_math`` (``functions.math.basic_math``: Variable's operators, dbr.core.ops.arithmetic)
  and ``array`` (``functions.array``)
- ``device_resident``, ``initializer``, ``warnings`` (dbr.core's), ``distribution``
  (dbr.functions.distributions')
- ``print_runtime_info()`` (Chainer's report: platform, versions, CuPy), ``should_use_cudnn``
  and ``should_use_cudnn_tensor_core`` (``backends.cuda``'s), ``get_compute_mode``,
  ``get_cpu_array_types``, ``is_arrays_compatible`` (dbr.core's), ``Fallback``
- ``backends.cuda`` (also ``cuda``): CuPy through dbr-gpu, imported only when used
- ``chainerx``, ``backends.intel64``, ``memory_layouts``: stand-ins answering
  that ChainerX, iDeep and cuDNN layouts are not available; ``types``
- ``chainermn`` (dbr.distributed) and ``onnx_chainer`` (dbr.onnx), imported
  only when used (so mpi4py and onnx are not loaded before)

Porting Chainer code is one substitution (one sed expression, split here)::

    sed -E 's/\\bchainer\\b/dbr.chainer/g;
            s/\\b(chainerx|chainermn|onnx_chainer)\\b/dbr.chainer.\\1/g'

A Chainer name that dbr does not provide raises AttributeError naming it.
"""

import importlib

import dbr.core as _core

# The Chainer release whose API this namespace reproduces: Chainer programs
# compare ``chainer.__version__`` to choose code paths. dbr-chainer's own
# version is ``importlib.metadata.version("dbr-chainer")``.
__version__ = "7.8.1"

# Chainer's switch for the FutureWarning of ``utils.experimental``; dbr marks nothing experimental.
disable_experimental_feature_warning = False

_SUBMODULES = frozenset({
    "backend", "backends", "chainermn", "chainerx", "computational_graph", "configuration",
    "cuda", "onnx_chainer", "exporters",
    "dataset", "datasets", "device_resident", "distribution", "distributions", "function",
    "function_hook", "function_hooks", "function_node", "functions", "gradient_check",
    "initializer", "initializers", "iterators", "link", "link_hook", "link_hooks", "links",
    "memory_layouts", "optimizer", "optimizer_hooks", "optimizers", "reporter", "sequential",
    "serializer", "serializers", "testing", "training", "types", "utils", "variable", "warnings",
})  # fmt: skip

# Chainer's top-level names that dbr.core defines under the same name.
_FROM_CORE = frozenset({
    "Chain", "ChainList", "DebugMode", "DictSummary", "Function", "FunctionAdapter",
    "FunctionHook", "FunctionNode", "Initializer", "Link", "LinkHook", "Parameter",
    "Reporter", "Sequential", "Summary", "Variable", "as_array", "as_variable", "backward",
    "config", "force_backprop_mode", "get_current_reporter", "get_device",
    "get_function_hooks", "global_config", "grad", "is_debug", "no_backprop_mode", "report",
    "report_scope", "set_debug", "using_config",
    "get_dtype", "mixed16", "static_code", "static_graph",
})  # fmt: skip

# Chainer's top-level names that dbr keeps in another module, by the submodule here holding them.
_FROM_SUBMODULE = {
    "AbstractSerializer": "serializers",
    "Deserializer": "serializers",
    "Serializer": "serializers",
    "GradientMethod": "optimizer",
    "Optimizer": "optimizer",
    "UpdateRule": "optimizer",
    "copyto": "backend",
    "get_array_types": "backend",
    "using_device": "backend",
    "Distribution": "distributions",
    "cross_entropy": "distributions",
    "kl_divergence": "distributions",
    "register_kl": "distributions",
    "DeviceResident": "device_resident",
    "get_cpu_array_types": "backend",
    "is_arrays_compatible": "backend",
    "get_compute_mode": "configuration",
    "print_runtime_info": "_runtime_info",
    "should_use_cudnn": "backends.cuda",
    "should_use_cudnn_tensor_core": "backends.cuda",
}


# Chainer's top-level names for modules it keeps elsewhere.
_MODULE_ALIASES = {
    "array": f"{__name__}.functions.array",
    "basic_math": f"{__name__}.functions.math.basic_math",
}


class _FallbackType:
    __slots__ = ()

    def __repr__(self):
        return "Fallback"


Fallback = _FallbackType()
"""Chainer's marker that ``forward_chainerx`` returns to fall back to NumPy/CuPy.

dbr has no ChainerX, so no ``forward_chainerx`` is ever called; the name is
here so that code returning it imports.
"""


def __getattr__(name):
    if name in _MODULE_ALIASES:
        value = importlib.import_module(_MODULE_ALIASES[name])
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ImportError as e:
            raise AttributeError(
                f"module {__name__!r} has no attribute {name!r}: importing it failed ({e})"
            ) from e
    if name in _FROM_CORE:
        source = _core
    elif name in _FROM_SUBMODULE:
        source = importlib.import_module(f"{__name__}.{_FROM_SUBMODULE[name]}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        value = getattr(source, name)
    except AttributeError:
        raise AttributeError(
            f"module {__name__!r} has no attribute {name!r}: "
            f"{source.__name__} does not define {name!r}"
        ) from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(
        set(globals()) | _SUBMODULES | _FROM_CORE | set(_FROM_SUBMODULE) | set(_MODULE_ALIASES)
    )
