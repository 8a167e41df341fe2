"""Plain ``python`` (no mpiexec) is a world of one process, and bad input is refused early."""

import os
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


class _FailedGroup:
    def __init__(self, ranks):
        self.ranks = ranks

    def Get_size(self):
        return len(self.ranks)

    def Translate_ranks(self, ranks, group):
        return [self.ranks[i] for i in ranks]


class _World:
    """COMM_WORLD of a job in which MPI reports ``failed`` as gone (or cannot tell: None)."""

    rank = 0

    def __init__(self, failed):
        self.failed = failed

    def Get_failed(self):
        if self.failed is None:
            raise NotImplementedError("MPIX_Comm_get_failed")
        return _FailedGroup(self.failed)

    def Get_group(self):
        return None


def test_the_abort_hook_names_the_ranks_that_mpi_reports_gone():
    from mpi4py import MPI

    hook = dist.global_except_hook
    failed = MPI.Exception(MPI.ERR_OTHER)
    text = hook._abort_message(_World([2, 1]), failed)
    assert "uncaught exception on rank 0" in text
    assert "MPI reports ranks [1, 2] gone" in text
    text = hook._abort_message(_World(None), failed)
    assert "uncaught exception on rank 0" in text and "gone" not in text
    # not an MPI failure: MPI is not asked
    assert "gone" not in hook._abort_message(_World([1]), RuntimeError("a bug"))


def test_a_checkpointed_run_that_raises_keeps_its_checkpoints(tmp_path):
    import warnings

    import dbr.functions as F
    from dbr.datasets import SerialIterator, TupleDataset
    from dbr.training import Extension, StandardUpdater, Trainer, optimizers

    class FailAt(Extension):
        trigger = 1, "iteration"

        def __call__(self, trainer):
            if trainer.updater.iteration == 3:
                raise RuntimeError("fails on purpose at iteration 3")

    comm = dist.create_communicator("naive")
    model = L.Classifier(L.Linear(3, 2), lossfun=F.softmax_cross_entropy)
    data = TupleDataset(np.ones((8, 3), np.float32), np.zeros(8, np.int32))
    opt = dist.create_multi_node_optimizer(optimizers.SGD(), comm).setup(model)
    trainer = Trainer(StandardUpdater(SerialIterator(data, 2), opt), (10, "iteration"), tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        checkpointer = dist.create_multi_node_checkpointer("run", comm)
    trainer.extend(checkpointer, trigger=(1, "iteration"))
    trainer.extend(FailAt())
    with pytest.raises(RuntimeError, match="on purpose"):
        trainer.run(show_loop_exception_msg=False)
    assert {"run.0.1", "run.0.2"} <= set(os.listdir(tmp_path))
