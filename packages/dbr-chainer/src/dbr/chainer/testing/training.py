"""``get_trainer_with_mock_updater``: a Trainer driven by a mock updater, to test extensions."""

__all__ = ["get_trainer_with_mock_updater"]


def get_trainer_with_mock_updater(
    stop_trigger=(10, "iteration"), iter_per_epoch=10, extensions=None
):
    """A :class:`~dbr.training.Trainer` whose updater is a ``unittest.mock.Mock``.

    Each ``update()`` advances ``iteration`` by one and sets ``epoch``,
    ``epoch_detail``, ``previous_epoch_detail`` and ``is_new_epoch`` as for
    ``iter_per_epoch`` iterations per epoch (which may be fractional).
    """
    from unittest import mock

    from dbr.chainer import training

    updater = mock.Mock()
    updater.get_all_optimizers.return_value = {}
    updater.iteration = 0
    updater.epoch = 0
    updater.epoch_detail = 0
    updater.is_new_epoch = True
    updater.previous_epoch_detail = None

    def update():
        updater.update_core()
        updater.iteration += 1
        updater.epoch = updater.iteration // iter_per_epoch
        updater.epoch_detail = updater.iteration / iter_per_epoch
        updater.is_new_epoch = (updater.iteration - 1) // iter_per_epoch != updater.epoch
        updater.previous_epoch_detail = (updater.iteration - 1) / iter_per_epoch

    updater.update = update
    return training.Trainer(updater, stop_trigger, extensions=extensions)
