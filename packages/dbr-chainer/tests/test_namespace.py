"""dbr.chainer exposes Chainer v7's names and submodules as dbr's own objects."""

import collections.abc
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
import dbr.functions.conv
import dbr.links
import dbr.training
import dbr.training.optimizer_hooks

# (module under dbr.chainer, "" for the top level; the dbr module; the names that must be
# the same objects in both)
SAME_NAMES = [
    (
        "",
        dbr.core,
        "Variable Parameter Link Chain ChainList Sequential Function FunctionNode FunctionHook "
        "LinkHook Initializer Reporter Summary DictSummary report report_scope config "
        "global_config using_config no_backprop_mode force_backprop_mode is_debug set_debug grad "
        "backward as_variable as_array get_device",
    ),
    ("", dbr.core.backend, "using_device get_array_types"),
    ("", dbr.training, "Optimizer UpdateRule GradientMethod"),
    ("", dbr.core.serializers, "Serializer Deserializer"),
    ("functions", dbr.functions, "relu softmax_cross_entropy"),
    ("links", dbr.links, "Linear Classifier"),
    ("optimizers", dbr.training.optimizers, "Adam"),
    ("optimizer_hooks", dbr.training.optimizer_hooks, "WeightDecay"),
    ("training", dbr.training, "Trainer StandardUpdater Extension make_extension get_trigger"),
    ("training", dbr.training.triggers, "IntervalTrigger"),
    ("training.extensions", dbr.training.extensions, "LogReport Evaluator"),
    ("training.triggers", dbr.training.triggers, "ManualScheduleTrigger"),
    ("training.updaters", dbr.training.updaters, "StandardUpdater"),
    ("datasets", dbr.datasets, "TupleDataset get_mnist split_dataset_random"),
    ("iterators", dbr.datasets, "SerialIterator MultiprocessIterator"),
    ("dataset", dbr.datasets, "concat_examples DatasetMixin Iterator TabularDataset"),
    ("dataset.tabular", dbr.datasets.tabular, "from_data DelegateDataset"),
    ("dataset.convert", dbr.datasets, "concat_examples"),
    ("dataset.download", dbr.datasets, "get_dataset_directory"),
    ("serializers", dbr.core.serializers, "save_npz load_npz"),
    ("initializers", dbr.core.initializers, "HeNormal"),
    ("reporter", dbr.core, "Reporter report report_scope Summary DictSummary"),
    (
        "backend",
        dbr.core.backend,
        "get_array_module get_device get_device_from_array CpuDevice copyto",
    ),
    ("utils.type_check", dbr.core.type_check, "expect"),
    ("utils", dbr.core.utils, "force_array"),
    ("gradient_check", dbr.core.gradient_check, "check_backward"),
    ("computational_graph", dbr.core.computational_graph, "build_computational_graph"),
    ("function_hooks", dbr.core.function_hooks, "TimerHook"),
    ("link_hooks", dbr.core.link_hooks, "SpectralNormalization"),
    ("testing", dbr.core.testing, "assert_allclose"),
    ("configuration", dbr.core, "using_config"),
    ("variable", dbr.core, "Variable"),
    ("link", dbr.core, "Chain"),
    ("function_node", dbr.core, "FunctionNode"),
    ("sequential", dbr.core, "Sequential"),
]

# (path under dbr.chainer, the dbr object it must be)
SAME_OBJECTS = [
    (f"{prefix}.{name}" if prefix else name, getattr(module, name))
    for prefix, module, names in SAME_NAMES
    for name in names.split()
]

# Chainer's smaller modules: (path under dbr.chainer, the dbr object it must be)
MODULE_OBJECTS = [
    ("utils.to_coo", dbr.functions.to_coo),
    ("utils.CooMatrix", dbr.functions.CooMatrix),
    ("utils.size_of_shape", dbr.core.utils.size_of_shape),
    ("utils.tempdir", dbr.core.utils.tempdir),
    ("utils.WalkerAlias", dbr.links.WalkerAlias),
    ("utils.collections_abc", collections.abc),
    ("utils.array.size_of_shape", dbr.core.utils.size_of_shape),
    ("utils.argument.parse_kwargs", dbr.core.utils.parse_kwargs),
    ("utils.argument.check_unexpected_kwargs", dbr.core.utils.check_unexpected_kwargs),
    ("utils.argument.assert_kwargs_empty", dbr.core.utils.assert_kwargs_empty),
    ("utils.conv.get_conv_outsize", dbr.functions.conv.get_conv_outsize),
    ("utils.conv.get_deconv_outsize", dbr.functions.conv.get_deconv_outsize),
    ("utils.conv.im2col_cpu", dbr.functions.conv.im2col_cpu),
    ("utils.conv.col2im_cpu", dbr.functions.conv.col2im_cpu),
    ("backends._cpu.CpuDevice", dbr.core.backend.CpuDevice),
    ("backends._cpu._to_cpu", dbr.core.backend.to_cpu),
    ("training.util.get_trigger", dbr.training.get_trigger),
    ("training.trainer.Trainer", dbr.training.Trainer),
    ("training.updater.StandardUpdater", dbr.training.StandardUpdater),
    ("serializer.Serializer", dbr.core.serializers.Serializer),
    ("serializer.Deserializer", dbr.core.serializers.Deserializer),
    ("serializer.AbstractSerializer", dbr.core.serializers.AbstractSerializer),
    ("datasets.image_dataset.available", dbr.datasets.image_dataset.available),
    ("basic_math", dbr.core.ops.arithmetic),
]
SAME_OBJECTS += MODULE_OBJECTS


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
        "from dbr.chainer.dataset import tabular; import dbr.chainer.dataset.tabular._slice as s;"
        " assert s is dbr.datasets.tabular._slice and tabular.from_data is"
        " dbr.datasets.tabular.from_data",
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
    with pytest.raises(AttributeError, match="'no_such_name'"):
        _ = chainer.no_such_name
    with pytest.raises(AttributeError, match=r"'no_such_function'.*dbr\.functions"):
        _ = chainer.functions.no_such_function
    with pytest.raises(AttributeError, match=r"dbr\.functions.*; did you mean 'relu'"):
        _ = chainer.functions.relul
    assert not hasattr(chainer.links, "NoSuchLink")


def test_chainer_submodules_are_dbr_modules_not_copies():
    """``dbr.chainer.functions.<category>.<module>`` is dbr's module object, loaded once."""
    import dbr.chainer.functions.math.einsum as einsum
    import dbr.functions.math.einsum

    assert einsum is dbr.functions.math.einsum
    assert einsum.__spec__.name == "dbr.functions.math.einsum"
    assert sys.modules["dbr.chainer.functions.math.einsum"] is einsum
    assert not [m for m in sys.modules.values() if getattr(m, "__file__", None) == einsum.__file__
                and m is not einsum]  # fmt: skip


def test_chainer_packages_on_the_way_are_forwarding_modules_over_dbr_packages():
    import dbr.chainer.functions.math as math
    import dbr.functions.math

    assert math is not dbr.functions.math
    assert math is chainer.functions.math
    assert math.minmax is dbr.functions.math.minmax
    assert math.minmax.max is dbr.functions.max


@pytest.mark.parametrize(
    ("chainer_name", "dbr_name"),
    [
        ("functions.array.flip", "dbr.functions.array.flip"),
        ("functions.activation.relu", "dbr.functions.activation.relu"),
        ("functions.connection.linear", "dbr.functions.connection.linear"),
        ("functions.math.basic_math", "dbr.core.ops.arithmetic"),
        ("functions.math.identity", "dbr.core.ops.cast"),
        ("functions.math.ceil", "dbr.functions.math.rounding"),
        ("functions.math.exponential_m1", "dbr.functions.math.expm1"),
        ("functions.array.reshape", "dbr.core.ops.shape"),
        ("functions.loss.negative_sampling", "dbr.functions.loss.negative_sampling"),
        ("links.model.vision.resnet", "dbr.links.model.vision.resnet"),
        ("links.connection.linear", "dbr.links.connection.linear"),
        ("training.extensions._snapshot", "dbr.training.extensions._snapshot"),
        ("training.extensions.snapshot_writers", "dbr.training.extensions.snapshot_writers"),
        (
            "training.updaters.multiprocess_parallel_updater",
            "dbr.training.updaters.multiprocess_parallel_updater",
        ),
        ("training.triggers.interval_trigger", "dbr.training.triggers.interval_trigger"),
        ("serializers.npz", "dbr.core.serializers.npz"),
        ("serializers.hdf5", "dbr.core.serializers.hdf5"),
    ],  # fmt: skip
)
def test_chainer_module_paths_are_dbr_modules(chainer_name, dbr_name):
    assert importlib.import_module(f"dbr.chainer.{chainer_name}") is importlib.import_module(
        dbr_name
    )


def test_importing_a_renamed_module_leaves_dbr_packages_alone():
    import dbr.functions.math
    from dbr.chainer.functions.math import basic_math

    assert basic_math.Mul is dbr.core.ops.arithmetic.Mul
    assert not hasattr(dbr.functions.math, "basic_math")


@pytest.mark.parametrize(
    "statement",
    [
        "from dbr.chainer.functions.math import einsum; assert einsum.einsum is F.einsum",
        "import dbr.chainer.functions as F; assert F.math.sparse_matmul.CooMatMul is"
        " dbr.functions.math.sparse_matmul.CooMatMul",
        "import dbr.chainer.functions as F; assert F.math.basic_math.Mul is"
        " dbr.core.ops.arithmetic.Mul",
        "from unittest import mock; import dbr.chainer.functions as F, dbr.functions.math.minmax\n"
        "with mock.patch('dbr.chainer.functions.math.minmax.max') as m:\n"
        "    assert dbr.functions.math.minmax.max is m",
        "from dbr.chainer.links.model.vision import resnet, vgg, googlenet",
        "from dbr.chainer.training.extensions import snapshot_writers, computational_graph",
        "import dbr.chainer.training.updaters.multiprocess_parallel_updater as mpu;"
        " assert mpu.MultiprocessParallelUpdater is dbr.training.MultiprocessParallelUpdater",
    ],
)
def test_chainer_submodule_import_statements(statement):
    code = f"import dbr.core.ops, dbr.functions as F, dbr.training\n{statement}"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_module_chainer_lacks_is_not_found_naming_it():
    with pytest.raises(ModuleNotFoundError, match="dbr.chainer.functions.math.no_such_module"):
        importlib.import_module("dbr.chainer.functions.math.no_such_module")
    with pytest.raises(AttributeError, match="no_such_module"):
        _ = chainer.functions.math.no_such_module
    # A function of another category, or at the top, is no module of Chainer's.
    for name in ("functions.math.sigmoid", "functions.relu"):
        with pytest.raises(ModuleNotFoundError, match=f"dbr.chainer.{name}"):
            importlib.import_module(f"dbr.chainer.{name}")
    assert not hasattr(chainer.functions.math, "sigmoid")


def test_dir_lists_chainer_names():
    names = dir(chainer)
    for name in ("Variable", "Chain", "functions", "links", "training", "cuda", "Optimizer"):
        assert name in names
    assert "relu" in dir(chainer.functions)


def test_dir_lists_only_names_the_module_gives():
    # dir() of a forwarding module leaves out the target's dunders (such as
    # ``__path__``), which the module never forwards.
    for module in (chainer.optimizers, chainer.functions, chainer.serializers):
        for name in dir(module):
            getattr(module, name)
    # A mirroring package has its own (empty) __path__, never dbr's package's.
    assert chainer.optimizers.__path__ == []
    assert chainer.optimizers.__path__ is not dbr.training.optimizers.__path__
    assert "Adam" in dir(chainer.optimizers)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("WeightDecay", (1.0,)),
        ("Lasso", (1.0,)),
        ("GradientClipping", (1.0,)),
        ("GradientNoise", (1.0,)),
        ("GradientHardClipping", (1.0, 2.0)),
    ],
)
def test_deprecated_optimizer_hook_aliases_warn(name, args):
    alias = getattr(chainer.optimizer, name)
    hook_class = getattr(dbr.training.optimizer_hooks, name)
    assert issubclass(alias, hook_class) and alias is not hook_class
    with pytest.warns(DeprecationWarning, match=f"optimizer_hooks.{name}"):
        hook = alias(*args)
    assert hook.name == hook_class.name


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


def test_version_is_the_chainer_release_it_reproduces():
    # Chainer programs gate features on it, e.g. ``int(chainer.__version__[0]) >= 6``.
    assert chainer.__version__ == "7.8.1"


def test_get_dtype():
    assert chainer.get_dtype is dbr.core.get_dtype


def test_mixed16_is_dbr_cores():
    assert chainer.mixed16 is dbr.core.mixed16
    with chainer.using_config("dtype", chainer.mixed16):
        assert chainer.config.dtype is dbr.core.mixed16


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


def test_chainermn_submodules_are_dbr_distributed_modules():
    import importlib

    import dbr.distributed

    for package, dbr_name, leaves in [
        ("communicators", "communicators", ["naive_communicator", "flat_communicator",
                                            "mpi_communicator_base", "_communication_utility"]),
        ("extensions", "extensions", ["checkpoint", "_multi_node_snapshot"]),
        ("iterators", "iterators", ["multi_node_iterator", "synchronized_iterator"]),
        ("datasets", "datasets", ["scatter"]),
        ("links", "links", ["n_step_rnn", "batch_normalization"]),
        ("testing", "testing", ["device"]),
    ]:  # fmt: skip
        target = importlib.import_module(f"dbr.distributed.{dbr_name}")
        for leaf in leaves:
            module = importlib.import_module(f"dbr.chainer.chainermn.{package}.{leaf}")
            assert module is target, (package, leaf)
    import dbr.chainer.chainermn as chainermn
    from dbr.chainer.chainermn.extensions import MultiNodeEarlyStoppingTrigger as Trigger

    assert Trigger is dbr.distributed.extensions.MultiNodeEarlyStoppingTrigger
    assert chainermn.datasets.scatter._scatter_index is dbr.distributed.datasets._scatter_index
    assert chainermn.testing.get_device is dbr.distributed.testing.get_device
    import dbr.chainer.chainermn.nccl  # importable without a GPU, as ChainerMN's


def test_backend_cuda_is_backends_cuda():
    import dbr.chainer.backend
    import dbr.chainer.backends.cuda

    assert dbr.chainer.backend.cuda is dbr.chainer.backends.cuda


def test_chainermn_nccl_without_dbr_gpu_raises_attribute_error_naming_the_extra(monkeypatch):
    import dbr.chainer.chainermn.nccl as nccl

    monkeypatch.setitem(sys.modules, "dbr.gpu", None)
    monkeypatch.delitem(sys.modules, "dbr.gpu.nccl", raising=False)
    assert getattr(nccl, "NoSuchName", "absent") == "absent"
    with pytest.raises(AttributeError, match=r"dbr-chainer\[gpu\]"):
        _ = nccl.NcclCommunicator
