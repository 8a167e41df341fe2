"""ChainerMN's names and behaviours that its own tests pin, in a world of one process."""

import numpy as np
import pytest

import dbr.distributed as dist
import dbr.functions as F
import dbr.links as L
from dbr.core import Variable, using_config
from dbr.datasets import SerialIterator
from dbr.distributed.communicators import INT_MAX, chunked_bcast_obj, init_ranks
from dbr.distributed.datasets import _scatter_index
from dbr.distributed.extensions import _CheckpointStats
from dbr.distributed.iterators import _build_ctrl_msg, _parse_ctrl_msg
from dbr.training import StandardUpdater, Trainer, make_extension, optimizers


def test_config_entries_are_attributes_set_in_a_config_scope():
    comm = dist.create_communicator("naive")
    assert comm.batched_copy and comm.get_config("batched_copy")
    comm.set_config("batched_copy", False)
    assert not comm.batched_copy and comm.get_config() == {"batched_copy": False}
    with comm.config_scope():
        comm.chunk = 3
    comm.other = 4  # outside the scope: an attribute only
    assert comm.get_config() == {"batched_copy": False, "chunk": 3}
    with pytest.raises(ValueError, match="unknown name 'other'"):
        comm.set_config("other", 1)


def test_mean_grad_in_debug_mode_refuses_a_non_finite_sum():
    comm = dist.create_communicator("naive")
    model = L.Linear(2, 3)  # gradients start as NaN
    model.W.grad[...] = 1
    comm.multi_node_mean_grad(model)
    with using_config("debug", True), pytest.raises(ValueError, match=" diverged "):
        comm.multi_node_mean_grad(model)
    model.b.grad[...] = 0
    with using_config("debug", True):
        comm.multi_node_mean_grad(model)


def test_init_ranks_and_chunked_bcast_obj():
    comm = dist.create_communicator("naive")
    assert init_ranks(comm.mpi_comm) == [0, 0, 1, 0, 1]
    for length in (1, 7, INT_MAX - 1):
        assert chunked_bcast_obj(list(range(100)), comm.mpi_comm, length) == list(range(100))
    for length in (0, -1, INT_MAX):
        with pytest.raises(ValueError, match=r"max_buf_len must be in \[1, 2147483647\)"):
            chunked_bcast_obj([1], comm.mpi_comm, length)
    with pytest.raises(AssertionError):  # ChainerMN's type too
        chunked_bcast_obj([1], comm.mpi_comm, 0)


@pytest.mark.parametrize("force_equal_length", [False, True])
def test_scatter_index_covers_every_index(force_equal_length):
    shares = _scatter_index(10, 3, force_equal_length)
    assert [rank for rank, _, _ in shares] == [0, 1, 2]
    if force_equal_length:
        assert shares == [(0, 0, 4), (1, 3, 7), (2, 6, 10)]
    else:
        assert shares == [(0, 0, 4), (1, 4, 7), (2, 7, 10)]


def test_ctrl_msg_round_trips():
    msg = _build_ctrl_msg(False, True, True, False, 12)
    assert msg.dtype == np.float32
    assert _parse_ctrl_msg(msg) == (False, True, True, False, 12)


def test_checkpoint_stats_report_a_line():
    stats = _CheckpointStats()
    assert stats.report() == "No checkpoint taken yet"
    stats.start()
    stats.end()
    assert stats.report().startswith("Checkpoint durations (s) of 1: mean=")


def test_testing_get_device():
    assert dist.testing.get_device().xp is np
    with pytest.raises(ValueError, match="use_chainerx=True"):
        dist.testing.get_device(use_chainerx=True)


def test_mnbn_checks_the_backend_and_computes_in_the_input_dtype():
    comm = dist.create_communicator("naive")
    with pytest.raises(ValueError, match=r"must be one of \['auto', 'mpi'\]"):
        dist.links.MultiNodeBatchNormalization(3, comm, communication_backend="nccl")
    x = np.random.RandomState(0).randn(4, 3).astype(np.float64)
    mnbn = dist.links.MultiNodeBatchNormalization(3, comm)
    y = mnbn(x)
    assert y.dtype == np.float64
    expected = L.BatchNormalization(3)(x)
    np.testing.assert_allclose(y.array, expected.array, rtol=1e-5, atol=1e-6)
    y16 = mnbn(x.astype(np.float16))
    assert y16.dtype == np.float16


def test_multi_node_n_step_rnn_without_peers_is_the_rnn():
    comm = dist.create_communicator("naive")
    with pytest.raises(ValueError, match="must be an NStep RNN link"):
        dist.links.create_multi_node_n_step_rnn(L.Linear(2, 2), comm)
    rnn = dist.links.create_multi_node_n_step_rnn(L.NStepLSTM(1, 2, 3, 0.0), comm)
    xs = [np.ones((4, 2), np.float32)]
    hy, cy, ys, delegate = rnn(xs)
    assert delegate is None and hy.shape == (1, 1, 3) and ys[0].shape == (4, 3)


@pytest.mark.parametrize("as_variable", [False, True])
def test_observation_aggregator_means_the_values_since_the_last_exchange(as_variable):
    comm = dist.create_communicator("naive")
    model = L.Linear(1, 1)
    optimizer = dist.create_multi_node_optimizer(optimizers.SGD(), comm).setup(model)
    train = SerialIterator(np.zeros((4, 1), np.float32), 1, shuffle=False)
    updater = StandardUpdater(train, optimizer, loss_func=lambda x: F.sum(model(x) ** 2))
    trainer = Trainer(updater, (4, "iteration"))
    seen = []

    @make_extension(trigger=(1, "iteration"), priority=300)
    def report(trainer_):
        value = np.float32(trainer_.updater.iteration)
        trainer_.observation["it"] = Variable(np.asarray(value)) if as_variable else value

    @make_extension(trigger=(2, "iteration"), priority=100)
    def check(trainer_):
        value = trainer_.observation["it-mean"]
        seen.append(float(value.array if as_variable else value))

    trainer.extend(report)
    aggregator = dist.extensions.ObservationAggregator(
        comm, "it", "it-mean", comm_trigger=(2, "iteration")
    )
    trainer.extend(aggregator)
    trainer.extend(check)
    trainer.run()
    assert seen == [1.5, 3.5]


def test_multi_node_early_stopping_trigger_stops_on_the_aggregated_value():
    comm = dist.create_communicator("naive")
    trigger = dist.extensions.MultiNodeEarlyStoppingTrigger(
        comm, check_trigger=(1, "iteration"), monitor="loss", patience=1,
        max_trigger=(10, "iteration"),
    )  # fmt: skip
    assert trigger.get_training_length() == (10, "iteration")
    assert trigger.actual_trigger.monitor == "loss_aggregated"
