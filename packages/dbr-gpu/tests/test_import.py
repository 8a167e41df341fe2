"""dbr.gpu imports everywhere, and without a GPU says exactly what is missing."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

import dbr.gpu
from dbr.core import backend

no_gpu = pytest.mark.skipif(dbr.gpu.available, reason="a GPU is usable here")


def _missing_pattern():
    if dbr.gpu.cupy is None:
        return r"CuPy is not installed.*dbr-gpu\[cuda12\].*dbr-gpu\[cuda13\]"
    return r"CuPy \S+ is installed but (no CUDA GPU can be used|the CUDA driver sees no GPU)"


def test_import_works_and_reports_availability():
    assert isinstance(dbr.gpu.available, bool)
    assert (dbr.gpu.unavailable_reason is None) == dbr.gpu.available
    assert "dbr-gpu[cuda12]" in dbr.gpu.INSTALL_HINT
    assert "dbr-gpu[cuda13]" in dbr.gpu.INSTALL_HINT


def test_lazy_names_resolve_without_a_gpu():
    from dbr.gpu.device import GpuDevice, get_device_from_id

    assert dbr.gpu.GpuDevice is GpuDevice
    assert dbr.gpu.get_device_from_id is get_device_from_id
    assert dbr.gpu.memory.__name__ == "dbr.gpu.memory"
    assert dbr.gpu.nccl.__name__ == "dbr.gpu.nccl"
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        dbr.gpu.nonexistent  # noqa: B018


@no_gpu
def test_available_is_false_with_the_reason():
    assert dbr.gpu.available is False
    assert re.search(_missing_pattern(), dbr.gpu.unavailable_reason)


@no_gpu
def test_require_names_the_caller_and_what_is_missing():
    with pytest.raises(RuntimeError, match=r"^Frobnicator needs a CUDA GPU through CuPy: ") as e:
        dbr.gpu.require("Frobnicator")
    assert re.search(_missing_pattern(), str(e.value))


@no_gpu
@pytest.mark.parametrize("spec", ["@cupy:0", "@cupy", 0, 3])
def test_get_device_raises_the_require_error(spec):
    with pytest.raises(RuntimeError, match=re.escape(dbr.gpu.unavailable_reason)) as e:
        backend.get_device(spec)
    assert "needs a CUDA GPU through CuPy" in str(e.value)


@no_gpu
def test_to_device_of_array_variable_and_link_raises_the_require_error():
    import numpy

    from dbr.core import Link, Variable

    reason = re.escape(dbr.gpu.unavailable_reason)
    with pytest.raises(RuntimeError, match=reason):
        backend.to_device("@cupy:0", numpy.zeros(2))
    with pytest.raises(RuntimeError, match=reason):
        Variable(numpy.zeros(2)).to_device("@cupy:0")
    with pytest.raises(RuntimeError, match=reason):
        Link().to_device("@cupy:0")


_CPU_ONLY_RUN = textwrap.dedent(
    """
    import sys

    import numpy

    import dbr.core
    from dbr.core import Link, Parameter, Variable, backend

    class Scale(Link):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.w = Parameter(numpy.full(3, 2.0, dtype=numpy.float32))
            self.add_persistent("count", numpy.zeros(1))

    link = Scale().to_device("@numpy")
    x = Variable(numpy.arange(3, dtype=numpy.float32))
    y = link.w * x * x
    y.grad = numpy.ones(3, dtype=numpy.float32)
    y.backward()
    assert backend.get_array_module(x, y.array) is numpy
    assert backend.get_device_from_array(x.array) is backend.cpu
    assert backend.get_device(-1) is backend.cpu
    assert numpy.allclose(x.grad, [0.0, 4.0, 8.0])
    loaded = sorted(m for m in ("dbr.gpu", "cupy") if m in sys.modules)
    print("loaded:", loaded)
    """
)


def test_a_cpu_only_run_imports_neither_dbr_gpu_nor_cupy():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", _CPU_ONLY_RUN],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "loaded: []"


def test_a_folder_named_cupy_is_not_taken_for_cupy(tmp_path):
    (tmp_path / "cupy").mkdir()
    code = textwrap.dedent(
        """
        import dbr.gpu
        from dbr.core import backend
        assert not dbr.gpu.available
        print(dbr.gpu.unavailable_reason)
        try:
            backend.get_device("@cupy:0")
        except RuntimeError as e:
            print(e)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "found no CuPy but a folder named cupy" in result.stdout
    assert str(tmp_path / "cupy") in result.stdout
    assert "needs a CUDA GPU through CuPy" in result.stdout
