"""Multi-node and synchronized iterators give every rank the same batches (run under mpiexec)."""

import sys

import numpy as np
from mpi4py import MPI

import dbr.distributed as dist
from dbr.core.serializers import DictionarySerializer, NpzDeserializer
from dbr.datasets import SerialIterator


def dataset():
    rng = np.random.RandomState(0)
    return [(rng.randn(3).astype(np.float32), np.int32(i)) for i in range(10)]


def same_on_every_rank(comm, value):
    values = comm.allreduce_obj([value])
    assert all(repr(v) == repr(values[0]) for v in values), values
    return values[0]


def check_multi_node_iterator(comm, master):
    data = dataset()
    # the other ranks' actual iterator is not used
    actual = SerialIterator(data, 4, repeat=True, shuffle=True) if comm.rank == master else None
    it = dist.iterators.create_multi_node_iterator(actual, comm, rank_master=master)
    seen = []
    for _ in range(6):
        batch = next(it)
        position = (it.epoch, it.current_position, it.is_new_epoch, it.epoch_detail)
        same_on_every_rank(comm, ([int(t) for _, t in batch], position))
        seen.extend(int(t) for _, t in batch)
        for x, t in batch:
            assert np.array_equal(x, data[int(t)][0])
    assert (it.epoch, it.current_position, it.is_new_epoch) == (2, 4, False)
    assert np.isclose(it.epoch_detail, 2.4)
    # 6 batches of 4 from 10 examples: epochs 0 and 1 are complete permutations
    assert sorted(seen[:10]) == list(range(10)) and sorted(seen[10:20]) == list(range(10))

    # serialize: every rank takes the master's position
    target = {}
    it.serialize(DictionarySerializer(target))
    assert int(target["epoch"]) == 2, target
    # every rank writes the master's whole state: a plain iterator resumes from any file
    keys = sorted(k for k in target if not k.startswith("order_sampler/"))
    same_on_every_rank(comm, (keys, target["order"].tolist()))
    plain = SerialIterator(data, 4, repeat=True, shuffle=True)
    plain.serialize(NpzDeserializer(target))
    after = [int(t) for _, t in next(it)]
    assert [int(t) for _, t in next(plain)] == after
    same_on_every_rank(comm, after)

    # one sweep: every rank stops together, after the short last batch
    once = SerialIterator(data, 4, repeat=False, shuffle=False) if comm.rank == master else None
    it = dist.iterators.create_multi_node_iterator(once, comm, rank_master=master)
    sizes = [len(b) for b in it]
    assert sizes == [4, 4, 2], sizes


def check_synchronized_iterator(comm):
    np.random.seed(comm.rank)  # a different global generator on every rank
    data = dataset()
    it = dist.iterators.create_synchronized_iterator(
        SerialIterator(data, 3, repeat=True, shuffle=False), comm
    )
    orders = [[int(t) for _, t in next(it)] for _ in range(7)]
    order = same_on_every_rank(comm, orders)
    flat = [t for batch in order for t in batch]
    assert sorted(flat[:10]) == list(range(10)) and flat[:10] != list(range(10))
    assert it.batch_size == 3  # other attributes are the actual iterator's
    try:
        dist.iterators.create_synchronized_iterator(object(), comm)
    except ValueError as e:
        assert "order_sampler" in str(e)
    else:
        raise AssertionError("an iterator without order_sampler was accepted")


def main():
    comm = dist.create_communicator("naive")
    for master in range(comm.size):
        check_multi_node_iterator(comm, master)
    check_synchronized_iterator(comm)
    MPI.COMM_WORLD.Barrier()
    print(f"rank {comm.rank}: iterators ok", file=sys.stderr)


if __name__ == "__main__":
    main()
