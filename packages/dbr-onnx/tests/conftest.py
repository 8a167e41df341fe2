"""Shared fixtures: export a model, check it with onnx, run it with ONNX Runtime."""

import contextlib

import numpy
import onnx
import pytest

from dbr.core import Chain, Parameter, Variable, using_config
from dbr.core.testing.seeding import numpy_seeded_per_test  # noqa: F401


class FunctionModel(Chain):
    """A Chain whose forward is ``fn(self, *inputs)``, with the given arrays as parameters."""

    def __init__(self, fn, **params):
        super().__init__()
        self.fn = fn
        with self.init_scope():
            for name, array in params.items():
                setattr(self, name, Parameter(array))

    def forward(self, *inputs, **named):
        return self.fn(self, *inputs, **named)


def _as_list(outputs):
    if isinstance(outputs, dict):
        return list(outputs.values())
    if isinstance(outputs, (list, tuple)):
        return list(outputs)
    return [outputs]


def run_onnx(proto, feeds):
    """Run ``proto`` in ONNX Runtime on ``feeds`` (name -> array); return the outputs."""
    ort = pytest.importorskip("onnxruntime", reason="needs the dbr-onnx[runtime] extra")
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(
        proto.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, feeds)


def _export_from(model, args, opset, **kwargs):
    """Export at ``opset``, or, if an operator needs a newer one, at the first opset it names."""
    import dbr.onnx
    from dbr.onnx.converters._legacy import OpsetError

    try:
        return dbr.onnx.export(model, args, opset_version=opset, **kwargs)
    except OpsetError as e:
        needed = int(str(e).split("opset ")[1].split()[0].rstrip(";"))
        assert needed > opset, str(e)
        return _export_from(model, args, needed, **kwargs)


@contextlib.contextmanager
def skipped_without_its_extra():
    """Skip the test, naming the extra, when a function it exports needs one that dbr-onnx
    does not bring (SciPy for dbr-functions' special functions: ``dbr-functions[special]``)."""
    try:
        yield
    except ImportError as error:
        if "pip install" not in str(error):
            raise
        pytest.skip(str(error))


def check_export(model, args, opsets=None, rtol=1e-5, atol=1e-6, **kwargs):
    """Export at each opset, full-check it, and compare ONNX Runtime with dbr's forward.

    Returns the model exported at the last opset; skips, naming it, when a function
    needs an extra that is not installed.
    """
    with skipped_without_its_extra():
        return _check_export(model, args, opsets, rtol, atol, **kwargs)


def _check_export(model, args, opsets, rtol, atol, **kwargs):
    import dbr.onnx

    pytest.importorskip("onnxruntime", reason="needs the dbr-onnx[runtime] extra")
    if opsets is None:
        opsets = (dbr.onnx.MINIMUM_OPSET_VERSION, dbr.onnx.maximum_opset_version())
    arg_list = list(args) if isinstance(args, (list, tuple)) else [args]
    with using_config("train", False):
        expected = [
            y.array for y in _as_list(model(*[Variable(a, requires_grad=False) for a in arg_list]))
        ]
    proto = None
    for opset in opsets:
        proto = _export_from(model, args, opset, **kwargs)
        onnx.checker.check_model(proto, full_check=True)
        names = [i.name for i in proto.graph.input][: len(arg_list)]
        actual = run_onnx(proto, dict(zip(names, arg_list)))
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert a.shape == e.shape, f"opset {opset}"
            assert a.dtype == e.dtype, f"opset {opset}"
            numpy.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=f"opset {opset}")
    return proto


@pytest.fixture
def check():
    """:func:`check_export`."""
    return check_export


@pytest.fixture
def function_model():
    """:class:`FunctionModel`."""
    return FunctionModel


class _Tools:
    """The helpers above, gathered for tests that need several of them."""

    FunctionModel = FunctionModel
    check_export = staticmethod(check_export)
    run_onnx = staticmethod(run_onnx)


@pytest.fixture
def tools():
    """:class:`FunctionModel`, :func:`check_export` and :func:`run_onnx`."""
    return _Tools
