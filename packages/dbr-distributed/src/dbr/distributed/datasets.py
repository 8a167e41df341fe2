"""Splitting a dataset over the ranks."""

import numpy

from dbr.datasets import SubDataset

__all__ = ["DataSizeError", "create_empty_dataset", "scatter_dataset", "scatter_index"]

_DEFAULT_MAX_BUF_LEN = 256 * 1024 * 1024


class DataSizeError(RuntimeError):
    """A dataset too large to be scattered (kept for ChainerMN compatibility)."""


def _check_root(who, comm, root):
    if not 0 <= root < comm.size:
        raise ValueError(f"{who}: root must be in [0, {comm.size}), got {root}")


def _scatter_index(n_total_samples, size, force_equal_length):
    """``(rank, begin, end)`` of each rank's share of ``n_total_samples`` indices, by rank."""
    if force_equal_length:
        share = -(-n_total_samples // size)
        return [
            (i, n_total_samples * i // size, n_total_samples * i // size + share)
            for i in range(size)
        ]
    base, extra = divmod(n_total_samples, size)
    out, begin = [], 0
    for i in range(size):
        end = begin + base + (1 if i < extra else 0)
        out.append((i, begin, end))
        begin = end
    return out


def scatter_index(n_total_samples, comm, root=0, *, force_equal_length=True):
    """This rank's ``(begin, end)`` share of ``range(n_total_samples)``, decided by ``root``.

    With ``force_equal_length`` (default) every rank gets
    ``ceil(n_total_samples / size)`` indices and the shares cover every index
    (neighbouring shares may overlap by one); otherwise the shares are
    disjoint and differ in length by at most one.
    """
    _check_root("scatter_index", comm, root)
    if n_total_samples < 0:
        raise ValueError(f"scatter_index: n_total_samples must be >= 0, got {n_total_samples}")
    if comm.rank == root:
        shares = _scatter_index(n_total_samples, comm.size, force_equal_length)
        for i, begin, end in shares:
            if i != root:
                comm.send_obj((begin, end), dest=i)
        return shares[root][1:]
    return comm.recv_obj(source=root)


def scatter_dataset(
    dataset,
    comm,
    root=0,
    shuffle=False,
    seed=None,
    max_buf_len=_DEFAULT_MAX_BUF_LEN,
    *,
    force_equal_length=True,
):
    """This rank's share of ``root``'s ``dataset`` (other ranks' ``dataset`` is ignored).

    ``root`` broadcasts the dataset (pickled, in pieces of at most
    ``max_buf_len`` bytes) and, with ``shuffle``, a permutation drawn with
    ``numpy.random.RandomState(seed)``; each rank keeps a
    :class:`~dbr.datasets.SubDataset` of its :func:`scatter_index` range.

    Returns:
        SubDataset: this rank's examples.
    """
    _check_root("scatter_dataset", comm, root)
    payload = None
    if comm.rank == root:
        order = numpy.random.RandomState(seed).permutation(len(dataset)) if shuffle else None
        payload = (dataset, order)
    dataset, order = comm.bcast_obj(payload, max_buf_len=max_buf_len, root=root)
    begin, end = scatter_index(len(dataset), comm, root, force_equal_length=force_equal_length)
    return SubDataset(dataset, begin, end, order)


def create_empty_dataset(dataset):
    """A dataset of ``len(dataset)`` empty tuples, for models that take no input.

    Ranks of a model-parallel job whose part starts with ``recv`` iterate over
    it so that they step in time with the ranks that hold data.
    """
    return [()] * len(dataset)
