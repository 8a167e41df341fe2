"""dbr.chainer exposes Chainer v7's names and submodules as dbr's own objects."""

import importlib
import subprocess
import sys

import pytest

import dbr.chainer as chainer
import dbr.core
import dbr.core.backend
import dbr.core.testing
import dbr.datasets
import dbr.functions
import dbr.links
import dbr.training

# (path under dbr.chainer, the dbr object it must be)
SAME_OBJECTS = [
    ("Variable", dbr.core.Variable),
    ("Parameter", dbr.core.Parameter),
    ("Link", dbr.core.Link),
    ("Chain", dbr.core.Chain),
    ("ChainList", dbr.core.ChainList),
    ("Sequential", dbr.core.Sequential),
    ("Function", dbr.core.Function),
    ("FunctionNode", dbr.core.FunctionNode),
    ("FunctionHook", dbr.core.FunctionHook),
    ("LinkHook", dbr.core.LinkHook),
    ("Initializer", dbr.core.Initializer),
    ("Reporter", dbr.core.Reporter),
    ("Summary", dbr.core.Summary),
    ("DictSummary", dbr.core.DictSummary),
    ("report", dbr.core.report),
    ("report_scope", dbr.core.report_scope),
    ("config", dbr.core.config),
    ("global_config", dbr.core.global_config),
    ("using_config", dbr.core.using_config),
    ("no_backprop_mode", dbr.core.no_backprop_mode),
    ("force_backprop_mode", dbr.core.force_backprop_mode),
    ("is_debug", dbr.core.is_debug),
    ("set_debug", dbr.core.set_debug),
    ("grad", dbr.core.grad),
    ("backward", dbr.core.backward),
    ("as_variable", dbr.core.as_variable),
    ("as_array", dbr.core.as_array),
    ("get_device", dbr.core.get_device),
    ("using_device", dbr.core.backend.using_device),
    ("get_array_types", dbr.core.backend.get_array_types),
    ("Optimizer", dbr.training.Optimizer),
    ("UpdateRule", dbr.training.UpdateRule),
    ("GradientMethod", dbr.training.GradientMethod),
    ("Serializer", dbr.core.serializers.Serializer),
    ("Deserializer", dbr.core.serializers.Deserializer),
    ("functions.relu", dbr.functions.relu),
    ("functions.softmax_cross_entropy", dbr.functions.softmax_cross_entropy),
    ("links.Linear", dbr.links.Linear),
    ("links.Classifier", dbr.links.Classifier),
    ("optimizers.Adam", dbr.training.optimizers.Adam),
    ("optimizer_hooks.WeightDecay", dbr.training.optimizer_hooks.WeightDecay),
    ("training.Trainer", dbr.training.Trainer),
    ("training.StandardUpdater", dbr.training.StandardUpdater),
    ("training.Extension", dbr.training.Extension),
    ("training.make_extension", dbr.training.make_extension),
    ("training.get_trigger", dbr.training.get_trigger),
    ("training.IntervalTrigger", dbr.training.triggers.IntervalTrigger),
    ("training.extensions.LogReport", dbr.training.extensions.LogReport),
    ("training.extensions.Evaluator", dbr.training.extensions.Evaluator),
    ("training.triggers.ManualScheduleTrigger", dbr.training.triggers.ManualScheduleTrigger),
    ("training.updaters.StandardUpdater", dbr.training.updaters.StandardUpdater),
    ("datasets.TupleDataset", dbr.datasets.TupleDataset),
    ("datasets.get_mnist", dbr.datasets.get_mnist),
    ("datasets.split_dataset_random", dbr.datasets.split_dataset_random),
    ("iterators.SerialIterator", dbr.datasets.SerialIterator),
    ("iterators.MultiprocessIterator", dbr.datasets.MultiprocessIterator),
    ("dataset.concat_examples", dbr.datasets.concat_examples),
    ("dataset.convert.concat_examples", dbr.datasets.concat_examples),
    ("dataset.DatasetMixin", dbr.datasets.DatasetMixin),
    ("dataset.Iterator", dbr.datasets.Iterator),
    ("dataset.download.get_dataset_directory", dbr.datasets.get_dataset_directory),
    ("serializers.save_npz", dbr.core.serializers.save_npz),
    ("serializers.load_npz", dbr.core.serializers.load_npz),
    ("initializers.HeNormal", dbr.core.initializers.HeNormal),
    ("reporter.Reporter", dbr.core.Reporter),
    ("reporter.report", dbr.core.report),
    ("reporter.report_scope", dbr.core.report_scope),
    ("reporter.Summary", dbr.core.Summary),
    ("reporter.DictSummary", dbr.core.DictSummary),
    ("backend.get_array_module", dbr.core.backend.get_array_module),
    ("backend.get_device", dbr.core.backend.get_device),
    ("backend.get_device_from_array", dbr.core.backend.get_device_from_array),
    ("backend.CpuDevice", dbr.core.backend.CpuDevice),
    ("backend.copyto", dbr.core.backend.copyto),
    ("utils.type_check.expect", dbr.core.type_check.expect),
    ("utils.force_array", dbr.core.utils.force_array),
    ("gradient_check.check_backward", dbr.core.gradient_check.check_backward),
    ("computational_graph.build_computational_graph",
     dbr.core.computational_graph.build_computational_graph),
    ("function_hooks.TimerHook", dbr.core.function_hooks.TimerHook),
    ("link_hooks.SpectralNormalization", dbr.core.link_hooks.SpectralNormalization),
    ("testing.assert_allclose", dbr.core.testing.assert_allclose),
    ("configuration.using_config", dbr.core.using_config),
    ("variable.Variable", dbr.core.Variable),
    ("link.Chain", dbr.core.Chain),
    ("function_node.FunctionNode", dbr.core.FunctionNode),
    ("sequential.Sequential", dbr.core.Sequential),
]  # fmt: skip


def _resolve(path):
    value = chainer
    for part in path.split("."):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize(("path", "expected"), SAME_OBJECTS, ids=[p for p, _ in SAME_OBJECTS])
def test_chainer_name_is_dbr_object(path, expected):
    assert _resolve(path) is expected


@pytest.mark.parametrize(
    "statement",
    [
        "import dbr.chainer.functions as F; assert F.relu is dbr.functions.relu",
        "import dbr.chainer.links as L; assert L.LSTM is dbr.links.LSTM",
        "from dbr.chainer import training; assert training.Trainer is dbr.training.Trainer",
        "from dbr.chainer.training import extensions;"
        " assert extensions.PrintReport is dbr.training.extensions.PrintReport",
        "import dbr.chainer.training.extensions as E; assert E.snapshot is"
        " dbr.training.extensions.snapshot",
        "from dbr.chainer.training import triggers, updaters",
        "from dbr.chainer.dataset import convert; assert convert.concat_examples is"
        " dbr.datasets.concat_examples",
        "from dbr.chainer import serializers, initializers, reporter, iterators, datasets",
        "from dbr.chainer.utils import type_check; assert type_check.InvalidType is"
        " dbr.core.type_check.InvalidType",
        "from dbr.chainer.backends import cuda; import dbr.chainer.cuda as c; assert c is cuda",
        "from dbr.chainer.functions import relu; assert relu is dbr.functions.relu",
        "from dbr.chainer.serializers import save_npz",
    ],
)
def test_import_statements(statement):
    """Each runs in a fresh interpreter, so that no earlier import has bound the name."""
    code = f"import dbr.core, dbr.datasets, dbr.functions, dbr.links, dbr.training\n{statement}"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_submodules_stay_bound():
    from dbr.chainer.training import extensions

    assert chainer.training.extensions is extensions
    assert importlib.import_module("dbr.chainer.training.extensions") is extensions
    assert chainer.cuda is chainer.backends.cuda


def test_star_import_gives_dbr_functions():
    namespace = {}
    exec("from dbr.chainer.functions import *", namespace)
    assert namespace["relu"] is dbr.functions.relu
    assert namespace["linear"] is dbr.functions.linear


def test_missing_name_raises_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="'mixed16'"):
        _ = chainer.mixed16
    with pytest.raises(AttributeError, match=r"'no_such_function'.*dbr\.functions"):
        _ = chainer.functions.no_such_function
    assert not hasattr(chainer.links, "NoSuchLink")


def test_dbr_submodules_are_not_loaded_again_under_chainer_names():
    """A forwarded module has no __path__: its dbr submodules are not re-imported as copies."""
    assert not hasattr(chainer.functions, "__path__")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("dbr.chainer.functions.activation")


def test_dir_lists_chainer_names():
    names = dir(chainer)
    for name in ("Variable", "Chain", "functions", "links", "training", "cuda", "Optimizer"):
        assert name in names
    assert "relu" in dir(chainer.functions)


def test_chainerx_is_unavailable():
    import dbr.chainer.chainerx

    assert dbr.chainer.chainerx.is_available() is False
    assert chainer.chainerx is dbr.chainer.chainerx


def test_importing_dbr_chainer_imports_only_core():
    code = (
        "import sys, dbr.chainer as chainer\n"
        "chainer.Variable, chainer.get_device(-1)\n"
        "loaded = sorted({m.split('.')[1] for m in sys.modules if m.startswith('dbr.')})\n"
        "assert loaded == ['chainer', 'core'], loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_version():
    assert isinstance(chainer.__version__, str)


def test_get_dtype():
    assert chainer.get_dtype is dbr.core.get_dtype


def test_static_graph():
    assert chainer.static_graph is dbr.core.static_graph
    assert chainer.static_code is dbr.core.static_code


def test_distributions():
    import dbr.chainer.distributions as D
    import dbr.functions.distributions as distributions

    assert chainer.distributions is D
    assert D.Normal is distributions.Normal
    for name in ("Distribution", "kl_divergence", "register_kl", "cross_entropy"):
        assert getattr(chainer, name) is getattr(distributions, name)


def test_chainermn_and_onnx_chainer_are_dbr_distributed_and_dbr_onnx():
    import dbr.chainer.chainermn as chainermn
    import dbr.chainer.chainermn.links
    import dbr.chainer.onnx_chainer as onnx_chainer
    import dbr.chainer.onnx_chainer.replace_func
    import dbr.distributed
    import dbr.distributed.links
    import dbr.onnx
    import dbr.onnx.replace_func

    assert chainer.chainermn is chainermn and chainer.onnx_chainer is onnx_chainer
    assert chainermn.create_communicator is dbr.distributed.create_communicator
    assert chainermn.create_multi_node_optimizer is dbr.distributed.create_multi_node_optimizer
    assert (
        dbr.chainer.chainermn.links.MultiNodeBatchNormalization
        is dbr.distributed.links.MultiNodeBatchNormalization
    )
    assert onnx_chainer.export is dbr.onnx.export
    assert onnx_chainer.export_testcase is dbr.onnx.export_testcase
    assert dbr.chainer.onnx_chainer.replace_func.as_funcnode is dbr.onnx.replace_func.as_funcnode


def test_importing_the_namespace_loads_neither_mpi_nor_onnx():
    code = (
        "import sys, dbr.chainer as chainer; chainer.functions.relu; "
        "names = ('mpi4py', 'onnx', 'dbr.distributed', 'dbr.onnx'); "
        "bad = [m for m in names if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
