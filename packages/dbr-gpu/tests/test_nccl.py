"""The NCCL communicator: availability, errors, and the collectives on one or two GPUs."""

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy
import pytest

import dbr.gpu
from dbr.core.testing import get_test_device
from dbr.gpu import nccl

no_gpu = pytest.mark.skipif(dbr.gpu.available, reason="a GPU is usable here")
DTYPES = [numpy.float16, numpy.float32, numpy.float64, numpy.int32, numpy.int64]


@pytest.fixture
def nccl_gpu():
    device = get_test_device("@cupy:0")
    if not nccl.available():
        pytest.skip(f"NCCL is not available: {nccl._probe()[1]}")
    device.use()
    return device


@pytest.fixture
def comm(nccl_gpu):
    communicator = nccl.NcclCommunicator(1, nccl.get_unique_id(), 0)
    yield communicator
    communicator.destroy()


# -- without a GPU ---------------------------------------------------------------


def test_dtypes_map_to_distinct_nccl_types():
    names = [nccl.nccl_type_name(d) for d in DTYPES]
    assert names == ["NCCL_FLOAT16", "NCCL_FLOAT32", "NCCL_FLOAT64", "NCCL_INT32", "NCCL_INT64"]


@pytest.mark.parametrize("dtype", [numpy.int8, numpy.uint8, numpy.bool_, numpy.complex64])
def test_other_dtypes_raise_type_error_naming_them(dtype):
    with pytest.raises(TypeError, match=f"do not support dtype {numpy.dtype(dtype)}; use one of"):
        nccl.nccl_type_name(dtype)


@pytest.mark.parametrize(("n_ranks", "rank"), [(0, 0), (2, 2), (2, -1)])
def test_bad_ranks_raise_value_error(n_ranks, rank):
    with pytest.raises(ValueError, match=rf"n_ranks={n_ranks}, rank={rank}"):
        nccl.NcclCommunicator(n_ranks, None, rank)


@no_gpu
def test_available_is_false_and_the_rest_raises_the_require_error():
    assert nccl.available() is False
    reason = re.escape(dbr.gpu.unavailable_reason)
    with pytest.raises(RuntimeError, match=rf"^get_unique_id\(\) needs a CUDA GPU.*{reason}"):
        nccl.get_unique_id()
    with pytest.raises(RuntimeError, match=rf"^NcclCommunicator needs a CUDA GPU.*{reason}"):
        nccl.NcclCommunicator(1, None, 0)


@pytest.mark.skipif(dbr.gpu.cupy is None, reason="CuPy is not installed")
def test_loading_nccl_never_lets_cupy_warnings_escape():
    module, why = nccl._load()
    if module is None:
        assert why
    else:
        assert why is None and module.available


# -- on a GPU ----------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_one_rank_collectives_keep_the_values(comm, dtype):
    cupy = dbr.gpu.cupy
    host = numpy.arange(-6, 6, dtype=dtype).reshape(3, 4)
    assert comm.n_ranks == 1 and comm.rank == 0 and comm.device_id == 0
    for collective in (comm.all_reduce, comm.reduce, comm.bcast):
        x = cupy.asarray(host)
        collective(x)
        cupy.cuda.get_current_stream().synchronize()
        numpy.testing.assert_array_equal(x.get(), host)


@pytest.mark.gpu
def test_collectives_check_their_arrays(comm):
    cupy = dbr.gpu.cupy
    with pytest.raises(TypeError, match="all_reduce: expected a CuPy array, got ndarray"):
        comm.all_reduce(numpy.zeros(3, dtype=numpy.float32))
    with pytest.raises(ValueError, match="reduce: the array must be C-contiguous"):
        comm.reduce(cupy.zeros((4, 4), dtype=numpy.float32)[:, ::2])
    with pytest.raises(TypeError, match="do not support dtype int8"):
        comm.bcast(cupy.zeros(3, dtype=numpy.int8))
    with pytest.raises(ValueError, match=r"bcast: root must be in \[0, 1\), got 1"):
        comm.bcast(cupy.zeros(3, dtype=numpy.float32), root=1)
    comm.destroy()
    comm.destroy()
    with pytest.raises(RuntimeError, match="all_reduce: the communicator was destroyed"):
        comm.all_reduce(cupy.zeros(3, dtype=numpy.float32))


_RANK = textwrap.dedent(
    """
    import json, sys

    import numpy

    from dbr.core import backend
    from dbr.gpu import nccl

    rank, comm_id = int(sys.argv[1]), tuple(json.loads(sys.argv[2]))
    device = backend.get_device(rank)
    device.use()
    comm = nccl.NcclCommunicator(2, comm_id, rank)
    xp = device.xp
    summed = xp.full(5, rank + 1.0, dtype=xp.float32)
    comm.all_reduce(summed)
    reduced = xp.full(5, rank + 1.0, dtype=xp.float64)
    comm.reduce(reduced, root=0)
    sent = xp.arange(5, dtype=xp.int64) * (10 if rank == 1 else -1)
    comm.bcast(sent, root=1)
    xp.cuda.get_current_stream().synchronize()
    comm.destroy()
    print(json.dumps([summed.get().tolist(), reduced.get().tolist(), sent.get().tolist()]))
    """
)


@pytest.mark.gpu
def test_two_ranks_sum_and_broadcast(nccl_gpu):
    if nccl_gpu.xp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs: NCCL runs one rank per GPU")
    comm_id = json.dumps(list(nccl.get_unique_id()))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RANK, str(rank), comm_id],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for rank in (0, 1)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, outputs):
        assert p.returncode == 0, err
    (sum0, red0, bc0), (sum1, red1, bc1) = (json.loads(out) for out, _ in outputs)
    assert sum0 == sum1 == [3.0] * 5
    assert red0 == [3.0] * 5 and red1 == [2.0] * 5
    assert bc0 == bc1 == [0, 10, 20, 30, 40]
