import pytest

from dbr.training.extensions.value_observation import observe_lr, observe_value


def test_observe_value_and_lr(tmp_path, make_trainer):
    trainer, model = make_trainer(tmp_path, stop=(5, "iteration"))
    seen = []
    trainer.extend(
        observe_value("it", lambda t: t.updater.iteration * 10), trigger=(1, "iteration")
    )
    trainer.extend(observe_lr())
    trainer.extend(
        lambda t: seen.append((t.observation.get("it"), t.observation.get("lr"))), name="rec"
    )
    trainer.run()
    # observe_lr fires once per epoch (2 iterations of 4 examples each).
    assert seen == [(10, None), (20, 0.01), (30, None), (40, 0.01), (50, None)]


def test_defaults_and_errors():
    ext = observe_value("k", lambda t: 1)
    assert ext.trigger == (1, "epoch")
    assert ext.priority == 300
    with pytest.raises(TypeError, match="observe_value: expected observation_key to be a str"):
        observe_value(1, lambda t: 1)
    with pytest.raises(TypeError, match="observe_value: expected target_func to be callable"):
        observe_value("k", 1)
    with pytest.raises(TypeError, match="observe_lr: expected optimizer_name to be a str"):
        observe_lr(optimizer_name=None)
