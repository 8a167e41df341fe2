"""End every rank when one raises, instead of leaving the others waiting in a collective.

Under ``mpiexec`` (an MPI world of more than one process) importing
``dbr.distributed`` installs a ``sys.excepthook`` that prints the traceback
with the rank, then calls ``MPI.COMM_WORLD.Abort(1)``. Set the environment
variable ``DBR_DISTRIBUTED_ABORT_ON_EXCEPTION=0`` to leave ``sys.excepthook`` alone.

A rank that dies without raising (a signal, SIGKILL, the machine lost) is
named only where MPI tells the survivors: when a collective fails with an
``MPI.Exception`` and the MPI reports failed processes (the ULFM extension,
``Comm.Get_failed``), the hook names those ranks. MPICH's ``mpiexec`` (the
``[mpich]`` extra) gives no such chance: it kills the survivors itself
(SIGKILL) within a second of a rank dying by a signal, its "BAD TERMINATION
... PID" lines naming the process, and its ch4 device detects no failed
process (``MPIR_CVAR_ENABLE_FT=1`` fails at start-up), so with
``mpiexec -disable-auto-cleanup`` the survivors would wait in the
collective for ever.
"""

import os
import sys
import traceback

from dbr.distributed.mpi_library import MPILibraryNotFoundError, load_mpi

__all__ = ["add_hook", "ENV_NAME"]

ENV_NAME = "DBR_DISTRIBUTED_ABORT_ON_EXCEPTION"
_previous = None


def _failed_ranks(world):
    """The ranks of ``world`` that MPI reports as failed; [] where it cannot tell."""
    try:
        failed = world.Get_failed()
        count = failed.Get_size()
        if not count:
            return []
        return sorted(failed.Translate_ranks(list(range(count)), world.Get_group()))
    except Exception:  # an MPI without the extension, or one failing further: just no names
        return []


def _abort_message(world, exc_value):
    """The line the hook prints before the traceback, naming the ranks MPI reports gone."""
    line = f"dbr.distributed: uncaught exception on rank {world.rank}"
    if isinstance(exc_value, load_mpi().Exception):
        gone = _failed_ranks(world)
        if gone:
            line += f"; MPI reports ranks {gone} gone (failed)"
    return line + "; aborting every rank\n"


def _abort_hook(exc_type, exc_value, exc_traceback):
    MPI = load_mpi()
    text = "".join(traceback.format_exception(exc_type, exc_value, exc_traceback))
    sys.stderr.write(_abort_message(MPI.COMM_WORLD, exc_value))
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
