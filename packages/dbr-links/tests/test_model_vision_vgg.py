import os

import numpy
import pytest

from dbr.core import no_backprop_mode, using_config
from dbr.core.serializers import save_npz
from dbr.core.testing import bad_input_test
from dbr.core.testing.link_checks import param_names, persistent_names
from dbr.links.connection.convolution_2d import Convolution2D
from dbr.links.connection.linear import Linear
from dbr.links.model.vision.vgg import VGG16Layers, VGG19Layers, VGGLayers, prepare

VGG16_PARAMS = [
    ("/conv1_1/W", (64, 3, 3, 3)),
    ("/conv1_1/b", (64,)),
    ("/conv1_2/W", (64, 64, 3, 3)),
    ("/conv1_2/b", (64,)),
    ("/conv2_1/W", (128, 64, 3, 3)),
    ("/conv2_1/b", (128,)),
    ("/conv2_2/W", (128, 128, 3, 3)),
    ("/conv2_2/b", (128,)),
    ("/conv3_1/W", (256, 128, 3, 3)),
    ("/conv3_1/b", (256,)),
    ("/conv3_2/W", (256, 256, 3, 3)),
    ("/conv3_2/b", (256,)),
    ("/conv3_3/W", (256, 256, 3, 3)),
    ("/conv3_3/b", (256,)),
    ("/conv4_1/W", (512, 256, 3, 3)),
    ("/conv4_1/b", (512,)),
    ("/conv4_2/W", (512, 512, 3, 3)),
    ("/conv4_2/b", (512,)),
    ("/conv4_3/W", (512, 512, 3, 3)),
    ("/conv4_3/b", (512,)),
    ("/conv5_1/W", (512, 512, 3, 3)),
    ("/conv5_1/b", (512,)),
    ("/conv5_2/W", (512, 512, 3, 3)),
    ("/conv5_2/b", (512,)),
    ("/conv5_3/W", (512, 512, 3, 3)),
    ("/conv5_3/b", (512,)),
    ("/fc6/W", (4096, 25088)),
    ("/fc6/b", (4096,)),
    ("/fc7/W", (4096, 4096)),
    ("/fc7/b", (4096,)),
    ("/fc8/W", (1000, 4096)),
    ("/fc8/b", (1000,)),
]
VGG19_EXTRA_PARAMS = [
    ("/conv3_4/W", (256, 256, 3, 3)),
    ("/conv3_4/b", (256,)),
    ("/conv4_4/W", (512, 512, 3, 3)),
    ("/conv4_4/b", (512,)),
    ("/conv5_4/W", (512, 512, 3, 3)),
    ("/conv5_4/b", (512,)),
]
VGG16_LAYERS = [
    "conv1_1", "conv1_2", "pool1",
    "conv2_1", "conv2_2", "pool2",
    "conv3_1", "conv3_2", "conv3_3", "pool3",
    "conv4_1", "conv4_2", "conv4_3", "pool4",
    "conv5_1", "conv5_2", "conv5_3", "pool5",
    "fc6", "fc7", "fc8", "prob",
]  # fmt: skip
VGG19_LAYERS = [
    "conv1_1", "conv1_2", "pool1",
    "conv2_1", "conv2_2", "pool2",
    "conv3_1", "conv3_2", "conv3_3", "conv3_4", "pool3",
    "conv4_1", "conv4_2", "conv4_3", "conv4_4", "pool4",
    "conv5_1", "conv5_2", "conv5_3", "conv5_4", "pool5",
    "fc6", "fc7", "fc8", "prob",
]  # fmt: skip
VGG_MEAN_BGR = numpy.array([103.939, 116.779, 123.68], numpy.float32)


def _conv2d(x, W, b, pad):
    """NumPy reference of a stride-1 convolution."""
    n, _, h, w = x.shape
    kh, kw = W.shape[2:]
    x = numpy.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, w + 2 * pad - kw + 1
    y = numpy.zeros((n, W.shape[0], oh, ow), numpy.float64)
    for i in range(kh):
        for j in range(kw):
            y += numpy.einsum("nchw,oc->nohw", x[:, :, i : i + oh, j : j + ow], W[:, :, i, j])
    return y + b[None, :, None, None]


def _softmax(y):
    e = numpy.exp(y - y.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def vgg16():
    return VGG16Layers(pretrained_model=None)


def test_vgg16_params_names_shapes_and_init(vgg16):
    assert [(name, p.shape) for name, p in sorted(vgg16.namedparams())] == VGG16_PARAMS
    assert param_names(vgg16) == [name for name, _ in VGG16_PARAMS]
    assert persistent_names(vgg16) == []
    for name, child in vgg16.namedlinks(skipself=True):
        assert isinstance(child, Linear if name.startswith("/fc") else Convolution2D), name
    assert vgg16.conv1_1.stride == (1, 1) and vgg16.conv1_1.pad == (1, 1)
    W = vgg16.fc6.W.array
    assert W.dtype == numpy.float32
    assert abs(W.std() - 0.01) < 1e-3 and abs(W.mean()) < 1e-4
    assert not vgg16.fc6.b.array.any()


def test_vgg16_available_layers(vgg16):
    assert vgg16.available_layers == VGG16_LAYERS


def test_vgg19_params_names_and_layers():
    vgg19 = VGG19Layers(None)
    assert [(name, p.shape) for name, p in sorted(vgg19.namedparams())] == sorted(
        VGG16_PARAMS + VGG19_EXTRA_PARAMS
    )
    assert vgg19.available_layers == VGG19_LAYERS
    with using_config("train", False):
        out = vgg19(numpy.zeros((1, 3, 32, 32), numpy.float32), layers=["conv3_4", "pool5"])
    assert {k: v.shape for k, v in out.items()} == {
        "conv3_4": (1, 256, 8, 8),
        "pool5": (1, 512, 1, 1),
    }


test_constructor_bad_input = bad_input_test(
    [
        (
            VGGLayers,
            (None, 18),
            {},
            ValueError,
            "VGGLayers: expected n_layers to be 16 or 19, got 18",
        ),
        (
            VGG16Layers,
            ("VGG_ILSVRC_16_layers.caffemodel",),
            {},
            FileNotFoundError,
            "VGG16Layers: expected pretrained_model to be 'auto', None or the path of an npz or "
            ".caffemodel file, got 'VGG_ILSVRC_16_layers.caffemodel', which is not a file",
        ),
    ]
)


def test_forward_full_size_against_references_and_predict(vgg16):
    image = numpy.random.default_rng(0).integers(0, 256, (3, 256, 256), dtype=numpy.uint8)
    x = (image[::-1].astype(numpy.float32) - VGG_MEAN_BGR[:, None, None])[None]
    x = x[:, :, 16:240, 16:240]
    layers = ["conv1_1", "pool5", "fc6", "fc8", "prob"]
    with using_config("train", False), no_backprop_mode():
        out = vgg16(x, layers=layers)
    assert sorted(out) == sorted(layers)
    assert out["conv1_1"].shape == (1, 64, 224, 224)
    assert out["pool5"].shape == (1, 512, 7, 7)
    assert out["fc6"].shape == (1, 4096)
    assert out["prob"].shape == (1, 1000)
    conv = vgg16.conv1_1
    expected = numpy.maximum(_conv2d(x, conv.W.array, conv.b.array, 1), 0)
    numpy.testing.assert_allclose(out["conv1_1"].array, expected, rtol=1e-4, atol=1e-3)
    fc6 = out["pool5"].array.reshape(1, -1) @ vgg16.fc6.W.array.T + vgg16.fc6.b.array
    numpy.testing.assert_allclose(out["fc6"].array, numpy.maximum(fc6, 0), rtol=1e-4, atol=1e-5)
    numpy.testing.assert_allclose(
        out["prob"].array, _softmax(out["fc8"].array.astype(numpy.float64)), rtol=1e-5
    )

    y = vgg16.predict([image], oversample=False)
    assert y.shape == (1, 1000) and y.creator is None
    numpy.testing.assert_allclose(y.array, out["prob"].array, rtol=1e-5, atol=1e-8)

    with using_config("train", True):
        train_fc6 = vgg16(x, layers=["fc6"])["fc6"].array
    test_fc6 = out["fc6"].array
    kept = train_fc6 != 0
    assert 0 < kept.sum() < (test_fc6 != 0).sum()
    numpy.testing.assert_allclose(train_fc6[kept], 2 * test_fc6[kept], rtol=1e-5)


def test_forward_default_and_requested_layers_small(vgg16):
    x = numpy.zeros((2, 3, 32, 32), numpy.float32)
    with using_config("train", False):
        out = vgg16(x, layers=["pool1", "conv2_2", "pool5"])
    assert {k: v.shape for k, v in out.items()} == {
        "pool1": (2, 64, 16, 16),
        "conv2_2": (2, 128, 16, 16),
        "pool5": (2, 512, 1, 1),
    }
    with pytest.raises(Exception, match=r"LinearFunction"):
        vgg16(x)


def test_forward_bad_arguments(vgg16):
    x = numpy.zeros((1, 3, 32, 32), numpy.float32)
    with pytest.raises(ValueError, match=r"VGG16Layers.forward: unknown layer\(s\) \['fc9'\]"):
        vgg16(x, layers=["fc9"])
    with pytest.raises(ValueError, match=r"test argument is not supported"):
        vgg16(x, layers=["pool1"], test=True)
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) bogus"):
        vgg16(x, layers=["pool1"], bogus=1)


def test_extract_prepares_images(vgg16):
    rng = numpy.random.default_rng(1)
    images = [rng.integers(0, 256, (40, 36, 3), dtype=numpy.uint8) for _ in range(2)]
    with using_config("train", False):
        out = vgg16.extract(images, layers=["pool5", "conv1_1"], size=(32, 48))
        expected = vgg16(numpy.stack([prepare(im, size=(32, 48)) for im in images]), ["conv1_1"])
    assert sorted(out) == ["conv1_1", "pool5"]
    assert out["pool5"].shape == (2, 512, 2, 1)
    assert out["conv1_1"].shape == (2, 64, 48, 32)
    numpy.testing.assert_array_equal(out["conv1_1"].array, expected["conv1_1"].array)
    with pytest.raises(ValueError, match=r"VGG16Layers.extract: the volatile argument"):
        vgg16.extract(images, volatile=True)


def test_pretrained_auto_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("DBR_MODEL_ROOT", str(tmp_path))
    path = os.path.join(str(tmp_path), "VGG_ILSVRC_19_layers.npz")
    with pytest.raises(FileNotFoundError) as info:
        VGG19Layers()
    message = str(info.value)
    assert message.startswith("VGG19Layers: pretrained_model='auto' found no weights at ")
    assert path in message
    assert "dbr does not download weights" in message


def test_pretrained_auto_finds_file_and_loads_it(vgg16, tmp_path, monkeypatch):
    monkeypatch.setenv("DBR_MODEL_ROOT", str(tmp_path))
    save_npz(str(tmp_path / "VGG_ILSVRC_16_layers.npz"), vgg16, compression=False)
    loaded = VGG16Layers()
    expected = dict(vgg16.namedparams())
    for name, param in loaded.namedparams():
        numpy.testing.assert_array_equal(param.array, expected[name].array, err_msg=name)


def test_pretrained_path_missing(tmp_path):
    path = str(tmp_path / "nothing.npz")
    with pytest.raises(FileNotFoundError, match=r"VGG16Layers: expected pretrained_model .*"):
        VGG16Layers(path)


def _reference_prepare(rgb_hwc):
    return (rgb_hwc[:, :, ::-1].astype(numpy.float32) - VGG_MEAN_BGR).transpose(2, 0, 1)


def test_prepare_channel_order_and_mean():
    rng = numpy.random.default_rng(3)
    rgb = rng.integers(0, 256, (5, 7, 3), dtype=numpy.uint8)
    expected = _reference_prepare(rgb)
    for image in (rgb, rgb.transpose(2, 0, 1), rgb.astype(numpy.float64) + 0.25):
        out = prepare(image, size=None)
        assert out.shape == (3, 5, 7) and out.dtype == numpy.float32
        numpy.testing.assert_array_equal(out, expected)
    numpy.testing.assert_array_equal(prepare(rgb, size=(7, 5)), expected)
    rgba = numpy.concatenate([rgb, numpy.full((5, 7, 1), 9, numpy.uint8)], axis=2)
    numpy.testing.assert_array_equal(prepare(rgba, size=None), expected)


def test_prepare_grey_and_pil_like():
    grey = numpy.arange(12, dtype=numpy.uint8).reshape(3, 4)
    expected = _reference_prepare(numpy.repeat(grey[:, :, None], 3, axis=2))
    numpy.testing.assert_array_equal(prepare(grey, size=None), expected)
    numpy.testing.assert_array_equal(prepare(grey[None], size=None), expected)

    class PilLike:
        def __init__(self, rgb):
            self.rgb = rgb
            self.modes = []

        def convert(self, mode):
            self.modes.append(mode)
            return self.rgb

    rgb = numpy.random.default_rng(4).integers(0, 256, (4, 6, 3), dtype=numpy.uint8)
    image = PilLike(rgb)
    numpy.testing.assert_array_equal(prepare(image, size=None), _reference_prepare(rgb))
    assert image.modes == ["RGB"]


def _bilinear_half_pixel(image, out_h, out_w):
    """NumPy reference: bilinear on pixel centres, edges clamped, per (H, W, C) image."""

    def axis(n_in, n_out):
        src = numpy.maximum((numpy.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0)
        i0 = numpy.floor(src).astype(int)
        i1 = numpy.minimum(i0 + 1, n_in - 1)
        return i0, i1, src - i0

    y0, y1, wy = axis(image.shape[0], out_h)
    x0, x1, wx = axis(image.shape[1], out_w)
    image = image.astype(numpy.float64)
    rows = image[y0] * (1 - wy)[:, None, None] + image[y1] * wy[:, None, None]
    return rows[:, x0] * (1 - wx)[None, :, None] + rows[:, x1] * wx[None, :, None]


def test_prepare_resizes_with_size_as_width_height():
    rgb = numpy.random.default_rng(5).integers(0, 256, (4, 5, 3), dtype=numpy.uint8)
    out = prepare(rgb, size=(8, 6))
    assert out.shape == (3, 6, 8)
    expected = _reference_prepare(numpy.rint(_bilinear_half_pixel(rgb, 6, 8)))
    # Halves may round either way (float32 versus float64 weights).
    numpy.testing.assert_allclose(out, expected, atol=1.0001)
    assert (numpy.abs(out - expected) < 1e-4).mean() > 0.95
    assert prepare(rgb).shape == (3, 224, 224)


def test_prepare_follows_config_dtype():
    rgb = numpy.zeros((2, 2, 3), numpy.uint8)
    with using_config("dtype", numpy.dtype(numpy.float64)):
        out = prepare(rgb, size=None)
    assert out.dtype == numpy.float64
    numpy.testing.assert_allclose(out[:, 0, 0], -VGG_MEAN_BGR.astype(numpy.float64), rtol=1e-6)


test_prepare_bad_input = bad_input_test(
    [
        (([[1, 2], [3, 4]],), TypeError, "prepare: expected image to be a numpy.ndarray"),
        ((numpy.zeros((2, 4, 4, 3), numpy.uint8),), ValueError, "got shape (2, 4, 4, 3)"),
        ((numpy.zeros((4, 4, 5), numpy.uint8),), ValueError, "got shape (4, 4, 5)"),
    ],
    function=prepare,
)
