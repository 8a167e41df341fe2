"""dbr.core.runtime_info: the platform, dbr's distributions, NumPy and CuPy, one a line."""

import io
import platform

import numpy

from dbr.core import runtime_info


def test_runtime_info_lines():
    info = runtime_info.get_runtime_info()
    info.dbr_versions = {"dbr-core": "1.2.3"}
    info.cuda_info = None
    assert str(info) == (
        f"Platform: {platform.platform()}\n"
        "dbr-core: 1.2.3\n"
        f"NumPy: {numpy.__version__}\n"
        "CuPy: Not Available\n"
    )


def test_cupy_report_is_indented_under_its_entry():
    info = runtime_info.RuntimeInfo()
    info.cuda_info = "CUDA Runtime Version: 12040\ncuDNN: 90100"
    assert info.cupy_lines() == ["CuPy:", "  CUDA Runtime Version: 12040", "  cuDNN: 90100"]


def test_print_runtime_info_writes_and_flushes():
    class Out(io.StringIO):
        flushed = False

        def flush(self):
            self.flushed = True

    out = Out()
    runtime_info.print_runtime_info(out)
    assert out.flushed
    assert out.getvalue() == str(runtime_info.RuntimeInfo())


def test_print_runtime_info_defaults_to_stdout(capsys):
    runtime_info.print_runtime_info()
    assert f"NumPy: {numpy.__version__}\n" in capsys.readouterr().out
