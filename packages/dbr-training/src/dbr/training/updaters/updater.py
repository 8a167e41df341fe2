"""Updater: the interface through which a Trainer advances training by one step."""


class Updater:
    """Abstract base of updaters.

    An updater owns the iterators and optimizers of a training run. The
    :class:`~dbr.training.trainer.Trainer` calls :meth:`update` once per
    iteration and reads ``iteration``, ``epoch``, ``epoch_detail``,
    ``previous_epoch_detail`` and ``is_new_epoch`` (which subclasses provide)
    to decide when triggers fire.
    """

    def connect_trainer(self, trainer):
        """Called by the Trainer's constructor with the trainer (nothing by default)."""

    def finalize(self):
        """Release the resources (iterators, processes) held by the updater."""
        raise NotImplementedError(f"{type(self).__name__} must implement finalize()")

    def get_optimizer(self, name):
        """Return the optimizer registered under ``name``."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_optimizer(name)")

    def get_all_optimizers(self):
        """Return a dict from names to optimizers ('main' for the main one)."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_all_optimizers()")

    def update(self):
        """Run one update step and advance ``iteration`` by one."""
        raise NotImplementedError(f"{type(self).__name__} must implement update()")

    def serialize(self, serializer):
        """Save or load the updater's state with ``serializer``."""
        raise NotImplementedError(f"{type(self).__name__} must implement serialize(serializer)")
