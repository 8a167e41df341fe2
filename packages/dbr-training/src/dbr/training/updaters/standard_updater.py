"""StandardUpdater: one batch, one forward/backward, one optimizer step per iteration."""

import numbers

from dbr.core import backend
from dbr.core.serializers import Serializer
from dbr.datasets import call_converter, concat_examples
from dbr.training.updaters.updater import Updater


def _as_named(who, what, value, check, need_main=True):
    """Wrap a single object as ``{'main': value}``; check a dict's values (and its 'main')."""
    named = dict(value) if isinstance(value, dict) else {"main": value}
    if need_main and "main" not in named:
        raise ValueError(
            f"{who}: a dict of {what}s must have a 'main' entry, got the keys {sorted(named)}"
        )
    for name, item in named.items():
        if not check(item):
            raise TypeError(
                f"{who}: {what} {name!r} must be an {what} object, got {type(item).__name__}"
            )
    return named


def _is_iterator(obj):
    return hasattr(obj, "__next__") or hasattr(obj, "next")


def _is_optimizer(obj):
    return hasattr(obj, "update") and hasattr(obj, "target")


class StandardUpdater(Updater):
    """The standard updater: each iteration draws a batch from the main
    iterator, converts it and calls ``optimizer.update(loss_func, ...)`` on the
    main optimizer.

    The converted batch is passed to the loss function as positional
    arguments when it is a tuple, as keyword arguments when it is a dict, and
    as one argument otherwise.

    Args:
        iterator: the dataset iterator, or a dict of them with a ``'main'`` entry.
        optimizer: the optimizer, or a dict of them with a ``'main'`` entry.
        converter: called as ``converter(batch, device)`` to turn a list of
            examples into arrays on ``input_device``; default
            :func:`~dbr.datasets.concat_examples`.
        device: a device specifier (``'@numpy'``, ``'@cupy:0'``, ...) or None.
            When given, the targets of all optimizers are moved there and
            batches are sent there (unless ``input_device`` says otherwise).
        loss_func: the loss function; the main optimizer's target when None.
        loss_scale (float): a static loss scale given to every optimizer
            (``optimizer.set_loss_scale``), or None.
        auto_new_epoch (bool): call ``optimizer.new_epoch(auto=True)`` on the
            main optimizer whenever the main iterator finishes an epoch (and
            mark every optimizer ``use_auto_new_epoch``).
        input_device: where the converter sends batches; defaults to ``device``.

    Attributes:
        converter: the converter.
        loss_func: the loss function (None: the main optimizer's target).
        iteration (int): the number of updates done so far.
        input_device: the :class:`~dbr.core.backend.Device` for batches, or None.
        auto_new_epoch (bool): as given.
        loss_scale: as given.
    """

    def __init__(
        self,
        iterator,
        optimizer,
        converter=concat_examples,
        device=None,
        loss_func=None,
        loss_scale=None,
        auto_new_epoch=True,
        *,
        input_device=None,
    ):
        who = type(self).__name__
        iterators = _as_named(who, "iterator", iterator, _is_iterator)
        # As in Chainer, only the default update_core needs an optimizer named 'main':
        # a subclass may name its optimizers as it likes ('gen' and 'dis', say).
        optimizers = _as_named(who, "optimizer", optimizer, _is_optimizer, need_main=False)
        if not callable(converter):
            raise TypeError(
                f"{who}: converter must be callable as converter(batch, device), "
                f"got {type(converter).__name__}"
            )
        if loss_func is not None and not callable(loss_func):
            raise TypeError(
                f"{who}: loss_func must be callable or None, got {type(loss_func).__name__}"
            )
        if loss_scale is not None and (
            not isinstance(loss_scale, numbers.Real)
            or isinstance(loss_scale, bool)
            or not loss_scale > 0
        ):
            raise ValueError(f"{who}: loss_scale must be a positive number, got {loss_scale!r}")
        for name, opt in optimizers.items():
            if getattr(opt, "target", None) is None:
                raise ValueError(
                    f"{who}: optimizer {name!r} has no target; call optimizer.setup(link) first"
                )
        device = None if device is None else backend.get_device(device)
        input_device = device if input_device is None else backend.get_device(input_device)

        if device is not None:
            for opt in optimizers.values():
                opt.target.to_device(device)
        if loss_scale is not None:
            for opt in optimizers.values():
                opt.set_loss_scale(loss_scale)
        if auto_new_epoch:
            for opt in optimizers.values():
                opt.use_auto_new_epoch = True

        self._iterators = iterators
        self._optimizers = optimizers
        self._device = device
        self.converter = converter
        self.loss_func = loss_func
        self.loss_scale = loss_scale
        self.auto_new_epoch = auto_new_epoch
        self.input_device = input_device
        self.iteration = 0

    @property
    def device(self):
        """The :class:`~dbr.core.backend.Device` the models were moved to, or None."""
        return self._device

    @property
    def epoch(self):
        """The number of epochs completed by the main iterator."""
        return self._iterators["main"].epoch

    @property
    def epoch_detail(self):
        """The main iterator's epoch as a float (fraction of the current epoch included)."""
        return self._iterators["main"].epoch_detail

    @property
    def previous_epoch_detail(self):
        """The main iterator's ``epoch_detail`` before its last batch (None before the first)."""
        return self._iterators["main"].previous_epoch_detail

    @property
    def is_new_epoch(self):
        """Whether the main iterator's last batch completed an epoch."""
        return self._iterators["main"].is_new_epoch

    def finalize(self):
        """Finalize every iterator."""
        for iterator in self._iterators.values():
            iterator.finalize()

    def get_optimizer(self, name):
        """Return the optimizer registered under ``name``."""
        return self._optimizers[name]

    def get_all_optimizers(self):
        """Return a new dict from names to optimizers."""
        return dict(self._optimizers)

    def get_iterator(self, name):
        """Return the iterator registered under ``name``."""
        return self._iterators[name]

    def update(self):
        """Run :meth:`update_core` (with ``device`` current, when given) and advance
        ``iteration`` by one."""
        device = self._device
        if device is None:
            self.update_core()
        else:
            with device:
                self.update_core()
        self.iteration += 1

    def update_core(self):
        """Draw a batch, convert it and update the main optimizer with the loss function."""
        iterator = self._iterators["main"]
        batch = iterator.next()
        in_arrays = call_converter(self.converter, batch, self.input_device)
        optimizer = self._optimizers.get("main")
        if optimizer is None:
            raise KeyError(
                f"{type(self).__name__}.update_core updates the optimizer named 'main', but "
                f"the optimizers are named {sorted(self._optimizers)}: name one 'main' or "
                "override update_core"
            )
        loss_func = optimizer.target if self.loss_func is None else self.loss_func
        if isinstance(in_arrays, tuple):
            optimizer.update(loss_func, *in_arrays)
        elif isinstance(in_arrays, dict):
            optimizer.update(loss_func, **in_arrays)
        else:
            optimizer.update(loss_func, in_arrays)
        if self.auto_new_epoch and iterator.is_new_epoch:
            optimizer.new_epoch(auto=True)

    def serialize(self, serializer):
        """Save or load the iterators (``iterator:<name>``), the optimizers
        (``optimizer:<name>``), their targets (``model:<name>``) and ``iteration``.

        A saving serializer's return value is not used (Chainer's contract
        lets it return anything, None included).
        """
        for name, iterator in self._iterators.items():
            iterator.serialize(serializer["iterator:" + name])
        for name, optimizer in self._optimizers.items():
            optimizer.serialize(serializer["optimizer:" + name])
            optimizer.target.serialize(serializer["model:" + name])
        iteration = serializer("iteration", self.iteration)
        if not isinstance(serializer, Serializer):
            self.iteration = int(iteration)
