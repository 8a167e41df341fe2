"""dbr.chainer.testing's FunctionTestCase, LinkTestCase and the other test harnesses."""

import numpy
import pytest

from dbr.chainer import testing
from dbr.chainer.testing import array as testing_array
from dbr.chainer.testing import function_link

pytest_plugins = ["pytester"]

MARKERS = ["gpu", "cudnn", "multi_gpu", "ideep", "slow", "chainerx", "theano"]

SOURCE = """
import numpy
import pytest

import dbr.chainer
import dbr.chainer.functions as F
import dbr.chainer.links as L
from dbr.chainer import initializers, testing

BACKENDS = testing.inject_backend_tests(None, [{}, {'use_cuda': True}])


class WrongGrad(dbr.chainer.FunctionNode):
    def forward(self, inputs):
        self.retain_inputs((0,))
        return numpy.exp(inputs[0]),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return 2 * F.exp(x) * grad_outputs[0],


@testing.parameterize(*testing.product({'dtype': [numpy.float32, numpy.float64]}))
@BACKENDS
class TestExp(testing.FunctionTestCase):
    def setUp(self):
        self.check_backward_options = {'atol': 1e-4, 'rtol': 1e-3}

    def generate_inputs(self):
        return numpy.random.uniform(-1, 1, (3, 2)).astype(self.dtype),

    def forward(self, inputs, device):
        return F.exp(inputs[0]),

    def forward_expected(self, inputs):
        return numpy.exp(inputs[0]),


@BACKENDS
@pytest.mark.xfail(strict=True, raises=testing.FunctionTestError)
class TestWrongBackward(testing.FunctionTestCase):
    skip_forward_test = True
    skip_double_backward_test = True

    def generate_inputs(self):
        return numpy.random.uniform(-1, 1, (3,)).astype(numpy.float64),

    def forward(self, inputs, device):
        return WrongGrad().apply(inputs)

    def forward_expected(self, inputs):
        return numpy.exp(inputs[0]),


@BACKENDS
@pytest.mark.xfail(strict=True, raises=testing.FunctionTestError)
class TestWrongForward(testing.FunctionTestCase):
    skip_backward_test = True
    skip_double_backward_test = True

    def generate_inputs(self):
        return numpy.ones((2,), numpy.float32),

    def forward(self, inputs, device):
        return F.exp(inputs[0]),

    def forward_expected(self, inputs):
        return inputs[0].copy(),


class LinearBase:
    param_names = ('W', 'b')

    def generate_params(self):
        return (numpy.random.uniform(-1, 1, (3, 2)).astype(numpy.float32),
                numpy.random.uniform(-1, 1, (3,)).astype(numpy.float32))

    def create_link(self, initializers):
        return L.Linear(2, 3, initialW=initializers[0], initial_bias=initializers[1])

    def generate_inputs(self):
        return numpy.random.uniform(-1, 1, (4, 2)).astype(numpy.float32),


@BACKENDS
class TestLinear(LinearBase, testing.LinkTestCase):
    def setUp(self):
        self.check_backward_options = {'atol': 1e-3, 'rtol': 1e-2}

    def forward_expected(self, link, inputs):
        return inputs[0].dot(link.W.array.T) + link.b.array,


@BACKENDS
class TestLinearInitializers(LinearBase, testing.LinkInitializersTestCase):
    def get_initializers(self):
        return ([initializers.Constant(1.5), 2.0],
                [testing.InitializerArgument(None, 0), initializers.Constant(3.0)])


@BACKENDS
@pytest.mark.xfail(strict=True, raises=testing.LinkTestError)
class TestLinearWrongExpectation(LinearBase, testing.LinkTestCase):
    skip_backward_test = True

    def forward_expected(self, link, inputs):
        return inputs[0].dot(link.W.array.T),


@testing.unary_math_function_unittest(F.exp)
class TestUnaryExp(__import__('unittest').TestCase):
    pass
"""


@pytest.fixture
def outcome(pytester):
    pytester.makeini(
        "[pytest]\nmarkers =\n" + "".join(f"    {m}: chainer mark\n" for m in MARKERS)
    )
    pytester.makepyfile(test_ported=SOURCE)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-m", "not gpu", "-v")


def test_harness_passes_correct_code_and_catches_wrong_code(outcome):
    text = outcome.stdout.str()
    backend = (
        "use_chainerx_false__chainerx_device_None__use_cuda_false__cuda_device_None__"
        "use_cudnn_never__cudnn_deterministic_false__autotune_false__"
        "cudnn_fast_batch_normalization_false__use_ideep_never"
    )
    for test in ("test_forward", "test_backward", "test_double_backward"):
        assert f"TestExp_{backend}_param_1_{{dtype=float64}}::{test} PASSED" in text
    assert f"TestWrongBackward_{backend}::test_backward XFAIL" in text
    assert f"TestWrongForward_{backend}::test_forward XFAIL" in text
    assert f"TestLinear_{backend}::test_forward PASSED" in text
    assert f"TestLinear_{backend}::test_backward PASSED" in text
    assert f"TestLinearInitializers_{backend}::test_initializers PASSED" in text
    assert f"TestLinearWrongExpectation_{backend}::test_forward XFAIL" in text
    assert (
        "TestUnaryExp_param_0_{dtype=float16, shape=(3, 2)}::test_double_backward_cpu PASSED"
        in text
    )
    outcome.assert_outcomes(passed=6 + 2 + 1 + 18, skipped=4 + 1, xfailed=3, deselected=35)


def test_initializer_argument_validation():
    with pytest.raises(ValueError):
        testing.InitializerArgument(None, None)
    with pytest.raises(TypeError):
        testing.InitializerArgument(None, "not an initializer")
    arg = testing.InitializerArgument(None, 1.0)
    assert arg.argument_value is None and arg.expected_initializer == 1.0


def test_check_arrays_equal_reports_mismatches():
    a = numpy.zeros(2, numpy.float32)
    function_link._check_arrays_equal((a,), (a,), testing.FunctionTestError)
    with pytest.raises(testing.FunctionTestError, match="Number of outputs"):
        function_link._check_arrays_equal((a,), (a, a), testing.FunctionTestError)
    with pytest.raises(testing.LinkTestError, match="Shapes and/or dtypes"):
        function_link._check_arrays_equal((a,), (a.astype(numpy.float64),), testing.LinkTestError)
    with pytest.raises(testing.FunctionTestError, match="do not match: 0"):
        function_link._check_arrays_equal((a + 1,), (a,), testing.FunctionTestError)


def test_noncontiguous_copies():
    x = numpy.arange(6.0).reshape(3, 2)
    y = testing_array._as_noncontiguous_array(x)
    assert not y.flags.c_contiguous and not y.flags.f_contiguous
    numpy.testing.assert_array_equal(x, y)
    scalar = numpy.ones(())
    assert testing_array._as_noncontiguous_array(scalar) is scalar
    assert testing_array._as_noncontiguous_array((x, None))[1] is None


def test_unary_math_function_unittest_needs_a_numpy_function():
    def no_such_numpy_function(x):
        return x

    with pytest.raises(ValueError):
        testing.unary_math_function_unittest(no_such_numpy_function)


UNARY_SOURCE = """
import unittest

import numpy

import dbr.chainer.functions as F
from dbr.chainer import testing


def exp_off_by_five_in_ten_thousand(x, dtype):
    return (numpy.exp(x.astype(numpy.float64)) * (1 + 5e-4)).astype(dtype)


@testing.unary_math_function_unittest(F.exp, func_expected=exp_off_by_five_in_ten_thousand)
class TestExp(unittest.TestCase):
    pass
"""


def test_unary_math_function_unittest_checks_float16_within_its_epsilon(pytester):
    pytester.makeini("[pytest]\nmarkers =\n    gpu: chainer mark\n")
    pytester.makepyfile(test_unary=UNARY_SOURCE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-m", "not gpu", "-v")
    text = result.stdout.str()
    for shape in ("(3, 2)", "()"):
        assert f"{{dtype=float16, shape={shape}}}::test_forward_cpu PASSED" in text
        assert f"{{dtype=float32, shape={shape}}}::test_forward_cpu FAILED" in text
