"""mpi4py's ``MPI`` module, loaded on first use; a clear error where no MPI library is installed.

mpi4py's wheels carry no MPI: they load ``libmpi`` when ``mpi4py.MPI`` is
first imported. ``dbr.distributed`` therefore imports without one, and
:func:`load_mpi` is the one place that asks for it, so a missing library is
reported by :class:`MPILibraryNotFoundError` with the way to get one.
"""

__all__ = ["MPILibraryNotFoundError", "load_mpi"]

_INSTALL_HINT = (
    'install one with `pip install "dbr-distributed[mpich]"` (MPICH from PyPI, with mpiexec), '
    "or, on a cluster, load its MPI and build mpi4py against it "
    "(`pip install --no-binary mpi4py --force-reinstall mpi4py`)"
)


class MPILibraryNotFoundError(RuntimeError):
    """mpi4py is installed but finds no MPI library (``libmpi``) to load."""


def load_mpi():
    """``mpi4py.MPI``, initialising MPI on the first call.

    Raises:
        MPILibraryNotFoundError: mpi4py cannot load an MPI library; the
            message names mpi4py's reason and how to install one.
    """
    try:
        from mpi4py import MPI
    except RuntimeError as error:
        # mpi4py raises a bare RuntimeError listing the libmpi names it tried.
        reason = "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
        raise MPILibraryNotFoundError(
            f"dbr.distributed: mpi4py found no MPI library ({reason}); {_INSTALL_HINT}"
        ) from error
    return MPI
