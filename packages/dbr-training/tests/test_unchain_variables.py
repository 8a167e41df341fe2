from dbr.core import config
from dbr.training.extensions.unchain_variables import unchain_variables


def test_unchains_observed_variables_while_graphs_are_kept(tmp_path, make_trainer):
    trainer, model = make_trainer(tmp_path, stop=(3, "iteration"))
    creators = []

    def recorder(t):
        creators.append(t.observation["main/loss"].creator is not None)

    kept = []

    def check_after(t):
        kept.append(t.observation["main/loss"].creator is not None)

    trainer.extend(recorder, name="rec", priority=100)
    trainer.extend(unchain_variables())
    trainer.extend(check_after, name="after", priority=-1)

    config.keep_graph_on_report = True
    try:
        trainer.run()
    finally:
        config.keep_graph_on_report = False
    assert creators == [True, True, True]
    assert kept == [False, False, False]


def test_does_nothing_without_kept_graphs(tmp_path, make_trainer):
    trainer, model = make_trainer(tmp_path, stop=(2, "iteration"))
    ext = unchain_variables()
    assert ext.priority == 0
    fired = []
    original = unchain_variables.__call__
    trainer.extend(ext)
    trainer.extend(lambda t: fired.append(ext.trigger(t)), name="probe", priority=-5)
    trainer.run()
    assert original is unchain_variables.__call__
    assert config.keep_graph_on_report is False
    assert fired == [False, False]
