import os
import subprocess
import sys
import textwrap
import uuid

import numpy as np
import pytest

import dbr.gpu
from dbr.core.testing import get_test_device
from dbr.gpu import kernels
from dbr.gpu.testing import count_nvrtc_compilations, kernel_definitions, nvrtc_available

needs_nvrtc = pytest.mark.skipif(not nvrtc_available(), reason="CuPy's NVRTC is not available")

_RELU_GRAD = {
    "in_params": "T y, T gy",
    "out_params": "T gx",
    "operation": "gx = y > (T)0 ? gy : (T)0",
    "name": "dbr_test_relu_grad",
}
_SQUARED_NORM = {
    "in_params": "T x",
    "out_params": "T y",
    "map_expr": "x * x",
    "reduce_expr": "a + b",
    "post_map_expr": "y = a",
    "identity": "0",
    "name": "dbr_test_squared_norm",
}
_FILL = {
    "code": (
        'extern "C" __global__ void dbr_test_fill(float* x, float v, int n) {\n'
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) x[i] = v;\n"
        "}\n"
    ),
    "name": "dbr_test_fill",
}


@pytest.mark.skipif(dbr.gpu.available, reason="a GPU is usable here")
@pytest.mark.parametrize(
    ("builder", "spec"),
    [(kernels.elementwise, _RELU_GRAD), (kernels.reduce, _SQUARED_NORM), (kernels.raw, _FILL)],
)
def test_builders_without_gpu_raise_and_build_nothing(builder, spec):
    before = kernels.compile_count()
    with pytest.raises(RuntimeError, match=rf"{spec['name']}.*needs a CUDA GPU"):
        builder(**spec)
    assert kernels.compile_count() == before


@pytest.mark.skipif(dbr.gpu.available, reason="a GPU is usable here")
def test_from_definition_without_gpu_raises_and_caches_nothing():
    before = kernels.compile_count()
    with pytest.raises(RuntimeError, match=r"dbr_test_squared_norm.*needs a CUDA GPU"):
        kernels.from_definition(_SQUARED_NORM, "reduce")
    assert id(_SQUARED_NORM) not in kernels._by_definition
    assert kernels.compile_count() == before
    with pytest.raises(KeyError):
        kernels.from_definition(_FILL, "kernel")


@pytest.mark.gpu
def test_from_definition_builds_each_definition_dict_once():
    get_test_device("@cupy:0")
    spec = dict(_RELU_GRAD, name=f"dbr_test_from_definition_{uuid.uuid4().hex[:12]}")
    before = kernels.compile_count()
    kernel = kernels.from_definition(spec)
    assert kernels.from_definition(spec) is kernel
    assert kernels.elementwise(**spec) is kernel
    assert kernels.compile_count() == before + 1
    raw = kernels.from_definition(_FILL, "raw")
    assert raw is kernels.raw(**_FILL)


@needs_nvrtc
def test_good_definitions_compile_for_each_float_dtype():
    floats = ("float16", "float32", "float64")
    kernels.check_compiles("elementwise", _RELU_GRAD, dtypes=floats)
    kernels.check_compiles("reduce", _SQUARED_NORM, dtypes=floats)
    kernels.check_compiles("raw", _FILL)


@needs_nvrtc
def test_definitions_using_cupy_features_compile():
    spec = {
        "in_params": "raw T x, S mask, float32 scale",
        "out_params": "T y",
        "preamble": "__device__ T twice(T v) { return v + v; }",
        "loop_prep": "const ptrdiff_t n = _ind.size();",
        "operation": "y = mask ? (T)(twice(x[n - 1 - i]) * (T)scale) : (T)0",
        "name": "dbr_test_features",
    }
    kernels.check_compiles("elementwise", spec, dtypes=({"T": "float16", "S": "bool"}, "float64"))
    mean = dict(_SQUARED_NORM, post_map_expr="y = a / _in_ind.size()", reduce_type="float")
    kernels.check_compiles("reduce", mean, dtypes=("float16",))


@needs_nvrtc
def test_unknown_variable_raises_with_name_dtype_and_log():
    bad = dict(_RELU_GRAD, operation="gx = yy > (T)0 ? gy : (T)0", name="dbr_test_bad")
    with pytest.raises(kernels.CompileError, match=r"(?s)'dbr_test_bad'.*float64.*\"yy\"") as e:
        kernels.check_compiles("elementwise", bad, dtypes=("float64",))
    assert "is undefined" in str(e.value)
    assert isinstance(e.value, RuntimeError)


@needs_nvrtc
def test_typo_in_reduction_and_raw_kernels_raises():
    with pytest.raises(kernels.CompileError, match=r"(?s)dbr_test_squared_norm.*error"):
        kernels.check_compiles("reduce", dict(_SQUARED_NORM, reduce_expr="a + + b;)"))
    with pytest.raises(kernels.CompileError, match=r"dbr_test_fill.*error"):
        kernels.check_compiles("raw", dict(_FILL, code=_FILL["code"].replace("x[i]", "x[i")))
    with pytest.raises(kernels.CompileError, match=r'defines no extern "C" dbr_test_other'):
        kernels.check_compiles("raw", dict(_FILL, name="dbr_test_other"))


@needs_nvrtc
def test_unknown_kind_and_unparsable_params_raise_value_error():
    with pytest.raises(ValueError, match="unknown kernel kind 'fused'"):
        kernels.check_compiles("fused", _RELU_GRAD)
    with pytest.raises(ValueError, match="cannot parse kernel parameter 'T y z'"):
        kernels.check_compiles("elementwise", dict(_RELU_GRAD, in_params="T y z, T gy"))
    with pytest.raises(ValueError, match=r"no dtype given for type placeholders \['T'\]"):
        kernels.check_compiles("elementwise", _RELU_GRAD, dtypes=({"S": "float32"},))


def _write_package(root, name):
    package = root / name
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "activation.py").write_text(
        textwrap.dedent(
            """
            _RELU_ELEMENTWISE = dict(in_params="T x", out_params="T y",
                                     operation="y = x > (T)0 ? x : (T)0", name="dbr_relu")
            _SCALE = 2.0
            _NOT_A_DICT_RAW = "raw"
            """
        )
    )
    (package / "sub" / "__init__.py").write_text("from .norm import _SUM_REDUCTION  # noqa\n")
    (package / "sub" / "norm.py").write_text(
        textwrap.dedent(
            """
            _SUM_REDUCTION = dict(in_params="T x", out_params="T y", map_expr="x",
                                  reduce_expr="a + b", post_map_expr="y = a", identity="0",
                                  name="dbr_sum")
            _FILL_RAW = dict(code='extern "C" __global__ void dbr_fill() {}', name="dbr_fill")
            """
        )
    )


def test_kernel_definitions_finds_every_constant_once(tmp_path, monkeypatch):
    name = f"dbr_kernels_fixture_{uuid.uuid4().hex}"
    _write_package(tmp_path, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    found = kernel_definitions(name)
    assert [(m, c, k) for m, c, k, _ in found] == [
        (f"{name}.activation", "_RELU_ELEMENTWISE", "elementwise"),
        (f"{name}.sub.norm", "_FILL_RAW", "raw"),
        (f"{name}.sub.norm", "_SUM_REDUCTION", "reduce"),
    ]
    assert found[0][3]["name"] == "dbr_relu"


@needs_nvrtc
def test_kernel_definitions_compile(tmp_path, monkeypatch):
    name = f"dbr_kernels_fixture_{uuid.uuid4().hex}"
    _write_package(tmp_path, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    for _, _, kind, spec in kernel_definitions(name):
        kernels.check_compiles(kind, spec, dtypes=("float16", "float32", "float64"))


@pytest.mark.parametrize("package", ["dbr.functions", "dbr.training", "dbr.datasets"])
def test_importing_every_module_of_a_sibling_imports_neither_dbr_gpu_nor_cupy(package):
    """Walks the package in a fresh interpreter, as kernel_definitions does, without dbr.gpu."""
    code = textwrap.dedent(
        f"""
        import importlib, pkgutil, sys
        try:
            package = importlib.import_module({package!r})
        except ImportError as e:
            print("MISSING", e)
            sys.exit(0)
        for info in pkgutil.walk_packages(package.__path__, {package!r} + "."):
            importlib.import_module(info.name)
        leaked = [m for m in ("dbr.gpu", "cupy") if m in sys.modules]
        print("LEAKED", leaked)
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    if result.stdout.startswith("MISSING"):
        pytest.skip(f"{package} is not importable here: {result.stdout.strip()}")
    assert result.stdout.strip() == "LEAKED []"


@pytest.mark.gpu
def test_kernel_cache_builds_once_and_cupy_compiles_once_per_dtype():
    """Counts real NVRTC compilations (see ``count_nvrtc_compilations``).

    The kernel's name and operation are unique to this run, so neither dbr's
    cache, CuPy's in-memory cache nor the (fresh, empty) CUPY_CACHE_DIR can
    hold it: the first float32 call compiles once, the next 49 calls and a
    second ``elementwise`` call with the same definition compile nothing and
    return the same object, and a float64 call compiles once more.
    """
    get_test_device("@cupy:0")
    cupy = dbr.gpu.cupy
    tag = uuid.uuid4().hex[:12]
    spec = dict(_RELU_GRAD, operation=f"gx = y > (T)0 ? gy : (T)0; /* {tag} */")
    spec["name"] = f"dbr_test_count_{tag}"
    y = np.linspace(-1, 1, 1000, dtype=np.float32)
    gy = np.arange(1000, dtype=np.float32)
    with count_nvrtc_compilations() as compiled:
        before = kernels.compile_count()
        kernel = kernels.elementwise(**spec)
        assert kernels.compile_count() == before + 1
        out = kernel(cupy.asarray(y), cupy.asarray(gy))
        cupy.cuda.Stream.null.synchronize()
        assert len(compiled) == 1
        for _ in range(49):
            assert kernels.elementwise(**spec) is kernel
            out = kernels.elementwise(**spec)(cupy.asarray(y), cupy.asarray(gy))
        assert len(compiled) == 1
        assert kernels.compile_count() == before + 1
        kernel(cupy.asarray(y, dtype=np.float64), cupy.asarray(gy, dtype=np.float64))
        assert len(compiled) == 2
    np.testing.assert_array_equal(out.get(), np.where(y > 0, gy, 0))


@pytest.mark.gpu
def test_reduce_and_raw_kernels_compute_on_gpu():
    get_test_device("@cupy:0")
    cupy = dbr.gpu.cupy
    x = np.random.default_rng(0).standard_normal((7, 300)).astype(np.float32)
    y = kernels.reduce(**_SQUARED_NORM)(cupy.asarray(x), axis=1)
    np.testing.assert_allclose(y.get(), (x * x).sum(axis=1), rtol=1e-5)
    buf = cupy.zeros(1000, dtype=np.float32)
    kernels.raw(**_FILL)((4,), (256,), (buf, np.float32(3.5), np.int32(1000)))
    np.testing.assert_array_equal(buf.get(), np.full(1000, 3.5, np.float32))
