"""Fixtures giving the integration tests the real datasets in ``../shared/datasets``.

The files are never downloaded: the loaders of dbr-datasets read them through
``DBR_DATASET_MIRROR`` pointing at that folder (a ``file://`` mirror), into a
dataset root private to the test session. A test whose files are absent skips,
saying which folder it looked in.
"""

import importlib.util
import os
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
_BESIDE_CHECKOUT = Path(__file__).resolve().parents[2] / "shared" / "datasets"
SHARED_DATASETS = Path(os.environ.get("DBR_SHARED_DATASETS", _BESIDE_CHECKOUT))


@pytest.fixture(scope="session")
def shared_dataset_root(tmp_path_factory):
    """Point dbr-datasets at ``../shared/datasets`` for the whole session; returns the folder."""
    if not SHARED_DATASETS.is_dir():
        pytest.skip(f"the real datasets are absent: no folder {SHARED_DATASETS}")
    patch = pytest.MonkeyPatch()
    patch.setenv("DBR_DATASET_MIRROR", SHARED_DATASETS.as_uri())
    patch.setenv("DBR_DATASET_ROOT", str(tmp_path_factory.mktemp("dataset-root")))
    yield SHARED_DATASETS
    patch.undo()


def require_files(root, *names):
    """Skip the calling test unless every ``root/name`` exists."""
    missing = [name for name in names if not (root / name).is_file()]
    if missing:
        pytest.skip(f"the real datasets are absent: {', '.join(missing)} not under {root}")


@pytest.fixture(scope="session")
def mnist(shared_dataset_root):
    """``(train, test)`` of dbr-datasets' ``get_mnist()`` (784 float32 features, int32 labels)."""
    require_files(
        shared_dataset_root,
        "mnist/train-images-idx3-ubyte.gz",
        "mnist/train-labels-idx1-ubyte.gz",
        "mnist/t10k-images-idx3-ubyte.gz",
        "mnist/t10k-labels-idx1-ubyte.gz",
    )
    from dbr.datasets import get_mnist

    return get_mnist()


_FIGURES = []


@pytest.fixture
def report_figure(request):
    """``report_figure(name, value)`` records a measured figure, printed after the test run.

    Accuracies, perplexities and timings are what the integration suite is
    for; they are listed in the terminal summary whether or not output is
    captured.
    """

    def record(name, value):
        _FIGURES.append((request.node.nodeid, name, value))

    return record


def pytest_terminal_summary(terminalreporter):
    """Print the figures the tests recorded with ``report_figure``."""
    if not _FIGURES:
        return
    terminalreporter.section("figures measured by the integration tests")
    for nodeid, name, value in _FIGURES:
        shown = f"{value:.4f}" if isinstance(value, float) else str(value)
        terminalreporter.write_line(f"{name}: {shown}    ({nodeid.split('::')[-1]})")


def load_example(relative_path):
    """The example script at ``relative_path`` under ``examples/``, imported afresh.

    The module is named after the file (``"mnist/train_mnist.py"`` gives
    ``train_mnist``) and is not entered in ``sys.modules``.
    """
    path = EXAMPLES / relative_path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
