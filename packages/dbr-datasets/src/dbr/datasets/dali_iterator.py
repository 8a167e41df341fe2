"""DaliIterator: mini-batches from an NVIDIA DALI pipeline, counted in epochs as an Iterator."""

from dbr.datasets.iterator import Iterator


class DaliIterator(Iterator):
    """An iterator over a DALI pipeline (Chainer v7's experimental ``DaliIterator``).

    Each ``next()`` returns ``pipeline.run()``; the iterator counts positions
    by ``pipeline.batch_size`` over ``pipeline.epoch_size()`` (read once the
    pipeline is built, on the first ``next()``), so that triggers and
    ``epoch_detail`` work as with a SerialIterator. It needs only those
    methods of the pipeline, so importing it needs no DALI.

    Args:
        pipeline: a built or unbuilt DALI pipeline (``build``, ``run``,
            ``epoch_size``, ``batch_size``).
        repeat (bool): loop over the data for ever; otherwise stop after the
            first epoch.

    Raises:
        TypeError: ``pipeline`` lacks one of the methods above.
    """

    def __init__(self, pipeline, repeat=True):
        missing = [
            n for n in ("build", "run", "epoch_size", "batch_size") if not hasattr(pipeline, n)
        ]
        if missing:
            raise TypeError(
                f"DaliIterator: expected pipeline to be a DALI pipeline (with build, run, "
                f"epoch_size and batch_size), got {type(pipeline).__name__} without "
                f"{', '.join(missing)}"
            )
        self.pipeline = pipeline
        self._repeat = repeat
        self._built = False
        self.epoch_size = 1  # known once the pipeline is built
        self.reset()

    def __next__(self):
        """Run the pipeline once; return its outputs (StopIteration after one unrepeated epoch)."""
        if not self._built:
            self.pipeline.build()
            self._built = True
            self.epoch_size = next(iter(self.pipeline.epoch_size().values()))
        if not self._repeat and self.epoch > 0:
            raise StopIteration
        self._previous_epoch_detail = self.epoch_detail
        end = self.current_position + self.batch_size
        self.is_new_epoch = end >= self.epoch_size
        if self.is_new_epoch:
            self.epoch += 1
            self.current_position = end - self.epoch_size if self._repeat else 0
        else:
            self.current_position = end
        return self.pipeline.run()

    @property
    def repeat(self):
        """Whether the iterator loops over the data for ever."""
        return self._repeat

    @property
    def batch_size(self):
        """The pipeline's batch size."""
        return self.pipeline.batch_size

    @property
    def epoch_detail(self):
        """The epoch as a float: completed epochs plus the fraction of this one."""
        return self.epoch + self.current_position / self.epoch_size

    @property
    def previous_epoch_detail(self):
        """``epoch_detail`` before the last ``next()``, or None before the first."""
        return None if self._previous_epoch_detail < 0 else self._previous_epoch_detail

    def serialize(self, serializer):
        """Save or load the position; a file without ``previous_epoch_detail`` guesses it."""
        self.current_position = serializer("current_position", self.current_position)
        self.epoch = serializer("epoch", self.epoch)
        self.is_new_epoch = serializer("is_new_epoch", self.is_new_epoch)
        try:
            self._previous_epoch_detail = serializer(
                "previous_epoch_detail", self._previous_epoch_detail
            )
        except KeyError:
            guess = self.epoch + (self.current_position - self.batch_size) / self.epoch_size
            self._previous_epoch_detail = max(guess, 0.0) if self.epoch_detail > 0 else -1.0

    def reset(self):
        """Start again from the beginning of the first epoch."""
        self.current_position = 0
        self.epoch = 0
        self.is_new_epoch = False
        self._previous_epoch_detail = -1.0
