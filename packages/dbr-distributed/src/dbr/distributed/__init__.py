"""dbr.distributed: ChainerMN's API on MPI, for training over several processes or machines.

A ChainerMN script ports by changing ``import chainermn`` into
``import dbr.distributed as chainermn``::

    comm = dbr.distributed.create_communicator("naive")
    optimizer = dbr.distributed.create_multi_node_optimizer(optimizers.Adam(), comm)
    train = dbr.distributed.scatter_dataset(train, comm, shuffle=True)

Run under ``mpiexec -n N python script.py``; plain ``python`` is a world of one.
"""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from dbr.distributed import (
    communicators,
    datasets,
    extensions,
    functions,
    global_except_hook,
    iterators,
    links,
    mpi_library,
    optimizers,
    testing,
)
from dbr.distributed.communicators import CommunicatorBase, create_communicator
from dbr.distributed.datasets import DataSizeError, scatter_dataset, scatter_index
from dbr.distributed.extensions import (
    create_multi_node_checkpointer,
    create_multi_node_evaluator,
)
from dbr.distributed.links import MultiNodeChainList
from dbr.distributed.mpi_library import MPILibraryNotFoundError
from dbr.distributed.optimizers import create_multi_node_optimizer

try:
    __version__ = _version("dbr-distributed")
except _PackageNotFoundError:
    __version__ = "0.0.0+source"

global_except_hook._add_hook_if_enabled()

__all__ = [
    "CommunicatorBase",
    "DataSizeError",
    "MPILibraryNotFoundError",
    "MultiNodeChainList",
    "communicators",
    "create_communicator",
    "create_multi_node_checkpointer",
    "create_multi_node_evaluator",
    "create_multi_node_optimizer",
    "datasets",
    "extensions",
    "functions",
    "global_except_hook",
    "iterators",
    "links",
    "mpi_library",
    "optimizers",
    "scatter_dataset",
    "scatter_index",
    "testing",
]
