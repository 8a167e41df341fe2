"""Checks, mostly without a GPU, that dbr.functions' code can run on CuPy arrays.

- every ``xp.<name>`` the package calls exists in CuPy, and every special
  function it asks ``cupyx.scipy.special`` for exists there (skipped without
  CuPy; CuPy imports without a GPU);
- every FunctionNode has a forward that CuPy arrays reach (a node with only
  ``forward_cpu`` fails on the GPU);
- a CPU-only run imports neither dbr.gpu nor CuPy;
- on a GPU, the CuPy paths fixed by the audit match NumPy.
"""

import ast
import importlib
import inspect
import os
import pathlib
import pkgutil
import subprocess
import sys

import numpy
import pytest

import dbr.functions
from dbr.core import FunctionNode
from dbr.core.backend import to_cpu
from dbr.core.testing import DEVICES, get_test_device

SRC = pathlib.Path(dbr.functions.__file__).parent


def _attribute_chain(node):
    """``['random', 'normal']`` for ``xp.random.normal`` (or ``x.xp.random.normal``), else None."""
    chain = []
    while isinstance(node, ast.Attribute):
        if node.attr == "xp" and chain:
            return chain[::-1]
        chain.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "xp" and chain:
        return chain[::-1]
    return None


def _xp_names():
    """Every outermost ``xp.a.b`` chain in the package, with the files using it."""
    names = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        inner = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and id(node) not in inner:
                chain = _attribute_chain(node)
                value = node.value
                while isinstance(value, ast.Attribute):
                    inner.add(id(value))
                    value = value.value
                if chain:
                    names.setdefault(".".join(chain), set()).add(path.relative_to(SRC).as_posix())
    return names


def _special_names():
    """The ``scipy.special`` names looked up (``special_name``, ``special_function``)."""
    names = set()
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "special_name" for t in node.targets
            ):
                if isinstance(node.value, ast.Constant) and node.value.value:
                    names.add(node.value.value)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "special_function"
                and isinstance(node.args[1], ast.Constant)
            ):
                names.add(node.args[1].value)
    return names


def test_the_collectors_find_what_the_package_uses():
    xp_names = _xp_names()
    assert {"zeros", "random.standard_normal", "add.at", "lib.stride_tricks.as_strided"} <= set(
        xp_names
    )
    assert "noise/gaussian.py" in xp_names["random.standard_normal"]
    assert {"erf", "erfcx", "ndtri", "gammaln", "psi", "polygamma", "zeta"} <= _special_names()


def test_every_xp_name_exists_in_cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    missing = []
    for name, files in sorted(_xp_names().items()):
        obj = cupy
        for part in name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                missing.append(f"cupy.{name} (used in {', '.join(sorted(files))})")
                break
    assert not missing, "CuPy lacks: " + "; ".join(missing)


def test_every_special_function_exists_in_cupyx():
    pytest.importorskip("cupy", reason="CuPy is not installed")
    special = importlib.import_module("cupyx.scipy.special")
    missing = sorted(name for name in _special_names() if not hasattr(special, name))
    assert not missing, f"cupyx.scipy.special lacks {missing}"


def _function_nodes():
    for info in pkgutil.walk_packages(dbr.functions.__path__, "dbr.functions."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, FunctionNode) and cls.__module__ == info.name:
                yield cls


def test_every_function_node_has_a_forward_for_cupy_arrays():
    nodes = list(_function_nodes())
    assert len(nodes) > 150
    cpu_only = [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in nodes
        if cls.forward is FunctionNode.forward
        and cls.forward_gpu is FunctionNode.forward_gpu
        and cls.forward_cpu is not FunctionNode.forward_cpu
    ]
    assert not cpu_only, f"forward_cpu without forward or forward_gpu: {cpu_only}"


_CPU_RUN = """
import sys
import numpy
import dbr.functions as F
from dbr.core import Variable
x = Variable(numpy.linspace(-1, 1, 12, dtype=numpy.float32).reshape(3, 4))
t = numpy.array([0, 1, 3], numpy.int32)
y = F.sum(F.relu(x) * F.sigmoid(x) + F.dropout(F.tanh(x), 0.5))
y = y + F.softmax_cross_entropy(x, t) + F.sum(F.gaussian(x, x)) + F.sum(F.gumbel_softmax(x))
y = y + F.sum(F.linear(x, numpy.ones((2, 4), numpy.float32)))
y.backward()
assert x.grad is not None
leaked = sorted(m for m in sys.modules if m == "cupy" or m.startswith(("cupy.", "dbr.gpu")))
assert not leaked, leaked
print("ok")
"""


def test_a_cpu_run_imports_neither_dbr_gpu_nor_cupy():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", _CPU_RUN],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


# -- on a GPU: the CuPy paths the audit fixed, against NumPy ------------------------------


@pytest.mark.parametrize("device_spec", DEVICES)
@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
def test_gaussian_samples_in_every_float_dtype(device_spec, dtype):
    from dbr.functions.noise.gaussian import gaussian

    device = get_test_device(device_spec)
    n, mu, sigma = 100_000, 1.5, 0.7
    mean = device.send(numpy.full(n, mu, dtype))
    ln_var = device.send(numpy.full(n, 2 * numpy.log(sigma), dtype))
    y = gaussian(mean, ln_var)
    assert y.dtype == dtype and y.device == device
    y = to_cpu(y.array).astype(numpy.float64)
    rounding = 2e-3 if dtype == numpy.float16 else 0.0
    assert abs(y.mean() - mu) <= 5 * sigma / n**0.5 + rounding
    assert abs(y.var() - sigma**2) <= 5 * sigma**2 * (2.0 / n) ** 0.5 + rounding


@pytest.mark.parametrize("device_spec", DEVICES)
@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
def test_gumbel_softmax_samples_in_every_float_dtype(device_spec, dtype):
    from dbr.functions.noise.gumbel_softmax import gumbel_softmax

    device = get_test_device(device_spec)
    log_pi = numpy.log(numpy.array([[0.2, 0.3, 0.5]] * 20_000)).astype(dtype)
    y = gumbel_softmax(device.send(log_pi), tau=0.01)
    assert y.dtype == dtype and y.device == device
    y = to_cpu(y.array)
    # with tau -> 0 each row is nearly one-hot at a category drawn with probability pi
    frequencies = (y.argmax(axis=1)[:, None] == numpy.arange(3)).mean(axis=0)
    numpy.testing.assert_allclose(frequencies, [0.2, 0.3, 0.5], atol=0.02)


@pytest.mark.parametrize("device_spec", DEVICES)
def test_zeta_with_a_numpy_exponent_array(device_spec):
    from dbr.core import Variable
    from dbr.functions.math.gamma import zeta

    device = get_test_device(device_spec)
    if device_spec == "@numpy":
        pytest.importorskip("scipy", reason="SciPy is not installed")
    q = Variable(device.send(numpy.array([[1.0, 2.0], [3.0, 0.5]])))
    y = zeta(numpy.array([2.0, 4.0]), q)
    y.grad = device.send(numpy.ones((2, 2)))
    y.backward()
    zeta_5 = 1.0369277551433699
    # zeta(2, 1) = pi^2 / 6, zeta(4, 2) = pi^4 / 90 - 1, d zeta(s, q) / dq = -s zeta(s + 1, q)
    assert abs(to_cpu(y.array)[0, 0] - numpy.pi**2 / 6) < 1e-12
    assert abs(to_cpu(y.array)[0, 1] - (numpy.pi**4 / 90 - 1)) < 1e-12
    assert abs(to_cpu(q.grad)[0, 1] - (-4 * (zeta_5 - 1))) < 1e-10
