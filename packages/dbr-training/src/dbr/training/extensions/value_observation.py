"""observe_value and observe_lr: put a value computed from the trainer into the observation."""

from dbr.training import extension


def observe_value(observation_key, target_func):
    """Return a trainer extension storing ``target_func(trainer)`` in the observation.

    The value is written to ``trainer.observation[observation_key]`` once per
    epoch by default (trigger ``(1, 'epoch')``, priority
    :data:`~dbr.training.extension.PRIORITY_WRITER`, so that a LogReport
    called in the same iteration sees it).

    Args:
        observation_key (str): the key under which the value is stored.
        target_func: called as ``target_func(trainer)``; returns the value.

    Returns:
        The extension (a function made with :func:`make_extension`).
    """
    if not isinstance(observation_key, str):
        raise TypeError(
            f"observe_value: expected observation_key to be a str, got "
            f"{type(observation_key).__name__}"
        )
    if not callable(target_func):
        raise TypeError(
            f"observe_value: expected target_func to be callable as target_func(trainer), got "
            f"{type(target_func).__name__}"
        )

    @extension.make_extension(trigger=(1, "epoch"), priority=extension.PRIORITY_WRITER)
    def _observe_value(trainer):
        trainer.observation[observation_key] = target_func(trainer)

    return _observe_value


def observe_lr(optimizer_name="main", observation_key="lr"):
    """Return a trainer extension observing an optimizer's learning rate ``optimizer.lr``.

    Args:
        optimizer_name (str): the name of the optimizer in the updater
            (``'main'`` by default).
        observation_key (str): the key under which the rate is stored
            (``'lr'`` by default).

    Returns:
        The extension made by :func:`observe_value` (trigger ``(1, 'epoch')``).
    """
    if not isinstance(optimizer_name, str):
        raise TypeError(
            f"observe_lr: expected optimizer_name to be a str, got {type(optimizer_name).__name__}"
        )

    def _lr(trainer):
        return trainer.updater.get_optimizer(optimizer_name).lr

    return observe_value(observation_key, _lr)
