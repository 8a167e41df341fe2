"""mpi4py without an MPI library: dbr.distributed imports, and asking for MPI says how to get one.

mpi4py loads the library named by ``MPI4PY_LIBMPI`` when it is set, so a name
that does not exist stands for a machine where no MPI was ever installed.
"""

import os
import subprocess
import sys
import textwrap

MISSING_LIBRARY = "/nonexistent/dbr-test/libmpi.so.12"


def _run_without_mpi(code):
    env = {**os.environ, "MPI4PY_LIBMPI": MISSING_LIBRARY}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_import_succeeds_and_create_communicator_names_the_fix():
    result = _run_without_mpi(
        """
        import sys
        import dbr.distributed as dist

        assert sys.excepthook is sys.__excepthook__, "the abort hook needs an MPI world"
        try:
            dist.create_communicator("naive")
        except dist.MPILibraryNotFoundError as error:
            print(error)
        else:
            raise SystemExit("create_communicator succeeded without an MPI library")
        """
    )
    assert result.returncode == 0, result.stderr
    message = result.stdout
    assert "dbr.distributed: mpi4py found no MPI library" in message
    assert MISSING_LIBRARY in message
    assert 'pip install "dbr-distributed[mpich]"' in message
    assert "no-binary mpi4py" in message


def test_the_error_is_a_runtime_error_raised_on_every_attempt():
    result = _run_without_mpi(
        """
        from dbr.distributed import MPILibraryNotFoundError
        from dbr.distributed.mpi_library import load_mpi

        assert issubclass(MPILibraryNotFoundError, RuntimeError)
        for _ in range(2):
            try:
                load_mpi()
            except MPILibraryNotFoundError:
                pass
            else:
                raise SystemExit("load_mpi succeeded without an MPI library")
        """
    )
    assert result.returncode == 0, result.stderr
