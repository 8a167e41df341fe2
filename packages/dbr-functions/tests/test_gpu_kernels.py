"""Every kernel definition of dbr.functions compiles under NVRTC, and CPU runs never load CuPy.

The compilation needs CuPy's NVRTC but no GPU; it is skipped with the reason
where CuPy or dbr.gpu is missing.
"""

import importlib.util
import subprocess
import sys

import pytest


def _definitions():
    if importlib.util.find_spec("dbr.gpu") is None:
        return []
    from dbr.gpu.testing import kernel_definitions

    return kernel_definitions("dbr.functions")


def _skip_without_nvrtc():
    if importlib.util.find_spec("dbr.gpu") is None:
        pytest.skip("dbr.gpu is not installed")
    from dbr.gpu.testing import nvrtc_available

    if not nvrtc_available():
        pytest.skip("CuPy's NVRTC is not available (CuPy is not installed)")


_DEFINITIONS = _definitions()


def test_the_hot_functions_define_kernels():
    if importlib.util.find_spec("dbr.gpu") is None:
        pytest.skip("dbr.gpu is not installed")
    names = {spec["name"] for _, _, _, spec in _DEFINITIONS}
    expected = {
        "dbr_relu_grad",
        "dbr_sigmoid",
        "dbr_sigmoid_grad",
        "dbr_tanh_grad",
        "dbr_lstm",
        "dbr_lstm_grad",
        "dbr_dropout",
        "dbr_bn_forward",
        "dbr_bn_grad",
        "dbr_softmax_cross_entropy_nll",
        "dbr_softmax_cross_entropy_grad",
    }
    assert expected <= names
    assert all(name.startswith("dbr_") for name in names)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize(
    "definition", _DEFINITIONS, ids=[f"{m}.{c}" for m, c, _, _ in _DEFINITIONS]
)
def test_kernel_compiles(definition, dtype):
    _skip_without_nvrtc()
    from dbr.gpu.kernels import check_compiles

    _, _, kind, spec = definition
    # A: the computation dtype of the statistics; S: integer labels.
    acc = "float32" if dtype == "float16" else dtype
    for labels in ("int32", "int64"):
        binding = {"T": dtype, "G": dtype, "A": acc, "S": labels}
        check_compiles(kind, spec, dtypes=(binding,))


_CPU_RUN = r"""
import sys
import numpy as np
import dbr.functions as F
from dbr.core import Variable, using_config

rng = np.random.default_rng(0)
x = Variable(rng.standard_normal((4, 8, 3, 3)).astype(np.float32))
for f in (F.relu, F.sigmoid, F.tanh, F.elu, F.leaky_relu, F.clipped_relu, F.softplus,
          F.hard_sigmoid, F.dropout):
    f(x).array.sum()
F.swish(x, np.ones(8, np.float32))
y = F.batch_normalization(x, np.ones(8, np.float32), np.zeros(8, np.float32))
y = y + F.fixed_batch_normalization(x, np.ones(8, np.float32), np.zeros(8, np.float32),
                                    np.zeros(8, np.float32), np.ones(8, np.float32))
W = Variable(rng.standard_normal((5, 8, 3, 3)).astype(np.float32))
y = F.convolution_2d(y, W, pad=1) + 0
y = F.deconvolution_2d(y, W, pad=1)
c, h = F.lstm(Variable(np.zeros((4, 2), np.float32)), F.reshape(y, (4, -1))[:, :8])
t = np.array([0, 1, -1, 1], np.int32)
loss = F.softmax_cross_entropy(h, t) + F.sum(c) + F.sum(y) * 0
loss.backward()
with using_config("train", False):
    F.dropout(x)
bad = [m for m in ("dbr.gpu", "cupy") if m in sys.modules]
assert not bad, bad
print("ok")
"""


def test_cpu_paths_import_neither_dbr_gpu_nor_cupy():
    result = subprocess.run(
        [sys.executable, "-c", _CPU_RUN], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
