"""Smoke tests of ``benchmarks/gpu.py``: it runs ``--quick`` as a subprocess and
prints its Markdown table (on the GPU when one is usable, and on the CPU with
``--device @numpy``), or says why it did nothing and exits 0; and its PyTorch
twins start from the weights of the dbr networks (same outputs on the CPU).
"""

import importlib
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

from dbr.core.testing import get_test_device

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPT = BENCHMARKS / "gpu.py"
QUICK_CASES = {"mlp-b100": 100, "lenet5": 128}
HEADER = (
    "| case | batch | dbr ms | torch ms | ratio | target | dbr peak MiB | torch peak MiB "
    "| memory ratio | memory target | dbr host ms | torch host ms |"
)
# The parameters of the MNIST MLP with their gradients and Adam's two moments, in MiB.
MLP_TRAINING_STATE_MIB = 4 * (784 * 1000 + 1000 + 1000 * 1000 + 1000 + 1000 * 10 + 10) * 4 / 2**20


def run_script(*args):
    """``python benchmarks/gpu.py *args`` in a subprocess (output captured as text)."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600
    )


def table_rows(stdout):
    """The rows under the table's header, as dicts from column name to cell."""
    lines = stdout.splitlines()
    assert HEADER in lines, stdout
    start = lines.index(HEADER) + 2
    columns = [c.strip() for c in HEADER.strip("|").split("|")]
    rows = []
    for line in lines[start:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == len(columns), line
        rows.append(dict(zip(columns, cells)))
    return rows


def torch_installed():
    try:
        importlib.import_module("torch")
    except ImportError:
        return False
    return True


def gpu_unavailable():
    """What gpu.py says is missing for '@cupy:0' (None when a GPU is usable)."""
    try:
        import dbr.gpu
    except ImportError:
        return "dbr.gpu is not importable"
    return dbr.gpu.unavailable_reason


def check_times(row, with_torch):
    """The row's dbr time is positive; torch's too, with their ratio, when it ran."""
    dbr_ms = float(row["dbr ms"])
    assert dbr_ms > 0
    assert 0 < float(row["dbr host ms"]) <= dbr_ms + 0.01
    if not with_torch:
        assert row["torch ms"] == row["ratio"] == row["torch host ms"] == "-"
        return
    torch_ms = float(row["torch ms"])
    assert torch_ms > 0
    assert 0 < float(row["torch host ms"]) <= torch_ms + 0.01
    assert float(row["ratio"].rstrip("x")) == pytest.approx(dbr_ms / torch_ms, rel=0.02, abs=0.01)
    target = {"mlp-b100": 1.5, "lenet5": 1.3}[row["case"]]
    assert row["target"] in (f"{target}x met", f"{target}x missed")
    if abs(dbr_ms / torch_ms - target) > 0.02:  # clear of the rounding of the printed times
        verdict = "met" if dbr_ms / torch_ms < target else "missed"
        assert row["target"] == f"{target}x {verdict}"


def test_without_a_gpu_it_says_why_and_exits_0(tmp_path):
    reason = gpu_unavailable()
    if reason is None:
        pytest.skip("a GPU is usable here: test_on_the_gpu_it_prints_the_table covers it")
    out = tmp_path / "gpu.md"
    result = run_script("--quick", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"no GPU benchmark on @cupy:0: {reason}")
    assert "|" not in result.stdout
    assert out.read_text() == result.stdout


def test_on_the_cpu_it_prints_the_table_it_writes(tmp_path):
    out = tmp_path / "reports" / "cpu.md"
    result = run_script("--device", "@numpy", "--quick", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_text() == result.stdout
    assert [p.name for p in out.parent.iterdir()] == ["cpu.md"]
    rows = table_rows(result.stdout)
    assert {row["case"]: int(row["batch"]) for row in rows} == QUICK_CASES
    for row in rows:
        check_times(row, torch_installed())
        assert row["dbr peak MiB"] == row["torch peak MiB"] == row["memory target"] == "-"


@pytest.mark.gpu
def test_on_the_gpu_it_prints_the_table(tmp_path):
    get_test_device("@cupy:0")
    out = tmp_path / "gpu.md"
    result = run_script("--quick", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_text() == result.stdout
    rows = table_rows(result.stdout)
    assert {row["case"]: int(row["batch"]) for row in rows} == QUICK_CASES
    with_torch = "dbr alone" not in result.stdout
    for row in rows:
        check_times(row, with_torch)
        assert row["memory target"].startswith("1.3x")
    mlp = rows[0]
    assert float(mlp["dbr peak MiB"]) >= MLP_TRAINING_STATE_MIB
    if with_torch:
        assert float(mlp["torch peak MiB"]) >= MLP_TRAINING_STATE_MIB


@pytest.fixture
def benchmark_modules_cpu(monkeypatch):
    """benchmarks/gpu.py imported as a module, forgotten afterwards with its helpers."""
    names = ("gpu", "_torch_side", "end_to_end")
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    yield importlib.import_module("gpu")
    for name in names:
        sys.modules.pop(name, None)


@pytest.fixture
def benchmark_modules(benchmark_modules_cpu):
    """(gpu, _torch_side), when torch is installed."""
    pytest.importorskip("torch")
    return benchmark_modules_cpu, importlib.import_module("_torch_side")


def perturb(model):
    """Move every parameter off its initializer's value (zero biases and BN betas, unit
    gammas would match PyTorch's defaults even if they were not copied)."""
    rng = numpy.random.default_rng(2)
    for param in model.params():
        param.array += rng.normal(0, 0.05, param.shape).astype(param.dtype)


@pytest.mark.parametrize("name", ["mlp-b100", "lenet5", "resnet18"])
def test_torch_twins_compute_what_the_dbr_networks_compute(benchmark_modules, name):
    gpu, torch_side = benchmark_modules
    import torch

    numpy.random.seed(0)
    model = gpu.CASES[name].make_model()
    perturb(model)
    twin = torch_side.twin(name, model)
    x = numpy.random.default_rng(1).random((2, *gpu.CASES[name].example_shape), numpy.float32)
    expected = model(x).array
    with torch.no_grad():
        actual = twin(torch.from_numpy(x)).numpy()
    numpy.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)


def test_torch_lstm_twin_computes_what_the_dbr_language_model_computes(benchmark_modules):
    gpu, torch_side = benchmark_modules
    import torch

    numpy.random.seed(0)
    model = gpu.RNNLM(n_vocab=50, n_units=8, dropout=0.0)
    perturb(model)
    twin = torch_side.twin("lstm", model)
    words = numpy.random.default_rng(1).integers(0, 50, (3, 4)).astype(numpy.int32)
    state = None
    for step in words:
        expected = model(step).array
        with torch.no_grad():
            actual, state = twin(torch.from_numpy(step).long(), state)
        numpy.testing.assert_allclose(actual.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_lstm_gate_reordering_is_a_permutation_into_pytorch_blocks(benchmark_modules):
    _, torch_side = benchmark_modules
    units = 3
    # Row 4j + k of Chainer's layout is unit j of gate k (a, i, f, o).
    rows = numpy.array([10 * k + j for j in range(units) for k in range(4)])
    # PyTorch's blocks: i (k=1), f (k=2), g (Chainer's a, k=0), o (k=3), each units long.
    assert torch_side._torch_gates(rows).tolist() == [10, 11, 12, 20, 21, 22, 0, 1, 2, 30, 31, 32]


def test_peak_hook_counts_blocks_from_the_bytes_in_use_at_the_start(benchmark_modules_cpu):
    gpu = benchmark_modules_cpu
    cupy = pytest.importorskip("cupy")
    from cupy.cuda import memory_hook

    class Pool:
        used = 1000

        def used_bytes(self):
            return self.used

    pool = Pool()

    def hand_out(size):
        pool.used += size
        for hook in memory_hook.get_memory_hooks().values():
            hook.malloc_postprocess(device_id=0, size=size, mem_size=size, mem_ptr=0, pmem_id=0)

    def give_back(size):
        pool.used -= size
        for hook in memory_hook.get_memory_hooks().values():
            hook.free_postprocess(device_id=0, mem_size=size, mem_ptr=0, pmem_id=0)

    def step():
        hand_out(512)
        hand_out(1024)
        give_back(512)
        if pool.used > 1024:
            give_back(1000)  # the block handed out before the hook was installed
        give_back(1024)

    peak = gpu.cupy_peak_bytes(cupy, pool, step, 2, lambda: None)
    assert peak == 1000 + 512 + 1024
    assert pool.used == 0
    assert not memory_hook.get_memory_hooks()
