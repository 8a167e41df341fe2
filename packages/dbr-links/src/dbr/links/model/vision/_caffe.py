"""The published Caffe models' layer names, for copying their weights into the vision links.

Each ``transfer_*`` function copies the arrays of a :class:`~dbr.links.caffe.CaffeFunction`
read from the published ``.caffemodel`` into a model of the same architecture,
checking that every layer is there with the expected shape.
"""

from dbr.core import Link


def _source(caffe, layer, owner):
    link = getattr(caffe, layer, None) if layer in caffe.forwards else None
    if not isinstance(link, Link):
        raise ValueError(
            f"{owner}: {caffe._path}: expected a layer {layer!r} with parameters in the "
            f"caffemodel (as the published model has), found none"
        )
    return link


def copy(caffe, owner, pairs):
    """Copy ``(destination array, Caffe layer name, attribute path)`` triples, shapes checked."""
    for target, layer, path in pairs:
        value = _source(caffe, layer, owner)
        for name in path.split("."):
            value = getattr(value, name)
        value = getattr(value, "array", value)
        if value.shape != target.shape:
            raise ValueError(
                f"{owner}: {caffe._path}: layer {layer!r} {path}: expected shape "
                f"{target.shape}, got {value.shape}"
            )
        target[...] = value


def _conv_pairs(link, layer, bias=True):
    pairs = [(link.W.array, layer, "W")]
    if bias:
        pairs.append((link.b.array, layer, "b"))
    return pairs


def transfer_vgg(model, caffe, owner):
    """VGG's layers have the names of the published VGG_ILSVRC_{16,19}_layers models."""
    pairs = []
    for name, child in model.namedlinks(skipself=True):
        pairs += _conv_pairs(child, name.lstrip("/"))
    copy(caffe, owner, pairs)


def _bn_pairs(conv, bn, conv_layer, suffix, conv_bias=False):
    return _conv_pairs(conv, conv_layer, conv_bias) + [
        (bn.avg_mean, f"bn{suffix}", "avg_mean"),
        (bn.avg_var, f"bn{suffix}", "avg_var"),
        (bn.gamma.array, f"scale{suffix}", "W"),
        (bn.beta.array, f"scale{suffix}", "bias.b"),
    ]


_RESNET_BLOCK_NAMES = {
    50: (["2a", "2b", "2c"], ["3a", "3b", "3c", "3d"], [f"4{c}" for c in "abcdef"],
         ["5a", "5b", "5c"]),
    101: (["2a", "2b", "2c"], ["3a", "3b1", "3b2", "3b3"],
          ["4a"] + [f"4b{i}" for i in range(1, 23)], ["5a", "5b", "5c"]),
    152: (["2a", "2b", "2c"], ["3a"] + [f"3b{i}" for i in range(1, 8)],
          ["4a"] + [f"4b{i}" for i in range(1, 36)], ["5a", "5b", "5c"]),
}  # fmt: skip


def transfer_resnet(model, caffe, owner, n_layers):
    """ResNet's layers have the names of MSRA's published ResNet-{50,101,152}-model files."""
    pairs = _bn_pairs(model.conv1, model.bn1, "conv1", "_conv1", conv_bias=n_layers == 50)
    stages = (model.res2, model.res3, model.res4, model.res5)
    for stage, names in zip(stages, _RESNET_BLOCK_NAMES[n_layers]):
        for i, name in enumerate(names):
            block = stage.a if i == 0 else getattr(stage, f"b{i}")
            branches = ("2a", "2b", "2c", "1") if i == 0 else ("2a", "2b", "2c")
            for k, branch in enumerate(branches, 1):
                conv, bn = getattr(block, f"conv{k}"), getattr(block, f"bn{k}")
                pairs += _bn_pairs(conv, bn, f"res{name}_branch{branch}", f"{name}_branch{branch}")
    pairs += _conv_pairs(model.fc6, "fc1000")
    copy(caffe, owner, pairs)


_INCEPTION_NAMES = (("conv1", "1x1"), ("proj3", "3x3_reduce"), ("conv3", "3x3"),
                    ("proj5", "5x5_reduce"), ("conv5", "5x5"), ("projp", "pool_proj"))  # fmt: skip
_GOOGLENET_NAMES = (
    ("conv1", "conv1/7x7_s2"), ("conv2_reduce", "conv2/3x3_reduce"), ("conv2", "conv2/3x3"),
    ("loss1_conv", "loss1/conv"), ("loss1_fc1", "loss1/fc"), ("loss1_fc2", "loss1/classifier"),
    ("loss2_conv", "loss2/conv"), ("loss2_fc1", "loss2/fc"), ("loss2_fc2", "loss2/classifier"),
    ("loss3_fc", "loss3/classifier"),
)  # fmt: skip


def transfer_googlenet(model, caffe, owner):
    """GoogLeNet's layers have the names of BVLC's published bvlc_googlenet model."""
    pairs = []
    for child, layer in _GOOGLENET_NAMES:
        pairs += _conv_pairs(getattr(model, child), layer)
    for name in ("3a", "3b", "4a", "4b", "4c", "4d", "4e", "5a", "5b"):
        inception = getattr(model, f"inc{name}")
        for child, suffix in _INCEPTION_NAMES:
            pairs += _conv_pairs(getattr(inception, child), f"inception_{name}/{suffix}")
    copy(caffe, owner, pairs)
