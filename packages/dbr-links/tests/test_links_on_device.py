"""Every public link on every test device, against the same link on the CPU.

Each case of :data:`CASES` builds a link on the CPU from a fixed seed; the
test copies it (``copy('copy')``), moves the copy to the device and runs both
on the same inputs (float inputs as Variables, so that their gradients are
compared too): outputs, the gradient of every parameter and input after a
backward from the same output gradients, persistent values (running
statistics) after training-mode calls, and a ``save_npz`` of the device link
loaded into a blank CPU copy. Stateful links are stepped once on the CPU
before the move (so that ``to_device`` must carry their state) and three
times after. On ``'@numpy'`` the test checks the copy/``to_device``
plumbing; on ``'@cupy:0'`` (marked ``gpu``) it compares the GPU with NumPy.
"""

import contextlib
import dataclasses
import io
from collections.abc import Callable

import numpy
import pytest

import dbr.links as L
from dbr.core import Link, Variable, backend, backward, initializers, using_config
from dbr.core.serializers import load_npz, save_npz
from dbr.core.serializers.base import AbstractSerializer
from dbr.core.testing import DEVICES, assert_allclose, get_test_device


def _floats(rng, *shape, dtype=numpy.float32):
    return rng.uniform(-1, 1, shape).astype(dtype)


def _ints(rng, high, *shape):
    return rng.randint(0, high, shape).astype(numpy.int32)


class _FixedSampler:
    """A stand-in for a loss link's WalkerAlias that returns preset samples on its device.

    NegativeSampling and BlackOut draw negatives with their device's random
    module, which differs between NumPy and CuPy; presetting the samples
    makes the CPU and device losses comparable. ``WalkerAlias`` itself is
    tested on the device in :func:`test_walker_alias_on_device`.
    """

    def __init__(self, samples):
        self.samples = samples
        self.device = backend.cpu

    def to_device(self, device):
        self.device = backend.get_device(device)
        return self

    def sample(self, shape):
        assert tuple(shape) == self.samples.shape
        return self.device.send(self.samples.copy())


def _with_sampler(link, samples):
    link.sampler = _FixedSampler(numpy.asarray(samples, numpy.int32))
    return link


@dataclasses.dataclass(frozen=True)
class Case:
    """How to build, call and compare one link.

    Attributes:
        make: builds the link on the CPU (called with NumPy's global seed fixed).
        inputs: ``inputs(rng)`` gives the positional arguments of one call, as
            NumPy arrays (float arrays become Variables), lists, tuples or None.
        call: ``call(link, *args)`` gives the outputs (Variables or arrays,
            nested in tuples, lists or dicts); defaults to ``link(*args)``.
        modes: the values of ``config.train`` to run, in order.
        steps: calls per mode (stateful links are also stepped once before the move).
        atol, rtol: tolerances; ``atol`` is scaled by the largest expected magnitude.
        shared: the key under which the link is built once per module
            (large vision models), or None to build it for each test.
    """

    make: Callable[[], Link]
    inputs: Callable
    call: Callable | None = None
    modes: tuple = (True,)
    steps: int = 1
    atol: float = 1e-5
    rtol: float = 1e-3
    shared: str | None = None


def _in_float64(cls, *args, **kwargs):
    with using_config("dtype", numpy.float64):
        return cls(*args, **kwargs)


def _vision_case(name, size, layers, atol=1e-4, rtol=1e-2):
    """A vision model of ``L.<name>`` without pretrained weights, in test mode only.

    One ``size`` by ``size`` image goes in; ``layers`` are the outputs compared.
    The model is built once per module.
    """
    return Case(
        lambda: getattr(L, name)(pretrained_model=None),
        lambda r: (_floats(r, 1, 3, size, size),),
        call=lambda link, x: link(x, layers=layers),
        modes=(False,),
        atol=atol,
        rtol=rtol,
        shared=name,
    )


def _lstm_state_inputs(rng, size=3, batch=2):
    return (_floats(rng, batch, size), _floats(rng, batch, size))


def _nstep_inputs(rng, n_states, directions, in_size=3, out_size=2, lengths=(3, 1, 2)):
    states = tuple(_floats(rng, 2 * directions, len(lengths), out_size) for _ in range(n_states))
    return (*states, [_floats(rng, n, in_size) for n in lengths])


_TREE = ((0, 1), ((2, 3), 4))
_COUNTS = [3, 1, 4, 1, 5, 9]
_BOTH = (True, False)

CASES = {
    # activation
    "Maxout": Case(lambda: L.Maxout(3, 2, 4), lambda r: (_floats(r, 4, 3),)),
    "PReLU": Case(lambda: L.PReLU((3,), initializers.Normal(1.0)), lambda r: (_floats(r, 4, 3),)),
    "Swish": Case(lambda: L.Swish((3,), 1.5), lambda r: (_floats(r, 4, 3),)),
    # connection
    "Bias": Case(lambda: L.Bias(1, (3,)), lambda r: (_floats(r, 2, 3, 4),)),
    "Bilinear": Case(
        lambda: L.Bilinear(2, 3, 4, initial_bias=(None, None, initializers.Normal(1.0))),
        lambda r: (_floats(r, 5, 2), _floats(r, 5, 3)),
    ),
    "Convolution1D": Case(
        lambda: L.Convolution1D(2, 3, 3, pad=1), lambda r: (_floats(r, 2, 2, 7),)
    ),
    "Convolution2D": Case(
        lambda: L.Convolution2D(4, 6, 3, 2, 1, initial_bias=initializers.Normal(1.0), groups=2),
        lambda r: (_floats(r, 2, 4, 7, 6),),
    ),
    "Convolution2D-dilate": Case(
        lambda: L.Convolution2D(3, 4, 3, dilate=2), lambda r: (_floats(r, 2, 3, 7, 7),)
    ),
    "Convolution3D": Case(
        lambda: L.Convolution3D(2, 3, 2, stride=(1, 2, 1)), lambda r: (_floats(r, 2, 2, 4, 5, 3),)
    ),
    "ConvolutionND": Case(
        lambda: L.ConvolutionND(2, 2, 4, 3, 2, 1, cover_all=True),
        lambda r: (_floats(r, 2, 2, 6, 5),),
    ),
    "Deconvolution1D": Case(
        lambda: L.Deconvolution1D(2, 3, 3, stride=2), lambda r: (_floats(r, 2, 2, 5),)
    ),
    "Deconvolution2D": Case(
        lambda: L.Deconvolution2D(4, 6, 3, 2, 1, initial_bias=initializers.Normal(1.0), groups=2),
        lambda r: (_floats(r, 2, 4, 4, 3),),
    ),
    "Deconvolution3D": Case(
        lambda: L.Deconvolution3D(2, 3, 2, stride=2), lambda r: (_floats(r, 1, 2, 3, 2, 3),)
    ),
    "DeconvolutionND": Case(
        lambda: L.DeconvolutionND(2, 3, 2, 3, 2, 1, outsize=(8, 6)),
        lambda r: (_floats(r, 2, 3, 4, 3),),
    ),
    "DeformableConvolution2D": Case(
        lambda: L.DeformableConvolution2D(
            2, 3, 3, 1, 1, offset_initialW=initializers.Normal(0.3), deform_initial_bias=0.5
        ),
        lambda r: (_floats(r, 2, 2, 5, 4),),
    ),
    "DepthwiseConvolution2D": Case(
        lambda: L.DepthwiseConvolution2D(3, 2, 3, 1, 1, initial_bias=initializers.Normal(1.0)),
        lambda r: (_floats(r, 2, 3, 5, 4),),
    ),
    "DilatedConvolution2D": Case(
        lambda: L.DilatedConvolution2D(3, 2, 3, 1, 2, 2), lambda r: (_floats(r, 2, 3, 6, 5),)
    ),
    "EmbedID": Case(
        lambda: L.EmbedID(5, 3, ignore_label=-1),
        lambda r: (numpy.array([[0, 4, -1], [2, 2, 1]], numpy.int32),),
    ),
    "Highway": Case(lambda: L.Highway(3), lambda r: (_floats(r, 4, 3),)),
    "Inception": Case(
        lambda: L.Inception(3, 2, 2, 3, 2, 3, 2), lambda r: (_floats(r, 2, 3, 5, 5),)
    ),
    "InceptionBN": Case(
        lambda: L.InceptionBN(3, 2, 2, 3, 2, 3, "max", proj_pool=2),
        lambda r: (_floats(r, 3, 3, 5, 5),),
        modes=_BOTH,
    ),
    "InceptionBN-avg-stride2": Case(
        lambda: L.InceptionBN(3, 0, 2, 3, 2, 3, "avg", stride=2),
        lambda r: (_floats(r, 3, 3, 5, 5),),
        modes=_BOTH,
    ),
    "Linear": Case(
        lambda: L.Linear(3, 2, initial_bias=initializers.Normal(1.0)),
        lambda r: (_floats(r, 4, 3),),
    ),
    "Linear-float64": Case(
        lambda: _in_float64(L.Linear, 3, 2, initial_bias=initializers.Normal(1.0)),
        lambda r: (_floats(r, 4, 3, dtype=numpy.float64),),
        atol=1e-12,
        rtol=1e-10,
    ),
    "LocalConvolution2D": Case(
        lambda: L.LocalConvolution2D(2, 3, (5, 4), 2, initial_bias=initializers.Normal(1.0)),
        lambda r: (_floats(r, 2, 2, 5, 4),),
    ),
    "MLPConvolution2D": Case(
        lambda: L.MLPConvolution2D(3, (4, 5, 2), 3, pad=1), lambda r: (_floats(r, 2, 3, 4, 4),)
    ),
    "Parameter": Case(lambda: L.Parameter(_floats(numpy.random, 2, 3)), lambda r: ()),
    "Scale": Case(lambda: L.Scale(1, (3,), True, (3,)), lambda r: (_floats(r, 2, 3, 4),)),
    "SimplifiedDropconnect": Case(
        lambda: L.SimplifiedDropconnect(3, 2, 0.5, initial_bias=initializers.Normal(1.0)),
        lambda r: (_floats(r, 4, 3), r.uniform(size=(4, 2, 3)) >= 0.5),
        call=lambda link, x, mask: link(x, train=True, mask=mask),
    ),
    # loss
    "BinaryHierarchicalSoftmax": Case(
        lambda: L.BinaryHierarchicalSoftmax(3, _TREE),
        lambda r: (_floats(r, 4, 3), numpy.array([0, 4, 2, 3], numpy.int32)),
    ),
    "BlackOut": Case(
        lambda: _with_sampler(L.BlackOut(3, _COUNTS, 2), [[1, 5], [0, 2], [3, 3], [4, 1]]),
        lambda r: (_floats(r, 4, 3), numpy.array([0, 5, 2, 3], numpy.int32)),
    ),
    "CRF1d": Case(
        lambda: L.CRF1d(3, initial_cost=initializers.Normal(1.0)),
        # Positions of 3, 2 and 1 sequences (lengths 3, 2, 1), as F.crf1d takes them.
        lambda r: (
            [_floats(r, 3, 3), _floats(r, 2, 3), _floats(r, 1, 3)],
            [_ints(r, 3, 3), _ints(r, 3, 2), _ints(r, 3, 1)],
        ),
        call=lambda link, xs, ys: (link(xs, ys), link.argmax(xs)),
    ),
    "CRF1d-transpose": Case(
        lambda: L.CRF1d(3, initial_cost=initializers.Normal(1.0)),
        lambda r: ([_floats(r, 2, 3), _floats(r, 4, 3)], [_ints(r, 3, 2), _ints(r, 3, 4)]),
        call=lambda link, xs, ys: link(xs, ys, reduce="no", transpose=True),
    ),
    "NegativeSampling": Case(
        lambda: _with_sampler(
            L.NegativeSampling(3, _COUNTS, 2), [[0, 1, 5], [0, 0, 2], [0, 3, 3]]
        ),
        lambda r: (_floats(r, 3, 3), numpy.array([0, 5, 2], numpy.int32)),
        call=lambda link, x, t: (link(x, t), link(x, t, reduce="no")),
    ),
    # model
    "Classifier": Case(
        lambda: L.Classifier(L.Linear(4, 3)),
        lambda r: (_floats(r, 5, 4), _ints(r, 3, 5)),
        call=lambda link, x, t: (link(x, t), link.accuracy.array),
    ),
    # cuDNN and im2col sum in other orders, and the few ReLU inputs within rounding of 0
    # then switch sides: a handful of filter gradients move by about 1e-4 of the largest.
    "GoogLeNet": _vision_case("GoogLeNet", 32, ["inception_3b", "inception_5b"], atol=3e-4),
    "ResNet50Layers": _vision_case("ResNet50Layers", 32, ["res3", "prob"]),
    # In training mode, batch statistics need several values per channel: res5 of a 32x32
    # image has one per sample, so the batch stops at res4 (2x2). Through 40-odd batch
    # normalizations of 8 values each, the input's gradient grows to hundreds and float32
    # rounding (which differs between cuDNN and im2col) to 10% of it: float64 here.
    "ResNet50Layers-train": Case(
        lambda: _in_float64(L.ResNet50Layers, pretrained_model=None),
        lambda r: (_floats(r, 2, 3, 32, 32, dtype=numpy.float64),),
        call=lambda link, x: link(x, layers=["res4"]),
        atol=1e-9,
        rtol=1e-7,
        shared="ResNet50Layers-float64",
    ),
    "ResNet101Layers": _vision_case("ResNet101Layers", 16, ["prob"]),
    "ResNet152Layers": _vision_case("ResNet152Layers", 16, ["prob"]),
    # fc6 takes 224x224 images; a small image stops at pool5, leaving fc6-fc8 without gradients.
    "VGG16Layers": _vision_case("VGG16Layers", 32, ["conv3_3", "pool5"], rtol=1e-3),
    "VGG19Layers": _vision_case("VGG19Layers", 32, ["pool5"], rtol=1e-3),
    # normalization
    "BatchNormalization": Case(
        lambda: L.BatchNormalization(3, initial_gamma=initializers.Normal(1.0)),
        lambda r: (_floats(r, 5, 3, 2),),
        modes=_BOTH,
        steps=2,
    ),
    "BatchNormalization-finetune": Case(
        lambda: L.BatchNormalization((2, 3), axis=(0, 3)),
        lambda r: (_floats(r, 4, 2, 3, 2),),
        call=lambda link, x: link(x, finetune=True),
        modes=_BOTH,
        steps=2,
    ),
    "BatchRenormalization": Case(
        lambda: L.BatchRenormalization(
            3, rmax=1.5, dmax=0.3, initial_gamma=initializers.Normal(1.0)
        ),
        lambda r: (_floats(r, 5, 3),),
        modes=_BOTH,
        steps=2,
    ),
    "DecorrelatedBatchNormalization": Case(
        lambda: L.DecorrelatedBatchNormalization(4, groups=2),
        lambda r: (_floats(r, 6, 4, 3),),
        modes=_BOTH,
        steps=2,
        atol=1e-4,
        rtol=1e-2,
    ),
    "GroupNormalization": Case(
        lambda: L.GroupNormalization(2, 4, initial_gamma=initializers.Normal(1.0)),
        lambda r: (_floats(r, 3, 4, 2, 2),),
    ),
    "LayerNormalization": Case(
        lambda: L.LayerNormalization(4, initial_gamma=initializers.Normal(1.0)),
        lambda r: (_floats(r, 3, 4),),
    ),
    # rnn: stateless
    "StatelessLSTM": Case(
        lambda: L.StatelessLSTM(4, 3), lambda r: (*_lstm_state_inputs(r), _floats(r, 2, 4))
    ),
    "StatelessGRU": Case(
        lambda: L.StatelessGRU(4, 3), lambda r: (_floats(r, 2, 3), _floats(r, 2, 4))
    ),
    "StatelessMGU": Case(
        lambda: L.StatelessMGU(4, 3), lambda r: (_floats(r, 2, 3), _floats(r, 2, 4))
    ),
    "ChildSumTreeLSTM": Case(
        lambda: L.ChildSumTreeLSTM(4, 3),
        lambda r: (*_lstm_state_inputs(r), *_lstm_state_inputs(r), _floats(r, 2, 4)),
    ),
    "NaryTreeLSTM": Case(
        lambda: L.NaryTreeLSTM(4, 3, 2),
        lambda r: (*_lstm_state_inputs(r), *_lstm_state_inputs(r), _floats(r, 2, 4)),
    ),
    "NStepGRU": Case(
        lambda: L.NStepGRU(2, 3, 2, 0.0), lambda r: _nstep_inputs(r, 1, 1), modes=_BOTH
    ),
    "NStepBiGRU": Case(lambda: L.NStepBiGRU(2, 3, 2, 0.0), lambda r: _nstep_inputs(r, 1, 2)),
    "NStepLSTM": Case(
        lambda: L.NStepLSTM(2, 3, 2, 0.0), lambda r: _nstep_inputs(r, 2, 1), modes=_BOTH
    ),
    "NStepBiLSTM": Case(lambda: L.NStepBiLSTM(2, 3, 2, 0.0), lambda r: _nstep_inputs(r, 2, 2)),
    "NStepRNNTanh": Case(lambda: L.NStepRNNTanh(2, 3, 2, 0.0), lambda r: _nstep_inputs(r, 1, 1)),
    "NStepRNNReLU": Case(lambda: L.NStepRNNReLU(2, 3, 2, 0.0), lambda r: _nstep_inputs(r, 1, 1)),
    "NStepBiRNNTanh": Case(
        lambda: L.NStepBiRNNTanh(2, 3, 2, 0.0), lambda r: _nstep_inputs(r, 1, 2)
    ),
    "NStepBiRNNReLU": Case(
        lambda: L.NStepBiRNNReLU(2, 3, 2, 0.0), lambda r: _nstep_inputs(r, 1, 2)
    ),
    # rnn: stateful
    "LSTM": Case(lambda: L.LSTM(4, 3), lambda r: (_floats(r, 2, 4),), steps=3),
    "GRU": Case(lambda: L.GRU(4, 3), lambda r: (_floats(r, 2, 4),), steps=3),
    "StatefulGRU": Case(lambda: L.StatefulGRU(4, 3), lambda r: (_floats(r, 2, 4),), steps=3),
    "StatefulMGU": Case(lambda: L.StatefulMGU(4, 3), lambda r: (_floats(r, 2, 4),), steps=3),
    "StatefulPeepholeLSTM": Case(
        lambda: L.StatefulPeepholeLSTM(4, 3), lambda r: (_floats(r, 2, 4),), steps=3
    ),
    # Ratio 0 keeps the random draw deterministic (no element zoned out).
    "StatefulZoneoutLSTM": Case(
        lambda: L.StatefulZoneoutLSTM(4, 3, 0.0, 0.0),
        lambda r: (_floats(r, 2, 4),),
        modes=_BOTH,
        steps=3,
    ),
}

_STATE_NAMES = ("c", "h")
_NOT_LINKS = {"WalkerAlias"}  # a sampler, tested by test_walker_alias_on_device


def _public_links():
    return sorted(
        name
        for name in L.__all__
        if isinstance(getattr(L, name), type) and issubclass(getattr(L, name), Link)
    )


def test_every_public_link_has_a_case():
    covered = {name.partition("-")[0] for name in CASES}
    assert covered == set(_public_links())
    classes = {name for name in L.__all__ if isinstance(getattr(L, name), type)}
    assert classes - set(_public_links()) == _NOT_LINKS


@pytest.fixture(scope="module")
def shared_links():
    """The large models of the module, each built once on the CPU."""
    return {}


@contextlib.contextmanager
def _seeded(xp, seed):
    """Seed ``xp.random``; NumPy's global state is restored afterwards."""
    state = numpy.random.get_state() if xp is numpy else None
    xp.random.seed(seed)
    try:
        yield
    finally:
        if state is not None:
            numpy.random.set_state(state)


def _build(name, shared_links):
    case = CASES[name]
    if case.shared in shared_links:
        return shared_links[case.shared]
    with _seeded(numpy, 0):
        link = case.make()
    if case.shared:
        # The tests of one model run one after the other: keep only its copy alive.
        shared_links.clear()
        shared_links[case.shared] = link
    return link


class _Walk(AbstractSerializer):
    """A serializer that passes every value of a link (and its key) through ``visit``."""

    def __init__(self, visit, path=""):
        self.visit = visit
        self.path = path

    def __getitem__(self, key):
        return _Walk(self.visit, f"{self.path}{key.strip('/')}/")

    def __call__(self, key, value):
        return self.visit(self.path + key.lstrip("/"), value)


def _values(link):
    """``{key: value}`` of every parameter array and persistent value, as serialized."""
    values = {}

    def record(key, value):
        values[key] = value
        return value

    link.serialize(_Walk(record))
    return values


def _blank(link):
    """Fill every float array of ``link`` with NaN and zero its other values, in place."""

    def clear(key, value):
        if isinstance(value, numpy.ndarray):
            value[...] = numpy.nan if value.dtype.kind == "f" else 0
            return value
        return type(value)() if isinstance(value, (int, float)) else value

    link.serialize(_Walk(clear))
    return link


def _states(link):
    """The state Variables (``c``, ``h``) that a stateful link holds now."""
    if not hasattr(link, "reset_state"):
        return {}
    states = {name: getattr(link, name, None) for name in _STATE_NAMES}
    return {name: state for name, state in states.items() if state is not None}


def _to_args(value, device, variables):
    """``value`` on ``device``: float arrays become Variables (appended to ``variables``)."""
    if isinstance(value, (list, tuple)):
        return type(value)(_to_args(v, device, variables) for v in value)
    if isinstance(value, numpy.ndarray):
        array = device.send(value.copy())
        if value.dtype.kind == "f":
            array = Variable(array)
            variables.append(array)
        return array
    return value


def _flatten(outputs):
    if isinstance(outputs, dict):
        return [y for key in sorted(outputs) for y in _flatten(outputs[key])]
    if isinstance(outputs, (list, tuple)):
        return [y for item in outputs for y in _flatten(item)]
    return [outputs]


def _assert_close(actual, expected, what, atol=0.0, rtol=0.0):
    if expected is None or actual is None:
        assert actual is None and expected is None, f"{what}: {actual!r} vs {expected!r}"
        return
    expected_host = backend.to_cpu(getattr(expected, "array", expected))
    actual_host = backend.to_cpu(getattr(actual, "array", actual))
    assert actual_host.dtype == expected_host.dtype, what
    assert actual_host.shape == expected_host.shape, what
    if numpy.array_equal(actual_host, expected_host):
        return
    if expected_host.dtype.kind not in "fc":
        numpy.testing.assert_array_equal(actual_host, expected_host, err_msg=what)
    scale = max(1.0, float(numpy.abs(expected_host).max(initial=0.0)))
    try:
        assert_allclose(actual_host, expected_host, atol=atol * scale, rtol=rtol)
    except AssertionError as e:
        raise AssertionError(f"{what}: {e}") from None


def _run(link, case, steps, train, device, grad_rng_seed):
    """Call ``link`` once per step's inputs, then backward from every float output.

    Returns the outputs and the input Variables, in order.
    """
    outputs, variables = [], []
    with using_config("train", train):
        for inputs in steps:
            args = _to_args(inputs, device, variables)
            result = case.call(link, *args) if case.call else link(*args)
            outputs.extend(_flatten(result))
    roots = [y for y in outputs if isinstance(y, Variable) and y.dtype.kind == "f"]
    rng = numpy.random.RandomState(grad_rng_seed)
    grads = [device.send(_floats(rng, *y.shape, dtype=y.dtype)) for y in roots]
    backward(roots, grads)
    return outputs, variables


def _assert_on(device, array, what):
    assert backend.get_device_from_array(array) == device, f"{what} is not on {device}"


def _check_all_on_device(link, device):
    for path, param in link.namedparams():
        if param.array is not None:
            _assert_on(device, param.array, f"parameter {path}")
        if param.grad is not None:
            _assert_on(device, param.grad, f"the gradient of {path}")
    for key, value in _values(link).items():
        if isinstance(value, backend.get_array_types()):
            _assert_on(device, value, key)


@pytest.mark.parametrize("device_spec", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_link_on_device(name, device_spec, shared_links):
    device = get_test_device(device_spec)
    case = CASES[name]
    tol = (case.atol, case.rtol)
    rng = numpy.random.RandomState(1)
    cpu_link = _build(name, shared_links)
    stateful = bool(_states(cpu_link))
    if stateful:
        cpu_link.reset_state()
        with using_config("train", case.modes[0]):
            cpu_link(*case.inputs(rng))
        for state in _states(cpu_link).values():
            state.unchain()

    device_link = cpu_link.copy("copy").to_device(device)
    assert device_link.device == device and device_link.xp is device.xp
    _check_all_on_device(device_link, device)
    for state_name, state in _states(device_link).items():
        assert backend.get_array_module(state) is device.xp, f"state {state_name}"
        _assert_on(device, state.array, f"state {state_name}")

    for seed, train in enumerate(case.modes):
        mode = "train" if train else "test"
        steps = [case.inputs(rng) for _ in range(case.steps)]
        results = []
        for link, on in ((cpu_link, backend.cpu), (device_link, device)):
            link.cleargrads()
            results.append(_run(link, case, steps, train, on, seed))
        (expected, expected_inputs), (actual, actual_inputs) = results
        assert len(actual) == len(expected)
        for i, (y, e) in enumerate(zip(actual, expected)):
            if isinstance(y, Variable):
                _assert_on(device, y.array, f"{mode} output {i}")
            _assert_close(y, e, f"{mode} output {i}", *tol)
        for i, (x, e) in enumerate(zip(actual_inputs, expected_inputs)):
            _assert_close(x.grad, e.grad, f"{mode}: the gradient of input {i}", *tol)
        expected_params = dict(cpu_link.namedparams())
        for path, param in device_link.namedparams():
            _assert_close(param.grad, expected_params[path].grad, f"{mode}: grad of {path}", *tol)
        _check_all_on_device(device_link, device)
        expected_values = _values(cpu_link)
        for key, value in _values(device_link).items():
            _assert_close(value, expected_values[key], f"after {mode} mode: {key}", *tol)
        for state_name, state in _states(device_link).items():
            _assert_on(device, state.array, f"state {state_name}")
            state.unchain()
        for state in _states(cpu_link).values():
            state.unchain()

    saved = io.BytesIO()
    save_npz(saved, device_link, compression=False)
    saved.seek(0)
    # The CPU link is done with; blanked, it stands for a fresh one (the vision
    # models are slow to build) that loading must fill completely.
    loaded = _blank(cpu_link)
    load_npz(saved, loaded)
    loaded_values = _values(loaded)
    device_values = _values(device_link)
    assert sorted(loaded_values) == sorted(device_values)
    for key, value in loaded_values.items():
        if isinstance(value, backend.get_array_types()):
            _assert_on(backend.cpu, value, f"loaded {key}")
        expected = device_values[key]
        if isinstance(expected, (int, float)):
            assert value == expected, key
        else:
            _assert_close(value, expected, f"loaded {key}")


@pytest.mark.parametrize("device_spec", DEVICES)
def test_walker_alias_on_device(device_spec):
    device = get_test_device(device_spec)
    probs = numpy.array([0.1, 0.0, 0.2, 0.3, 0.4])
    sampler = L.WalkerAlias(probs).to_device(device)
    assert sampler.device == device and sampler.use_gpu == (device.xp is not numpy)
    with _seeded(device.xp, 3):
        samples = sampler.sample((4, 5000))
    _assert_on(device, samples, "samples")
    samples = backend.to_cpu(samples)
    assert samples.shape == (4, 5000) and samples.dtype == numpy.int32
    frequencies = numpy.bincount(samples.ravel(), minlength=5) / samples.size
    numpy.testing.assert_allclose(frequencies, probs, atol=0.015)
    assert frequencies[1] == 0


@pytest.mark.parametrize("device_spec", DEVICES)
@pytest.mark.parametrize("cls", [L.NegativeSampling, L.BlackOut])
def test_loss_link_samplers_follow_the_link(cls, device_spec):
    device = get_test_device(device_spec)
    link = cls(3, _COUNTS, 2).to_device(device)
    assert link.sampler.device == device
    _assert_on(device, link.sampler.threshold, "the sampler's threshold")
    x = device.send(numpy.ones((4, 3), numpy.float32))
    with _seeded(device.xp, 0):
        loss = link(x, device.send(numpy.arange(4, dtype=numpy.int32)))
    assert loss.shape == () and numpy.isfinite(float(backend.to_cpu(loss.array)))
