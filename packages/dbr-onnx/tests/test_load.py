"""dbr.onnx.load: dbr -> ONNX -> dbr round trips, hand-built graphs of PyTorch's forms,
training, serialization and the refusal of unsupported operators."""

import importlib.util
import re
import warnings
from pathlib import Path

import numpy
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dbr.functions as F
import dbr.onnx
from dbr.core import Variable, serializers, using_config


def _sibling(name):
    """The module tests/<name>.py, loaded under a name of its own (its tests not collected)."""
    spec = importlib.util.spec_from_file_location(
        f"dbr_onnx_tests_{name}", Path(__file__).with_name(f"{name}.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conftest = _sibling("conftest")
test_converters = _sibling("test_converters")
test_converters_coverage = _sibling("test_converters_coverage")
_export_from = conftest._export_from
rng = numpy.random.default_rng(7)

# Functions that the exporter writes as a Where over branches that are singular where not
# taken (a square root of a negative, a division by zero): the imported graph computes the
# same outputs, but its gradient is the decomposition's (NaN or another one-sided value there).
DECOMPOSED_GRADIENT = {"erfinv", "erfinv_tails", "erfcinv", "ndtri", "arctan2", "xlogx"}
# Outputs that are NaN by definition (classification_summary's 0 / 0 for an absent class).
NAN_OUTPUTS = {"classification_summary", "classification_summary_label_num"}
NOT_DIFFERENTIABLE = {"argmax_argmin", "accuracy", "accuracy_ignore", "binary_accuracy",
                      *NAN_OUTPUTS}  # fmt: skip
# Outputs holding -inf: the ROI max functions' empty bins.
INFINITE_OUTPUTS = {"roi_max_pooling_2d", "roi_max_align_2d", "roi_max_align_2d_adaptive"}
# Sample points clamped onto one pixel tie for the maximum: the imported ReduceMax (dbr's
# F.max, as Chainer's) passes the gradient to every tied point, roi_max_align_2d to the first.
TIED_MAXIMA = {"roi_max_align_2d_adaptive"}

ROUND_TRIP = [
    pytest.param(name, forward, inputs, params, id=f"{module}-{name}")
    for module, cases in (
        ("converters", test_converters.CASES),
        ("coverage", test_converters_coverage.CASES),
    )  # fmt: skip
    for name, forward, inputs, params in cases
]


def _outputs(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


def _inputs(arrays):
    return [Variable(a.copy()) if a.dtype.kind == "f" else a.copy() for a in arrays]


def _weighted_sum(outputs, weights):
    total = None
    for y, w in zip(outputs, weights):
        if y.dtype.kind == "f" and y.creator is not None:
            term = F.sum(y * w)
            total = term if total is None else total + term
    return total


@pytest.mark.parametrize("opset", [13, None])
@pytest.mark.parametrize(("name", "forward", "inputs", "params"), ROUND_TRIP)
def test_round_trip_outputs_and_gradients(function_model, name, forward, inputs, params, opset):
    model = function_model(forward, **params)
    opset = dbr.onnx.maximum_opset_version() if opset is None else opset
    with conftest.skipped_without_its_extra():
        proto = _export_from(model, inputs, opset)
    loaded = dbr.onnx.load(proto)
    xs, xs_loaded = _inputs(inputs), _inputs(inputs)
    with using_config("train", False), warnings.catch_warnings():
        if name in DECOMPOSED_GRADIENT | NAN_OUTPUTS:  # branches not taken may divide by 0
            warnings.simplefilter("ignore", RuntimeWarning)
        expected, actual = _outputs(model(*xs)), _outputs(loaded(*xs_loaded))
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert (a.shape, a.dtype) == (e.shape, e.dtype)
        numpy.testing.assert_allclose(a.array, e.array, rtol=1e-5, atol=1e-6)
    if name in DECOMPOSED_GRADIENT | TIED_MAXIMA:
        return
    weights = [rng.standard_normal(e.shape).astype(e.dtype) if e.dtype.kind == "f" else None
               for e in expected]  # fmt: skip
    with warnings.catch_warnings():
        if name in INFINITE_OUTPUTS:  # -inf (an empty bin) times a weight of either sign
            warnings.simplefilter("ignore", RuntimeWarning)
        total, total_loaded = _weighted_sum(expected, weights), _weighted_sum(actual, weights)
    if total is None or total_loaded is None:
        # An accuracy: no gradient in dbr; imported, it is computed on arrays (Equal, Cast).
        assert name in NOT_DIFFERENTIABLE, name
        return
    total.backward()
    total_loaded.backward()
    for x, x_loaded in zip(xs, xs_loaded):
        if isinstance(x, Variable) and x.grad is not None:
            numpy.testing.assert_allclose(x_loaded.grad, x.grad, rtol=1e-4, atol=1e-5)
    for path, param in model.namedparams():
        attribute = loaded.parameter_names["param" + path.replace("/", "_")]
        loaded_param = getattr(loaded, attribute)
        if isinstance(loaded_param, Variable):  # BatchNormalization's statistics persist
            numpy.testing.assert_allclose(loaded_param.grad, param.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opset", [7, 9, 11])
@pytest.mark.parametrize(
    "name", ["softmax", "reshape", "squeeze", "split_axis", "pad", "max_min", "select_item",
             "embed_id_ignore", "average_pooling_nd_pad_none", "resize_images"],
)  # fmt: skip
def test_round_trip_in_older_opsets_forms(function_model, name, opset):
    _, forward, inputs, params = next(c for c in test_converters.CASES if c[0] == name)
    model = function_model(forward, **params)
    proto = _export_from(model, inputs, opset)
    with using_config("train", False):
        expected = _outputs(model(*inputs))
        actual = _outputs(dbr.onnx.load(proto)(*inputs))
    for a, e in zip(actual, expected):
        numpy.testing.assert_allclose(a.array, e.array, rtol=1e-5, atol=1e-6)


def _model(nodes, inputs, outputs, initializers=(), opset=17, output_shapes=None):
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, (output_shapes or {}).get(n))
         for n in outputs],
        [numpy_helper.from_array(a, n) for n, a in initializers],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    if output_shapes is None:
        del model.graph.output[:]
        model.graph.output.extend(inferred.graph.output)  # with the shapes the checker asks for
    onnx.checker.check_model(model, full_check=True)
    return model


def _check_against_runtime(model, feeds, rtol=1e-5, atol=1e-6):
    expected = conftest.run_onnx(model, feeds)
    with using_config("train", False):
        actual = _outputs(dbr.onnx.load(model)(**feeds))
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape and a.dtype == e.dtype
        numpy.testing.assert_allclose(a.array, e, rtol=rtol, atol=atol)


def _rand(*shape):
    return rng.standard_normal(shape).astype(numpy.float32)


# PyTorch's forms: (id, nodes, inputs (name, shape), initializers, opset)
PYTORCH_FORMS = [
    (
        "conv_groups_dilations_same_pads",
        [
            helper.make_node(
                "Conv",
                ["x", "W", "b"],
                ["y"],
                group=2,
                dilations=[2, 1],
                pads=[2, 1, 2, 1],
                strides=[1, 2],
            )
        ],
        [("x", [2, 4, 9, 8])],
        [("W", _rand(6, 2, 3, 3)), ("b", _rand(6))],
        13,
    ),
    (
        "conv_asymmetric_and_auto_pad",
        [
            helper.make_node("Conv", ["x", "W"], ["h"], pads=[0, 1, 2, 0]),
            helper.make_node("Conv", ["h", "W2"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2]),
        ],
        [("x", [1, 2, 7, 7])],
        [("W", _rand(3, 2, 3, 3)), ("W2", _rand(2, 3, 2, 2))],
        13,
    ),
    (
        "conv_transpose_output_padding",
        [
            helper.make_node(
                "ConvTranspose",
                ["x", "W", "b"],
                ["y"],
                strides=[2, 2],
                pads=[1, 0, 1, 0],
                output_padding=[1, 1],
                group=2,
            )
        ],
        [("x", [1, 4, 3, 3])],
        [("W", _rand(4, 3, 3, 3)), ("b", _rand(6))],
        13,
    ),
    (
        "pools_ceil_mode_and_global",
        [
            helper.make_node(
                "MaxPool",
                ["x"],
                ["m"],
                kernel_shape=[3, 3],
                strides=[2, 2],
                pads=[1, 1, 1, 1],
                ceil_mode=1,
            ),
            helper.make_node(
                "AveragePool",
                ["m"],
                ["a"],
                kernel_shape=[2, 2],
                strides=[2, 2],
                ceil_mode=1,
                count_include_pad=1,
                pads=[0, 0, 1, 1],
            ),
            helper.make_node("GlobalAveragePool", ["a"], ["g"]),
            helper.make_node("GlobalMaxPool", ["a"], ["h"]),
            helper.make_node("Add", ["g", "h"], ["y"]),
        ],
        [("x", [2, 3, 10, 10])],
        [],
        13,
    ),
    (
        "gemm_alpha_beta_transposed",
        [helper.make_node("Gemm", ["x", "W", "C"], ["y"], alpha=0.5, beta=2.0, transA=1)],
        [("x", [3, 2])],
        [("W", _rand(3, 4)), ("C", _rand(1, 4))],
        13,
    ),
    (
        "layer_normalization_opset_17",
        [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-2, epsilon=1e-3)],
        [("x", [2, 3, 4])],
        [("s", _rand(3, 4)), ("b", _rand(3, 4))],
        17,
    ),
    (
        "activations",
        [
            helper.make_node("Gelu", ["x"], ["a"]),
            helper.make_node("Gelu", ["x"], ["b"], approximate="tanh"),
            helper.make_node("LeakyRelu", ["a"], ["c"], alpha=0.1),
            helper.make_node("HardSigmoid", ["b"], ["d"], alpha=0.3, beta=0.4),
            helper.make_node("HardSwish", ["c"], ["e"]),
            helper.make_node("Mish", ["d"], ["f"]),
            helper.make_node("Softsign", ["e"], ["g"]),
            helper.make_node("Sum", ["f", "g", "x"], ["h"]),
            helper.make_node("Softmax", ["h"], ["y"], axis=1),
        ],
        [("x", [2, 3, 4])],
        [],
        20,
    ),
    (
        "softmax_before_opset_13_flattens",
        [helper.make_node("Softmax", ["x"], ["y"], axis=1)],
        [("x", [2, 3, 4])],
        [],
        11,
    ),
    (
        "matmul_broadcast_and_vectors",
        [
            helper.make_node("MatMul", ["x", "W"], ["h"]),
            helper.make_node("MatMul", ["h", "v"], ["y"]),
        ],
        [("x", [2, 5, 3])],
        [("W", _rand(3, 4)), ("v", _rand(4))],
        13,
    ),
    (
        "pow_sqrt_div_sub_erf",
        [
            helper.make_node("Pow", ["x", "two"], ["p"]),
            helper.make_node("Sqrt", ["p"], ["s"]),
            helper.make_node("Erf", ["x"], ["e"]),
            helper.make_node("Sub", ["s", "e"], ["d"]),
            helper.make_node("Div", ["d", "s"], ["y"]),
        ],
        [("x", [2, 3])],
        [("two", numpy.array(2.0, numpy.float32))],
        13,
    ),
    (
        "shape_gather_unsqueeze_concat_reshape",
        [
            helper.make_node("Shape", ["x"], ["shape"]),
            helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
            helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
            helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
            helper.make_node("Reshape", ["x", "target"], ["r"]),
            helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
            helper.make_node("Slice", ["t", "starts", "ends", "axes"], ["s"]),
            helper.make_node("Squeeze", ["s", "axes"], ["y"]),
        ],
        [("x", ["N", 3, 4])],
        [
            ("zero", numpy.array(0, numpy.int64)),
            ("axes", numpy.array([0], numpy.int64)),
            ("minus_one", numpy.array([-1], numpy.int64)),
            ("starts", numpy.array([5], numpy.int64)),
            ("ends", numpy.array([6], numpy.int64)),
        ],
        13,
    ),
    (
        "expand_tile_where_clip_cast",
        [
            helper.make_node("Expand", ["x", "shape"], ["e"]),
            helper.make_node("Tile", ["e", "reps"], ["t"]),
            helper.make_node("Greater", ["t", "zero"], ["mask"]),
            helper.make_node("Clip", ["t", "low", "high"], ["c"]),
            helper.make_node("Where", ["mask", "c", "t"], ["w"]),
            helper.make_node("Cast", ["w"], ["y"], to=TensorProto.FLOAT),
        ],
        [("x", [3, 1])],
        [
            ("shape", numpy.array([2, 3, 4], numpy.int64)),
            ("reps", numpy.array([1, 1, 2], numpy.int64)),
            ("zero", numpy.array(0.0, numpy.float32)),
            ("low", numpy.array(-0.5, numpy.float32)),
            ("high", numpy.array(0.5, numpy.float32)),
        ],
        13,
    ),
    (
        "resize_nearest_asymmetric_and_cubic",
        [
            helper.make_node(
                "Resize",
                ["x", "", "scales"],
                ["n"],
                mode="nearest",
                coordinate_transformation_mode="asymmetric",
                nearest_mode="floor",
            ),
            helper.make_node("Resize", ["n", "", "", "sizes"], ["y"], mode="cubic"),
        ],
        [("x", [1, 2, 3, 4])],
        [
            ("scales", numpy.array([1, 1, 2, 2], numpy.float32)),
            ("sizes", numpy.array([1, 2, 5, 11], numpy.int64)),
        ],
        13,
    ),
    (
        "instance_normalization_and_reductions",
        [
            helper.make_node("InstanceNormalization", ["x", "s", "b"], ["i"]),
            helper.make_node("ReduceL2", ["i"], ["l2"], axes=[1], keepdims=0),
            helper.make_node("ReduceSumSquare", ["i"], ["ss"], axes=[1], keepdims=0),
            helper.make_node("Add", ["l2", "ss"], ["y"]),
        ],
        [("x", [2, 3, 4, 5])],
        [("s", _rand(3)), ("b", _rand(3))],
        13,
    ),
    (
        "lstm_bidirectional_with_states",
        [
            helper.make_node(
                "LSTM",
                ["x", "W", "R", "B", "", "h0", "c0"],
                ["y", "yh", "yc"],
                hidden_size=5,
                direction="bidirectional",
            )
        ],
        [("x", [4, 2, 3]), ("h0", [2, 2, 5]), ("c0", [2, 2, 5])],
        [("W", _rand(2, 20, 3)), ("R", _rand(2, 20, 5)), ("B", _rand(2, 40))],
        14,
    ),
    (
        "grid_sample_align_corners_0",
        [helper.make_node("GridSample", ["x", "grid"], ["y"])],
        [("x", [2, 3, 4, 5]), ("grid", [2, 3, 4, 2])],
        [],
        16,
    ),
    (
        "grid_sample_linear_align_corners_1",
        [helper.make_node("GridSample", ["x", "grid"], ["y"], mode="linear", align_corners=1)],
        [("x", [1, 2, 3, 3]), ("grid", [1, 5, 2, 2])],
        [],
        20,
    ),
    (
        "dft_of_real_input",
        [helper.make_node("DFT", ["x"], ["y"], axis=1)],
        [("x", [2, 6, 1])],
        [],
        17,
    ),
    (
        "dft_inverse_axis_input",
        [helper.make_node("DFT", ["x", "", "axis"], ["y"], inverse=1)],
        [("x", [2, 5, 3, 2])],
        [("axis", numpy.array(1, numpy.int64))],
        20,
    ),
]


@pytest.mark.parametrize(
    ("nodes", "inputs", "initializers", "opset"),
    [pytest.param(*case[1:], id=case[0]) for case in PYTORCH_FORMS],
)
def test_operators_against_onnx_runtime(nodes, inputs, initializers, opset):
    outputs = list(nodes[-1].output)
    shapes = {"y": ["N"]} if nodes[0].op_type == "Shape" else None  # inference cannot tell
    model = _model(nodes, inputs, outputs, initializers, opset, shapes)
    feeds = {n: _rand(*[2 if isinstance(d, str) else d for d in s]) for n, s in inputs}
    with conftest.skipped_without_its_extra():  # Erf (Gelu's form) needs SciPy
        _check_against_runtime(model, feeds, rtol=1e-5, atol=1e-5)


def _mlp():
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], transB=1),
        helper.make_node("BatchNormalization", ["h", "bn.weight", "bn.bias", "bn.running_mean",
                                                 "bn.running_var"], ["n"], momentum=0.8),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("Dropout", ["r", "ratio"], ["d"]),
        helper.make_node("Gemm", ["d", "fc2.weight", "fc2.bias"], ["logits"], transB=1),
    ]  # fmt: skip
    initializers = [
        ("fc1.weight", _rand(8, 4)), ("fc1.bias", _rand(8)), ("bn.weight", _rand(8)),
        ("bn.bias", _rand(8)), ("bn.running_mean", _rand(8)),
        ("bn.running_var", numpy.abs(_rand(8)) + 0.5), ("ratio", numpy.array(0.25, numpy.float32)),
        ("fc2.weight", _rand(3, 8)), ("fc2.bias", _rand(3)),
    ]  # fmt: skip
    return _model(nodes, [("x", ["N", 4])], ["logits"], initializers, 13)


def test_initializers_become_parameters_and_statistics_persistents():
    chain = dbr.onnx.load(_mlp())
    params = {path for path, _ in chain.namedparams()}
    assert params == {"/fc1_weight", "/fc1_bias", "/bn_weight", "/bn_bias", "/fc2_weight",
                      "/fc2_bias"}  # fmt: skip
    assert chain.parameter_names["bn.running_mean"] == "bn_running_mean"
    assert isinstance(chain.bn_running_mean, numpy.ndarray)
    assert "ratio" not in chain.parameter_names  # Dropout's ratio is read as a constant
    assert (chain.input_names, chain.output_names) == (["x"], ["logits"])


def test_train_mode_uses_batch_statistics_dropout_and_updates_running_ones():
    model = _mlp()
    chain = dbr.onnx.load(model)
    x = _rand(16, 4)
    before = chain.bn_running_mean.copy()
    with using_config("train", False):
        y_test = chain(x).array
        numpy.testing.assert_allclose(y_test, _run(model, x), rtol=1e-5, atol=1e-6)
    numpy.testing.assert_array_equal(chain.bn_running_mean, before)
    with using_config("train", True):
        y_train = chain(x).array
        y_train_again = chain(x).array
    assert not numpy.allclose(y_train, y_train_again)  # dropout draws new masks
    h = x @ model_initializer(model, "fc1.weight").T + model_initializer(model, "fc1.bias")
    expected_mean = 0.8 * before + 0.2 * h.mean(axis=0)
    assert not numpy.allclose(chain.bn_running_mean, before)
    twice = 0.8 * expected_mean + 0.2 * h.mean(axis=0)
    numpy.testing.assert_allclose(chain.bn_running_mean, twice, rtol=1e-5)


def model_initializer(model, name):
    return next(numpy_helper.to_array(t) for t in model.graph.initializer if t.name == name)


def _run(model, x):
    return conftest.run_onnx(model, {"x": x})[0]


def test_the_loaded_chain_trains_and_its_snapshot_round_trips(tmp_path):
    model = _mlp()
    chain = dbr.onnx.load(model)
    x = _rand(32, 4)
    t = (x[:, 0] > 0).astype(numpy.int32) + (x[:, 1] > 0).astype(numpy.int32)
    losses = []
    with using_config("train", True):
        for _ in range(60):  # plain gradient descent: dbr-onnx needs no optimizer package
            loss = F.softmax_cross_entropy(chain(x), t)
            chain.cleargrads()
            loss.backward()
            for param in chain.params():
                param.array -= 0.5 * param.grad
            losses.append(float(loss.array))
    assert losses[-1] < 0.5 * losses[0]
    path = tmp_path / "chain.npz"
    serializers.save_npz(str(path), chain)
    fresh = dbr.onnx.load(model)
    serializers.load_npz(str(path), fresh)
    numpy.testing.assert_array_equal(fresh.bn_running_var, chain.bn_running_var)
    with using_config("train", False):
        numpy.testing.assert_array_equal(fresh(x).array, chain(x).array)
    # Exported again, the fine-tuned chain runs in ONNX Runtime as in dbr.
    conftest.check_export(chain, [x], opsets=(13,), rtol=1e-5, atol=1e-5)


def test_a_static_shape_folded_at_load_is_checked_at_call():
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Reshape", ["x", "s"], ["y"])]  # fmt: skip
    model = _model(nodes, [("x", [2, 3])], ["y"])
    chain = dbr.onnx.load(model)
    assert chain._plan[0].params.op_type == "Reshape"  # Shape was computed at load
    numpy.testing.assert_array_equal(chain(numpy.ones((2, 3), numpy.float32)).array, 1)
    with pytest.raises(ValueError, match=r"input 'x' must have shape \(2, 3\).*got \(3, 2\)"):
        chain(numpy.ones((3, 2), numpy.float32))


def test_a_dynamic_shape_runs_at_each_call():
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Reshape", ["x", "s"], ["y"])]  # fmt: skip
    chain = dbr.onnx.load(_model(nodes, [("x", ["N", 3])], ["y"]))
    assert [s.params.op_type for s in chain._plan] == ["Shape", "Reshape"]
    assert chain(numpy.ones((5, 3), numpy.float32)).shape == (5, 3)


def test_unsupported_operators_are_all_named_with_counts_before_running():
    nodes = [helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("MaxUnpool", ["a", "grid"], ["b"]),
             helper.make_node("MaxUnpool", ["b", "grid"], ["c"]),
             helper.make_node("Hardmax", ["c"], ["d"]),
             helper.make_node("Custom", ["d"], ["y"], domain="example.org")]  # fmt: skip
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2]),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT, [1, 2, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("example.org", 1)]
    )
    with pytest.raises(dbr.onnx.UnsupportedOperatorError) as info:
        dbr.onnx.load(model)
    assert info.value.operators == {"Hardmax": 1, "MaxUnpool": 2, "example.org::Custom": 1}
    assert "Hardmax (1 node), MaxUnpool (2 nodes), example.org::Custom (1 node)" in str(info.value)


@pytest.mark.parametrize(
    ("node", "x_shape", "message"),
    [
        (helper.make_node("GridSample", ["x", "g"], ["y"], mode="nearest"), [1, 1, 3, 3],
         "mode='nearest', padding_mode='zeros': only bilinear"),
        (helper.make_node("GridSample", ["x", "g"], ["y"]), [1, 1, 1, 3],
         "align_corners=0 on an image of 1 x 3 pixels"),
    ],
)  # fmt: skip
def test_grid_sample_forms_dbr_cannot_sample_are_named(node, x_shape, message):
    model = _model([node], [("x", x_shape), ("g", [1, 2, 2, 2])], ["y"], opset=16)
    with pytest.raises(ValueError, match=re.escape(f"GridSample node 'y': {message}")):
        dbr.onnx.load(model)(_rand(*x_shape), _rand(1, 2, 2, 2))


def test_inputs_by_name_and_bad_inputs_are_named(tmp_path):
    path = tmp_path / "mlp.onnx"
    onnx.save(_mlp(), str(path))
    chain = dbr.onnx.load(path)
    x = _rand(2, 4)
    with using_config("train", False):
        numpy.testing.assert_array_equal(chain(x=x).array, chain(x).array)
    with pytest.raises(TypeError, match="input 'x' must be float32, got float64"):
        chain(x.astype(numpy.float64))
    with pytest.raises(TypeError, match=r"missing inputs \['x'\]"):
        chain()
    with pytest.raises(
        TypeError, match="path_or_model must be a path, bytes or an onnx.ModelProto"
    ):
        dbr.onnx.load(3)


def test_a_loaded_model_loads_from_bytes():
    model = _mlp()
    chain = dbr.onnx.load(model.SerializeToString())
    assert chain.output_names == ["logits"]
