"""Every kernel definition of dbr.training compiles under NVRTC; CPU training stays off the GPU."""

import pathlib
import subprocess
import sys

import pytest

try:
    from dbr.gpu import kernels as gpu_kernels
    from dbr.gpu import testing as gpu_testing
except ImportError:
    gpu_kernels = gpu_testing = None

DEFINITIONS = gpu_testing.kernel_definitions("dbr.training") if gpu_testing else []
EXPECTED = {
    "_SGD_ELEMENTWISE", "_MOMENTUM_SGD_ELEMENTWISE", "_NESTEROV_AG_ELEMENTWISE",
    "_CORRECTED_MOMENTUM_SGD_ELEMENTWISE", "_ADA_GRAD_ELEMENTWISE", "_ADA_DELTA_ELEMENTWISE",
    "_RMSPROP_ELEMENTWISE", "_RMSPROP_EPS_INSIDE_SQRT_ELEMENTWISE",
    "_RMSPROP_GRAVES_ELEMENTWISE", "_ADAM_ELEMENTWISE", "_AMSGRAD_ELEMENTWISE",
    "_ADABOUND_ELEMENTWISE", "_AMSBOUND_ELEMENTWISE", "_SMORMS3_ELEMENTWISE",
    "_MSVAG_ELEMENTWISE", "_NONFINITE_FLAG_ELEMENTWISE", "_WEIGHT_DECAY_ELEMENTWISE",
    "_LASSO_ELEMENTWISE", "_LARS_ELEMENTWISE", "_CLIP_TO_NORM_ELEMENTWISE",
    "_SQUARED_SUM_REDUCTION",
}  # fmt: skip


def test_every_update_rule_and_hook_kernel_is_found():
    if gpu_testing is None:
        pytest.skip("dbr.gpu is not installed")
    found = [constant for _, constant, _, _ in DEFINITIONS]
    assert set(found) == EXPECTED
    names = [spec["name"] for _, _, _, spec in DEFINITIONS]
    assert all(name.startswith("dbr_") for name in names)
    assert len(set(names)) == len(names)


@pytest.mark.parametrize(
    ("module", "constant", "kind", "spec"),
    DEFINITIONS,
    ids=[f"{module}.{constant}" for module, constant, _, _ in DEFINITIONS],
)
def test_kernel_compiles_for_every_float_dtype(module, constant, kind, spec):
    if not gpu_testing.nvrtc_available():
        pytest.skip("CuPy's NVRTC is not available")
    gpu_kernels.check_compiles(kind, spec, dtypes=("float16", "float32", "float64"))


CPU_RUN = """
import runpy
import sys
import warnings
import numpy as np
from dbr.datasets import SerialIterator, TupleDataset
from dbr.training import StandardUpdater, optimizer_hooks, optimizers

Linear = runpy.run_path(sys.argv[1])["Linear"]

rng = np.random.default_rng(0)
data = TupleDataset(rng.standard_normal((8, 3)), rng.standard_normal((8, 1)))
for make in (optimizers.SGD, optimizers.Adam, optimizers.AMSBound, optimizers.MSVAG):
    model = Linear()
    opt = make().setup(model)
    opt.loss_scaling()
    for hook in (optimizer_hooks.WeightDecay(1e-4), optimizer_hooks.Lasso(1e-4),
                 optimizer_hooks.GradientClipping(1.0), optimizer_hooks.GradientLARS()):
        opt.add_hook(hook)
    updater = StandardUpdater(SerialIterator(data, 4), opt, device="@numpy")
    updater.update()
    updater.update()
assert "dbr.gpu" not in sys.modules, sorted(k for k in sys.modules if k.startswith("dbr"))
assert "cupy" not in sys.modules
"""


def test_cpu_training_imports_neither_dbr_gpu_nor_cupy():
    linear_model = pathlib.Path(__file__).parent / "fixtures" / "linear_model.py"
    subprocess.run([sys.executable, "-c", CPU_RUN, str(linear_model)], check=True)
