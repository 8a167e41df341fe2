"""Write the API reference pages from the packages' ``__all__`` at build start.

Each page is a list of sections; a section names a module and either the
public names to document there or, for ``group_by_module``, every name of the
module's ``__all__`` grouped by the subpackage that defines it. Every object
is documented once, under the first public name the pages reach; a name of
any ``__all__`` left undocumented is a build warning (an error with ``-W``).
"""

import importlib
import inspect
import sys
import types
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

CORE_GRAPH = [
    "Variable", "Parameter", "VariableNode", "as_variable", "as_array", "backward", "grad",
    "FunctionNode", "Function", "FunctionAdapter", "no_backprop_mode", "force_backprop_mode",
    "FunctionHook", "get_function_hooks", "static_graph", "static_code",
]  # fmt: skip
CORE_CONFIG = [
    "config", "global_config", "using_config", "DebugMode", "is_debug", "set_debug", "get_dtype",
    "mixed16",
]  # fmt: skip
CORE_DEVICE = [
    "Device", "CpuDevice", "get_device", "get_device_from_array", "get_array_module", "to_device",
]  # fmt: skip
CORE_LINK = [
    "Link", "Chain", "ChainList", "Sequential", "LinkHook", "DeviceResident",
    "DeviceResidentsVisitor",
]  # fmt: skip
CORE_REPORT = ["Reporter", "Summary", "DictSummary", "report", "report_scope",
               "get_current_reporter"]  # fmt: skip
TRAINING_OPT = ["Optimizer", "UpdateRule", "GradientMethod", "Hyperparameter",
                "HyperparameterProxy"]  # fmt: skip
TRAINING_TRAINER = [
    "Trainer", "Updater", "StandardUpdater", "ParallelUpdater", "MultiprocessParallelUpdater",
    "Extension", "make_extension", "PRIORITY_WRITER", "PRIORITY_EDITOR", "PRIORITY_READER",
    "get_trigger",
]  # fmt: skip

FUNCTION_CATEGORIES = {
    "activation": "Activation functions",
    "array": "Array manipulation",
    "connection": "Neural network connections",
    "evaluation": "Evaluation functions",
    "loss": "Loss functions",
    "math": "Mathematical functions",
    "noise": "Noise injections",
    "normalization": "Normalization functions",
    "pooling": "Spatial pooling",
    "rnn": "Recurrent neural networks",
    "util": "Utilities",
}
LINK_CATEGORIES = {
    "activation": "Activation links",
    "connection": "Connection links",
    "loss": "Loss links",
    "model": "Machine learning models",
    "normalization": "Normalization links",
    "rnn": "Recurrent links",
}

# (file, title, intro, sections); a section is (heading, module, names) where
# names is a list, "all" (the module's __all__) or ("by", categories).
PAGES = [
    (
        "variable",
        "Variables and functions",
        "The graph that define-by-run records.",
        [
            ("Variables and function nodes", "dbr.core", CORE_GRAPH),
            ("Function hooks", "dbr.core.function_hooks", "all"),
            ("Graph optimizations", "dbr.core.graph_optimizations", ["ScheduleManager"]),
            ("Operators", "dbr.core.ops", "all"),
        ],
    ),
    (
        "functions",
        "Functions (dbr.functions)",
        "Every differentiable function of dbr-functions, by category.",
        [
            ("", "dbr.functions", ("by", FUNCTION_CATEGORIES)),
            ("Probability distributions", "dbr.functions.distributions", "all"),
            ("Convolution geometry", "dbr.functions.conv", "all"),
        ],
    ),
    (
        "links",
        "Links and chains",
        "Parameterised layers and the containers that hold them.",
        [
            ("Base classes", "dbr.core", CORE_LINK),
            ("Link hooks", "dbr.core.link_hooks", "all"),
            ("", "dbr.links", ("by", LINK_CATEGORIES)),
            *(
                (f"More of dbr.links.{name}", f"dbr.links.{name}", "all")
                for name in LINK_CATEGORIES
            ),
            ("Caffe models", "dbr.links.caffe", "all"),
        ],
    ),
    (
        "initializers",
        "Weight initializers",
        "",
        [
            ("", "dbr.core.initializers", "all"),
        ],
    ),
    (
        "optimizers",
        "Optimizers",
        "",
        [
            ("Optimizer and update rules", "dbr.training", TRAINING_OPT),
            ("Optimizers", "dbr.training.optimizers", "all"),
            ("Optimizer hooks", "dbr.training.optimizer_hooks", "all"),
        ],
    ),
    (
        "training",
        "Training and extensions",
        "",
        [
            ("Trainer, updaters and extensions", "dbr.training", TRAINING_TRAINER),
            ("Updaters", "dbr.training.updaters", "all"),
            ("Extensions", "dbr.training.extensions", "all"),
            ("Triggers", "dbr.training.triggers", "all"),
            ("Reporter", "dbr.core", CORE_REPORT),
            ("Reporter module", "dbr.core.reporter", "module"),
        ],
    ),
    (
        "datasets",
        "Datasets and iterators",
        "",
        [
            ("", "dbr.datasets", ("by", None)),
            ("Building tabular datasets", "dbr.datasets.tabular", "all"),
        ],
    ),
    (
        "serializers",
        "Serializers",
        "",
        [
            ("", "dbr.core.serializers", "all"),
        ],
    ),
    (
        "config",
        "Configuration, devices and utilities",
        "",
        [
            ("Configuration", "dbr.core", CORE_CONFIG),
            ("Configuration module", "dbr.core.configuration", "module"),
            (
                "Memory of freed arrays",
                "dbr.core.memory",
                [
                    "keep_freed_memory",
                    "keeps_freed_memory_by_default",
                    "MMAP_THRESHOLD",
                    "TRIM_THRESHOLD",
                    "ENVIRONMENT_VARIABLE",
                ],
            ),
            ("Devices", "dbr.core", CORE_DEVICE),
            ("Backend", "dbr.core.backend", "module"),
            ("Type checks", "dbr.core.type_check", "all"),
            ("Gradient checks", "dbr.core.gradient_check", "all"),
            ("Testing", "dbr.core.testing", "all"),
            ("Testing links", "dbr.core.testing.link_checks", "all"),
            ("Computational graph", "dbr.core.computational_graph", "module"),
            ("Utilities", "dbr.core.utils", "module"),
        ],
    ),
    (
        "gpu",
        "GPU (dbr.gpu)",
        "CuPy devices, kernels, memory pools, cuDNN and NCCL.",
        [
            ("", "dbr.gpu", "all"),
            ("Devices", "dbr.gpu.device", "all"),
            ("Kernels", "dbr.gpu.kernels", "all"),
            ("Fusion", "dbr.gpu.fusion", "all"),
            ("Memory", "dbr.gpu.memory", "all"),
            ("cuDNN", "dbr.gpu.cudnn", "all"),
            ("NCCL", "dbr.gpu.nccl", "all"),
            ("Testing", "dbr.gpu.testing", "all"),
        ],
    ),
    (
        "distributed",
        "Distributed training (dbr.distributed)",
        "ChainerMN's API on MPI.",
        [
            ("", "dbr.distributed", "all"),
            ("Communicators", "dbr.distributed.communicators", "all"),
            ("Optimizers", "dbr.distributed.optimizers", "all"),
            ("Datasets", "dbr.distributed.datasets", "all"),
            ("Iterators", "dbr.distributed.iterators", "all"),
            ("Extensions", "dbr.distributed.extensions", "all"),
            ("Functions", "dbr.distributed.functions", "all"),
            ("Links", "dbr.distributed.links", "all"),
            ("MPI library", "dbr.distributed.mpi_library", "all"),
            ("Global except hook", "dbr.distributed.global_except_hook", "all"),
            ("Testing helpers", "dbr.distributed.testing", "all"),
        ],
    ),
    (
        "onnx",
        "ONNX export (dbr.onnx)",
        "onnx_chainer's API.",
        [
            ("", "dbr.onnx", "all"),
        ],
    ),
]

# Whole modules in an __all__ that the pages above cover with a section.
ROOTS = ["dbr.core", "dbr.gpu", "dbr.functions", "dbr.links", "dbr.datasets", "dbr.training",
         "dbr.distributed", "dbr.onnx"]  # fmt: skip


def _names(module, spec):
    public = list(getattr(module, "__all__", []))
    if spec == "all":
        return public
    return list(spec)


def _directive(obj):
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return "autoexception", ["   :members:"]
        return "autoclass", ["   :members:", "   :show-inheritance:"]
    if callable(obj) and not isinstance(obj, types.ModuleType):
        return "autofunction", []
    return "autodata", ["   :no-value:"]


class _Writer:
    def __init__(self):
        self.documented = {}  # id(obj) -> full name
        self.keep = []  # the objects, so that ids stay unique
        self.modules = set()  # modules declared (py:module) so far

    def block(self, heading, modname, names, underline="-"):
        module = importlib.import_module(modname)
        out = []
        entries = []
        aliases = []
        for name in names:
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType):
                continue
            if id(obj) in self.documented:
                first = self.documented[id(obj)]
                if first.rpartition(".")[0] == modname:
                    aliases.append((name, first))
                continue
            self.documented[id(obj)] = f"{modname}.{name}"
            self.keep.append(obj)
            entries.append((name, obj))
        if not entries and not aliases:
            return out
        if heading:
            out += [heading, underline * len(heading), ""]
        # The first section of a module declares it, so that :mod: references resolve.
        directive = "currentmodule" if modname in self.modules else "py:module"
        self.modules.add(modname)
        out += [f".. {directive}:: {modname}", ""]
        if entries:
            out += [".. autosummary::", ""]
            out += [f"   {name}" for name, _ in entries] + [""]
        for name, obj in entries:
            directive, options = _directive(obj)
            out += [f".. {directive}:: {name}", *options, ""]
        for name, first in aliases:
            out += [f".. py:data:: {name}", "", f"   Another name of :obj:`{first}`.", ""]
        return out

    def section(self, heading, modname, spec):
        module = importlib.import_module(modname)
        if spec == "module":
            members = [
                name
                for name, obj in vars(module).items()
                if not name.startswith("_")
                and getattr(obj, "__module__", None) == modname
                and (inspect.isclass(obj) or inspect.isfunction(obj))
            ]
            return self.block(heading, modname, members)
        if isinstance(spec, tuple):
            categories = spec[1]
            groups = {}
            for name in module.__all__:
                obj = getattr(module, name)
                if isinstance(obj, types.ModuleType):
                    continue
                owner = getattr(obj, "__module__", modname) or modname
                parts = owner.removeprefix(modname + ".").split(".")
                key = parts[0] if owner.startswith(modname + ".") else ""
                groups.setdefault(key, []).append(name)
            out = []
            order = list(categories or sorted(groups))
            order += [k for k in sorted(groups) if k not in order]
            for key in order:
                if key not in groups:
                    continue
                default = key.replace("_", " ").capitalize() or "Other"
                title = (categories or {}).get(key) or default
                out += self.block(title, modname, groups[key])
            return out
        return self.block(heading, modname, _names(module, spec))

    def page(self, title, intro, sections):
        out = [title, "=" * len(title), ""]
        if intro:
            out += [intro, ""]
        for heading, modname, spec in sections:
            out += self.section(heading, modname, spec)
        return "\n".join(out) + "\n"

    def missing(self):
        """Public names of every package (and of the modules they export) not documented."""
        result = []
        seen_modules = set()
        pending = list(ROOTS)
        while pending:
            modname = pending.pop()
            if modname in seen_modules:
                continue
            seen_modules.add(modname)
            module = importlib.import_module(modname)
            for name in getattr(module, "__all__", []):
                obj = getattr(module, name)
                if isinstance(obj, types.ModuleType):
                    if obj.__name__.startswith("dbr."):
                        pending.append(obj.__name__)
                    continue
                if id(obj) not in self.documented:
                    result.append(f"{modname}.{name}")
        return sorted(result)


# id(object) -> the full name it is documented under, and the objects, for resolve_by_object.
DOCUMENTED = {}
_OBJECTS = {}
_ID_BY_NAME = {}


def write_reference(app):
    out_dir = Path(app.srcdir) / "reference"
    out_dir.mkdir(exist_ok=True)
    writer = _Writer()
    DOCUMENTED.clear()
    written = {}
    # dbr.functions' page lists all its names, so it claims the objects that
    # dbr.core.ops shares with it before the other pages are written.
    for slug, title, intro, sections in sorted(PAGES, key=lambda page: page[0] != "functions"):
        written[slug] = writer.page(title, intro, sections)
    written = {slug: written[slug] for slug, *_ in PAGES}
    written["chainer"] = chainer_page()
    toc = ["API reference", "=============", "", ".. toctree::", "   :maxdepth: 1", ""]
    toc += [f"   {slug}" for slug in written]
    written["index"] = "\n".join(toc) + "\n"
    for slug, text in written.items():
        path = out_dir / f"{slug}.rst"
        # Rewrite only what changed, so an incremental build stays incremental.
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    for name in writer.missing():
        logger.warning(f"apiref: public name {name} is on no reference page")
    DOCUMENTED.update(writer.documented)
    _OBJECTS.clear()
    _OBJECTS.update((id(obj), obj) for obj in writer.keep)
    _ID_BY_NAME.clear()
    _ID_BY_NAME.update((name, key) for key, name in DOCUMENTED.items())


def _documented_names(path):
    """Documented names of the object that the dotted ``path`` imports (empty if none).

    The longest importable module prefix is imported and the rest looked up as
    attributes; the first object on the way that a reference page documents
    gives the name, with the remaining attributes (a method, say) appended.
    When that object is a class, the same attributes on each documented class
    of its MRO follow, so that an inherited method resolves to where it is
    documented.
    """
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        break
    else:
        return []
    rest = parts[cut:]
    for i, attr in enumerate(rest):
        obj = getattr(obj, attr, None)
        if obj is None:
            return []
        if id(obj) in DOCUMENTED:
            tail = rest[i + 1 :]
            classes = obj.__mro__ if inspect.isclass(obj) and tail else (obj,)
            return [".".join([DOCUMENTED[id(c)], *tail]) for c in classes if id(c) in DOCUMENTED]
    return []


def _by_last_name(target, package, context=None):
    """Documented names in ``package`` (``dbr.x``, else any) that end with ``target``.

    A dotted ``target`` (``Variable.debug_print``) matches the documented
    classes named like its first part; an undotted one also matches as an
    attribute of any documented class that has it, subclasses of the
    ``context`` class first. Shorter names come first.
    """
    head, _, tail = target.partition(".")
    found = []
    for key, name in DOCUMENTED.items():
        if name.endswith("." + head):
            found.append(".".join([name, tail]) if tail else name)
        elif not tail:
            obj = _OBJECTS.get(key)
            if inspect.isclass(obj) and target in vars(obj):
                found.append(f"{name}.{target}")
    local = [n for n in found if n.startswith(package + ".")]
    found = local or found

    def order(name):
        owner = _OBJECTS.get(_ID_BY_NAME.get(name.rpartition(".")[0]))
        inside = inspect.isclass(owner) and context is not None and issubclass(owner, context)
        return (not inside, len(name))

    return sorted(set(found), key=order)


def resolve_by_object(app, env, node, contnode):
    """Resolve a Python reference that names a documented object by another path.

    Docstrings name objects by where they are defined
    (``dbr.functions.connection.convolution_2d.convolution_2d``), relative to
    their module or class (``initialize``, an inherited method), or by a
    function's own name in the same package (``send``); the reference pages
    document each object once, under its public name. The target is imported
    (relative to the reference's module and class first) and, when it is a
    documented object or an attribute of one, the reference goes to that
    entry; failing that, to the one documented name of the package that ends
    with the target.
    """
    target = node["reftarget"].lstrip("~.")
    if node.get("refdomain") != "py" or not target.replace(".", "").isidentifier():
        return None
    module, cls = node.get("py:module"), node.get("py:class")
    paths = [target]
    if module:
        paths.insert(0, f"{module}.{target}")
        if cls:
            paths.insert(0, f"{module}.{cls}.{target}")
    names = [name for path in paths for name in _documented_names(path)]
    if module and module.startswith("dbr."):
        context = None
        if cls:
            context = getattr(sys.modules.get(module), cls.split(".")[0], None)
            context = context if inspect.isclass(context) else None
        package = ".".join(module.split(".")[:2])
        names += _by_last_name(target, package, context)
        if target.startswith("dbr."):  # a full path that is not where the object is
            names += _by_last_name(target.rpartition(".")[2], package)
    domain = env.get_domain("py")
    for name in names:
        if name == target:
            continue
        new = node.deepcopy()
        new["reftarget"] = name
        found = domain.resolve_any_xref(env, node["refdoc"], app.builder, name, new, contnode)
        if found:
            return found[0][1]
    return None


def chainer_page():
    """The dbr.chainer namespace: each Chainer module and the dbr module it re-exports."""
    chainer = importlib.import_module("dbr.chainer")
    lines = [
        "The dbr.chainer namespace",
        "=========================",
        "",
        "``import dbr.chainer as chainer`` (dbr-chainer) exposes Chainer v7's names;",
        "each is the very object a dbr package defines, documented on the pages above.",
        "The table lists each submodule of ``dbr.chainer`` and where its names come from.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - ``dbr.chainer`` module",
        "     - names",
        "     - defined in",
    ]
    import pkgutil

    for info in sorted(pkgutil.iter_modules(chainer.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        modname = f"dbr.chainer.{info.name}"
        try:
            module = importlib.import_module(modname)
        except ImportError as e:
            logger.warning(f"apiref: {modname} does not import: {e}")
            continue
        names = getattr(module, "__all__", None)
        if names is None:
            names = [n for n in vars(module) if not n.startswith("_")]
        owners = sorted(
            {
                ".".join((getattr(getattr(module, n), "__module__", "") or "").split(".")[:2])
                for n in names
                if hasattr(module, n)
            }
            - {"", "builtins"}
        )
        owners = [o for o in owners if o.startswith("dbr.") and not o.startswith("dbr.chainer")]
        lines += [
            f"   * - ``{modname}``",
            f"     - {len(names)}",
            "     - " + (", ".join(f"``{o}``" for o in owners) or "dbr-chainer"),
        ]
    return "\n".join(lines) + "\n"


def setup(app):
    app.connect("builder-inited", write_reference)
    app.connect("missing-reference", resolve_by_object)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
