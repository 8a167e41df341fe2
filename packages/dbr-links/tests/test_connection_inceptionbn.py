import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, initializers, using_config
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_backward_clear_of_kinks,
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.functions.activation.relu import ReLU
from dbr.links.connection.inceptionbn import InceptionBN

BN_NAMES = ("conv1n", "proj3n", "conv3n", "proj33n", "conv33an", "conv33bn", "poolpn")


def _param_names(norms):
    """The sorted parameter paths of the branches whose batch normalizations are ``norms``.

    Each branch is a convolution without bias (``W``), named as its
    normalization without the trailing ``n``, and a normalization (``beta``,
    ``gamma``).
    """
    names = [f"/{bn[:-1]}/W" for bn in norms]
    names += [f"/{bn}/{name}" for bn in norms for name in ("beta", "gamma")]
    return sorted(names)


# (positional args, keyword args, output channels)
CONFIGS = [
    ((3, 2, 2, 3, 2, 3, "max"), {"proj_pool": 2}, 10),
    ((3, 2, 2, 3, 2, 3, "avg"), {"proj_pool": 2}, 10),
    ((3, 0, 2, 3, 2, 3, "max"), {"stride": 2}, 9),
    ((3, 0, 2, 3, 2, 3, "avg"), {"proj_pool": 2, "stride": 2}, 8),
]
CONFIG_IDS = ["max-full", "avg-full", "max-stride2", "avg-stride2-proj"]


def _randomize(link, seed=0):
    """Give every gamma, beta and running statistic a random value."""
    rng = numpy.random.RandomState(seed)
    for _, sub in link.namedlinks(skipself=True):
        if hasattr(sub, "avg_mean"):
            sub.gamma.array[...] = rng.uniform(0.5, 1.5, sub.gamma.shape)
            sub.beta.array[...] = rng.uniform(-0.5, 0.5, sub.beta.shape)
            sub.avg_mean[...] = rng.uniform(-0.5, 0.5, sub.avg_mean.shape)
            sub.avg_var[...] = rng.uniform(0.5, 1.5, sub.avg_var.shape)


def _reference(link, x, train):
    """The InceptionBN output written as a composition of dbr.functions calls."""
    stride = link.stride

    def conv_bn_relu(conv_name, bn_name, h, stride=1, pad=0):
        conv, bn = getattr(link, conv_name), getattr(link, bn_name)
        h = F.convolution_2d(h, conv.W.array, None, stride=stride, pad=pad)
        gamma, beta = bn.gamma.array, bn.beta.array
        if train:
            h = F.batch_normalization(h, gamma, beta, eps=2e-5)
        else:
            h = F.fixed_batch_normalization(h, gamma, beta, bn.avg_mean, bn.avg_var, eps=2e-5)
        return F.relu(h)

    outs = []
    if link.out1 > 0:
        outs.append(conv_bn_relu("conv1", "conv1n", x))
    h3 = conv_bn_relu("proj3", "proj3n", x)
    outs.append(conv_bn_relu("conv3", "conv3n", h3, stride, 1))
    h33 = conv_bn_relu("proj33", "proj33n", x)
    h33 = conv_bn_relu("conv33a", "conv33an", h33, 1, 1)
    outs.append(conv_bn_relu("conv33b", "conv33bn", h33, stride, 1))
    if link.pooltype == "max":
        p = F.max_pooling_2d(x, 3, stride=stride, pad=1, cover_all=False)
    else:
        p = F.average_pooling_2d(x, 3, stride=stride, pad=1)
    if link.proj_pool is not None:
        p = conv_bn_relu("poolp", "poolpn", p)
    outs.append(p)
    return F.concat(outs, axis=1).array


def _running_stats(link):
    return {
        name: (sub.avg_mean.copy(), sub.avg_var.copy())
        for name, sub in link.namedlinks(skipself=True)
        if hasattr(sub, "avg_mean")
    }


def test_param_and_persistent_names():
    link = InceptionBN(3, 2, 2, 3, 2, 3, "max", proj_pool=2)
    assert param_names(link) == _param_names(BN_NAMES)
    assert persistent_names(link) == [
        f"/{bn}/{name}" for bn in sorted(BN_NAMES) for name in ("N", "avg_mean", "avg_var")
    ]
    shapes = {name: p.shape for name, p in link.namedparams() if name.endswith("/W")}
    assert shapes == {
        "/conv1/W": (2, 3, 1, 1),
        "/proj3/W": (2, 3, 1, 1),
        "/conv3/W": (3, 2, 3, 3),
        "/proj33/W": (2, 3, 1, 1),
        "/conv33a/W": (3, 2, 3, 3),
        "/conv33b/W": (3, 3, 3, 3),
        "/poolp/W": (2, 3, 1, 1),
    }
    assert link.conv3.stride == (1, 1)


def test_optional_branches_and_attributes():
    link = InceptionBN(3, 0, 2, 3, 2, 3, "avg", stride=2)
    assert (link.out1, link.proj_pool, link.stride, link.pooltype) == (0, None, 2, "avg")
    assert param_names(link) == _param_names(set(BN_NAMES) - {"conv1n", "poolpn"})
    assert link.conv3.stride == (2, 2) and link.conv33b.stride == (2, 2)
    assert link.conv33a.stride == (1, 1)
    assert not hasattr(link, "conv1") and not hasattr(link, "poolp")


def test_keyword_form_conv_init_and_dtype():
    link = InceptionBN(
        in_channels=3,
        out1=2,
        proj3=2,
        out3=3,
        proj33=2,
        out33=3,
        pooltype="max",
        proj_pool=2,
        stride=1,
        conv_init=initializers.One(),
        dtype=numpy.float64,
    )
    for name, param in link.namedparams():
        if name.endswith("/W"):
            numpy.testing.assert_array_equal(param.array, numpy.ones(param.shape), name)
            assert param.dtype == numpy.float32, name
        else:
            assert param.dtype == numpy.float64, name
    assert link.conv33bn.avg_mean.dtype == numpy.float64
    positional = InceptionBN(3, 0, 2, 3, 2, 3, "avg", None, 2, initializers.Zero(), numpy.float16)
    numpy.testing.assert_array_equal(positional.conv33b.W.array, numpy.zeros((3, 3, 3, 3)))
    assert positional.conv3.stride == (2, 2)
    assert positional.proj3n.gamma.dtype == numpy.float16


def test_default_dtype_follows_config():
    link = make_link(InceptionBN, numpy.float64, 3, 0, 2, 3, 2, 3, "max")
    assert link.proj3n.gamma.dtype == numpy.float64
    assert link.proj3.W.dtype == numpy.float64


def test_lazy_in_channels():
    link = InceptionBN(None, 2, 2, 3, 2, 3, "max", proj_pool=2)
    for name in ("conv1", "proj3", "proj33", "poolp"):
        assert getattr(link, name).W.array is None, name
    assert link.conv33b.W.shape == (3, 3, 3, 3)
    x = numpy.random.uniform(-1, 1, (2, 4, 5, 5)).astype(numpy.float32)
    y = link(x)
    for name in ("conv1", "proj3", "proj33", "poolp"):
        assert getattr(link, name).W.shape[1:] == (4, 1, 1), name
    assert y.shape == (2, 10, 5, 5)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("args, kwargs, channels", CONFIGS, ids=CONFIG_IDS)
def test_forward_train(dtype, args, kwargs, channels):
    link = make_link(InceptionBN, dtype, *args, **kwargs)
    _randomize(link)
    before = _running_stats(link)
    x = numpy.random.uniform(-1, 1, (3, 3, 5, 6)).astype(dtype)
    expected = _reference(link, x, train=True)
    with using_config("train", True):
        y = link(x)
    stride = link.stride
    assert y.shape == (3, channels, (5 - 1) // stride + 1, (6 - 1) // stride + 1)
    assert y.dtype == dtype
    assert_allclose(y.array, expected, **tolerances(dtype))
    after = _running_stats(link)
    for name, (mean, var) in before.items():
        assert not numpy.array_equal(after[name][0], mean), name
        assert not numpy.array_equal(after[name][1], var), name


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("args, kwargs, channels", CONFIGS, ids=CONFIG_IDS)
def test_forward_test_mode(dtype, args, kwargs, channels):
    link = make_link(InceptionBN, dtype, *args, **kwargs)
    _randomize(link)
    before = _running_stats(link)
    x = numpy.random.uniform(-1, 1, (2, 3, 5, 5)).astype(dtype)
    with using_config("train", False):
        y = link(x)
    assert y.shape[1] == channels
    assert_allclose(y.array, _reference(link, x, train=False), **tolerances(dtype))
    after = _running_stats(link)
    for name, (mean, var) in before.items():
        numpy.testing.assert_array_equal(after[name][0], mean, name)
        numpy.testing.assert_array_equal(after[name][1], var, name)


def test_train_and_test_modes_differ():
    link = InceptionBN(3, 2, 2, 3, 2, 3, "max", proj_pool=2)
    _randomize(link)
    x = numpy.random.uniform(-1, 1, (2, 3, 4, 4)).astype(numpy.float32)
    with using_config("train", False):
        y_test = link(x).array
    with using_config("train", True):
        y_train = link(x).array
    assert not numpy.allclose(y_test, y_train)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("args, kwargs, channels", CONFIGS[::3], ids=CONFIG_IDS[::3])
def test_backward(dtype, args, kwargs, channels):
    numpy.random.seed(3)
    link = make_link(InceptionBN, dtype, *args, **kwargs)
    _randomize(link)
    size = (4 - 1) // link.stride + 1

    def draw():
        # Well separated values keep max pooling away from ties.
        x = numpy.random.permutation(3 * 3 * 4 * 4).reshape(3, 3, 4, 4) / 16.0 - 2
        gy = numpy.random.uniform(-1, 1, (3, channels, size, size))
        return x.astype(dtype), gy.astype(dtype)

    # The ReLUs after the batch normalizations: inputs putting one's kink within a step
    # are redrawn.
    with using_config("train", True):
        check_backward_clear_of_kinks(draw, link, link.params(), dtype, kinked=(ReLU,))


def test_round_trip_and_copy():
    link = InceptionBN(3, 2, 2, 3, 2, 3, "max", proj_pool=2)
    _randomize(link)
    with using_config("train", True):
        link(numpy.random.uniform(-1, 1, (2, 3, 4, 4)).astype(numpy.float32))
    check_round_trip(link, InceptionBN(3, 2, 2, 3, 2, 3, "max", proj_pool=2))
    check_round_trip(link, InceptionBN(None, 2, 2, 3, 2, 3, "max", proj_pool=2))
    check_copy_modes(link)


_INCEPTIONBN = InceptionBN(3, 2, 2, 3, 2, 3, "max", proj_pool=2)

test_bad_input = bad_input_test(
    [
        (
            _INCEPTIONBN,
            (numpy.zeros((2, 4, 3, 3), numpy.float32),),
            {},
            InvalidType,
            "x.shape[1] == W.shape[1]",
        ),
        (
            _INCEPTIONBN,
            (numpy.zeros((2, 3, 3, 3), numpy.int32),),
            {},
            InvalidType,
            "x.dtype.kind == 'f'",
        ),
    ]
    + [
        (args, kwargs, ValueError, "InceptionBN: " + message)
        for args, kwargs, message in [
            (
                (3, 2, 2, 3, 2, 3, "min"),
                {"proj_pool": 2},
                "pooltype must be 'max' or 'avg', got 'min'",
            ),
            (
                (3, 2, 2, 3, 2, 3, "max"),
                {"proj_pool": 2, "stride": 2},
                "stride must be 1 when out1",
            ),
            ((3, 2, 2, 3, 2, 3, "max"), {}, "proj_pool must be given when out1 > 0, got None"),
            ((3, -1, 2, 3, 2, 3, "max"), {}, "out1 must be a non-negative int, got -1"),
            ((3, 0, 0, 3, 2, 3, "max"), {}, "proj3 must be a positive int, got 0"),
            (
                (3, 0, 2, 3, 2, 3, "max"),
                {"proj_pool": 0},
                "proj_pool must be a positive int, got 0",
            ),
            ((3, 0, 2, 3, 2, 3, "max"), {"stride": 0}, "stride must be a positive int, got 0"),
        ]
    ],
    function=InceptionBN,
)


@pytest.mark.parametrize(
    "args, kwargs, chainer_error",
    [
        ((3, 2, 2, 3, 2, 3, "min"), {"proj_pool": 2}, NotImplementedError),
        ((3, 2, 2, 3, 2, 3, "avg"), {}, AssertionError),
        ((3, 2, 2, 3, 2, 3, "max"), {"proj_pool": 2, "stride": 2}, AssertionError),
    ],
)
@pytest.mark.parametrize("as_chainer", [False, True])
def test_bad_architecture_raises_chainer_error_types(args, kwargs, chainer_error, as_chainer):
    with pytest.raises(chainer_error if as_chainer else ValueError, match=r"^InceptionBN: "):
        InceptionBN(*args, **kwargs)
