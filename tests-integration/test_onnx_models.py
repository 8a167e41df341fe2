"""Whole models exported with dbr.onnx, checked by onnx and run by ONNX Runtime against dbr."""

import importlib.util
import pathlib
import sys
import time

import numpy
import pytest

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, using_config

onnx = pytest.importorskip("onnx", reason="needs dbr-onnx")
ort = pytest.importorskip("onnxruntime", reason="needs the dbr-onnx[runtime] extra")
dbr_onnx = pytest.importorskip("dbr.onnx", reason="needs dbr-onnx")

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load_example(path):
    path = ROOT / "examples" / path
    sys.path.insert(0, str(path.parent.parent))  # the examples' shared helpers
    try:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent.parent))
    return module


def _run(proto, inputs):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(
        proto.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))


def _flat(outputs):
    if isinstance(outputs, dict):
        return list(outputs.values())
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


def _check(model, inputs, expected=None, opsets=None, rtol=1e-4, atol=1e-5, **kwargs):
    """Export at opset 13 and the newest, full-check, and compare ONNX Runtime with dbr."""
    if expected is None:
        with using_config("train", False):
            expected = [y.array for y in _flat(model(*inputs))]
    if opsets is None:
        opsets = (dbr_onnx.MINIMUM_OPSET_VERSION, dbr_onnx.maximum_opset_version())
    proto = None
    for opset in opsets:
        proto = dbr_onnx.export(model, list(inputs), opset_version=opset, **kwargs)
        onnx.checker.check_model(proto, full_check=True)
        actual = _run(proto, inputs)
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert a.shape == e.shape
            numpy.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=f"opset {opset}")
    return proto


def _randomize_batch_norm(model, seed=0):
    """Running statistics away from 0 and 1, so a wrong BN conversion shows."""
    rng = numpy.random.default_rng(seed)
    for link in model.links():
        if isinstance(link, L.BatchNormalization):
            link.avg_mean[...] = rng.normal(0, 0.1, link.avg_mean.shape)
            link.avg_var[...] = rng.uniform(0.5, 1.5, link.avg_var.shape)
            link.gamma.array[...] = rng.uniform(0.5, 1.5, link.gamma.shape)
            link.beta.array[...] = rng.normal(0, 0.1, link.beta.shape)


def _images(*shape, seed=0):
    return numpy.random.default_rng(seed).uniform(-1, 1, shape).astype(numpy.float32)


def test_mnist_mlp():
    mlp = _load_example("mnist/train_mnist.py").MLP(50, 10)
    proto = _check(mlp, [_images(4, 784)])
    names = {i.name for i in proto.graph.initializer}
    # onnx_chainer's names: the link path /l1/W becomes param_l1_W.
    assert names == {f"param_l{i}_{p}" for i in (1, 2, 3) for p in ("W", "b")}


def test_mnist_mlp_inside_classifier_is_named_by_path():
    classifier = L.Classifier(_load_example("mnist/train_mnist.py").MLP(20, 10))

    class Predict(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.model = classifier

        def forward(self, x):
            return self.model.predictor(x)

    proto = _check(Predict(), [_images(3, 784)])
    assert "param_model_predictor_l1_W" in {i.name for i in proto.graph.initializer}


def test_lenet5_with_dynamic_batch():
    lenet = _load_example("convnet/train_lenet.py").LeNet5()
    _check(lenet, [_images(2, 1, 28, 28)])
    proto = dbr_onnx.export(lenet, _images(2, 1, 28, 28), input_shapes=[("N", 1, 28, 28)])
    x = _images(5, 1, 28, 28, seed=1)
    with using_config("train", False):
        expected = lenet(x).array
    numpy.testing.assert_allclose(_run(proto, [x])[0], expected, rtol=1e-4, atol=1e-5)


def test_cifar_vgg():
    vgg = _load_example("convnet/train_cifar.py").VGG(width=4)
    _randomize_batch_norm(vgg)
    proto = _check(vgg, [_images(2, 3, 32, 32)])
    assert "Dropout" not in {n.op_type for n in proto.graph.node}


def test_cifar_resnet20():
    resnet = _load_example("convnet/train_cifar.py").ResNet(n_blocks=3)
    _randomize_batch_norm(resnet)
    proto = _check(resnet, [_images(2, 3, 32, 32)])
    ops = [n.op_type for n in proto.graph.node]
    assert ops.count("Conv") == 1 + 3 * 3 * 2 + 2
    assert ops.count("BatchNormalization") == ops.count("Conv")


def _rnnlm():
    numpy.random.seed(0)
    return _load_example("ptb/train_ptb.py").RNNLM(30, 8, n_layers=2)


def test_ptb_language_model_one_step():
    model = _rnnlm()
    x = numpy.array([3, 7, 1], numpy.int32)
    model.reset_state()
    with using_config("train", False):
        expected = [model(x).array]
    model.reset_state()
    _check(model, [x], expected=expected, opsets=[dbr_onnx.maximum_opset_version()])


def test_ptb_language_model_unrolled():
    model = _rnnlm()

    class Unrolled(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.lm = model

        def forward(self, words):
            self.lm.reset_state()
            return F.stack([self.lm(words[t]) for t in range(words.shape[0])])

    words = numpy.random.default_rng(0).integers(0, 30, (5, 3)).astype(numpy.int32)
    proto = _check(Unrolled(), [words])
    assert "param_lm_rnn_0_upward_W" in {i.name for i in proto.graph.initializer}


def test_vae_encoder():
    vae = _load_example("vae/train_vae.py").VAE(784, 4, 16)

    class Encoder(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.vae = vae

        def forward(self, x):
            return self.vae.encode(x)

    proto = _check(Encoder(), [_images(3, 784)], output_names=["mu", "ln_var"])
    assert [o.name for o in proto.graph.output] == ["mu", "ln_var"]


class _Probabilities(Chain):
    def __init__(self, net):
        super().__init__()
        with self.init_scope():
            self.net = net

    def forward(self, x):
        return self.net(x, layers=["prob"])["prob"]


def test_resnet50_layers_random_weights():
    net = L.ResNet50Layers(pretrained_model=None)
    _randomize_batch_norm(net)
    model = _Probabilities(net)
    x = _images(1, 3, 224, 224)
    with using_config("train", False):
        expected = model(x).array
    start = time.perf_counter()
    proto = dbr_onnx.export(model, x)
    elapsed = time.perf_counter() - start
    # The figure is recorded here; benchmarks/onnx_export.py measures it (target: under 10 s).
    # Only a hang or a gross regression fails this, whatever else loads the machine.
    print(f"exporting ResNet-50 took {elapsed:.1f} s")
    assert elapsed < 120, f"exporting ResNet-50 took {elapsed:.1f} s"
    onnx.checker.check_model(proto, full_check=True)
    numpy.testing.assert_allclose(_run(proto, [x])[0], expected, rtol=1e-3, atol=1e-5)


def test_vgg16_layers_random_weights():
    model = _Probabilities(L.VGG16Layers(pretrained_model=None))
    x = _images(1, 3, 224, 224)
    _check(model, [x], opsets=[dbr_onnx.maximum_opset_version()], rtol=1e-3)


def test_export_and_run_example(tmp_path, capsys):
    pytest.importorskip("sklearn", reason="the digits need scikit-learn")
    example = _load_example("onnx/export_and_run.py")
    dbr_accuracy, onnx_accuracy = example.main(["--epoch", "1", "--out", str(tmp_path)])
    assert (tmp_path / "model.onnx").is_file()
    assert abs(dbr_accuracy - onnx_accuracy) <= 1 / 360
    assert dbr_accuracy > 0.5
    captured = capsys.readouterr()
    assert "test accuracy with ONNX Runtime" in captured.out
    assert "training" in captured.err and "images" in captured.err  # the progress bar
    # It ends at the number of training images, in the last epoch, not past them.
    last = captured.err.replace("\n", "\r").split("\r")[-2]
    assert "1437/1437" in last and "epoch=1," in last, last
