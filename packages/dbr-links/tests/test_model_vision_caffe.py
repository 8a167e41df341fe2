"""The pretrained vision links read Caffe models: VGG-16- and ResNet-50-shaped, random weights.

fixtures/caffe_nets.py writes the files (the checksum says they are the bytes
Chainer read); fixtures/caffe_pretrained_chainer.npz holds the features
Chainer 7.8.1's links computed after its ``convert_caffemodel_to_npz``.
"""

import os

import caffe_nets
import numpy
import pytest

from dbr.core import no_backprop_mode, using_config
from dbr.links import GoogLeNet, ResNet50Layers, VGG16Layers
from dbr.links.model.vision import resnet

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
CHAINER = numpy.load(os.path.join(FIXTURES, "caffe_pretrained_chainer.npz"))

CASES = {
    "vgg16": (caffe_nets.write_vgg16, VGG16Layers, "VGG_ILSVRC_16_layers", (224, 224),
              ["pool5", "fc7"]),
    "resnet50": (caffe_nets.write_resnet50, ResNet50Layers, "ResNet-50-model", (64, 64),
                 ["res4", "pool5"]),
}  # fmt: skip


def _extract(model, key, size, layers):
    images = list(CHAINER[f"{key}/images"])
    with using_config("train", False), no_backprop_mode():
        return model.extract(images, layers=layers, size=size)


def _check(features, key, layers):
    for name in layers:
        expected = CHAINER[f"{key}/{name}"]
        scale = numpy.abs(expected).max()
        numpy.testing.assert_allclose(
            features[name].array, expected, rtol=1e-4, atol=1e-5 * scale, err_msg=name
        )


@pytest.mark.parametrize("key", sorted(CASES))
def test_auto_converts_the_caffemodel_and_extract_gives_chainers_features(
    key, tmp_path, monkeypatch
):
    write, cls, stem, size, layers = CASES[key]
    caffemodel = tmp_path / f"{stem}.caffemodel"
    assert write(caffemodel) == str(CHAINER[f"{key}/sha256"])
    monkeypatch.setenv("DBR_MODEL_ROOT", str(tmp_path))
    model = cls()  # 'auto': no npz yet, so the caffemodel is converted and the npz saved
    _check(_extract(model, key, size, layers), key, layers)
    del model
    caffemodel.unlink()
    assert sorted(os.listdir(tmp_path)) == [f"{stem}.npz"]
    again = cls()  # 'auto' now loads the npz
    _check(_extract(again, key, size, layers), key, layers)


def test_convert_caffemodel_to_npz_and_a_caffemodel_path(tmp_path):
    write, cls, stem, size, layers = CASES["resnet50"]
    caffemodel = tmp_path / f"{stem}.caffemodel"
    write(caffemodel)
    npz = tmp_path / "converted.npz"
    ResNet50Layers.convert_caffemodel_to_npz(caffemodel, npz)
    _check(_extract(ResNet50Layers(pretrained_model=str(npz)), "resnet50", size, layers),
           "resnet50", layers)  # fmt: skip
    direct = ResNet50Layers(pretrained_model=str(caffemodel))
    _check(_extract(direct, "resnet50", size, layers), "resnet50", layers)
    assert sorted(os.listdir(tmp_path)) == sorted([caffemodel.name, "converted.npz"])
    with pytest.raises(ValueError, match=r"expected n_layers=50 \(the class's depth\)"):
        ResNet50Layers.convert_caffemodel_to_npz(caffemodel, npz, n_layers=101)
    with pytest.raises(ValueError, match=r"expected a layer 'res3b1_branch2a' with parameters"):
        resnet.ResNetLayers.convert_caffemodel_to_npz(caffemodel, npz, n_layers=101)


def test_a_caffemodel_of_another_network_is_refused_by_layer_name(tmp_path):
    caffemodel = tmp_path / "vgg.caffemodel"
    caffe_nets.write(caffemodel, caffe_nets.resnet50_layers(0)[:4], v1=False)
    with pytest.raises(
        ValueError,
        match=r"GoogLeNet: .*vgg.caffemodel: expected a layer "
        r"'conv1/7x7_s2' with parameters in the caffemodel",
    ):
        GoogLeNet(pretrained_model=str(caffemodel))


def test_auto_names_both_files_when_neither_is_there(tmp_path, monkeypatch):
    monkeypatch.setenv("DBR_MODEL_ROOT", str(tmp_path))
    with pytest.raises(FileNotFoundError) as info:
        GoogLeNet()
    message = str(info.value)
    assert os.path.join(str(tmp_path), "bvlc_googlenet.npz") in message
    assert os.path.join(str(tmp_path), "bvlc_googlenet.caffemodel") in message
    assert "dbr does not download weights" in message
