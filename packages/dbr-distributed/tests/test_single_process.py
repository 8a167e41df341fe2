"""Plain ``python`` (no mpiexec) is a world of one process, and bad input is refused early."""

import numpy as np
import pytest

import dbr.distributed as dist
import dbr.links as L


def test_import_without_mpiexec_is_a_world_of_one():
    comm = dist.create_communicator("naive")
    assert (comm.rank, comm.size, comm.intra_rank, comm.intra_size) == (0, 1, 0, 1)
    assert (comm.inter_rank, comm.inter_size) == (0, 1)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.array_equal(comm.allreduce(x), x)
    assert np.array_equal(comm.bcast(x), x)
    assert comm.bcast_obj({"a": 1}) == {"a": 1}


def test_mean_grad_of_one_process_keeps_the_gradients():
    comm = dist.create_communicator("flat")
    model = L.Linear(3, 2)
    model.W.grad = np.ones((2, 3), np.float32)
    model.b.grad = None
    comm.multi_node_mean_grad(model)
    assert np.array_equal(model.W.grad, np.ones((2, 3), np.float32))
    assert model.b.grad is None
    comm.multi_node_mean_grad(model, zero_fill=True)
    assert np.array_equal(model.b.grad, np.zeros(2, np.float32))


def test_unknown_communicator_names_the_valid_ones():
    with pytest.raises(ValueError, match="'naive', 'flat', 'pure_nccl'"):
        dist.create_communicator("hierarchical2")


def test_non_cuda_aware_maps_to_pure_nccl_with_a_warning():
    with pytest.warns(UserWarning, match="using 'pure_nccl'"):
        comm = dist.create_communicator("non_cuda_aware")
    assert type(comm).__name__ == "PureNcclCommunicator"


def test_allreduce_grad_dtype_only_for_pure_nccl():
    with pytest.raises(ValueError, match="only for 'pure_nccl'"):
        dist.create_communicator("naive", allreduce_grad_dtype=np.float16)


def test_collective_rejects_an_unsupported_dtype():
    comm = dist.create_communicator("naive")
    with pytest.raises(TypeError, match="allreduce: dtype bool"):
        comm.allreduce(np.zeros(2, dtype=bool))


def test_allreduce_grad_is_deprecated():
    comm = dist.create_communicator("naive")
    with pytest.warns(DeprecationWarning, match="multi_node_mean_grad"):
        comm.allreduce_grad(L.Linear(2, 2))
