"""dbr.core: the define-by-run autograd core of dbr.

Variables and the graph, FunctionNode and backprop, configuration, devices,
links and link hooks, initializers, serializers, the reporter, type checking,
gradient checking and testing helpers, function hooks and graph export.
"""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

# ops binds Variable's operators when imported, so every user of dbr.core has them.
from dbr.core import (
    backend,
    computational_graph,
    configuration,
    function_hooks,
    gradient_check,
    graph_optimizations,
    initializers,
    link_hooks,
    memory,
    ops,
    reporter,
    serializers,
    type_check,
    utils,
)
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
    get_dtype,
    global_config,
    is_debug,
    mixed16,
    no_backprop_mode,
    set_debug,
    using_config,
)
from dbr.core.device_resident import DeviceResident, DeviceResidentsVisitor
from dbr.core.function import Function, FunctionAdapter
from dbr.core.function_hook import FunctionHook, get_function_hooks
from dbr.core.function_node import FunctionNode
from dbr.core.graph_optimizations import static_code, static_graph
from dbr.core.initializers import Initializer
from dbr.core.link import Chain, ChainList, Link
from dbr.core.link_hook import LinkHook
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
from dbr.core.utils import missing_attribute as _missing_attribute
from dbr.core.variable import Parameter, Variable, VariableNode, as_array, as_variable

# Only on request (DBR_KEEP_FREED_MEMORY=1): importing dbr changes no process-wide setting.
if memory.keeps_freed_memory_by_default():
    memory.keep_freed_memory()

try:
    __version__ = _version("dbr-core")
except _PackageNotFoundError:
    __version__ = "0.0.0+source"

__all__ = [
    "Chain", "ChainList", "CpuDevice", "DebugMode", "Device", "DeviceResident",
    "DeviceResidentsVisitor", "DictSummary", "Function",
    "FunctionAdapter", "FunctionHook", "FunctionNode", "Initializer", "InvalidType", "Link",
    "LinkHook",
    "Parameter", "Reporter", "Sequential", "Summary", "Variable", "VariableNode",
    "as_array", "as_variable", "backend", "backward", "computational_graph", "config",
    "configuration", "force_backprop_mode", "function_hooks", "get_array_module",
    "get_current_reporter", "get_device", "get_device_from_array", "get_dtype",
    "get_function_hooks", "global_config", "grad", "gradient_check", "graph_optimizations",
    "initializers", "is_debug", "link_hooks", "memory", "mixed16", "no_backprop_mode",
    "ops", "report", "report_scope", "reporter", "serializers", "set_debug", "static_code",
    "static_graph", "to_device", "type_check", "using_config", "utils",
]  # fmt: skip


def __getattr__(name):
    raise _missing_attribute(__name__, name, __all__)
