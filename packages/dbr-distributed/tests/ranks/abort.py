"""Rank 1 raises while rank 0 waits in a barrier: the hook must end both (run under mpiexec).

With ``--expect-no-hook`` it only checks that the hook was not installed;
with ``--sigkill`` rank 1 kills itself (SIGKILL) while rank 0 waits in an
all-reduce.
"""

import os
import signal
import sys

import numpy as np
from mpi4py import MPI

import dbr.distributed as dist

if "--expect-no-hook" in sys.argv:
    assert sys.excepthook is not dist.global_except_hook._abort_hook
    sys.exit(0)
assert sys.excepthook is dist.global_except_hook._abort_hook
if "--sigkill" in sys.argv:
    if MPI.COMM_WORLD.rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    MPI.COMM_WORLD.Allreduce(np.ones(4), np.empty(4))
    sys.exit(0)
if MPI.COMM_WORLD.rank == 1:
    raise RuntimeError("rank 1 fails on purpose")
MPI.COMM_WORLD.Barrier()
