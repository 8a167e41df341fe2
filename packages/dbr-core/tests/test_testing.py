import os
import pathlib
import subprocess
import sys
import textwrap
import zlib

import numpy
import pytest

import dbr.core
from dbr.core import FunctionNode, Link, Parameter, Variable, ops, testing
from dbr.core.testing import FunctionTestCase, LinkTestCase

SRC = pathlib.Path(dbr.core.__file__).resolve().parents[2]


# The seed of conftest's seeded fixture here.
NUMPY_SEED = 2


# -- assert_allclose -------------------------------------------------------------------


def test_assert_allclose_passes_within_and_at_the_tolerance():
    testing.assert_allclose(numpy.array([1.0, 2.0]), numpy.array([1.0, 2.0]))
    testing.assert_allclose(numpy.array([1.5]), numpy.array([1.0]), atol=0.25, rtol=0.25)
    testing.assert_allclose(numpy.array([1.0 + 1e-6]), numpy.array([1.0]), atol=0, rtol=1e-5)


def test_assert_allclose_fails_outside_the_tolerance_with_the_worst_elements():
    x = numpy.array([[1.0, 2.0], [3.0, 4.5]])
    y = numpy.array([[1.0, 2.0], [3.1, 4.0]])
    with pytest.raises(AssertionError) as info:
        testing.assert_allclose(x, y, atol=1e-3, rtol=1e-3)
    message = str(info.value)
    assert "2 of 4 elements differ (atol=0.001, rtol=0.001)" in message
    assert "max absolute error: 0.5 at index (1, 1)" in message
    assert "max relative error: 0.125 at index (1, 1)" in message
    worst = message.index("index (1, 1): x=")
    assert worst < message.index("index (1, 0): x=")
    assert "x: [[1." in message and "y: [[1." in message


def test_assert_allclose_is_relative_to_the_second_argument():
    testing.assert_allclose(numpy.array([1.0]), numpy.array([2.0]), atol=0, rtol=0.5)
    with pytest.raises(AssertionError):
        testing.assert_allclose(numpy.array([2.0]), numpy.array([1.0]), atol=0, rtol=0.5)


def test_assert_allclose_accepts_variables_scalars_and_broadcasts_0d():
    testing.assert_allclose(Variable(numpy.array([1.0, 1.0], numpy.float32)), 1.0)
    testing.assert_allclose(numpy.float32(2.0), Variable(numpy.array(2.0)))
    with pytest.raises(AssertionError, match="1 of 2 elements differ"):
        testing.assert_allclose(numpy.array([1.0, 1.5]), 1.0)


def test_assert_allclose_rejects_different_shapes():
    with pytest.raises(
        AssertionError,
        match=r"shapes differ: x.shape == \(2,\), y.shape == "
        r"\(1, 2\)",
    ):
        testing.assert_allclose(numpy.ones(2), numpy.ones((1, 2)))


def test_assert_allclose_nan_and_inf():
    nan, inf = numpy.nan, numpy.inf
    testing.assert_allclose(numpy.array([nan, inf, -inf]), numpy.array([nan, inf, -inf]))
    with pytest.raises(AssertionError, match="1 of 2 elements differ"):
        testing.assert_allclose(numpy.array([nan, 1.0]), numpy.array([0.0, 1.0]))
    with pytest.raises(AssertionError, match="1 of 1 elements differ"):
        testing.assert_allclose(numpy.array([inf]), numpy.array([-inf]))
    with pytest.raises(AssertionError, match="2 of 2 elements differ"):
        testing.assert_allclose(numpy.array([1.0, inf]), numpy.array([inf, 1.0]), rtol=1)


def test_assert_allclose_compares_float16_exactly_in_float64():
    one = numpy.array([1.0], numpy.float16)
    next_up = numpy.nextafter(one, numpy.float16(2))
    with pytest.raises(AssertionError):
        testing.assert_allclose(next_up, one, atol=0, rtol=0)
    testing.assert_allclose(next_up, one, atol=0, rtol=1e-3)


def test_assert_allclose_verbose_false_leaves_out_the_arrays():
    with pytest.raises(AssertionError) as info:
        testing.assert_allclose(numpy.array([1.0]), numpy.array([2.0]), verbose=False)
    assert "x: [" not in str(info.value)


def test_assert_allclose_rejects_non_numeric_values():
    with pytest.raises(TypeError, match="expected x to be an array"):
        testing.assert_allclose(None, numpy.ones(1))
    with pytest.raises(TypeError, match="expected y to have a numeric dtype"):
        testing.assert_allclose(numpy.ones(1), numpy.array(["a"]))


# -- tolerances ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["forward", "backward", "double_backward"])
def test_tolerances_are_looser_for_lower_precision(kind):
    t16, t32, t64 = (
        testing.tolerances(d, kind) for d in ("float16", numpy.float32, numpy.dtype(numpy.float64))
    )
    for key in ("atol", "rtol"):
        assert t16[key] > t32[key] > t64[key] > 0


@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
def test_tolerances_loosen_with_each_order_of_derivative(dtype):
    forward, backward, double = (
        testing.tolerances(dtype, k) for k in ("forward", "backward", "double_backward")
    )
    for key in ("atol", "rtol"):
        assert forward[key] <= backward[key] <= double[key]
    assert forward != double


def test_tolerances_for_float16_forward():
    assert testing.tolerances(numpy.float16) == {"atol": 1e-3, "rtol": 1e-2}


def test_tolerances_reject_other_dtypes_and_kinds():
    with pytest.raises(ValueError, match="float16, float32 or float64 dtype, got int32"):
        testing.tolerances(numpy.int32)
    with pytest.raises(ValueError, match="expected kind to be one of"):
        testing.tolerances(numpy.float32, "sideways")


# -- product and parameterize -------------------------------------------------------------


def test_product_of_a_dict():
    assert testing.product({"a": [1, 2], "b": ["x", "y"]}) == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
    ]


def test_product_with_a_key_naming_several_attributes():
    assert testing.product({"shape,axis": [((2, 3), 0), ((4,), -1)], "k": [True]}) == [
        {"shape": (2, 3), "axis": 0, "k": True},
        {"shape": (4,), "axis": -1, "k": True},
    ]
    with pytest.raises(ValueError, match="names 2 attributes but the value"):
        testing.product({"a,b": [(1, 2, 3)]})


def test_product_of_lists_of_dicts_and_product_dict():
    expected = [{"a": 1, "b": 3}, {"a": 2, "b": 3}]
    assert testing.product([[{"a": 1}, {"a": 2}], [{"b": 3}]]) == expected
    assert testing.product_dict([{"a": 1}, {"a": 2}], [{"b": 3}]) == expected
    with pytest.raises(TypeError):
        testing.product("a")
    with pytest.raises(TypeError):
        testing.product_dict([1, 2])


@testing.parameterize({"a": 1, "b": "x"}, {"a": 2, "b": "y"})
class TestParameterizeSetsAttributes:
    def test_attributes_match_the_test_id(self, request):
        assert f"a={self.a},b={self.b}" in request.node.callspec.id
        assert (self.a, self.b) in {(1, "x"), (2, "y")}


def test_parameterize_rejects_bad_arguments():
    with pytest.raises(ValueError, match="at least one dict"):
        testing.parameterize()
    with pytest.raises(TypeError, match="argument 1 to be a dict with str keys"):
        testing.parameterize({"a": 1}, [1])
    with pytest.raises(TypeError, match="decorate a class"):
        testing.parameterize({"a": 1})(lambda: None)


def _run_pytest(tmp_path, source, *args):
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    gpu: needs a CUDA device\n")
    (tmp_path / "test_generated.py").write_text(textwrap.dedent(source))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-W",
            "error",
            "--strict-markers",
            "-rsf",
            *args,
            "test_generated.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result.returncode, result.stdout + result.stderr


def test_parameterize_stacks_and_is_inherited_as_a_product(tmp_path):
    code, out = _run_pytest(
        tmp_path,
        """
        from dbr.core import testing

        @testing.parameterize({"x": 1}, {"x": 2})
        class TestBase:
            def test_x(self):
                assert self.x in (1, 2)

        @testing.parameterize({"y": "a"}, {"y": "b"}, {"y": "c"})
        class TestChild(TestBase):
            def test_y(self):
                assert self.y in "abc" and self.x in (1, 2)
        """,
        "--collect-only",
    )
    assert code == 0, out
    ids = [line for line in out.splitlines() if "::" in line]
    assert len([i for i in ids if i.startswith("test_generated.py::TestBase::")]) == 2
    assert len([i for i in ids if "TestChild::test_x" in i]) == 6
    assert len([i for i in ids if "TestChild::test_y" in i]) == 6
    assert "test_generated.py::TestChild::test_y[x=2-y=c]" in ids


# -- FunctionTestCase -----------------------------------------------------------------------


class ScaledDouble(FunctionNode):
    """``2 * x`` with configurable errors in forward and backward."""

    def __init__(self, forward_error=0.0, grad_scale=1.0):
        self.forward_error = forward_error
        self.grad_scale = grad_scale

    def forward(self, inputs):
        x = inputs[0]
        return (x * x.dtype.type(2) + x.dtype.type(self.forward_error),)

    def backward(self, indexes, grad_outputs):
        return (grad_outputs[0] * (2.0 * self.grad_scale),)


class _Case(FunctionTestCase):
    dtype = numpy.float32
    shape = (3, 2)

    def generate_inputs(self):
        return (numpy.random.uniform(0.5, 1.5, self.shape).astype(self.dtype),)

    def forward(self, inputs, device):
        return (inputs[0] * inputs[0],)

    def forward_expected(self, inputs):
        return (inputs[0] * inputs[0],)


def test_function_test_case_passes_for_a_correct_function(seeded):
    case = _Case()
    case.test_forward("@numpy")
    case.test_backward("@numpy")
    case.test_double_backward("@numpy")


@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
def test_function_test_case_catches_a_wrong_forward(seeded, dtype):
    case = _Case()
    case.dtype = dtype
    case.forward = lambda inputs, device: (ScaledDouble(forward_error=0.05).apply(inputs)[0],)
    case.forward_expected = lambda inputs: (inputs[0] * 2,)
    with pytest.raises(AssertionError) as info:
        case.test_forward("@numpy")
    message = str(info.value)
    assert (
        f"_Case.test_forward on @numpy with C-contiguous inputs (dtype={numpy.dtype(dtype)})"
        in message
    )
    assert "output 0 differs from forward_expected" in message
    case.test_backward("@numpy")


@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
def test_function_test_case_catches_a_five_percent_error_in_backward(seeded, dtype):
    case = _Case()
    case.dtype = dtype
    case.forward = lambda inputs, device: (ScaledDouble(grad_scale=1.05).apply(inputs)[0],)
    case.forward_expected = lambda inputs: (inputs[0] * 2,)
    case.test_forward("@numpy")
    with pytest.raises(AssertionError, match="_Case.test_backward on @numpy"):
        case.test_backward("@numpy")
    case.check_backward_options = {"atol": 1.0, "rtol": 1.0}
    case.test_backward("@numpy")


def test_function_test_case_catches_a_backward_that_is_not_differentiable(seeded, detached_square):
    case = _Case()
    case.forward = lambda inputs, device: (detached_square().apply(inputs)[0],)
    case.test_forward("@numpy")
    case.test_backward("@numpy")
    with pytest.raises(AssertionError, match="check_double_backward failed"):
        case.test_double_backward("@numpy")


def test_function_test_case_catches_a_forward_that_modifies_its_input(seeded):
    def forward(inputs, device):
        x = inputs[0]
        y = x * x
        x.array[...] = 0
        return (y,)

    case = _Case()
    case.forward = forward
    with pytest.raises(AssertionError, match="forward modified input 0 in place"):
        case.test_forward("@numpy")


def test_function_test_case_checks_output_count_shape_and_dtype(seeded):
    case = _Case()
    case.forward = lambda inputs, device: (ops.cast(inputs[0] * inputs[0], numpy.float64),)
    with pytest.raises(AssertionError, match="output 0 has shape \\(3, 2\\) and dtype float64"):
        case.test_forward("@numpy")
    case.forward = lambda inputs, device: (inputs[0], inputs[0])
    with pytest.raises(AssertionError, match="forward returned 2 outputs, forward_expected 1"):
        case.test_forward("@numpy")


def test_function_test_case_requires_tuples(seeded):
    case = _Case()
    case.forward = lambda inputs, device: inputs[0] * inputs[0]
    with pytest.raises(
        TypeError, match="_Case.forward must return a tuple of Variables, got Variable"
    ):
        case.test_forward("@numpy")
    case = _Case()
    case.generate_inputs = lambda: numpy.ones(2, numpy.float32)
    with pytest.raises(TypeError, match="generate_inputs must return a tuple of arrays"):
        case.test_forward("@numpy")
    case = _Case()
    case.generate_grad_outputs = lambda templates: (numpy.ones(3, numpy.float32),)
    with pytest.raises(
        TypeError,
        match=r"generate_grad_outputs: expected element 0 to be a "
        r"NumPy array of shape \(3, 2\)",
    ):
        case.test_backward("@numpy")


def test_function_test_case_tests_non_contiguous_inputs_unless_contiguous_is_c(seeded):
    layouts = []

    def forward(inputs, device):
        layouts.append(inputs[0].array.flags.c_contiguous)
        if not inputs[0].array.flags.c_contiguous:
            raise AssertionError("forward needs contiguous input")
        return (inputs[0] * inputs[0],)

    case = _Case()
    case.forward = forward
    with pytest.raises(AssertionError, match="with non-contiguous inputs"):
        case.test_forward("@numpy")
    assert layouts == [True, False]
    case.contiguous = "C"
    case.test_forward("@numpy")
    case.test_backward("@numpy")
    case.contiguous = "F"
    with pytest.raises(ValueError, match="expected contiguous to be 'C' or None, got 'F'"):
        case.test_forward("@numpy")


def test_function_test_case_skips(seeded):
    case = _Case()
    case.skip_backward_test = True
    with pytest.raises(pytest.skip.Exception, match="skip_backward_test is set"):
        case.test_backward("@numpy")
    case.test_forward("@numpy")


def test_function_test_case_skips_gpu_without_dbr_gpu():
    try:
        import dbr.gpu  # noqa: F401
    except ImportError:
        with pytest.raises(pytest.skip.Exception, match="dbr.gpu is not installed"):
            _Case().test_forward("@cupy:0")
    else:
        _Case().test_forward("@cupy:0")


class _KinkCase(_Case):
    """``max(x, 0)`` whose backward gives 1 at 0, where the numerical gradient gives 1/2."""

    def __init__(self, zero_draws):
        self.zero_draws = zero_draws

    def generate_inputs(self):
        self.zero_draws -= 1
        if self.zero_draws >= 0:
            return (numpy.array([0.0, 0.5], numpy.float64),)
        return (numpy.array([-0.5, 0.5], numpy.float64),)

    def forward(self, inputs, device):
        x = inputs[0]
        mask = Variable((x.array >= 0).astype(x.dtype))
        return (x * mask,)

    def forward_expected(self, inputs):
        return (numpy.maximum(inputs[0], 0),)


def test_function_test_case_dodges_non_differentiable_inputs():
    with pytest.raises(AssertionError):
        _KinkCase(zero_draws=100).test_backward("@numpy")
    case = _KinkCase(zero_draws=3)
    case.dodge_nondifferentiable = True
    case.test_backward("@numpy")
    assert case.zero_draws < 0
    case = _KinkCase(zero_draws=100)
    case.dodge_nondifferentiable = True
    with pytest.raises(AssertionError, match="non-differentiable point 20 times in a row"):
        case.test_backward("@numpy")


def _refusing_sqrt(x, *, name="x"):
    if x.dtype.kind != "f":
        raise TypeError(f"refusing_sqrt: expected {name} to be floating, got {x.dtype}")
    if (x < 0).any():
        raise ValueError(f"refusing_sqrt: expected {name} >= 0")
    return numpy.sqrt(x)


class _BadInputCase(_Case):
    function = staticmethod(_refusing_sqrt)

    def bad_inputs(self):
        return [
            ((numpy.zeros(2, numpy.int32),), TypeError, ("refusing_sqrt", "got int32")),
            ((-numpy.ones(2),), {"name": "y"}, ValueError, "expected y >= 0"),
        ]


def test_bad_input_hook_checks_each_row():
    assert not hasattr(_Case, "test_bad_input")
    _BadInputCase().test_bad_input()


@pytest.mark.parametrize(
    "row, message",
    [
        (((numpy.ones(2),), ValueError, "x"), "row 0 did not raise ValueError"),
        (((-numpy.ones(2),), ValueError, ("x >= 0", "y")), r"without \['y'\] in its message"),
        ("not a row", "bad input row 0: expected a row \\(args, error, fragment\\)"),
    ],
)
def test_bad_input_hook_fails_on_a_wrong_row(row, message):
    case = _BadInputCase()
    case.bad_inputs = lambda: [row]
    with pytest.raises((AssertionError, TypeError), match=message):
        case.test_bad_input()


def test_bad_input_hook_lets_another_error_through_and_needs_a_function():
    case = _BadInputCase()
    case.bad_inputs = lambda: [((numpy.zeros(2, numpy.int32),), ValueError, "x")]
    with pytest.raises(TypeError, match="expected x to be floating"):
        case.test_bad_input()
    case.function = None
    with pytest.raises(TypeError, match="bad input row 0: needs function"):
        case.test_bad_input()
    case.function = staticmethod(_refusing_sqrt).__func__
    case.bad_inputs = lambda: []
    with pytest.raises(TypeError, match="returned no rows"):
        case.test_bad_input()


def test_function_test_case_under_pytest(tmp_path):
    code, out = _run_pytest(
        tmp_path,
        """
        import numpy
        from dbr.core import FunctionNode, testing
        from dbr.core.testing import FunctionTestCase

        class BadGrad(FunctionNode):
            def forward(self, inputs):
                return (inputs[0] * 3,)

            def backward(self, indexes, grad_outputs):
                return (grad_outputs[0] * 2.0,)

        @testing.parameterize(*testing.product({"dtype": [numpy.float16, numpy.float64]}))
        class TestTriple(FunctionTestCase):
            bad = False

            def generate_inputs(self):
                return (numpy.random.uniform(-1, 1, (2, 3)).astype(self.dtype),)

            def forward(self, inputs, device):
                x = inputs[0]
                return (BadGrad().apply(inputs)[0] if self.bad else x * 3,)

            def forward_expected(self, inputs):
                return (inputs[0] * 3,)

        class TestTripleBad(TestTriple):
            bad = True
        """,
    )
    assert code == 1, out
    assert "2 failed, 10 passed, 12 skipped" in out
    assert "SKIPPED [12]" in out and "dbr.gpu is not installed" in out
    # The wrong gradient is a constant, so only first-order checks can see it.
    assert "FAILED test_generated.py::TestTripleBad::test_backward[@numpy-dtype=float16]" in out
    assert "FAILED test_generated.py::TestTripleBad::test_backward[@numpy-dtype=float64]" in out
    code, out = _run_pytest(
        tmp_path, (tmp_path / "test_generated.py").read_text(), "-m", "not gpu", "-k", "not Bad"
    )
    assert code == 0, out
    assert "6 passed, 18 deselected" in out


# -- LinkTestCase ---------------------------------------------------------------------------


class ScaledProduct(FunctionNode):
    """``x * w`` whose gradient for ``w`` is scaled by ``w_grad_scale``."""

    def __init__(self, w_grad_scale=1.0):
        self.w_grad_scale = w_grad_scale

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        return (inputs[0] * inputs[1],)

    def backward(self, indexes, grad_outputs):
        x, w = self.get_retained_inputs()
        (gy,) = grad_outputs
        return gy * w, gy * x * self.w_grad_scale


class _ScaleLink(Link):
    def __init__(self, w_grad_scale=1.0):
        super().__init__()
        self.w_grad_scale = w_grad_scale
        with self.init_scope():
            self.w = Parameter(numpy.random.uniform(0.5, 1.5, (2, 3)).astype(numpy.float32))
            self.unused = Parameter(numpy.zeros(1, numpy.float32))

    def forward(self, x, shift):
        return ScaledProduct(self.w_grad_scale).apply((x, self.w))[0] + shift.array


class _LinkCase(LinkTestCase):
    dtype = numpy.float32
    w_grad_scale = 1.0
    param_names = ("/w",)
    no_grads = (False, True)

    def create_link(self):
        return _ScaleLink(self.w_grad_scale)

    def generate_inputs(self):
        x = numpy.random.uniform(-1, 1, (2, 3)).astype(numpy.float32)
        return x, numpy.ones((2, 3), numpy.float32)

    def forward_expected(self, link, inputs):
        assert isinstance(link.w.array, numpy.ndarray)
        return (inputs[0] * link.w.array + inputs[1],)


def test_link_test_case_passes_for_a_correct_link(seeded):
    case = _LinkCase()
    case.test_forward("@numpy")
    case.test_backward("@numpy")
    assert case.test_double_backward is None


def test_link_test_case_catches_a_wrong_forward(seeded):
    case = _LinkCase()
    case.forward_expected = lambda link, inputs: (inputs[0] * link.w.array,)
    with pytest.raises(AssertionError, match="output 0 differs from forward_expected"):
        case.test_forward("@numpy")


def test_link_test_case_checks_the_named_parameters_gradients(seeded):
    case = _LinkCase()
    case.w_grad_scale = 1.05
    with pytest.raises(AssertionError, match="_LinkCase.test_backward on @numpy"):
        case.test_backward("@numpy")
    case.param_names = ()
    case.test_backward("@numpy")
    case.param_names = ("/v",)
    with pytest.raises(ValueError, match=r"expected param_names among \['/unused', '/w'\]"):
        case.test_backward("@numpy")


def test_link_test_case_copies_the_link_and_runs_the_bad_input_table(seeded):
    built = []

    class Case(_LinkCase):
        function = staticmethod(lambda x: _ScaleLink()(x, x))

        def create_link(self):
            built.append(super().create_link())
            return built[-1]

        def forward(self, link, inputs, device):
            assert link is not built[-1] and link.xp is numpy
            return super().forward(link, inputs, device)

        def bad_inputs(self):
            return [((numpy.ones((2, 4), numpy.float32),), ValueError, "operands could not")]

    Case().test_forward("@numpy")
    Case().test_bad_input()


def test_link_test_case_under_pytest(tmp_path):
    code, out = _run_pytest(
        tmp_path,
        """
        import numpy
        from dbr.core import Link, Parameter
        from dbr.core.testing import LinkTestCase

        class Affine(Link):
            def __init__(self):
                super().__init__()
                with self.init_scope():
                    self.w = Parameter(numpy.random.uniform(-1, 1, (3,)))

            def forward(self, x):
                return x * self.w + 1.0

        class TestAffine(LinkTestCase):
            def create_link(self):
                return Affine()

            def generate_inputs(self):
                return (numpy.random.uniform(-1, 1, (2, 3)),)

            def forward_expected(self, link, inputs):
                return (inputs[0] * link.w.array + 1.0,)
        """,
    )
    assert code == 0, out
    assert "2 passed, 2 skipped" in out


def test_a_class_without_gradients_generates_no_gradient_tests(tmp_path):
    code, out = _run_pytest(
        tmp_path,
        """
        import numpy
        from dbr.core import testing
        from dbr.core.testing import FunctionTestCase

        class TestSign(FunctionTestCase):
            skip_backward_test = True
            skip_double_backward_test = True

            def generate_inputs(self):
                return (numpy.random.uniform(-1, 1, (2, 3)),)

            def forward(self, inputs, device):
                return (inputs[0] * 0 + 1,)

            def forward_expected(self, inputs):
                assert self.test_device is not None
                return (numpy.ones_like(inputs[0]),)

        @testing.parameterize({"skip_backward_test": True}, {"skip_backward_test": False})
        class TestPerVariant(TestSign):
            skip_backward_test = False
        """,
        "--collect-only",
        "-m",
        "not gpu",
    )
    assert code == 0, out
    assert "TestSign::test_forward[@numpy]" in out
    assert "TestSign::test_backward" not in out and "test_double_backward" not in out
    assert "TestPerVariant::test_backward[@numpy-skip_backward_test=True]" in out
    code, out = _run_pytest(
        tmp_path, (tmp_path / "test_generated.py").read_text(), "-m", "not gpu", "-rs"
    )
    assert code == 0, out
    assert "4 passed, 1 skipped" in out and "skip_backward_test is set" in out


def test_importing_the_testing_helpers_does_not_import_pytest():
    code = (
        "import sys\n"
        "from dbr.core.testing import assert_allclose, product, tolerances\n"
        "assert 'pytest' not in sys.modules\n"
        "from dbr.core.testing import FunctionTestCase\n"
        "assert 'pytest' in sys.modules\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def _refusing_negative(x):
    if (x < 0).any():
        raise ValueError("refusing_negative: expected x >= 0")
    return x


def test_bad_input_row_may_name_its_own_function():
    case = _BadInputCase()
    case.bad_inputs = lambda: [(_refusing_negative, (-numpy.ones(2),), {}, ValueError, "x >= 0")]
    case.test_bad_input()
    case.bad_inputs = lambda: [(_refusing_negative, (numpy.ones(2),), {}, ValueError, "x")]
    with pytest.raises(AssertionError, match="row 0 did not raise ValueError"):
        case.test_bad_input()


_module_bad_input = testing.bad_input_test(
    [
        ((numpy.zeros(2, numpy.int32),), TypeError, ("refusing_sqrt", "got int32")),
        ((-numpy.ones(2),), {"name": "y"}, ValueError, "expected y >= 0"),
        (_refusing_negative, (-numpy.ones(1),), {}, ValueError, "x >= 0"),
    ],
    function=_refusing_sqrt,
)


def test_bad_input_test_makes_one_parametrised_case_per_row():
    marks = [m for m in _module_bad_input.pytestmark if m.name == "parametrize"]
    assert [list(m.args[1]) for m in marks] == [[0, 1, 2]]
    for i in range(3):
        _module_bad_input(i)


@pytest.mark.parametrize(
    "row, function, message",
    [
        (((numpy.ones(2),), ValueError, "x"), _refusing_sqrt, "row 0 did not raise ValueError"),
        (((-numpy.ones(2),), ValueError, ("x >= 0", "z")), _refusing_sqrt, r"without \['z'\]"),
        (((numpy.ones(2),), ValueError, "x"), None, "needs function"),
        (("only", "two"), _refusing_sqrt, "expected a row"),
    ],
)
def test_bad_input_test_fails_on_a_call_that_is_not_refused(row, function, message):
    test = testing.bad_input_test([row], function=function)
    with pytest.raises((AssertionError, TypeError), match=message):
        test(0)


def test_bad_input_test_needs_rows():
    with pytest.raises(TypeError, match="bad_input_test: expected at least one row"):
        testing.bad_input_test([])


def test_numpy_is_seeded_from_the_file_and_test_name():
    # conftest.py registers dbr.core.testing.seeding's autouse fixture.
    seed = zlib.crc32(b"test_testing.py::test_numpy_is_seeded_from_the_file_and_test_name")
    expected = numpy.random.RandomState(seed).random_sample(3)
    numpy.testing.assert_array_equal(numpy.random.random_sample(3), expected)


def test_uniform_draws_numpys_global_uniform_values_in_the_dtype():
    numpy.random.seed(3)
    expected = numpy.random.uniform(-1, 1, (2, 3)).astype(numpy.float16)
    numpy.random.seed(3)
    x = testing.uniform((2, 3), numpy.float16)
    assert x.dtype == numpy.float16 and x.shape == (2, 3)
    numpy.testing.assert_array_equal(x, expected)
    y = testing.uniform((4,), numpy.float64, low=2, high=3)
    assert ((y >= 2) & (y < 3)).all()
    z = testing.uniform((), numpy.float32)
    assert isinstance(z, numpy.ndarray) and z.shape == () and z.dtype == numpy.float32
