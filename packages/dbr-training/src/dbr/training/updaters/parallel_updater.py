"""ParallelUpdater: data-parallel training over several devices of one process."""

from dbr.core import backend, force_backprop_mode
from dbr.core.serializers import Deserializer
from dbr.datasets import call_converter, concat_examples
from dbr.training.updaters.standard_updater import StandardUpdater


class ParallelUpdater(StandardUpdater):
    """Updater that splits each batch across several copies of the model.

    The batch drawn from the main iterator is split into one sub-batch per
    device (example ``i`` goes to the ``i % n``-th device, as in Chainer),
    each sub-batch is converted onto its device, each model copy computes its
    loss there, the gradients of all copies are summed into the main model's,
    the main optimizer updates the main model, and the other copies then
    receive the updated parameters.

    Because gradients are summed, a loss that is a mean over its sub-batch
    gives ``n`` times the gradient of the mean over the whole batch (for ``n``
    equal sub-batches); a loss that is a sum over examples divided by the
    whole batch size gives exactly the whole-batch gradient.

    Args:
        iterator: the dataset iterator, or a dict of them with ``'main'``.
        optimizer: the optimizer, or a dict of them with ``'main'``; the main
            optimizer's target is the main model.
        converter: called as ``converter(sub_batch, device)``; default
            :func:`~dbr.datasets.concat_examples`.
        models (dict): the model copies, keyed like ``devices``; ``'main'``
            must be the main optimizer's target. When None, the copies are
            made from the main model with ``copy(mode='copy')`` (without
            update rules) and moved to their devices (the main model is
            moved to ``devices['main']``).
        devices (dict): name to device specifier (``'@numpy'``,
            ``'@cupy:1'``, ...), with a ``'main'`` entry.
        loss_func: the loss function; each model itself when None.
        loss_scale (float): a static loss scale for ``backward``, or None.
        auto_new_epoch (bool): as in :class:`StandardUpdater`.

    Raises:
        ValueError: ``devices`` is missing or has no ``'main'`` entry, or
            ``models`` does not match ``devices`` or the main optimizer.
    """

    def __init__(
        self,
        iterator,
        optimizer,
        converter=concat_examples,
        models=None,
        devices=None,
        loss_func=None,
        loss_scale=None,
        auto_new_epoch=True,
    ):
        who = type(self).__name__
        if not isinstance(devices, dict):
            raise ValueError(
                f"{who}: devices must be a dict from names to devices with a 'main' entry, "
                f"got {devices!r}"
            )
        if "main" not in devices:
            raise ValueError(
                f"{who}: devices must have a 'main' entry, got the keys {sorted(devices)}"
            )
        devices = {name: backend.get_device(spec) for name, spec in devices.items()}
        main_optimizer = optimizer.get("main") if isinstance(optimizer, dict) else optimizer
        if models is not None:
            if not isinstance(models, dict) or set(models) != set(devices):
                got = sorted(models) if isinstance(models, dict) else repr(models)
                raise ValueError(
                    f"{who}: models must be a dict with the keys of devices "
                    f"{sorted(devices)}, got {got}"
                )
            if models["main"] is not getattr(main_optimizer, "target", None):
                raise ValueError(f"{who}: models['main'] must be the main optimizer's target")
        super().__init__(
            iterator,
            optimizer,
            converter=converter,
            loss_func=loss_func,
            loss_scale=loss_scale,
            auto_new_epoch=auto_new_epoch,
        )
        main_model = self.get_optimizer("main").target
        if models is None:
            models = {"main": main_model}
            for name, device in devices.items():
                if name != "main":
                    model = main_model.copy(mode="copy")
                    # Copies are never stepped by the optimizer: drop the copied rules' state.
                    for param in model.params():
                        param.update_rule = None
                    models[name] = model.to_device(device)
            main_model.to_device(devices["main"])
        # The main model first, so that its reports come first in each observation.
        self._models = {"main": main_model}
        self._models.update((k, v) for k, v in models.items() if k != "main")
        self._devices = devices

    def connect_trainer(self, trainer):
        """Register every model copy other than the main one (and its child links)
        as an observer of the trainer's reporter, under its name."""
        for name, model in self._models.items():
            if name != "main":
                trainer.reporter.add_observer(name, model)
                trainer.reporter.add_observers(name, model.namedlinks(skipself=True))

    def update_core(self):
        """Split a batch across the models, sum their gradients into the main
        model, update it and copy its parameters back to the others."""
        optimizer = self.get_optimizer("main")
        main_model = optimizer.target
        iterator = self.get_iterator("main")
        batch = iterator.next()
        models = self._models
        n = len(models)
        sub_batches = {
            name: call_converter(self.converter, batch[i::n], self._devices[name])
            for i, name in enumerate(models)
        }
        for model in models.values():
            model.cleargrads()
        losses = []
        for name, model in models.items():
            in_arrays = sub_batches[name]
            loss_func = model if self.loss_func is None else self.loss_func
            with force_backprop_mode(), backend.using_device(self._devices[name]):
                if isinstance(in_arrays, tuple):
                    loss = loss_func(*in_arrays)
                elif isinstance(in_arrays, dict):
                    loss = loss_func(**in_arrays)
                else:
                    loss = loss_func(in_arrays)
            losses.append(loss)
        # Parameters initialized lazily in the forward pass get their gradients cleared too.
        for model in models.values():
            model.cleargrads()
        # Each GPU computes with its own device current; the sums and the step run on main's.
        for name, loss in zip(models, losses, strict=True):
            with backend.using_device(self._devices[name]):
                loss.backward(loss_scale=self.loss_scale)
        del losses, loss
        others = [name for name in models if name != "main"]
        with backend.using_device(self._devices["main"]):
            for name in others:
                main_model.addgrads(models[name])
            optimizer.update()
        for name in others:
            with backend.using_device(self._devices[name]):
                models[name].copyparams(main_model)
        if self.auto_new_epoch and iterator.is_new_epoch:
            optimizer.new_epoch(auto=True)

    def serialize(self, serializer):
        """As :meth:`StandardUpdater.serialize`; after loading, the other model
        copies receive the main model's loaded parameters."""
        super().serialize(serializer)
        if isinstance(serializer, Deserializer) and not serializer.dry_run:
            main_model = self.get_optimizer("main").target
            for name, model in self._models.items():
                if name != "main":
                    model.copyparams(main_model)
