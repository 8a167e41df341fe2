import os

import pytest

from dbr.core import config
from dbr.core.computational_graph import build_computational_graph
from dbr.training.extensions.computational_graph import DumpGraph, dump_graph


def test_dumps_the_first_iteration_graph(tmp_path, monkeypatch, make_trainer):
    monkeypatch.setenv("PATH", "")  # no Graphviz: only the DOT file
    trainer, model = make_trainer(tmp_path, stop=(3, "iteration"))
    flags = []
    trainer.extend(lambda t: flags.append(config.keep_graph_on_report), name="flag", priority=1000)
    trainer.extend(DumpGraph("main/loss"))
    losses = []
    trainer.extend(lambda t: losses.append(t.observation["main/loss"]), name="rec", priority=1000)
    assert config.keep_graph_on_report is False
    trainer.run()
    assert flags == [True, False, False]
    assert config.keep_graph_on_report is False
    assert os.listdir(tmp_path) == ["cg.dot"]
    with open(tmp_path / "cg.dot") as f:
        dot = f.read()
    expected = build_computational_graph(
        [losses[0]],
        variable_style={"shape": "octagon", "fillcolor": "#E0E0E0", "style": "filled"},
        function_style={"shape": "record", "fillcolor": "#6495ED", "style": "filled"},
    ).dump()
    assert dot == expected
    assert dot.startswith("digraph graphname{") and "->" in dot
    assert losses[1].creator is None


def test_alias_filename_and_errors(tmp_path, monkeypatch, make_trainer):
    monkeypatch.setenv("PATH", "")
    assert dump_graph is DumpGraph
    trainer, model = make_trainer(tmp_path, stop=(1, "iteration"))
    trainer.extend(DumpGraph("main/loss", out_name="graph.dot", variable_style={"shape": "box"}))
    trainer.run()
    with open(tmp_path / "graph.dot") as f:
        assert 'shape="box"' in f.read()

    trainer, model = make_trainer(tmp_path / "b", stop=(1, "iteration"))
    trainer.extend(DumpGraph("main/absent"))
    with pytest.raises(KeyError, match="DumpGraph: nothing was reported under 'main/absent'"):
        trainer.run(show_loop_exception_msg=False)
    assert config.keep_graph_on_report is False

    trainer, model = make_trainer(tmp_path / "c", stop=(1, "iteration"))
    trainer.extend(DumpGraph("main/total"))
    with pytest.raises(TypeError, match="'main/total' must be a Variable, got int"):
        trainer.run(show_loop_exception_msg=False)
    with pytest.raises(TypeError, match="DumpGraph: expected root_name to be a str"):
        DumpGraph(None)
    with pytest.raises(TypeError, match="DumpGraph: expected variable_style to be a dict"):
        DumpGraph("main/loss", variable_style="default")
