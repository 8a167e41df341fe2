"""Rank 1 raises while rank 0 waits in a barrier: the hook must end both (run under mpiexec).

With ``--expect-no-hook`` it only checks that the hook was not installed.
"""

import sys

from mpi4py import MPI

import dbr.distributed as dist

if "--expect-no-hook" in sys.argv:
    assert sys.excepthook is not dist.global_except_hook._abort_hook
    sys.exit(0)
assert sys.excepthook is dist.global_except_hook._abort_hook
if MPI.COMM_WORLD.rank == 1:
    raise RuntimeError("rank 1 fails on purpose")
MPI.COMM_WORLD.Barrier()
