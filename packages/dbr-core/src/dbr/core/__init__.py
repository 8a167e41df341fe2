"""dbr.core: the define-by-run autograd core of dbr.

Variables and the graph, FunctionNode and backprop, configuration, devices,
links, initializers, serializers, the reporter, type checking, gradient
checking and testing helpers, function hooks and graph export.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from dbr.core.variable import (
    Parameter,
    Variable,
    VariableNode,
    as_array,
    as_variable,
)  # first: binds operators  # noqa: I001

from dbr.core import (
    backend,
    computational_graph,
    configuration,
    function_hooks,
    initializers,
    ops,
    reporter,
    serializers,
    type_check,
)
from dbr.core.initializers import Initializer
from dbr.core._backprop import backward, grad
from dbr.core.backend import (
    CpuDevice,
    Device,
    get_array_module,
    get_device,
    get_device_from_array,
    to_device,
)
from dbr.core.configuration import (
    DebugMode,
    config,
    force_backprop_mode,
    global_config,
    is_debug,
    no_backprop_mode,
    set_debug,
    using_config,
)
from dbr.core.function import Function, FunctionAdapter
from dbr.core.function_hook import FunctionHook, get_function_hooks
from dbr.core.function_node import FunctionNode
from dbr.core.link import Chain, ChainList, Link
from dbr.core.reporter import (
    DictSummary,
    Reporter,
    Summary,
    get_current_reporter,
    report,
    report_scope,
)
from dbr.core.sequential import Sequential
from dbr.core.type_check import InvalidType

try:
    __version__ = _version("dbr-core")
except PackageNotFoundError:
    __version__ = "0.0.0+source"
