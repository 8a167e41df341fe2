"""MultithreadIterator: mini-batches read by a pool of threads, one batch ahead."""

import concurrent.futures

from dbr.datasets._statemachine import SweepIterator, iterate


def _read(dataset, indices):
    return [dataset[index] for index in indices]


class MultithreadIterator(SweepIterator):
    """Dataset iterator that reads examples in worker threads, prefetching the next batch.

    Batches are the same, in the same order, as :class:`SerialIterator`'s
    for the same order sampler; while the caller works on one batch, the
    threads read the next. Threads pay off when reading an example releases
    the GIL (file I/O, decoding, NumPy work on large arrays).

    Call :meth:`finalize` (or use the iterator as a context manager) to stop
    the threads; an exception raised while reading an example is re-raised
    by ``next()``.

    Args:
        dataset: the dataset to iterate (``len()`` and integer indexing).
        batch_size (int): number of examples per batch.
        repeat (bool): sweep endlessly (True) or once (False).
        shuffle (bool): True for a new random order each epoch, False for
            index order, None (the default) to defer to ``order_sampler``
            (and shuffle if that is None as well).
        n_threads (int): number of worker threads.
        order_sampler (callable): ``order_sampler(current_order,
            current_position)`` returning the next epoch's order; only with
            ``shuffle=None``.
    """

    def __init__(
        self, dataset, batch_size, repeat=True, shuffle=None, n_threads=1, order_sampler=None
    ):
        if isinstance(n_threads, bool) or not isinstance(n_threads, int) or n_threads <= 0:
            raise ValueError(
                f"MultithreadIterator: n_threads must be a positive integer, got {n_threads!r}"
            )
        self.n_threads = n_threads
        self._pool = None
        super().__init__(dataset, batch_size, repeat, shuffle, order_sampler)

    def reset(self):
        """Rewind to the start of epoch 0 (drawing a new first order) and drop the prefetch."""
        super().reset()
        self._next = None
        self._next_state = None

    def __next__(self):
        """Return the next batch as a list of examples."""
        if self._next is None:
            self._prefetch()
        self._previous_epoch_detail = self.epoch_detail
        self._state = self._next_state
        pending, self._next = self._next, None
        if pending is None:
            raise StopIteration
        batch = [example for part in pending for example in part.result()]
        self._prefetch()
        return batch

    next = __next__

    def _prefetch(self):
        self._next_state, indices = iterate(
            self._state, self.batch_size, self._repeat, self.order_sampler, len(self.dataset)
        )
        if indices is None:
            self._next = None
            return
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                self.n_threads, thread_name_prefix="MultithreadIterator"
            )
        indices = indices.tolist()
        # A few chunks per thread balance the load without a task per example.
        chunk = max(1, -(-len(indices) // (4 * self.n_threads)))
        self._next = [
            self._pool.submit(_read, self.dataset, indices[i : i + chunk])
            for i in range(0, len(indices), chunk)
        ]

    def finalize(self):
        """Stop the worker threads and drop the prefetched batch."""
        pool, self._pool = self._pool, None
        pending, self._next = self._next, None
        if pending is not None:
            for future in pending:
                future.cancel()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def serialize(self, serializer):
        """Save or load the position (keys ``current_position``, ``epoch``,
        ``is_new_epoch``, ``_order``, ``previous_epoch_detail``, as Chainer's
        MultithreadIterator writes them).

        Loading a different position drops the prefetched batch, so the next
        batch is the one the saved run would have yielded.
        """
        if self._serialize_state(serializer, "_order", store_none_order=True):
            self._next = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_pool"] = None
        state["_next"] = None
        return state
