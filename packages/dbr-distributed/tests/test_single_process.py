"""Plain ``python`` (no mpiexec) is a world of one process, and bad input is refused early."""

import tracemalloc

import numpy as np
import pytest

import dbr.distributed as dist
import dbr.links as L
from dbr.core import Chain, Parameter


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


def _model(**arrays):
    model = Chain()
    with model.init_scope():
        for name, array in arrays.items():
            setattr(model, name, Parameter(array))
    return model


def test_mean_grad_packs_through_a_bounded_buffer_kept_between_calls():
    # 96 MB of gradients: a packing buffer of the model's size would be allocated
    # on every call; a chunk-sized one once, on the first.
    comm = dist.create_communicator("flat")
    model = _model(**{f"p{i}": np.zeros(6_000_000, np.float32) for i in range(4)})
    for i, p in enumerate(model.params()):
        p.grad = np.full(p.shape, i + 0.5, np.float32)
    held = [p.grad for p in model.params()]
    tracemalloc.start()
    try:
        comm.multi_node_mean_grad(model)
        first_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        comm.multi_node_mean_grad(model)
        second_extra = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert first_peak < 24e6, first_peak
    assert second_extra < 1e6, second_extra
    for i, (p, grad) in enumerate(zip(model.params(), held, strict=True)):
        assert p.grad is grad and np.array_equal(grad, np.full(p.shape, i + 0.5, np.float32))


@pytest.mark.parametrize("name", ["naive", "flat", "dummy"])
def test_mean_grad_across_chunk_boundaries_fills_the_same_gradient_arrays(name):
    comm = dist.create_communicator(name)
    comm._grad_chunk_bytes = 12  # three float32 values, one float64 value per all-reduce
    model = _model(
        a=np.zeros((2, 3), np.float32),
        b=np.zeros(5, np.float16),
        c=np.zeros(3, np.float64),
        d=np.zeros(7, np.float32),
        e=np.zeros((0, 4), np.float32),
        f=np.zeros((), np.float32),
    )
    rng = np.random.RandomState(0)
    for p in model.params():
        p.grad = rng.standard_normal(p.shape).astype(p.dtype)
    model.a.grad = np.arange(6, dtype=np.float32).reshape(3, 2).T  # not C-contiguous
    held = {k: p.grad for k, p in model.namedparams()}
    expected = {k: p.grad.copy() for k, p in model.namedparams()}
    comm.multi_node_mean_grad(model)
    for k, p in model.namedparams():
        assert p.grad is held[k], k
        assert p.grad.dtype == expected[k].dtype and np.array_equal(p.grad, expected[k]), k


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
