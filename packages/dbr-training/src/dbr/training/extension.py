"""Trainer extensions: callables that the Trainer invokes when their trigger fires.

An extension is any callable taking the trainer. Its default trigger,
priority and name are read from its attributes (``trigger``, ``priority``,
``default_name``); :class:`Extension` gives a class those defaults and
:func:`make_extension` adds them to a function. Extensions of higher priority
run first within an iteration: writers (which change the observation) before
editors, editors before readers.
"""

PRIORITY_WRITER = 300
PRIORITY_EDITOR = 200
PRIORITY_READER = 100

_INVOKE_BEFORE_TRAINING_REMOVED = (
    "invoke_before_training was removed in Chainer v2; use initializer= "
    "(or Trainer.extend(..., call_before_training=True)) instead"
)


class Extension:
    """Base class of trainer extensions.

    Subclasses implement :meth:`__call__` and may override the hooks
    :meth:`initialize`, :meth:`finalize`, :meth:`on_error` and
    :meth:`serialize` (all no-ops here).

    Attributes:
        trigger: the default trigger, ``(1, 'iteration')``.
        priority (int): the default priority, :data:`PRIORITY_READER`.
        name (str): None until the trainer registers the extension, then the
            (unique) name it was registered under.
    """

    trigger = 1, "iteration"
    priority = PRIORITY_READER
    name = None

    @property
    def default_name(self):
        """The name used when none is given to :meth:`Trainer.extend`: the class name."""
        return type(self).__name__

    def __call__(self, trainer):
        """Run the extension on ``trainer``; called when its trigger fires."""
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(trainer)")

    def initialize(self, trainer):
        """Called once at the start of :meth:`Trainer.run` (also after a resume)."""

    def finalize(self):
        """Called once at the end of :meth:`Trainer.run`, also when the loop raised."""

    def on_error(self, trainer, exc, tb):
        """Called when the training loop raised ``exc`` (with traceback ``tb``).

        Exceptions raised here are printed and ignored; the original exception
        is re-raised by the trainer after every handler has run.
        """

    def serialize(self, serializer):
        """Save or load the extension's state with ``serializer`` (nothing by default)."""


def make_extension(
    trigger=None,
    default_name=None,
    priority=None,
    finalizer=None,
    initializer=None,
    on_error=None,
    **kwargs,
):
    """Decorator that turns a function ``f(trainer)`` into a trainer extension.

    It sets attributes on the function and returns the function itself.

    Args:
        trigger: the default trigger (``(1, 'iteration')`` when None).
        default_name (str): the default name (the function's ``__name__`` when None).
        priority (int): the default priority (:data:`PRIORITY_READER` when None).
        finalizer: called with no argument at the end of the training loop,
            stored as ``finalize``.
        initializer: called with the trainer at the start of the training
            loop, stored as ``initialize``.
        on_error: called as ``on_error(trainer, exc, tb)`` when the training
            loop raised.

    Raises:
        ValueError: ``invoke_before_training`` is given (removed, as in Chainer).
        TypeError: any other unexpected keyword argument is given.
    """
    if "invoke_before_training" in kwargs:
        raise ValueError(f"make_extension: {_INVOKE_BEFORE_TRAINING_REMOVED}")
    if kwargs:
        raise TypeError(
            f"make_extension: unexpected keyword argument(s) {', '.join(sorted(kwargs))}; "
            f"expected trigger, default_name, priority, finalizer, initializer, on_error"
        )
    if trigger is None:
        trigger = Extension.trigger
    if priority is None:
        priority = Extension.priority

    def decorator(ext):
        if not callable(ext):
            raise TypeError(
                f"make_extension: expected a callable to decorate, got {type(ext).__name__}"
            )
        ext.trigger = trigger
        ext.default_name = default_name or ext.__name__
        ext.priority = priority
        ext.finalize = finalizer
        ext.initialize = initializer
        ext.on_error = on_error
        return ext

    return decorator
