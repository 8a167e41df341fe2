"""End every rank when one raises, instead of leaving the others waiting in a collective.

Under ``mpiexec`` (an MPI world of more than one process) importing
``dbr.distributed`` installs a ``sys.excepthook`` that prints the traceback
with the rank, then calls ``MPI.COMM_WORLD.Abort(1)``. Set the environment
variable ``DBR_DISTRIBUTED_ABORT_ON_EXCEPTION=0`` to leave ``sys.excepthook`` alone.
"""

import os
import sys
import traceback

from dbr.distributed.mpi_library import MPILibraryNotFoundError, load_mpi

__all__ = ["add_hook", "ENV_NAME"]

ENV_NAME = "DBR_DISTRIBUTED_ABORT_ON_EXCEPTION"
_previous = None


def _abort_hook(exc_type, exc_value, exc_traceback):
    MPI = load_mpi()
    rank = MPI.COMM_WORLD.rank
    text = "".join(traceback.format_exception(exc_type, exc_value, exc_traceback))
    sys.stderr.write(f"dbr.distributed: uncaught exception on rank {rank}; aborting every rank\n")
    sys.stderr.write(text)
    sys.stderr.flush()
    MPI.COMM_WORLD.Abort(1)


def add_hook():
    """Install the aborting ``sys.excepthook`` (idempotent)."""
    global _previous
    if sys.excepthook is not _abort_hook:
        _previous = sys.excepthook
        sys.excepthook = _abort_hook


def _add_hook_if_enabled():
    if os.environ.get(ENV_NAME, "1").strip().lower() in ("0", "false", "no", "off"):
        return
    try:
        MPI = load_mpi()
    except MPILibraryNotFoundError:
        # Without an MPI library this process is no rank of a larger world;
        # create_communicator reports the missing library when it is asked for.
        return
    if MPI.COMM_WORLD.size > 1:
        add_hook()
