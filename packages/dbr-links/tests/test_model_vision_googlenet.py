import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, Variable, no_backprop_mode, using_config
from dbr.core.serializers import save_npz
from dbr.core.testing import assert_allclose
from dbr.core.testing.link_checks import param_names, persistent_names
from dbr.links.connection.inception import Inception
from dbr.links.model.vision.googlenet import GoogLeNet, prepare

# name: (in_channels, out1, proj3, out3, proj5, out5, proj_pool), from the paper's table 1.
INCEPTIONS = {
    "3a": (192, 64, 96, 128, 16, 32, 32),
    "3b": (256, 128, 128, 192, 32, 96, 64),
    "4a": (480, 192, 96, 208, 16, 48, 64),
    "4b": (512, 160, 112, 224, 24, 64, 64),
    "4c": (512, 128, 128, 256, 24, 64, 64),
    "4d": (512, 112, 144, 288, 32, 64, 64),
    "4e": (528, 256, 160, 320, 32, 128, 128),
    "5a": (832, 256, 160, 320, 32, 128, 128),
    "5b": (832, 384, 192, 384, 48, 128, 128),
}
OUTER_SHAPES = {
    "/conv1/W": (64, 3, 7, 7),
    "/conv1/b": (64,),
    "/conv2/W": (192, 64, 3, 3),
    "/conv2/b": (192,),
    "/conv2_reduce/W": (64, 64, 1, 1),
    "/conv2_reduce/b": (64,),
    "/loss1_conv/W": (128, 512, 1, 1),
    "/loss1_conv/b": (128,),
    "/loss1_fc1/W": (1024, 2048),
    "/loss1_fc1/b": (1024,),
    "/loss1_fc2/W": (1000, 1024),
    "/loss1_fc2/b": (1000,),
    "/loss2_conv/W": (128, 528, 1, 1),
    "/loss2_conv/b": (128,),
    "/loss2_fc1/W": (1024, 2048),
    "/loss2_fc1/b": (1024,),
    "/loss2_fc2/W": (1000, 1024),
    "/loss2_fc2/b": (1000,),
    "/loss3_fc/W": (1000, 1024),
    "/loss3_fc/b": (1000,),
}
LAYERS = [
    "conv1",
    "pool1",
    "conv2_reduce",
    "conv2",
    "pool2",
    "inception_3a",
    "inception_3b",
    "pool3",
    "inception_4a",
    "inception_4b",
    "inception_4c",
    "inception_4d",
    "inception_4e",
    "pool4",
    "inception_5a",
    "inception_5b",
    "pool5",
    "loss3_fc",
    "prob",
    "loss1_fc2",
    "loss2_fc2",
]
LAYER_SHAPES = {
    "conv1": (64, 112, 112),
    "pool1": (64, 56, 56),
    "conv2_reduce": (64, 56, 56),
    "conv2": (192, 56, 56),
    "pool2": (192, 28, 28),
    "inception_3a": (256, 28, 28),
    "inception_3b": (480, 28, 28),
    "pool3": (480, 14, 14),
    "inception_4a": (512, 14, 14),
    "inception_4b": (512, 14, 14),
    "inception_4c": (512, 14, 14),
    "inception_4d": (528, 14, 14),
    "inception_4e": (832, 14, 14),
    "pool4": (832, 7, 7),
    "inception_5a": (832, 7, 7),
    "inception_5b": (1024, 7, 7),
    "pool5": (1024, 1, 1),
    "loss3_fc": (1000,),
    "prob": (1000,),
    "loss1_fc2": (1000,),
    "loss2_fc2": (1000,),
}
TOL = {"atol": 1e-4, "rtol": 1e-4}


@pytest.fixture(scope="module")
def model():
    numpy.random.seed(0)
    return GoogLeNet(pretrained_model=None)


@pytest.fixture(scope="module")
def outputs(model):
    """Every layer's output for one random image, in test mode."""
    x = numpy.random.RandomState(1).uniform(-100, 100, (1, 3, 224, 224)).astype(numpy.float32)
    with using_config("train", False), no_backprop_mode():
        return x, model(x, layers=LAYERS)


def _expected_inception_shapes(name, sizes):
    in_channels, out1, proj3, out3, proj5, out5, proj_pool = sizes
    prefix = f"/inc{name}"
    return {
        f"{prefix}/conv1/W": (out1, in_channels, 1, 1),
        f"{prefix}/conv1/b": (out1,),
        f"{prefix}/conv3/W": (out3, proj3, 3, 3),
        f"{prefix}/conv3/b": (out3,),
        f"{prefix}/conv5/W": (out5, proj5, 5, 5),
        f"{prefix}/conv5/b": (out5,),
        f"{prefix}/proj3/W": (proj3, in_channels, 1, 1),
        f"{prefix}/proj3/b": (proj3,),
        f"{prefix}/proj5/W": (proj5, in_channels, 1, 1),
        f"{prefix}/proj5/b": (proj5,),
        f"{prefix}/projp/W": (proj_pool, in_channels, 1, 1),
        f"{prefix}/projp/b": (proj_pool,),
    }


def test_param_names_and_shapes(model):
    expected = dict(OUTER_SHAPES)
    for name, sizes in INCEPTIONS.items():
        expected.update(_expected_inception_shapes(name, sizes))
    assert param_names(model) == sorted(expected)
    assert {name: p.shape for name, p in model.namedparams()} == expected
    assert persistent_names(model) == []
    assert sum(p.size for p in model.params()) == 13378280
    for name in INCEPTIONS:
        assert isinstance(getattr(model, f"inc{name}"), Inception)


def test_random_initialization(model):
    for name in ("conv1", "conv2", "loss1_fc1", "loss3_fc"):
        W = getattr(model, name).W.array
        fan_in = W[0].size
        bound = (3.0 / fan_in) ** 0.5
        assert W.dtype == numpy.float32
        assert numpy.abs(W).max() <= bound, name
        assert abs(W.std() - bound / 3**0.5) < 0.05 * bound, name
        numpy.testing.assert_array_equal(getattr(model, name).b.array, 0, name)
    assert model.inc3a.conv1.W.array.std() > 0


def test_available_layers(model):
    assert model.available_layers == LAYERS
    assert list(model.functions) == LAYERS


def test_forward_shapes(outputs):
    _, out = outputs
    assert sorted(out) == sorted(LAYERS)
    for name, shape in LAYER_SHAPES.items():
        assert out[name].shape == (1,) + shape, name
        assert out[name].dtype == numpy.float32, name


def test_forward_values(model, outputs):
    x, out = outputs
    conv1 = F.relu(F.convolution_2d(x, model.conv1.W.array, model.conv1.b.array, 2, 3))
    assert_allclose(out["conv1"].array, conv1.array, **TOL)
    pool1 = F.local_response_normalization(
        F.max_pooling_2d(conv1, 3, 2), n=5, k=1, alpha=2e-5, beta=0.75
    )
    assert_allclose(out["pool1"].array, pool1.array, **TOL)
    reduce = F.relu(
        F.convolution_2d(pool1, model.conv2_reduce.W.array, model.conv2_reduce.b.array)
    )
    assert_allclose(out["conv2_reduce"].array, reduce.array, **TOL)
    pool2 = F.max_pooling_2d(out["conv2"], 3, 2)
    assert_allclose(out["pool2"].array, pool2.array, **TOL)
    with using_config("train", False):
        assert_allclose(out["inception_3a"].array, model.inc3a(pool2).array, **TOL)
    pool5 = F.average_pooling_2d(out["inception_5b"], 7)
    assert_allclose(out["pool5"].array, pool5.array, **TOL)
    fc = F.linear(pool5, model.loss3_fc.W.array, model.loss3_fc.b.array)
    assert_allclose(out["loss3_fc"].array, fc.array, **TOL)
    assert_allclose(out["prob"].array, F.softmax(fc).array, **TOL)
    for prefix, source in (("loss1", "inception_4a"), ("loss2", "inception_4d")):
        h = F.average_pooling_2d(out[source], 5, 3)
        conv = getattr(model, f"{prefix}_conv")
        h = F.relu(F.convolution_2d(h, conv.W.array, conv.b.array))
        fc1, fc2 = getattr(model, f"{prefix}_fc1"), getattr(model, f"{prefix}_fc2")
        h = F.relu(F.linear(h, fc1.W.array, fc1.b.array))
        h = F.linear(h, fc2.W.array, fc2.b.array)
        assert_allclose(out[f"{prefix}_fc2"].array, h.array, **TOL)


def test_layers_argument(model, outputs):
    x, out = outputs
    with using_config("train", False):
        default = model(x)
        assert list(default) == ["prob"]
        assert_allclose(default["prob"].array, out["prob"].array, **TOL)
        aux = model(x, layers=["loss2_fc2", "conv2"])
        assert sorted(aux) == ["conv2", "loss2_fc2"]
        assert_allclose(aux["loss2_fc2"].array, out["loss2_fc2"].array, **TOL)
        assert model(x, layers=[]) == {}


def test_runs_only_as_far_as_needed(model):
    # 32x32 is too small for pool5 but enough for the layers up to pool2.
    x = numpy.zeros((2, 3, 32, 32), numpy.float32)
    out = model(x, layers=["conv1", "pool2"])
    assert out["pool2"].shape == (2, 192, 4, 4)


def test_train_mode_drops_out(model, outputs):
    x, out = outputs
    with using_config("train", True):
        y = model(x, layers=["loss3_fc", "pool5"])
    assert_allclose(y["pool5"].array, out["pool5"].array, **TOL)
    assert not numpy.allclose(y["loss3_fc"].array, out["loss3_fc"].array, atol=1e-3)


def test_forward_bad_arguments(model):
    x = numpy.zeros((1, 3, 32, 32), numpy.float32)
    with pytest.raises(ValueError, match=r"GoogLeNet\.forward: unknown layer\(s\) \['fc7'\]"):
        model(x, layers=["fc7"])
    with pytest.raises(ValueError, match=r"GoogLeNet\.forward: the train argument"):
        model(x, train=False)
    with pytest.raises(TypeError, match=r"GoogLeNet\.forward: got unexpected keyword"):
        model(x, layers=["conv1"], foo=1)
    with pytest.raises(InvalidType, match=r"x\.shape\[1\] == W\.shape\[1\]"):
        model(numpy.zeros((1, 4, 32, 32), numpy.float32), layers=["conv1"])
    with pytest.raises(InvalidType, match=r"x\.dtype\.kind == 'f'"):
        model(numpy.zeros((1, 3, 32, 32), numpy.int32), layers=["conv1"])


@pytest.fixture(scope="module")
def saved(model, tmp_path_factory):
    """``model`` saved as ``bvlc_googlenet.npz`` in a folder of its own."""
    path = tmp_path_factory.mktemp("models") / "bvlc_googlenet.npz"
    save_npz(str(path), model, compression=False)
    return path


def test_pretrained_path_round_trip(model, saved):
    loaded = GoogLeNet(pretrained_model=saved)
    expected = dict(model.namedparams())
    for name, param in loaded.namedparams():
        assert param.array is not expected[name].array, name
        numpy.testing.assert_array_equal(param.array, expected[name].array, name)


def test_pretrained_auto(model, saved, tmp_path, monkeypatch):
    monkeypatch.setenv("DBR_MODEL_ROOT", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"GoogLeNet: .*bvlc_googlenet\.npz"):
        GoogLeNet()
    monkeypatch.setenv("DBR_MODEL_ROOT", str(saved.parent))
    loaded = GoogLeNet()
    numpy.testing.assert_array_equal(loaded.loss2_fc1.W.array, model.loss2_fc1.W.array)
    numpy.testing.assert_array_equal(loaded.inc5b.conv5.W.array, model.inc5b.conv5.W.array)


def _prepare_reference(image):
    """RGB (H, W, 3) uint8 to BGR minus GoogLeNet's mean, channels first."""
    bgr = image[:, :, ::-1].astype(numpy.float64)
    return (bgr - numpy.array([104.0, 117.0, 123.0])).transpose(2, 0, 1)


def test_prepare_without_resize():
    image = numpy.random.RandomState(0).randint(0, 256, (5, 7, 3)).astype(numpy.uint8)
    y = prepare(image, size=None)
    assert y.shape == (3, 5, 7) and y.dtype == numpy.float32
    assert_allclose(y, _prepare_reference(image), atol=0, rtol=0)
    # Channels-first input and the default size.
    assert_allclose(prepare(image.transpose(2, 0, 1), size=(7, 5)), y, atol=0, rtol=0)
    with using_config("dtype", numpy.float64):
        assert prepare(image, size=None).dtype == numpy.float64


def test_prepare_grey_and_resize():
    grey = numpy.full((6, 4), 200, numpy.uint8)
    y = prepare(grey, size=(10, 3))
    assert y.shape == (3, 3, 10)
    expected = numpy.empty((3, 3, 10))
    expected[0], expected[1], expected[2] = 200 - 104.0, 200 - 117.0, 200 - 123.0
    assert_allclose(y, expected, atol=0, rtol=0)
    assert prepare(numpy.zeros((300, 260, 3), numpy.uint8)).shape == (3, 224, 224)


def test_extract(model):
    rng = numpy.random.RandomState(2)
    images = [rng.randint(0, 256, (224, 224, 3)).astype(numpy.uint8) for _ in range(2)]
    with using_config("train", False), no_backprop_mode():
        out = model.extract(images)
        assert list(out) == ["pool5"] and out["pool5"].shape == (2, 1024, 1, 1)
        x = numpy.stack([_prepare_reference(image) for image in images]).astype(numpy.float32)
        expected = model(Variable(x), layers=["pool5"])["pool5"]
        assert_allclose(out["pool5"].array, expected.array, **TOL)
        conv = model.extract(images[:1], layers=["conv2"], size=None)
        assert conv["conv2"].shape == (1, 192, 56, 56)
    with pytest.raises(ValueError, match=r"GoogLeNet\.extract: the train argument"):
        model.extract(images, train=False)


def test_predict(model):
    image = numpy.random.RandomState(3).randint(0, 256, (256, 256, 3)).astype(numpy.uint8)
    x = _prepare_reference(image).astype(numpy.float32)
    crops = [
        x[:, t : t + 224, s : s + 224] for t, s in ((0, 0), (0, 32), (32, 0), (32, 32), (16, 16))
    ]
    crops += [crop[:, :, ::-1] for crop in crops]
    with using_config("train", False), no_backprop_mode():
        probs = model(numpy.stack(crops), layers=["prob"])["prob"].array
    y = model.predict([image], oversample=False)
    assert y.shape == (1, 1000)
    assert_allclose(y.array, probs[4:5], **TOL)
    y = model.predict([image])
    assert y.shape == (1, 1000)
    assert_allclose(y.array, probs.mean(axis=0, keepdims=True), **TOL)
    assert y.creator is None


def test_prepare_doc_names_each_network_mean():
    from dbr.links.model.vision import resnet, vgg

    assert "BGR minus ``(104, 117, 123)``.\n" in prepare.__doc__
    assert "BGR minus\n        ``(103.063, 115.903, 123.152)``.\n" in resnet.prepare.__doc__
    assert "BGR minus\n        ``(103.939, 116.779, 123.68)``.\n" in vgg.prepare.__doc__
