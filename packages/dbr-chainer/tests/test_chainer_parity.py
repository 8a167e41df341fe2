"""dbr.chainer has Chainer v7.8.1's public names; the ones added for parity behave as Chainer's.

The list below was measured against Chainer 7.8.1 (its public names, module
by module); it is literal because Chainer is not installed here.
"""

import importlib
import io
import platform
import subprocess
import sys
import warnings

import numpy
import pytest

import dbr.chainer as chainer
import dbr.core
import dbr.core.device_resident
import dbr.functions.distributions
import dbr.links

# chainer.cuda is chainer.backends.cuda under its older name.
_CUDA_NAMES = (
    "DummyDevice",
    "DummyDeviceType",
    "check_cuda_available",
    "clear_memo",
    "config",
    "copy",
    "get_array_module",
    "get_cudnn_dropout_states",
    "get_cudnn_dropout_states_core",
    "get_device",
    "get_device_from_array",
    "get_device_from_id",
    "get_max_workspace_size",
    "memoize",
    "ndarray",
    "set_max_workspace_size",
    "should_use_cudnn",
    "should_use_cudnn_tensor_core",
    "to_cpu",
    "to_gpu",
)

# Chainer module path -> names that dbr.chainer's module of the same path must have.
PROVIDED = {
    "chainer": (
        "DeviceResident",
        "Fallback",
        "array",
        "device_resident",
        "distribution",
        "get_compute_mode",
        "get_cpu_array_types",
        "initializer",
        "is_arrays_compatible",
        "print_runtime_info",
        "should_use_cudnn",
        "should_use_cudnn_tensor_core",
        "warnings",
    ),
    "chainer.backends.cuda": _CUDA_NAMES,
    "chainer.backends.intel64": (
        "check_ideep_available",
        "config",
        "inputs_all_ready",
        "is_ideep_available",
        "mdarray",
        "should_use_ideep",
    ),
    "chainer.cuda": _CUDA_NAMES,
    "chainer.datasets": (
        "ConcatenatedDataset",
        "DictDataset",
        "ImageDataset",
        "LabeledImageDataset",
        "LabeledZippedImageDataset",
        "MultiZippedImageDataset",
        "PickleDataset",
        "PickleDatasetWriter",
        "SubDataset",
        "TextDataset",
        "TransformDataset",
        "TupleDataset",
        "ZippedImageDataset",
        "cifar",
        "concatenated_dataset",
        "dict_dataset",
        "fashion_mnist",
        "get_cifar10",
        "get_cifar100",
        "get_cross_validation_datasets",
        "get_cross_validation_datasets_random",
        "get_fashion_mnist",
        "get_fashion_mnist_labels",
        "get_kuzushiji_mnist",
        "get_kuzushiji_mnist_labels",
        "get_mnist",
        "get_ptb_words",
        "get_ptb_words_vocabulary",
        "get_svhn",
        "image_dataset",
        "kuzushiji_mnist",
        "mnist",
        "open_pickle_dataset",
        "open_pickle_dataset_writer",
        "pickle_dataset",
        "ptb",
        "split_dataset",
        "split_dataset_n",
        "split_dataset_n_random",
        "split_dataset_random",
        "sub_dataset",
        "svhn",
        "text_dataset",
        "transform_dataset",
        "tuple_dataset",
    ),
    "chainer.datasets.cifar": (
        "get_cifar10",
        "get_cifar100",
    ),
    "chainer.datasets.concatenated_dataset": ("ConcatenatedDataset",),
    "chainer.datasets.dict_dataset": ("DictDataset",),
    "chainer.datasets.fashion_mnist": (
        "get_fashion_mnist",
        "get_fashion_mnist_labels",
    ),
    "chainer.datasets.image_dataset": (
        "ImageDataset",
        "LabeledImageDataset",
        "LabeledZippedImageDataset",
        "MultiZippedImageDataset",
        "ZippedImageDataset",
    ),
    "chainer.datasets.kuzushiji_mnist": (
        "get_kuzushiji_mnist",
        "get_kuzushiji_mnist_labels",
    ),
    "chainer.datasets.mnist": ("get_mnist",),
    "chainer.datasets.pickle_dataset": (
        "PickleDataset",
        "PickleDatasetWriter",
        "open_pickle_dataset",
        "open_pickle_dataset_writer",
    ),
    "chainer.datasets.ptb": (
        "get_ptb_words",
        "get_ptb_words_vocabulary",
    ),
    "chainer.datasets.sub_dataset": (
        "SubDataset",
        "get_cross_validation_datasets",
        "get_cross_validation_datasets_random",
        "split_dataset",
        "split_dataset_n",
        "split_dataset_n_random",
        "split_dataset_random",
    ),
    "chainer.datasets.svhn": ("get_svhn",),
    "chainer.datasets.text_dataset": ("TextDataset",),
    "chainer.datasets.transform_dataset": ("TransformDataset",),
    "chainer.datasets.tuple_dataset": ("TupleDataset",),
    "chainer.device_resident": (
        "DeviceResident",
        "DeviceResidentsVisitor",
    ),
    "chainer.distribution": (
        "Distribution",
        "cross_entropy",
        "kl_divergence",
        "register_kl",
    ),
    "chainer.distributions": (
        "Bernoulli",
        "Beta",
        "Categorical",
        "Cauchy",
        "Chisquare",
        "Dirichlet",
        "Exponential",
        "Gamma",
        "Geometric",
        "Gumbel",
        "Independent",
        "Laplace",
        "LogNormal",
        "MultivariateNormal",
        "Normal",
        "OneHotCategorical",
        "Pareto",
        "Poisson",
        "Uniform",
        "bernoulli",
        "beta",
        "categorical",
        "cauchy",
        "chisquare",
        "dirichlet",
        "exponential",
        "gamma",
        "geometric",
        "gumbel",
        "independent",
        "laplace",
        "log_normal",
        "multivariate_normal",
        "normal",
        "one_hot_categorical",
        "pareto",
        "poisson",
        "uniform",
        "utils",
    ),
    "chainer.distributions.bernoulli": ("Bernoulli",),
    "chainer.distributions.beta": ("Beta",),
    "chainer.distributions.categorical": ("Categorical",),
    "chainer.distributions.cauchy": ("Cauchy",),
    "chainer.distributions.chisquare": ("Chisquare",),
    "chainer.distributions.dirichlet": ("Dirichlet",),
    "chainer.distributions.exponential": ("Exponential",),
    "chainer.distributions.gamma": ("Gamma",),
    "chainer.distributions.geometric": ("Geometric",),
    "chainer.distributions.gumbel": ("Gumbel",),
    "chainer.distributions.independent": ("Independent",),
    "chainer.distributions.laplace": ("Laplace",),
    "chainer.distributions.log_normal": ("LogNormal",),
    "chainer.distributions.multivariate_normal": ("MultivariateNormal",),
    "chainer.distributions.normal": ("Normal",),
    "chainer.distributions.one_hot_categorical": ("OneHotCategorical",),
    "chainer.distributions.pareto": ("Pareto",),
    "chainer.distributions.poisson": ("Poisson",),
    "chainer.distributions.uniform": ("Uniform",),
    "chainer.function": (
        "Function",
        "FunctionAdapter",
        "FunctionHook",
        "force_backprop_mode",
        "no_backprop_mode",
    ),
    "chainer.function_hooks": (
        "PrintHook",
        "TimerHook",
        "debug_print",
        "timer",
    ),
    "chainer.function_hooks.debug_print": ("PrintHook",),
    "chainer.function_hooks.timer": ("TimerHook",),
    "chainer.function_node": (
        "FunctionNode",
        "grad",
    ),
    "chainer.gradient_check": (
        "NondifferentiableError",
        "assert_allclose",
        "check_backward",
        "check_double_backward",
        "numerical_grad",
    ),
    "chainer.initializer": (
        "Initializer",
        "get_fans",
    ),
    "chainer.initializers": (
        "Constant",
        "DownsamplingConvFilter",
        "GlorotNormal",
        "GlorotUniform",
        "HeNormal",
        "HeUniform",
        "Identity",
        "LeCunNormal",
        "LeCunUniform",
        "NaN",
        "Normal",
        "One",
        "Orthogonal",
        "Uniform",
        "UpsamplingDeconvFilter",
        "Zero",
        "constant",
        "generate_array",
        "normal",
        "orthogonal",
        "sampling",
        "uniform",
    ),
    "chainer.initializers.constant": (
        "Constant",
        "Identity",
        "NaN",
        "One",
        "Zero",
    ),
    "chainer.initializers.normal": (
        "GlorotNormal",
        "HeNormal",
        "LeCunNormal",
        "Normal",
    ),
    "chainer.initializers.orthogonal": ("Orthogonal",),
    "chainer.initializers.sampling": (
        "DownsamplingConvFilter",
        "UpsamplingDeconvFilter",
    ),
    "chainer.initializers.uniform": (
        "GlorotUniform",
        "HeUniform",
        "LeCunUniform",
        "Uniform",
    ),
    "chainer.iterators": (
        "DaliIterator",
        "MultiprocessIterator",
        "MultithreadIterator",
        "OrderSampler",
        "SerialIterator",
        "ShuffleOrderSampler",
        "dali_iterator",
        "multiprocess_iterator",
        "multithread_iterator",
        "order_samplers",
        "serial_iterator",
    ),
    "chainer.iterators.dali_iterator": ("DaliIterator",),
    "chainer.iterators.multiprocess_iterator": ("MultiprocessIterator",),
    "chainer.iterators.multithread_iterator": ("MultithreadIterator",),
    "chainer.iterators.order_samplers": (
        "OrderSampler",
        "ShuffleOrderSampler",
    ),
    "chainer.iterators.serial_iterator": ("SerialIterator",),
    "chainer.link_hooks": (
        "SpectralNormalization",
        "TimerHook",
        "WeightStandardization",
        "spectral_normalization",
        "timer",
        "weight_standardization",
    ),
    "chainer.link_hooks.spectral_normalization": ("SpectralNormalization",),
    "chainer.link_hooks.timer": ("TimerHook",),
    "chainer.link_hooks.weight_standardization": ("WeightStandardization",),
    "chainer.links.activation.simplified_dropconnect": ("SimplifiedDropconnect",),
    "chainer.links.connection.parameter": ("Parameter",),
    "chainer.optimizer_hooks": (
        "GradientClipping",
        "GradientHardClipping",
        "GradientLARS",
        "GradientNoise",
        "Lasso",
        "WeightDecay",
        "gradient_clipping",
        "gradient_hard_clipping",
        "gradient_lars",
        "gradient_noise",
        "lasso",
        "weight_decay",
    ),
    "chainer.optimizer_hooks.gradient_clipping": ("GradientClipping",),
    "chainer.optimizer_hooks.gradient_hard_clipping": ("GradientHardClipping",),
    "chainer.optimizer_hooks.gradient_lars": ("GradientLARS",),
    "chainer.optimizer_hooks.gradient_noise": (
        "GradientNoise",
        "exponential_decay_noise",
    ),
    "chainer.optimizer_hooks.lasso": ("Lasso",),
    "chainer.optimizer_hooks.weight_decay": ("WeightDecay",),
    "chainer.optimizers": (
        "AMSBound",
        "AMSGrad",
        "AdaBound",
        "AdaDelta",
        "AdaGrad",
        "Adam",
        "AdamW",
        "CorrectedMomentumSGD",
        "MSVAG",
        "MomentumSGD",
        "NesterovAG",
        "RMSprop",
        "RMSpropGraves",
        "SGD",
        "SMORMS3",
        "ada_delta",
        "ada_grad",
        "adam",
        "corrected_momentum_sgd",
        "momentum_sgd",
        "msvag",
        "nesterov_ag",
        "rmsprop",
        "rmsprop_graves",
        "sgd",
        "smorms3",
    ),
    "chainer.optimizers.ada_delta": (
        "AdaDelta",
        "AdaDeltaRule",
    ),
    "chainer.optimizers.ada_grad": (
        "AdaGrad",
        "AdaGradRule",
    ),
    "chainer.optimizers.adam": (
        "AMSBound",
        "AMSGrad",
        "AdaBound",
        "Adam",
        "AdamRule",
        "AdamW",
    ),
    "chainer.optimizers.corrected_momentum_sgd": (
        "CorrectedMomentumSGD",
        "CorrectedMomentumSGDRule",
    ),
    "chainer.optimizers.momentum_sgd": (
        "MomentumSGD",
        "MomentumSGDRule",
    ),
    "chainer.optimizers.msvag": (
        "MSVAG",
        "MSVAGRule",
    ),
    "chainer.optimizers.nesterov_ag": (
        "NesterovAG",
        "NesterovAGRule",
    ),
    "chainer.optimizers.rmsprop": (
        "RMSprop",
        "RMSpropRule",
    ),
    "chainer.optimizers.rmsprop_graves": (
        "RMSpropGraves",
        "RMSpropGravesRule",
    ),
    "chainer.optimizers.sgd": (
        "SGD",
        "SGDRule",
    ),
    "chainer.optimizers.smorms3": (
        "SMORMS3",
        "SMORMS3Rule",
    ),
    "chainer.training.extensions.fail_on_nonnumber": ("FailOnNonNumber",),
    "chainer.training.extensions.variable_unchain": ("unchain_variables",),
    "chainer.training.trigger": (
        "IntervalTrigger",
        "get_trigger",
    ),
    "chainer.utils": (
        "CooMatrix",
        "WalkerAlias",
        "argument",
        "array",
        "cache",
        "conv",
        "conv_nd",
        "experimental",
        "force_array",
        "force_type",
        "get_conv_outsize",
        "get_deconv_outsize",
        "get_order",
        "imgproc",
        "nondeterministic",
        "size_of_shape",
        "sparse",
        "sum_to",
        "tempdir",
        "to_coo",
        "type_check",
        "walker_alias",
    ),
    "chainer.utils.array": (
        "as_mat",
        "as_vec",
        "empty_like",
        "size_of_shape",
        "sum_to",
    ),
    "chainer.utils.cache": ("cached_property",),
    "chainer.utils.experimental": ("experimental",),
    "chainer.utils.imgproc": ("oversample",),
    "chainer.utils.nondeterministic": ("nondeterministic",),
    "chainer.utils.sparse": (
        "CooMatrix",
        "get_order",
        "to_coo",
    ),
    "chainer.utils.walker_alias": ("WalkerAlias",),
    "chainer.warnings": ("PerformanceWarning",),
}


@pytest.mark.parametrize("module_name", sorted(PROVIDED))
def test_chainer_names_are_present(module_name):
    module = importlib.import_module(f"dbr.{module_name}")
    missing = [name for name in PROVIDED[module_name] if not hasattr(module, name)]
    assert missing == [], f"dbr.{module_name} lacks {missing}"


def test_mirrored_submodules_are_dbr_modules():
    import dbr.chainer.distributions.normal
    import dbr.chainer.function_hooks.debug_print
    import dbr.chainer.iterators.serial_iterator
    import dbr.chainer.optimizers.adam
    import dbr.core.function_hooks.print_hook
    import dbr.datasets.serial_iterator
    import dbr.functions.distributions.normal
    import dbr.training.optimizers.adam

    assert dbr.chainer.optimizers.adam is dbr.training.optimizers.adam
    assert dbr.chainer.iterators.serial_iterator is dbr.datasets.serial_iterator
    assert dbr.chainer.distributions.normal is dbr.functions.distributions.normal
    assert dbr.chainer.function_hooks.debug_print is dbr.core.function_hooks.print_hook
    # The package's own file is still found next to the mirrored modules.
    assert chainer.distributions.utils.__file__.endswith("utils.py")


def test_top_level_names_are_dbrs_objects():
    assert chainer.DeviceResident is dbr.core.device_resident.DeviceResident
    assert chainer.distribution.Distribution is dbr.functions.distributions.Distribution
    assert chainer.initializer.Initializer is dbr.core.Initializer
    assert chainer.array is chainer.functions.array
    assert issubclass(chainer.Link, chainer.DeviceResident)
    assert repr(chainer.Fallback) == "Fallback"
    assert chainer.links.Parameter is dbr.links.Parameter
    assert issubclass(chainer.warnings.PerformanceWarning, RuntimeWarning)


def test_print_runtime_info_has_chainers_lines():
    out = io.StringIO()
    chainer.print_runtime_info(out)
    lines = out.getvalue().splitlines()
    assert lines[0] == f"Platform: {platform.platform()}"
    assert lines[1] == f"Chainer: {chainer.__version__}"
    assert lines[2] == "ChainerX: Not Available"
    assert lines[3] == f"NumPy: {numpy.__version__}"
    assert lines[-1] == "iDeep: Not Available"
    if not chainer.backends.cuda.available:
        assert lines[4:-1] == ["CuPy: Not Available"]


def test_print_runtime_info_defaults_to_stdout(capsys):
    chainer.print_runtime_info()
    assert f"Chainer: {chainer.__version__}\n" in capsys.readouterr().out


def test_private_runtime_info_matches_print():
    from dbr.chainer import _runtime_info

    out = io.StringIO()
    _runtime_info.print_runtime_info(out)
    info = str(_runtime_info._get_runtime_info())
    assert chainer.__version__ in info
    assert out.getvalue() == info


needs_no_cudnn = pytest.mark.skipif(
    chainer.backends.cuda.cudnn_enabled, reason="checks the answers without cuDNN"
)


@needs_no_cudnn
@pytest.mark.parametrize("mode", ["always", "auto", "never"])
@pytest.mark.parametrize("level", [">=auto", "==always"])
def test_should_use_cudnn_is_false_without_cudnn(mode, level):
    with chainer.using_config("use_cudnn", mode):
        assert chainer.should_use_cudnn(level) is False
        assert chainer.backends.cuda.should_use_cudnn(level, lowest_version=0) is False


@needs_no_cudnn
def test_should_use_cudnn_checks_nothing_without_cudnn():
    # Chainer answers False before looking at the level when cuDNN is missing.
    assert chainer.should_use_cudnn("bad level") is False


@pytest.mark.parametrize(("mode", "expected"), [("always", True), ("never", False)])
def test_should_use_cudnn_tensor_core_follows_config(mode, expected):
    with chainer.using_config("use_cudnn_tensor_core", mode):
        assert chainer.should_use_cudnn_tensor_core(numpy.float16) is expected


def test_should_use_cudnn_tensor_core_auto_is_false_for_float32():
    assert chainer.config.use_cudnn_tensor_core == "auto"
    assert chainer.should_use_cudnn_tensor_core(numpy.float32) is False


def test_should_use_cudnn_tensor_core_rejects_unknown_mode():
    with (
        chainer.using_config("use_cudnn_tensor_core", "sometimes"),
        pytest.raises(ValueError, match="use_cudnn_tensor_core.*'sometimes'"),
    ):
        chainer.should_use_cudnn_tensor_core(numpy.float16)


def test_get_compute_mode_reads_config():
    assert chainer.get_compute_mode() is None
    with chainer.using_config("compute_mode", "cudnn_fast"):
        assert chainer.get_compute_mode() == "cudnn_fast"


def test_is_arrays_compatible_and_cpu_array_types():
    a = numpy.zeros(2)
    assert chainer.get_cpu_array_types() == (numpy.ndarray,)
    assert chainer.is_arrays_compatible([a, None, numpy.ones(3)])
    assert chainer.is_arrays_compatible([])
    assert not chainer.is_arrays_compatible([a, [1.0]])


needs_no_cupy = pytest.mark.skipif(chainer.backends.cuda.available, reason="CPU answers")


@needs_no_cupy
def test_cuda_memoize_without_cupy_calls_through():
    calls = []

    @chainer.backends.cuda.memoize()
    def double(x):
        calls.append(x)
        return 2 * x

    assert double(3) == 6 and double(3) == 6
    assert calls == [3, 3]
    assert double.__name__ == "double"
    chainer.backends.cuda.clear_memo()


@needs_no_cupy
def test_cuda_workspace_size_without_cudnn():
    cuda = chainer.backends.cuda
    assert cuda.get_max_workspace_size() == 0
    cuda.set_max_workspace_size(1 << 20)
    assert cuda.get_max_workspace_size() == 0


@needs_no_cupy
def test_cuda_get_device_is_deprecated_and_dummy_for_cpu():
    cuda = chainer.backends.cuda
    with pytest.warns(DeprecationWarning, match="get_device is deprecated"):
        assert cuda.get_device(numpy.zeros(1), None) is cuda.DummyDevice
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(RuntimeError, match="CUDA"):
            cuda.get_device(0)


def test_cuda_dropout_states_are_not_available():
    with pytest.raises(RuntimeError, match="get_cudnn_dropout_states"):
        chainer.backends.cuda.get_cudnn_dropout_states()


def test_utils_experimental_and_nondeterministic_are_functions():
    import dbr.chainer.utils.experimental  # noqa: F401  (importing must not shadow the function)

    assert callable(chainer.utils.experimental)
    assert callable(chainer.utils.nondeterministic)
    with pytest.warns(FutureWarning, match="f is experimental"):
        chainer.utils.experimental("f")


def test_training_trigger_module():
    import dbr.training

    assert chainer.training.trigger.get_trigger is dbr.training.get_trigger
    trigger = chainer.training.trigger.get_trigger((2, "iteration"))
    assert isinstance(trigger, chainer.training.trigger.IntervalTrigger)


def test_device_resident_module_is_importable_alone():
    # A fresh interpreter: the submodule resolves without dbr.chainer's other names imported.
    code = "import dbr.chainer.device_resident as d; print(d.DeviceResidentsVisitor.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "DeviceResidentsVisitor"
