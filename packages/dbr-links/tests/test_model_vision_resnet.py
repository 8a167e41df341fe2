import os

import numpy
import pytest

import dbr.functions as F
from dbr.core import Chain, config, initializers, no_backprop_mode, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.serializers import DeserializationError, save_npz
from dbr.core.testing import bad_input_test
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.model.vision import _pretrained
from dbr.links.model.vision.resnet import (
    BottleneckA,
    BottleneckB,
    BuildingBlock,
    ResNet50Layers,
    ResNet101Layers,
    ResNet152Layers,
    ResNetLayers,
    prepare,
)

RESNET_LAYERS = ["conv1", "pool1", "res2", "res3", "res4", "res5", "pool5", "fc6", "prob"]
RESNET_MEAN_BGR = numpy.array([103.063, 115.903, 123.152], numpy.float32)
BOTTLENECK_A_PARAMS = [
    "bn1/beta", "bn1/gamma", "bn2/beta", "bn2/gamma", "bn3/beta", "bn3/gamma",
    "bn4/beta", "bn4/gamma", "conv1/W", "conv2/W", "conv3/W", "conv4/W",
]  # fmt: skip
BOTTLENECK_B_PARAMS = [
    "bn1/beta", "bn1/gamma", "bn2/beta", "bn2/gamma", "bn3/beta", "bn3/gamma",
    "conv1/W", "conv2/W", "conv3/W",
]  # fmt: skip


def _expected_names(blocks):
    names = ["/bn1/beta", "/bn1/gamma", "/conv1/W", "/conv1/b", "/fc6/W", "/fc6/b"]
    for stage, n in zip(("res2", "res3", "res4", "res5"), blocks):
        names += [f"/{stage}/a/{p}" for p in BOTTLENECK_A_PARAMS]
        for i in range(1, n):
            names += [f"/{stage}/b{i}/{p}" for p in BOTTLENECK_B_PARAMS]
    return sorted(names)


def _conv2d(x, W, stride, pad):
    """NumPy reference of a convolution without bias."""
    n, _, h, w = x.shape
    kh, kw = W.shape[2:]
    x = numpy.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
    y = numpy.zeros((n, W.shape[0], oh, ow), numpy.float64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            y += numpy.einsum("nchw,oc->nohw", patch, W[:, :, i, j])
    return y


def _bn_test(x, bn):
    shape = (1, -1, 1, 1)
    scale = bn.gamma.array / numpy.sqrt(bn.avg_var + bn.eps)
    return (x - bn.avg_mean.reshape(shape)) * scale.reshape(shape) + bn.beta.array.reshape(shape)


def _randomize_bns(link, rng):
    for _, child in link.namedlinks():
        if hasattr(child, "avg_mean"):
            size = child.avg_mean.shape
            child.avg_mean[...] = rng.uniform(-0.5, 0.5, size)
            child.avg_var[...] = rng.uniform(0.5, 2.0, size)
            child.gamma.array[...] = rng.uniform(0.5, 1.5, size)
            child.beta.array[...] = rng.uniform(-0.5, 0.5, size)


@pytest.fixture(scope="module")
def resnet50():
    model = ResNet50Layers(pretrained_model=None)
    _randomize_bns(model, numpy.random.default_rng(0))
    return model


def test_resnet50_names_shapes_and_persistents(resnet50):
    assert param_names(resnet50) == _expected_names((3, 4, 6, 3))
    params = dict(resnet50.namedparams())
    assert params["/conv1/W"].shape == (64, 3, 7, 7)
    assert params["/fc6/W"].shape == (1000, 2048)
    assert params["/res3/a/conv1/W"].shape == (128, 256, 1, 1)
    assert params["/res3/a/conv2/W"].shape == (128, 128, 3, 3)
    assert params["/res3/a/conv3/W"].shape == (512, 128, 1, 1)
    assert params["/res3/a/conv4/W"].shape == (512, 256, 1, 1)
    assert params["/res5/b2/conv3/W"].shape == (2048, 512, 1, 1)
    assert params["/res5/b2/bn3/gamma"].shape == (2048,)
    assert sum(p.size for p in params.values()) == 25557096
    bn_paths = [n[: -len("/gamma")] for n in param_names(resnet50) if "gamma" in n]
    expected = sorted(f"{bn}/{p}" for bn in bn_paths for p in ("N", "avg_mean", "avg_var"))
    assert persistent_names(resnet50) == expected
    assert resnet50.available_layers == RESNET_LAYERS
    assert (resnet50.conv1.stride, resnet50.conv1.pad) == ((2, 2), (3, 3))


@pytest.mark.parametrize(
    "cls, blocks, size",
    [(ResNet101Layers, (3, 4, 23, 3), 44549224), (ResNet152Layers, (3, 8, 36, 3), 60192872)],
)
def test_deeper_resnets_names(cls, blocks, size):
    model = cls(None)
    assert param_names(model) == _expected_names(blocks)
    assert sum(p.size for p in model.params()) == size


test_bad_input = bad_input_test(
    [
        (
            ResNetLayers,
            (None, 34),
            {},
            ValueError,
            "ResNetLayers: expected n_layers to be 50, 101 or 152",
        ),
        (
            ResNet50Layers,
            ("ResNet-50-model.caffemodel",),
            {},
            FileNotFoundError,
            "ResNet50Layers: expected pretrained_model to be 'auto', None or the path of an npz "
            "or .caffemodel file, got 'ResNet-50-model.caffemodel', which is not a file",
        ),
    ]
)


@pytest.mark.parametrize(
    "downsample_fb, strides", [(False, ((2, 2), (1, 1))), (True, ((1, 1), (2, 2)))]
)
def test_downsample_fb_places_the_stride(downsample_fb, strides):
    block = BottleneckA(4, 2, 8, 2, downsample_fb=downsample_fb)
    assert (block.conv1.stride, block.conv2.stride) == strides
    assert block.conv4.stride == (2, 2)
    model = ResNet50Layers(None, downsample_fb=downsample_fb)
    assert (model.res3.a.conv1.stride, model.res3.a.conv2.stride) == strides
    assert model.res2.a.conv1.stride == (1, 1) and model.res2.a.conv2.stride == (1, 1)


def _bottleneck_a_reference(block, x, stride, downsample_fb):
    s1, s3 = (1, stride) if downsample_fb else (stride, 1)
    h = numpy.maximum(_bn_test(_conv2d(x, block.conv1.W.array, s1, 0), block.bn1), 0)
    h = numpy.maximum(_bn_test(_conv2d(h, block.conv2.W.array, s3, 1), block.bn2), 0)
    h = _bn_test(_conv2d(h, block.conv3.W.array, 1, 0), block.bn3)
    shortcut = _bn_test(_conv2d(x, block.conv4.W.array, stride, 0), block.bn4)
    return numpy.maximum(h + shortcut, 0)


def _bottleneck_b_reference(block, x):
    h = numpy.maximum(_bn_test(_conv2d(x, block.conv1.W.array, 1, 0), block.bn1), 0)
    h = numpy.maximum(_bn_test(_conv2d(h, block.conv2.W.array, 1, 1), block.bn2), 0)
    return numpy.maximum(_bn_test(_conv2d(h, block.conv3.W.array, 1, 0), block.bn3) + x, 0)


@pytest.mark.parametrize("downsample_fb", [False, True])
def test_bottlenecks_and_building_block_against_numpy(downsample_fb):
    rng = numpy.random.default_rng(1)
    block = BuildingBlock(3, 4, 2, 6, 2, downsample_fb=downsample_fb)
    _randomize_bns(block, rng)
    assert sorted(name for name, _ in block.namedlinks(skipself=True) if name.count("/") == 1) == [
        "/a",
        "/b1",
        "/b2",
    ]
    assert param_names(block.b1) == [f"/{p}" for p in BOTTLENECK_B_PARAMS]
    assert all(getattr(block.a, f"conv{i}").b is None for i in range(1, 5))
    x = rng.standard_normal((2, 4, 5, 5)).astype(numpy.float32)
    with using_config("train", False):
        y = block(x)
    h = _bottleneck_a_reference(block.a, x, 2, downsample_fb)
    h = _bottleneck_b_reference(block.b1, h)
    expected = _bottleneck_b_reference(block.b2, h)
    assert y.shape == (2, 6, 3, 3)
    numpy.testing.assert_allclose(y.array, expected, rtol=1e-4, atol=1e-4)


def test_bottleneck_gradients():
    rng = numpy.random.default_rng(2)
    initialW = initializers.Normal(1.0, rng=numpy.random.RandomState(2))
    for block, x_shape, y_shape in [
        (BottleneckA(3, 2, 4, 2, initialW=initialW), (3, 3, 4, 4), (3, 4, 2, 2)),
        (BottleneckB(4, 2, initialW=initialW), (3, 4, 3, 3), (3, 4, 3, 3)),
    ]:
        for param in block.params():
            param.array = param.array.astype(numpy.float64)
        x = rng.standard_normal(x_shape)
        gy = rng.standard_normal(y_shape)
        params = tuple(block.params())
        check_backward(block, x, gy, params=params, eps=1e-6, atol=1e-5, rtol=1e-4)


def test_building_block_arguments():
    with pytest.warns(DeprecationWarning, match=r"n_layer is deprecated"):
        block = BuildingBlock(n_layer=2, in_channels=4, mid_channels=2, out_channels=4, stride=1)
    assert [name for name, _ in sorted(block.namedlinks(skipself=True))][:2] == ["/a", "/a/bn1"]
    assert hasattr(block, "b1") and not hasattr(block, "b2")
    with pytest.raises(TypeError, match=r"BuildingBlock: got unexpected keyword argument\(s\) x"):
        BuildingBlock(2, 4, 2, 4, 1, x=1)
    with pytest.raises(ValueError, match=r"expected n_layers to be an int >= 1, got 0"):
        BuildingBlock(0, 4, 2, 4, 1)


def test_save_load_and_copy_of_a_bottleneck():
    block = BottleneckB(4, 2)
    _randomize_bns(block, numpy.random.default_rng(3))
    check_round_trip(block, BottleneckB(4, 2))
    check_copy_modes(block)


def test_forward_all_layers_small(resnet50):
    rng = numpy.random.default_rng(4)
    x = rng.uniform(-100, 100, (2, 3, 40, 40)).astype(numpy.float32)
    with using_config("train", False), no_backprop_mode():
        out = resnet50(x, layers=RESNET_LAYERS)
        default = resnet50(x)
    assert {k: v.shape for k, v in out.items()} == {
        "conv1": (2, 64, 20, 20),
        "pool1": (2, 64, 10, 10),
        "res2": (2, 256, 10, 10),
        "res3": (2, 512, 5, 5),
        "res4": (2, 1024, 3, 3),
        "res5": (2, 2048, 2, 2),
        "pool5": (2, 2048),
        "fc6": (2, 1000),
        "prob": (2, 1000),
    }
    assert list(default) == ["prob"]
    numpy.testing.assert_array_equal(default["prob"].array, out["prob"].array)
    conv1 = _conv2d(x, resnet50.conv1.W.array, 2, 3) + resnet50.conv1.b.array[None, :, None, None]
    expected = numpy.maximum(_bn_test(conv1, resnet50.bn1), 0)
    numpy.testing.assert_allclose(out["conv1"].array, expected, rtol=1e-4, atol=1e-3)
    c = out["conv1"].array
    padded = numpy.pad(c, ((0, 0), (0, 0), (0, 1), (0, 1)), constant_values=-numpy.inf)
    pool1 = numpy.max(
        [padded[:, :, i : i + 20 : 2, j : j + 20 : 2] for i in range(3) for j in range(3)], axis=0
    )
    numpy.testing.assert_allclose(out["pool1"].array, pool1)
    numpy.testing.assert_allclose(
        out["pool5"].array, out["res5"].array.mean(axis=(2, 3)), rtol=1e-5
    )
    fc6 = out["pool5"].array @ resnet50.fc6.W.array.T + resnet50.fc6.b.array
    numpy.testing.assert_allclose(out["fc6"].array, fc6, rtol=1e-4, atol=1e-4)
    e = numpy.exp(fc6 - fc6.max(axis=1, keepdims=True))
    numpy.testing.assert_allclose(out["prob"].array, e / e.sum(axis=1, keepdims=True), rtol=1e-4)


def test_forward_requested_layers_only_and_bad_arguments(resnet50):
    x = numpy.zeros((1, 3, 40, 40), numpy.float32)
    with using_config("train", False):
        out = resnet50(x, layers=["res2", "pool1"])
    assert sorted(out) == ["pool1", "res2"]
    with pytest.raises(ValueError, match=r"ResNet50Layers.forward: unknown layer\(s\) \['res6'\]"):
        resnet50(x, layers=["res6"])
    with pytest.raises(ValueError, match=r"test argument is not supported"):
        resnet50(x, test=True)


def test_extract_leaves_config_and_predict_sets_test_mode(resnet50):
    rng = numpy.random.default_rng(5)
    images = [rng.integers(0, 256, (50, 40, 3), dtype=numpy.uint8) for _ in range(2)]
    with using_config("train", False):
        out = resnet50.extract(images, size=(40, 36))
        expected = resnet50(numpy.stack([prepare(im, size=(40, 36)) for im in images]), ["pool5"])
    assert list(out) == ["pool5"] and out["pool5"].shape == (2, 2048)
    numpy.testing.assert_array_equal(out["pool5"].array, expected["pool5"].array)
    assert out["pool5"].creator is not None

    before = resnet50.bn1.avg_mean.copy()
    image = rng.integers(0, 256, (3, 256, 256), dtype=numpy.uint8)
    y = resnet50.predict([image], oversample=False)
    numpy.testing.assert_array_equal(resnet50.bn1.avg_mean, before)
    assert y.shape == (1, 1000) and y.creator is None
    x = image[::-1].astype(numpy.float32) - RESNET_MEAN_BGR[:, None, None]
    with using_config("train", False), no_backprop_mode():
        expected = resnet50(x[None, :, 16:240, 16:240])["prob"].array
    numpy.testing.assert_allclose(y.array, expected, rtol=1e-5, atol=1e-8)

    with using_config("train", True):
        resnet50.extract(images[:1], layers=["conv1"], size=(40, 36))
    assert not numpy.array_equal(resnet50.bn1.avg_mean, before)
    resnet50.bn1.avg_mean[...] = before


class _ChannelMeans(Chain):
    """A stand-in network whose 'prob' is each crop's channel means (cheap at 224x224)."""

    def forward(self, x, layers):
        assert layers == ["prob"]
        assert not config.train and not config.enable_backprop
        return {"prob": F.mean(F.cast(x, numpy.float64), axis=(2, 3))}


def test_predict_averages_ten_crops():
    rng = numpy.random.default_rng(7)
    images = [rng.integers(0, 256, (256, 256, 3), dtype=numpy.uint8) for _ in range(2)]
    y = _pretrained.predict(_ChannelMeans(), prepare, images, True)
    assert y.shape == (2, 3)
    for k, image in enumerate(images):
        x = image[:, :, ::-1].astype(numpy.float32) - RESNET_MEAN_BGR
        x = x.transpose(2, 0, 1).astype(numpy.float64)
        corners = [(0, 0), (0, 32), (32, 0), (32, 32), (16, 16)]
        crops = [x[:, i : i + 224, j : j + 224] for i, j in corners]
        crops += [c[:, :, ::-1] for c in crops]
        numpy.testing.assert_allclose(
            y.array[k], numpy.mean([c.mean(axis=(1, 2)) for c in crops], axis=0), rtol=1e-10
        )
    crops = _pretrained.oversample(numpy.arange(2 * 16).reshape(2, 1, 4, 4), (2, 3))
    assert crops.shape == (20, 1, 2, 3)
    numpy.testing.assert_array_equal(crops[4, 0], [[4, 5, 6], [8, 9, 10]])
    numpy.testing.assert_array_equal(crops[11, 0], [[17, 18, 19], [21, 22, 23]])
    numpy.testing.assert_array_equal(crops[12, 0], [[24, 25, 26], [28, 29, 30]])
    numpy.testing.assert_array_equal(crops[19, 0], [[22, 21, 20], [26, 25, 24]])


def test_pretrained_path_auto_and_mismatch(resnet50, tmp_path, monkeypatch):
    path = tmp_path / "ResNet-50-model.npz"
    save_npz(str(path), resnet50, compression=False)
    loaded = ResNet50Layers(pretrained_model=str(path))
    expected = dict(resnet50.namedparams())
    for name, param in loaded.namedparams():
        numpy.testing.assert_array_equal(param.array, expected[name].array, err_msg=name)
    numpy.testing.assert_array_equal(loaded.res4.b5.bn2.avg_var, resnet50.res4.b5.bn2.avg_var)

    monkeypatch.setenv("DBR_MODEL_ROOT", str(tmp_path))
    auto = ResNet50Layers()
    numpy.testing.assert_array_equal(auto.fc6.W.array, resnet50.fc6.W.array)
    with pytest.raises(DeserializationError, match=r"res4/b6"):
        ResNet101Layers(pretrained_model=path)


def test_pretrained_auto_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("DBR_MODEL_ROOT", str(tmp_path))
    with pytest.raises(FileNotFoundError) as info:
        ResNet152Layers()
    message = str(info.value)
    assert message.startswith("ResNet152Layers: pretrained_model='auto' found no weights at ")
    assert os.path.join(str(tmp_path), "ResNet-152-model.npz") in message
    assert "dbr does not download weights" in message


def test_prepare_uses_resnet_mean():
    rgb = numpy.random.default_rng(6).integers(0, 256, (5, 4, 3), dtype=numpy.uint8)
    expected = (rgb[:, :, ::-1].astype(numpy.float32) - RESNET_MEAN_BGR).transpose(2, 0, 1)
    numpy.testing.assert_array_equal(prepare(rgb, size=None), expected)
    assert prepare(rgb).shape == (3, 224, 224)
